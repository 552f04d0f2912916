"""`docs/gpu-proof.json` and `docs/gpu-proof.md`, written from a real run."""

from __future__ import annotations

import json
import platform
import subprocess


def environment(torch) -> dict:
    env = {"device": None, "driver": None, "torch": None, "cuda": None, "python": platform.python_version()}
    if torch is None:
        return env
    env["torch"] = torch.__version__
    env["cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        env["device"] = torch.cuda.get_device_name()
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        env["driver"] = out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        pass
    return env


def to_json(env: dict, proofs, demo: dict | None) -> dict:
    data = dict(env)
    data["rules"] = {p.case.label: p.to_json() for p in proofs}
    data["summary"] = summary_counts(proofs)
    data["demo"] = demo
    return data


def summary_counts(proofs) -> dict:
    counts: dict[str, int] = {}
    for p in proofs:
        counts[p.outcome()] = counts.get(p.outcome(), 0) + 1
    return counts


def write_json(path, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, default=str)
        fh.write("\n")


def _m(m, key):
    if m is None:
        return "-"
    value = m.get(key)
    return "-" if value is None else str(value)


def _rule_section(code: str, r: dict) -> list[str]:
    """One table per rule: each run's verdict and the numbers behind it."""
    lines = [f"## {code}: {r['status']}", ""]
    runs = [("before", r.get("before")), ("after (fixed)", r.get("after"))]
    runs = [(label, m) for label, m in runs if m]
    if runs:
        lines += [
            "| run | verdict | stall ratio (median) | ratios | sleep done when it returned | backlog ms | idle host ms | busy host ms | debug mode |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for label, m in runs:
            done = m.get("event_done") or []
            lines.append(
                f"| {label} | {m.get('verdict')} | {_m(m, 'stall_ratio')} | {' '.join(str(x) for x in m.get('ratios') or []) or '-'} "
                f"| {f'{sum(done)} of {len(done)}' if done else '-'} | {_m(m, 'backlog_ms')} | {_m(m, 'idle_ms')} | {_m(m, 'busy_ms')} "
                f"| {_m(m, 'sync_debug_mode')} |"
            )
        lines.append("")
    if r.get("results_match") is not None:
        lines += [f"Same results before and after: {'yes' if r['results_match'] else '**no**'}"
                  + (f" ({r['mismatch']})" if r.get("mismatch") else "") + ".", ""]
    lines += [f"- problem: {p}" for p in r.get("problems") or []]
    if r.get("problems"):
        lines.append("")
    if r.get("fix_diff"):
        lines += ["The fix, as synclint applied it during the run:", "", "```diff", r["fix_diff"].rstrip("\n"), "```", ""]
    return lines


def render_markdown(data: dict) -> str:
    s = data["summary"]
    lines = [
        "# GPU proof: each flagged pattern stalls, each fix removes the stall",
        "",
        f"Written by `scripts/gpu_proof.sh` (`synclint prove`) on **{data.get('device')}**, driver "
        f"{data.get('driver')}, torch {data.get('torch')} (CUDA {data.get('cuda')}), Python {data.get('python')}.",
        "",
        "Run it with `scripts/gpu_proof.sh` on a CUDA machine (or `synclint prove [--rules SL1] [--json FILE] "
        "[--markdown FILE]`); the pytest marker `gpu` selects the GPU tests, skipped with the reason shown "
        "elsewhere. Each rule's case is `fixtures/<CODE>/proof.py`: `case(device)` with the pattern written as "
        "the rule flags it.",
        "",
        "Method: warm up twice, calibrate `torch.cuda._sleep` against events, queue a sleep "
        "of >= 50 ms (and >= 20x the case's idle host time) on the current stream, time the case on the "
        "host, query the event. Stall ratio = (busy - idle host time) / sleep time, median of 5. STALL: "
        ">= 0.5 with the sleep done in >= 4 of 5; CLEAN: <= 0.1 with the sleep pending in 5 of 5; else "
        "UNCLEAR (re-run once with a 4x backlog). `debug mode`: whether `set_sync_debug_mode(\"error\")` "
        "raised. The fixed code is what `fix_source(..., unsafe=True)` made of `fixtures/<CODE>/proof.py` "
        "during the run. Results compared with `torch.testing.assert_close` under a fixed seed.",
        "",
        "Outcomes: " + ", ".join(f"{k}: {v}" for k, v in sorted(s.items())),
        "",
        "| rule | outcome | before | ratio | debug mode | after | ratio | debug mode | same results | idle host ms before | idle host ms after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for code, r in data["rules"].items():
        b, a = r.get("before"), r.get("after")
        same = "-" if r.get("results_match") is None else ("yes" if r["results_match"] else "**no**")
        after_verdict = _m(a, "verdict") if r.get("fixable") else "(no fix)"
        lines.append(
            f"| {code} | {r['status']} | {_m(b, 'verdict')} | {_m(b, 'stall_ratio')} | {_m(b, 'sync_debug_mode')} "
            f"| {after_verdict} | {_m(a, 'stall_ratio')} | {_m(a, 'sync_debug_mode')} | {same} "
            f"| {_m(b, 'idle_ms')} | {_m(a, 'idle_ms')} |"
        )
    lines += [
        "",
        "`idle host ms`: the case's host time per call with an idle GPU (median of 3), before and after "
        "the fix: what a fix costs when there is nothing to wait for. A fix that removes a stall but "
        "costs more host time per call shows it here. Rules with more than one kind of fix have one "
        "case per kind (`<CODE>/proof_<kind>`, in `fixtures/<CODE>/proof_<kind>.py`).",
        "",
    ]
    races = [code for code, r in data["rules"].items() if r.get("kind") == "race"]
    if races:
        lines += [
            f"{', '.join(races)}: a data race, not a stall. The case reads host data filled by a "
            "`non_blocking` device-to-host copy before any sync; RACE means that, with a backlog queued, "
            "the values read differed from the device's (compared after a sync).",
            "",
        ]
    for code, r in data["rules"].items():
        lines += _rule_section(code, r)
    demo = data.get("demo")
    if demo:
        lines += ["## Throughput demo", ""]
        if demo.get("error"):
            lines += [f"Not run: {demo['error']}", ""]
        else:
            lines += [
                f"A pipelined loop: {demo['steps']} steps, {demo['gpu_ms_per_step']} ms of GPU work a step "
                f"({demo['layers']} bf16 4096x4096 matmul+tanh layers) queued after the input copy and a host busy-wait (the step's host work). Pattern: "
                f"{demo['pattern']}; fix: {demo['fix']}. Milliseconds per step, median of 3 runs:",
                "",
                "| host work a step | unfixed | fixed | speedup | same results |",
                "|---|---|---|---|---|",
            ]
            for row in demo["rows"]:
                lines.append(f"| {row['host_ms']} ms | {row['unfixed_ms_per_step']} | {row['fixed_ms_per_step']} | "
                             f"{row['speedup']}x | {'yes' if row['results_match'] else '**no**'} |")
            lines.append("")
    return "\n".join(lines)

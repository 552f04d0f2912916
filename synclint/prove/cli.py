"""`synclint prove [--rules SL1,SL203] [--json FILE] [--markdown FILE] [--no-demo]
[--trace-markdown FILE]`: run the proof cases on the GPU and report. Without a CUDA device
it says so and exits 0, having proven nothing. Exit 1 when any case that ran failed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


# Outcomes that fail the run: a proof that did not hold, or a case its rule no longer flags
# or cannot fix. A rule not registered yet (or without a case) is a skip.
FAILURES = ("FAILED", "not flagged", "fix failed")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synclint prove", description=(
        "Show on a CUDA device that each rule's pattern stalls the host and that synclint's fix removes the stall."))
    p.add_argument("--rules", default="", help="codes or prefixes, comma-separated (default: all)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON (docs/gpu-proof.json)")
    p.add_argument("--markdown", metavar="FILE", help="write a table per rule (docs/gpu-proof.md)")
    p.add_argument("--no-demo", action="store_true", help="skip the throughput demo")
    p.add_argument("--trace-markdown", metavar="FILE", help="also prove the runtime tracer on the cases; write its report (docs/trace.md)")
    p.add_argument("--trace-json", metavar="FILE", help="the tracer proof as JSON")
    return p


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    from synclint.prove.cases import RULE_CODES, select

    codes = select(RULE_CODES, args.rules.split(",") if args.rules else [])
    if not codes:
        print(f"synclint prove: no proof case matches --rules {args.rules}", file=sys.stderr)
        return 2
    torch = _torch()
    if torch is None or not torch.cuda.is_available():
        print("synclint prove: no CUDA device present: nothing proven", file=sys.stderr)
        return 0

    from synclint.prove import report
    from synclint.prove.harness import prove_all

    device = torch.device("cuda", torch.cuda.current_device())
    env = report.environment(torch)

    def progress(proofs) -> None:
        print(_line(proofs[-1]), flush=True)
        if args.json:  # saved after every rule: a run stopped by a time limit keeps its results
            report.write_json(Path(args.json), {**report.to_json(env, proofs, None), "complete": False})

    proofs = prove_all(codes, torch, device, on_proof=progress)
    demo = None
    if not args.no_demo:
        from synclint.prove.demo import run_demo

        try:
            demo = run_demo(torch, device)
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            demo = {"error": f"{exc.__class__.__name__}: {exc}"}
        print(_demo_line(demo), flush=True)
    data = {**report.to_json(env, proofs, demo), "complete": True}
    if args.json:
        report.write_json(Path(args.json), data)
    if args.markdown:
        Path(args.markdown).write_text(report.render_markdown(data), encoding="utf-8")
    if args.trace_markdown or args.trace_json:
        from synclint.prove import trace_proof

        result = trace_proof.run(codes, torch, device)
        ran = [c for c in result["cases"] if c.status in ("ok", "FAILED")]
        for c in result["cases"]:
            if c.status != "ok":
                print(f"trace {c.code}: {c.status}" + (f" ({'; '.join(c.problems)})" if c.problems else ""), flush=True)
        print(f"trace: {sum(c.status == 'ok' for c in ran)} of {len(ran)} cases reported at the flagged line (and nothing once fixed)")
        o = result["overhead"]
        print(f"trace overhead: {o['us_per_step_plain']} -> {o['us_per_step_traced']} us/step ({o['overhead_pct']} %)")
        if args.trace_markdown:
            Path(args.trace_markdown).write_text(trace_proof.render_markdown(result, env), encoding="utf-8")
        if args.trace_json:
            report.write_json(Path(args.trace_json), {**env, **trace_proof.to_json(result)})
    counts = report.summary_counts(proofs)
    print("prove: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if any(counts.get(outcome) for outcome in FAILURES) else 0


def _line(p) -> str:
    c = p.case
    if not p.ran:
        return f"{c.label}: {c.status}" + (f" ({c.problem})" if c.problem else "")
    b = p.before
    text = f"{c.label}: {p.outcome():<7} before {b.verdict} {_ratio(b)}"
    if p.after is not None:
        text += f" | after {p.after.verdict} {_ratio(p.after)} | same results: {p.results_match}"
    elif not c.fixable:
        text += " | no fix"
    if p.problems:
        text += " | " + "; ".join(p.problems)
    return text


def _ratio(m) -> str:
    parts = []
    if m.stall_ratio is not None:
        parts.append(f"ratio {m.stall_ratio:.2f}")
    if m.sync_debug_mode is not None:
        parts.append(f"debug-mode {'yes' if m.sync_debug_mode else 'no'}")
    return f"({', '.join(parts)})" if parts else ""


def _demo_line(demo: dict) -> str:
    if demo.get("error"):
        return f"demo: {demo['error']}"
    return "demo: " + ", ".join(f"host {r['host_ms']} ms: {r['unfixed_ms_per_step']} -> {r['fixed_ms_per_step']} ms/step ({r['speedup']}x)" for r in demo["rows"])

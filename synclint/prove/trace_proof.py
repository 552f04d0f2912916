"""The tracer's own proof, over the same executable cases: each stalling `before` case must
be reported at the line its rule flags, each fixed case must report nothing; and the
tracer's overhead on a loop with no syncs."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from synclint.prove import cases as case_mod
from synclint.prove.cases import RACE


@dataclass
class TraceCheck:
    code: str
    status: str  # "ok" | "FAILED" | a skip reason
    expected_rows: list[tuple[int, int]] = field(default_factory=list)
    before_sites: list[str] = field(default_factory=list)  # "line kind op xN"
    after_sites: list[str] | None = None
    problems: list[str] = field(default_factory=list)


def _site_text(site) -> str:
    return f"{site.line} {site.kind} {site.op} x{site.count}"


def _trace(torch, fn):
    from synclint.trace import watch

    fn()
    fn()  # warm-up: first calls allocate, pin and compile
    torch.cuda.synchronize()
    with watch() as report:
        fn()
    torch.cuda.synchronize()
    return list(report.sites)


def check_case(case, torch, device) -> TraceCheck:
    check = TraceCheck(case.code, "ok", list(case.flagged))
    if case.status != "ready":
        check.status = case.status
        return check
    if case.kind == RACE:
        check.status = "not a stall (race case)"
        return check
    try:
        before = case_mod.load(case.source, str(case.path), f"trace_{case.code}")
        sites = _trace(torch, lambda: before.case(device))
        in_case = [s for s in sites if s.file == str(case.path)]
        check.before_sites = [_site_text(s) for s in in_case]
        for first, last in case.flagged:
            if not any(first <= s.line <= last for s in in_case):
                check.problems.append(f"nothing reported at the flagged line {first}" + (f"-{last}" if last != first else ""))
        other = [s for s in sites if s.file != str(case.path)]
        check.before_sites += [f"{s.file}:{_site_text(s)}" for s in other]
        if case.fixable:
            after = case_mod.load(case.fixed_source, str(case.fixed_path), f"trace_{case.code}_fixed")
            after_sites = _trace(torch, lambda: after.case(device))
            check.after_sites = [_site_text(s) for s in after_sites]
            if after_sites:
                check.problems.append(f"the fixed case still reports {len(after_sites)} site(s)")
    except Exception as exc:  # noqa: BLE001 - reported, never hidden
        check.problems.append(f"{exc.__class__.__name__}: {exc}")
    if check.problems:
        check.status = "FAILED"
    return check


def _no_sync_loop(torch, x, idx, steps):
    for _ in range(steps):
        y = x[idx]
        y = y.to(x.dtype)
        x = (x * 0.999 + y.mean()).relu()
    return x


def overhead(torch, device, steps: int = 2000, repeats: int = 5) -> dict:
    """Host time of a launch-bound loop that never syncs (indexing, .to, elementwise ops),
    without and with the tracer; median of `repeats`."""
    from synclint.trace import allowed, watch

    x = torch.rand(1024, device=device)
    idx = torch.arange(0, 1024, 2, device=device)

    def timed() -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        _no_sync_loop(torch, x, idx, steps)
        with allowed():  # the timing's own sync: intentional
            torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e6 / steps

    timed()
    plain, traced, events = [], [], 0
    for _ in range(repeats):
        plain.append(timed())
        with watch() as report:
            traced.append(timed())
        events += report.events
    base, with_tracer = statistics.median(plain), statistics.median(traced)
    return {
        "steps": steps,
        "ops_per_step": 5,
        "us_per_step_plain": round(base, 2),
        "us_per_step_traced": round(with_tracer, 2),
        "overhead_pct": round((with_tracer - base) / base * 100, 1),
        "events_in_loop": events,
    }


def run(codes, torch, device) -> dict:
    checks = [check_case(case_mod.prepare(code), torch, device) for code in codes]
    return {"cases": checks, "overhead": overhead(torch, device)}


def render_markdown(result: dict, env: dict) -> str:
    checks: list[TraceCheck] = result["cases"]
    ran = [c for c in checks if c.status in ("ok", "FAILED")]
    ok = [c for c in ran if c.status == "ok"]
    o = result["overhead"]
    lines = [
        "# synclint trace: proof on a real GPU",
        "",
        f"Written by `scripts/gpu_proof.sh` (`synclint prove --trace-markdown`) on {env.get('device')}, "
        f"driver {env.get('driver')}, torch {env.get('torch')}.",
        "",
        "Each proof case (`fixtures/<CODE>/proof.py`) ran once under `synclint.trace.watch()` after two "
        "warm-up calls. A stalling `before` case passes when the tracer reports a site on every line "
        "its rule flags; the fixed case (synclint's own fix of it) passes when the tracer reports nothing.",
        "",
        f"**{len(ok)} of {len(ran)} cases pass**; {len(checks) - len(ran)} not run (reason in the table).",
        "",
        "| rule | result | flagged rows | tracer sites, before (line kind op count) | tracer sites, fixed | problems |",
        "|---|---|---|---|---|---|",
    ]
    for c in checks:
        rows = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in c.expected_rows) or "-"
        after = "n/a (no fix)" if c.after_sites is None else ("none" if not c.after_sites else "; ".join(c.after_sites))
        lines.append(f"| {c.code} | {c.status} | {rows} | {'; '.join(c.before_sites) or '-'} | {after} | {'; '.join(c.problems) or '-'} |")
    lines += [
        "",
        "## Overhead on a loop with no syncs",
        "",
        f"A launch-bound loop of {o['steps']} steps ({o['ops_per_step']} ops a step: device indexing, `.to` "
        "of a device tensor, elementwise ops), host time per step, median of 5:",
        "",
        "| without tracer | with tracer | overhead | events recorded |",
        "|---|---|---|---|",
        f"| {o['us_per_step_plain']} us | {o['us_per_step_traced']} us | {o['overhead_pct']} % | {o['events_in_loop']} |",
        "",
    ]
    return "\n".join(lines)


def to_json(result: dict) -> dict:
    from dataclasses import asdict

    return {"cases": [asdict(c) for c in result["cases"]], "overhead": result["overhead"]}

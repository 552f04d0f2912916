"""The tracer's own proof, over the same executable cases: each stalling `before` case must
be reported at the line its rule flags, each fixed case must report nothing; and the
tracer's overhead on a loop with no syncs."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from synclint.prove import cases as case_mod
from synclint.prove.cases import RACE
from synclint.trace.spans import runtime_rows


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
            # a loop rule's wait is where the loop's body uses an element (synclint/trace/spans.py)
            low, high = runtime_rows(case.code, first, last, case.source)
            if not any(low <= s.line <= high for s in in_case):
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
        with allowed():  # the timing's own syncs are intentional
            torch.cuda.synchronize()
        start = time.perf_counter()
        _no_sync_loop(torch, x, idx, steps)
        with allowed():
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


USAGE = """
Static analysis cannot see everything: values whose placement is unknown, syncs inside
library calls. PyTorch's own `torch.cuda.set_sync_debug_mode` misses real stalls
(non_blocking copies from or into pageable memory, explicit synchronize calls). The
tracer records both kinds at run time and ties them to the static findings.

## Usage

    synclint trace [--json FILE] [--compare] [--min-copy-bytes N] [-q] -- python script.py args...
    python -m synclint.trace -- python -m package.module args...

The program runs in the same process (so the hooks see it), as `__main__`, with its
arguments. Its exit code, stdout and stderr pass through unchanged; the tracer's summary
goes to stderr after the program ends (`-q`: none). With no CUDA device the program still
runs, the tracer says on stderr that no CUDA device is present, and records nothing.

What is recorded, each blamed on the innermost frame in your code (frames of torch,
synclint and the standard library's plumbing are skipped), counted per line, with the host
time the call blocked:

| kind | what | how it is seen |
|---|---|---|
| `sync` | every op PyTorch's sync debug mode reports (`.item()`, `if t:`, blocking copies, `nonzero`, mask indexing, ...) | `set_sync_debug_mode("warn")`; the warnings are caught and kept off stderr |
| `pageable-copy` | `non_blocking=True` copies between pageable host memory and the device: H2D of >= 1 MiB (a single 1 MiB copy did not stall, >= ~4 MiB did), strided views of pinned buffers, and D2H into pageable memory at any size (`--min-copy-bytes 0`: every pageable H2D copy) | wrapped `Tensor.to`, `Tensor.cuda`, `Tensor.copy_` (`is_pinned()`, `is_contiguous()`) |
| `explicit-sync` | `torch.cuda.synchronize()`, `Event.synchronize()`, `Stream.synchronize()` | wrapped functions |

The host time is exact for calls the tracer wraps (copies, explicit syncs, and the common
readbacks: `item`, `tolist`, `cpu`, `numpy`, `__bool__`/`__int__`/`__float__`, indexing,
`nonzero`, `unique`, `repeat_interleave`, `torch.tensor`, ...). Debug mode's warning
arrives only when an op returns, so a sync inside any other op is counted with its time
unknown (`untimed` in the JSON).

In code:

    import synclint.trace

    with synclint.trace.watch() as report:      # this thread's syncs
        step()
    print(report.summary())

    with synclint.trace.allowed():              # intentional: counted, not reported
        torch.cuda.synchronize()

Both are per thread: a background thread is neither recorded by another thread's `watch()`
nor silenced by its `allowed()` (`watch(all_threads=True)`, which the CLI uses, records
every thread; each thread's own `allowed()` still applies). The static rules honour
`with synclint.trace.allowed():` too.

Joining with the static findings, by file and line (a site on any row of a multi-line
finding confirms it; a loop over a device tensor, flagged at its header, is confirmed by a
site anywhere in the loop, where the body uses an element):

    synclint trace --json trace.json -- python serve.py
    synclint check --runtime trace.json src/        # or: synclint trace --compare -- python serve.py

prints three lists: **runtime only** first (syncs no rule flagged: what static analysis
missed), then **confirmed by both**, then **static only** (flagged, not seen at run time:
not executed, or not a sync there).

Limits: the hooks replace PyTorch's sync debug mode for the run (a program that sets it
itself changes what is recorded); code compiled by `torch.compile` is seen only where it
falls back to eager; `from torch.cuda import synchronize` bound before the run started is
not wrapped; child processes (multiprocessing, DataLoader workers) are not traced.
"""


def render_markdown(result: dict, env: dict) -> str:
    checks: list[TraceCheck] = result["cases"]
    ran = [c for c in checks if c.status in ("ok", "FAILED")]
    ok = [c for c in ran if c.status == "ok"]
    o = result["overhead"]
    lines = [
        "# synclint trace",
        "",
        USAGE.strip(),
        "",
        "## Proof on a real GPU",
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

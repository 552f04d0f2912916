"""Join run-time sites with static findings by file and line: confirmed by both, static
only, runtime only. Runtime-only sites are what static analysis missed: listed first."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from synclint.trace.events import Site, TraceReport, format_site
from synclint.trace.spans import runtime_rows, waits_in_loop_body


@dataclass
class Join:
    runtime_only: list[Site] = field(default_factory=list)
    confirmed: list[tuple[Site, list]] = field(default_factory=list)  # (site, violations)
    static_only: list = field(default_factory=list)


def _norm(path: str) -> str:
    if path.startswith("<"):
        return path
    return os.path.normcase(os.path.realpath(path))


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def join(violations, report: TraceReport) -> Join:
    """A site confirms a finding when both are in the same file and the site's line lies
    within the finding's rows (a multi-line call reports the line the interpreter was on),
    or, for a loop over a device tensor, within the loop (synclint/trace/spans.py, which
    reads the file)."""
    sources: dict[str, str | None] = {}
    by_file: dict[str, list] = {}
    for v in violations:
        by_file.setdefault(_norm(v.filename), []).append(v)
    rows: dict[int, tuple[int, int]] = {}
    for name, found in by_file.items():
        for v in found:
            first, last = v.location.row, v.end_location.row
            if waits_in_loop_body(v.code):
                if name not in sources:
                    sources[name] = _read(name)
                first, last = runtime_rows(v.code, first, last, sources[name])
            rows[id(v)] = (first, last)
    out = Join()
    matched: set[int] = set()
    for site in report.sorted_sites():
        hits = [v for v in by_file.get(_norm(site.file), ()) if rows[id(v)][0] <= site.line <= rows[id(v)][1]]
        if hits:
            out.confirmed.append((site, hits))
            matched.update(id(v) for v in hits)
        else:
            out.runtime_only.append(site)
    out.static_only = [v for v in violations if id(v) not in matched]
    return out


def render(result: Join, report: TraceReport) -> str:
    lines = []
    if not report.cuda:
        lines.append("note: the trace was recorded without a CUDA device: it holds no run-time syncs")
    lines.append(f"Runtime only ({len(result.runtime_only)}): syncs that happened where no rule flagged anything")
    lines.extend(f"  {format_site(s)}" for s in result.runtime_only)
    lines.append(f"Confirmed by both ({len(result.confirmed)}):")
    for site, hits in result.confirmed:
        codes = ", ".join(sorted({v.code for v in hits}))
        lines.append(f"  {format_site(site)} [{codes}]")
    lines.append(f"Static only ({len(result.static_only)}): flagged, not seen at run time (not executed, or not a sync there)")
    for v in result.static_only:
        lines.append(f"  {v.filename}:{v.location.row}:{v.location.column}: {v.code} {v.message}")
    return "\n".join(lines) + "\n"


def compare_report(violations, path: Path) -> str:
    """`synclint check --runtime FILE.json`: the join as text."""
    report = TraceReport.read(Path(path))
    return render(join(violations, report), report)


def lint_files_for(report: TraceReport, extra: list[str] = ()) -> list:
    """Static findings for the program's own files: every file a site is in, plus `extra`."""
    from synclint.api import lint_source, settings_for

    files = {s.file for s in report.sites if not s.file.startswith("<")}
    files.update(extra)
    violations = []
    for name in sorted(files):
        path = Path(name)
        try:
            source = path.read_bytes()
        except OSError:
            continue
        violations.extend(lint_source(source, name, settings_for(path.parent)))
    return violations

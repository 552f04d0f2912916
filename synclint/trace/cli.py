"""`synclint trace [--json FILE] [--compare] -- python script.py args...` (also
`python -m synclint.trace ...`). The program's exit code, stdout and stderr pass through;
the tracer's own summary goes to stderr after the program has finished."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synclint.trace.run import ProgramError, parse_program, run_program

USAGE = "synclint trace [--json FILE] [--compare] [--quiet] -- python script.py args..."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synclint trace", usage=USAGE, description=(
        "Run a program and record every sync that happens at run time: ops PyTorch's sync debug "
        "mode reports, non_blocking copies between pageable memory and the device, explicit "
        "synchronize calls; each blamed on the innermost line of your code."))
    p.add_argument("--json", metavar="FILE", help="write the sites as JSON (input of `synclint check --runtime`)")
    p.add_argument("--compare", action="store_true", help="join the sites with synclint's static findings")
    p.add_argument("--min-copy-bytes", type=int, default=None, metavar="N",
                   help="report pageable non_blocking H2D copies from N bytes (default 1 MiB; 0: every one)")
    p.add_argument("-q", "--quiet", action="store_true", help="print no summary")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        cut = argv.index("--")
        ours, program = argv[:cut], argv[cut + 1:]
    else:  # `synclint trace script.py`: everything from the first non-option is the program
        cut = next((i for i, a in enumerate(argv) if not a.startswith("-")), len(argv))
        if cut and argv[cut - 1] == "--json":
            cut = next((i for i, a in enumerate(argv) if i > cut and not a.startswith("-")), len(argv))
        ours, program = argv[:cut], argv[cut:]
    try:
        args = _parser().parse_args(ours)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        kind, target, program_args = parse_program(program)
    except ProgramError as exc:
        print(f"synclint trace: error: {exc}", file=sys.stderr)
        return 2

    from synclint.trace import hooks
    from synclint.trace.regions import cuda_device_name

    if args.min_copy_bytes is not None:
        hooks.pageable_h2d_report_bytes = max(args.min_copy_bytes, 0)

    if cuda_device_name() is None:
        print("synclint trace: no CUDA device present: running the program without tracing; nothing recorded", file=sys.stderr)
        from synclint.trace.events import TraceReport

        report = TraceReport(program=program)
        report.exit_code = run_program(kind, target, program_args)
    else:
        from synclint.trace.regions import watch

        with watch(all_threads=True) as report:
            report.program = program
            report.exit_code = run_program(kind, target, program_args)
    _report(report, args, target if kind == "path" else None)
    return report.exit_code


def _report(report, args, script: str | None) -> None:
    if args.json:
        try:
            report.write(Path(args.json))
        except OSError as exc:
            print(f"synclint trace: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
    if args.compare:
        from synclint.trace.compare import join, lint_files_for, render

        extra = [str(Path(script).resolve())] if script else []
        print(render(join(lint_files_for(report, extra), report), report), end="", file=sys.stderr)
    elif not args.quiet and report.cuda:
        print(f"synclint trace: {report.summary()}", file=sys.stderr)

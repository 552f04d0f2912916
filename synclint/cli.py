"""The command line: `synclint check`, `synclint --fix`, `synclint rule`, `synclint rules`,
`synclint prove`, `synclint trace`. Exit codes: 0 clean, 1 findings remain, 2 usage,
configuration or internal error."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from synclint import __version__
from synclint.config import H2D_HELPER_PRESETS, ConfigError, Settings, load_settings
from synclint.terminal import LEGEND, Progress, Style, colour_enabled, summary_lines
from synclint.violation import INPUT_CODES, Confidence

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SUBCOMMANDS = ("check", "rule", "rules", "prove", "trace", "server")
OUTPUT_FORMATS = ("full", "concise", "json", "sarif", "github", "gitlab")
# Formats that show or hash the source lines of the findings.
_NEEDS_SOURCES = ("full", "sarif", "gitlab")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # exit 2 with one line, as argparse does, but catchable
        raise UsageError(message)


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


CHECK_EPILOG = """\
exit codes:
  0  nothing found (or --exit-zero)
  1  findings remain (with --diff: something would be fixed)
  2  a usage, configuration or internal error, or a fixed file that could not be written

examples:
  synclint check                                  lint the current folder
  synclint check src/ model.py notebook.ipynb     files, folders and notebooks
  synclint check --select SL1 --ignore SL104 src/ one family, less one rule
  synclint check --diff src/                      show what --fix would change
  synclint check --fix src/                       apply the safe fixes
  synclint check --output-format sarif -o synclint.sarif --exit-zero .
  cat model.py | synclint check - --stdin-filename model.py

`synclint rules` lists the codes; `synclint rule CODE` prints one rule's documentation.
Environment: NO_COLOR / FORCE_COLOR (colour), SYNCLINT_OUTPUT_FORMAT (the default format)."""


def check_parser(prog: str = "synclint check") -> argparse.ArgumentParser:
    p = _Parser(
        prog=prog,
        description="Lint PyTorch code (Python files and Jupyter notebooks) for hidden GPU<->CPU synchronizations.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", type=str, help="files or folders (default: .); - reads stdin")
    fixes = p.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    fixes.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix (the default)")
    fixes.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply fixes that may change behaviour")
    fixes.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false", help="only the safe fixes")
    fixes.add_argument("--diff", action="store_true", help="print the diff of the fixes; write nothing")
    fixes.add_argument("--h2d-helper", type=str, default=None, help=f"what H2D fixes call: inline (default, torch only), {', '.join(H2D_HELPER_PRESETS)} or a dotted path")
    rules = p.add_argument_group("rule selection")
    rules.add_argument("--select", type=_csv, default=None, help="rule codes or prefixes to enable (SL1 = the family)")
    rules.add_argument("--ignore", type=_csv, default=None, help="rule codes or prefixes to disable")
    rules.add_argument("--extend-select", type=_csv, default=None, help="add to the selection")
    rules.add_argument("--min-confidence", type=str, default=None, choices=("low", "medium", "high"),
                       help="hide findings below this confidence that the value is on the GPU (default: medium)")
    rules.add_argument(
        "--include-cold",
        action="store_true",
        default=None,
        help="also report findings in code that runs once or rarely (init, weight loading, warm-up, tests)",
    )
    output = p.add_argument_group("output")
    output.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None, help="default: full (or $SYNCLINT_OUTPUT_FORMAT)")
    output.add_argument("-o", "--output-file", type=str, default=None, help="write the report to this file")
    output.add_argument("--statistics", action="store_true", help="count findings per rule")
    output.add_argument("--explain", action="store_true", help="print why each flagged value is where we think")
    output.add_argument("--runtime", type=str, default=None, help="join with a `synclint trace --json` report")
    output.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    files = p.add_argument_group("files and configuration")
    files.add_argument("--config", type=str, default=None, help="a pyproject.toml or synclint.toml to use")
    files.add_argument("--force-exclude", action="store_true", default=None, help="apply excludes to files named on the command line too")
    files.add_argument("--stdin-filename", type=str, default=None, help="the name of the file read from stdin")
    run = p.add_argument_group("performance")
    run.add_argument("-j", "--jobs", type=int, default=None, help="processes (default: all cores)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    run.add_argument("--cache-dir", type=str, default=None, help="where the cache lives (default: .synclint_cache)")
    p.add_argument("--version", action="version", version=f"synclint {__version__}")
    return p


def _settings_from(args) -> Settings:
    paths = [Path(p) for p in args.paths if p != "-"] or [Path(args.stdin_filename or ".")]
    config = Path(args.config) if args.config else None
    settings = load_settings([p if _exists(p) else p.parent for p in paths], config)
    changes: dict = {}
    if args.select is not None:
        changes["select"] = tuple(args.select)
    if args.extend_select is not None:
        changes["extend_select"] = (*settings.extend_select, *args.extend_select)
    if args.ignore is not None:
        changes["ignore"] = (*settings.ignore, *args.ignore)
    if args.force_exclude is not None:
        changes["force_exclude"] = args.force_exclude
    if args.unsafe_fixes is not None:
        changes["unsafe_fixes"] = args.unsafe_fixes
    if args.min_confidence is not None:
        changes["min_confidence"] = Confidence.parse(args.min_confidence)
    if args.include_cold is not None:
        changes["include_cold"] = args.include_cold
    if args.cache_dir is not None:
        changes["cache_dir"] = args.cache_dir
    if args.h2d_helper is not None:
        from synclint.config import _helper

        changes["h2d_helper"] = _helper(args.h2d_helper, "--h2d-helper", "command line")
    from synclint.rules import validate_selectors

    for option, selectors in (("--select", args.select), ("--extend-select", args.extend_select), ("--ignore", args.ignore)):
        try:
            validate_selectors(selectors or (), option)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return settings.replace(**changes) if changes else settings


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # inside a folder we may not search: the run reports it as SL002
        return False


def _write_output(text: str, output_file: str | None) -> None:
    if output_file:
        try:
            Path(output_file).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{output_file}: cannot write the report: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _statistics(violations, unsafe_fixes: bool = False) -> str:
    from synclint.report.concise import fixable as fixed_by_fix
    from synclint.rules import rule_by_code

    counts = Counter(v.code for v in violations)
    tiers = Counter((v.code, v.tier) for v in violations)
    fixable = {v.code for v in violations if fixed_by_fix(v, unsafe_fixes)}
    lines = []
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = rule_by_code(code)
        name = rule.name if rule else INPUT_CODES.get(code, ("",))[0]
        split = ", ".join(f"{tiers[code, t]} {t}" for t in ("hot", "unknown", "cold") if tiers[code, t])
        lines.append(f"{count:>5}\t{code}\t[{'*' if code in fixable else ' '}] {name}\t({split})")
    return "\n".join(lines) + ("\n" if lines else "")


def _display_path(filename: str) -> str:
    """A path as the user thinks of it: relative to the working directory when inside it."""
    if filename == "-" or not os.path.isabs(filename):
        return filename
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def _diff(outcomes) -> str:
    """git-style unified diff of the fixes: `a/x.py`/`b/x.py` for relative paths, the plain
    path on both sides for one outside the working directory (never `a//tmp/x.py`)."""
    from synclint.lines import unified_diff

    chunks = []
    for o in outcomes:
        shown = _display_path(o.filename)
        old, new = (shown, shown) if os.path.isabs(shown) else (f"a/{shown}", f"b/{shown}")
        chunks.append(unified_diff(o.original, o.fixed, old, new))
    return "".join(chunks)


def _input_problems(errors) -> tuple[list, list[str]]:
    """Discovery problems -> SL002 findings (a path that could not be linted must fail a CI
    gate), except a folder reached twice through a symlink, which is only a note."""
    from synclint.discover import FOLDER_CYCLE
    from synclint.engine import io_error_violation

    findings, notes = [], []
    for path, message in errors:
        if message == FOLDER_CYCLE:
            notes.append(f"synclint: note: {path}: {message}")
        else:
            findings.append(io_error_violation(path, message))
    return findings, notes


def _write_fixes(changed, settings, unsafe) -> list[str]:
    """Write each fixed file (see synclint.fix.write.write_fixed: never over an edit made
    during the run, never over a read-only file); a file that is not written is left as it
    was and named, its findings are reported as remaining (not fixed), and the others are
    still written."""
    from synclint.fix.write import write_fixed
    from synclint.runner import process_file

    failures = []
    for o in changed:
        try:
            write_fixed(Path(o.filename), o.fixed.encode(o.encoding), o.source)
        except (OSError, UnicodeEncodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            failures.append(f"synclint: {o.filename}: cannot write the fixed file: {reason}")
            # The file keeps its old text: report what it holds, as a lint would.
            before = process_file(o.filename, settings, False, unsafe, source=o.source) if o.source is not None else None
            o.violations = before.violations if before is not None else o.violations
            o.applied = 0
            o.fixed = o.original
    return failures


def run_check(argv: list[str]) -> int:
    args = check_parser().parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if "-" in args.paths and len(args.paths) > 1:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    settings = _settings_from(args)
    fmt = args.output_format or os.environ.get("SYNCLINT_OUTPUT_FORMAT") or "full"
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {fmt!r}")
    from_stdin = "-" in args.paths
    want_fix = bool(args.fix) or args.diff
    unsafe = settings.unsafe_fixes

    from synclint import report
    from synclint.runner import lint_paths, process_file

    stdin_bytes = b""
    if from_stdin:
        stdin_bytes = sys.stdin.buffer.read()
        outcomes = [process_file(args.stdin_filename or "-", settings, want_fix, unsafe, source=stdin_bytes)]
        problems, notes = [], []
    else:
        paths = args.paths or ["."]
        progress = None if args.quiet else Progress
        run = lint_paths([Path(p) for p in paths], settings, fix=want_fix, unsafe=unsafe, jobs=args.jobs, use_cache=not args.no_cache, progress=progress)
        outcomes = run.outcomes
        problems, notes = _input_problems(run.errors)
        if not outcomes and not run.errors:
            print(f"synclint: warning: no Python files or notebooks found under {', '.join(paths)}", file=sys.stderr)

    for note in notes:
        print(note, file=sys.stderr)
    for outcome in outcomes:
        if outcome.error:
            print(f"synclint: {outcome.filename}: {outcome.error}", file=sys.stderr)

    changed = [o for o in outcomes if o.changed]
    if args.diff:
        fixed_total = sum(o.applied for o in outcomes)
        sys.stdout.write(_diff(changed))
        print(f"Would fix {fixed_total} finding{'s' * (fixed_total != 1)} in {len(changed)} file{'s' * (len(changed) != 1)}.", file=sys.stderr)
        if args.exit_zero:
            return EXIT_CLEAN
        return EXIT_FINDINGS if changed or problems else EXIT_CLEAN

    write_failures: list[str] = []
    if args.fix and from_stdin:
        # The fixed text goes to stdout (as ruff does); the report goes to stderr.
        # Bytes in, bytes out: the input's encoding (and BOM), and the very bytes when
        # nothing was fixed.
        only = outcomes[0]
        out = stdin_bytes
        if only.changed:
            try:
                out = only.fixed.encode(only.encoding)
            except UnicodeEncodeError as exc:
                print(f"synclint: {only.filename}: cannot encode the fixed text as {only.encoding}: {exc}; printed unchanged", file=sys.stderr)
        sys.stdout.flush()
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    elif args.fix:
        write_failures = _write_fixes(changed, settings, unsafe)
        for line in write_failures:
            print(line, file=sys.stderr)
    fixed_total = sum(o.applied for o in outcomes)
    violations = sorted([*problems, *(v for o in outcomes for v in o.violations)], key=lambda v: v.sort_key)

    sources: dict = {}
    if fmt in _NEEDS_SOURCES:
        for o in outcomes:
            if o.violations:
                sources[o.filename] = _source_of(o, stdin_bytes if from_stdin else None)
    if args.runtime:
        from synclint.trace.compare import compare_report

        text = compare_report(violations, Path(args.runtime))
    elif args.statistics:
        text = _statistics(violations, unsafe)
    else:
        report_stream = sys.stderr if from_stdin and args.fix else sys.stdout
        style = Style(not args.output_file and colour_enabled(report_stream))
        text = report.render(fmt, violations, sources=sources, explain=args.explain, style=style, unsafe_fixes=unsafe)
    report_to_stderr = from_stdin and bool(args.fix)
    if report_to_stderr:
        sys.stderr.write(text)
    else:
        _write_output(text, args.output_file)
    if fmt in report.TERMINAL_FORMATS and not args.quiet:
        stream = sys.stderr if report_to_stderr or args.output_file else sys.stdout
        for line in _summary(violations, fixed_total, bool(args.fix), unsafe, legend=not args.statistics):
            print(line, file=stream)
    if write_failures:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if violations else EXIT_CLEAN


def _summary(violations, fixed: int, fixing: bool, unsafe: bool, legend: bool = True) -> list[str]:
    """The legend of the markers (when something was found), then ruff's summary lines."""
    from synclint.report.concise import fixable as fixed_by_fix

    remaining = len(violations)
    fixable = sum(1 for v in violations if fixed_by_fix(v, unsafe))
    hidden = 0 if unsafe else sum(1 for v in violations if v.fix is not None and not fixed_by_fix(v, False))
    lines = [LEGEND] if legend and any(v.code not in INPUT_CODES for v in violations) else []
    return lines + summary_lines(remaining, fixed, fixing, fixable, hidden)


def _source_of(outcome, stdin_bytes: bytes | None):
    """The text a finding's rows count in: the fixed text after --fix, stdin's, or the file's;
    for a notebook, {cell index: cell text}."""
    from synclint.report.fingerprint import read_source_text

    if outcome.fixed is not None:
        text = outcome.fixed
    elif stdin_bytes is not None:
        text = stdin_bytes.decode(outcome.encoding, errors="replace")
    else:
        return read_source_text(outcome.filename)
    if outcome.filename.endswith(".ipynb"):
        from synclint.notebook import cell_texts

        return cell_texts(text)
    return text


def run_rule(argv: list[str]) -> int:
    p = _Parser(prog="synclint rule", description="Print a rule's documentation.")
    p.add_argument("code")
    args = p.parse_args(argv)
    from synclint.rules import rule_by_code

    code = args.code.upper()
    if code in INPUT_CODES:
        name, summary = INPUT_CODES[code]
        print(f"# {code} {name}\n")
        print("Fix: never. Severity: error.\n")
        print(f"Reported when {summary}. It is a finding like the others (exit 1), so that a CI gate")
        print("never passes over a file it could not lint; it cannot be suppressed or ignored per line.")
        return EXIT_CLEAN
    rule = rule_by_code(args.code)
    if rule is None:
        raise UsageError(f"unknown rule `{args.code}` (see `synclint rules`)")
    print(f"# {rule.code} {rule.name}\n")
    print(f"Fix: {rule.fix_availability.value}. Severity: {rule.severity.value}.\n")
    print(rule.doc())
    return EXIT_CLEAN


def run_rules(argv: list[str]) -> int:
    p = _Parser(prog="synclint rules", description="List the rules.")
    p.add_argument("--output-format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    from synclint.rules import all_rules

    if args.output_format == "json":
        import json

        data = [
            {"code": code, "name": name, "summary": summary, "fix": "never", "severity": "error"}
            for code, (name, summary) in INPUT_CODES.items()
        ] + [
            {"code": r.code, "name": r.name, "summary": r.summary, "fix": r.fix_availability.value, "severity": r.severity.value}
            for r in all_rules()
        ]
        print(json.dumps(data, indent=2))
        return EXIT_CLEAN
    for code, (name, summary) in INPUT_CODES.items():
        print(f"{code}  {name:<36} fix: {'never':<9} {summary}")
    for r in all_rules():
        print(f"{r.code}  {r.name:<36} fix: {r.fix_availability.value:<9} {r.summary}")
    return EXIT_CLEAN


def _terminate_cleanly() -> None:
    """SIGTERM (a CI timeout, `kill`) ends the run through the normal exits, so that a file
    being written is left whole and its temp file removed (SIGKILL cannot be caught)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):
        pass


COMMANDS = (*SUBCOMMANDS, "help", "version")
MAIN_HELP = """\
usage: synclint [check] [options] [PATHS...]
       synclint rule CODE | rules | prove [...] | trace [...] -- python script.py | server
       synclint help [COMMAND] | version

commands:
  check    lint files (the default; `synclint --fix .` is `synclint check --fix .`)
  rule     print a rule's documentation
  rules    list the rules
  prove    show on a GPU that each flagged pattern stalls and each fix removes it
  trace    run a program and record the syncs that happen at run time
  server   run the language server (LSP on stdio) for an editor
  help     print this help, or a command's (`synclint help check`)
  version  print the version

`synclint check --help` lists the options, the exit codes and examples."""


def _help(argv: list[str]) -> int:
    if not argv:
        print(MAIN_HELP)
        return EXIT_CLEAN
    if argv[0] not in SUBCOMMANDS:
        raise UsageError(f"no help for `{argv[0]}`: commands are {', '.join(COMMANDS)}")
    return main([argv[0], "--help"])


def _unknown_command(word: str) -> bool:
    """A first word that is neither an option, a command nor a path: a mistyped command
    (`synclint chek`). Something shaped like a path (a separator, a Python or notebook
    suffix) is left to `check`, which reports a missing path as SL002."""
    if word.startswith("-") or word in SUBCOMMANDS or os.path.lexists(word):
        return False
    return os.sep not in word and "/" not in word and not word.endswith((".py", ".pyi", ".ipynb"))


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the command itself (not a caller in the same process)
        _terminate_cleanly()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in ("--version", "-V", "version"):
            print(f"synclint {__version__}")
            return EXIT_CLEAN
        if argv and argv[0] in ("-h", "--help"):
            print(MAIN_HELP)
            return EXIT_CLEAN
        if argv and argv[0] == "help":
            return _help(argv[1:])
        if argv and _unknown_command(argv[0]):
            raise UsageError(
                f"unknown command or path `{argv[0]}` (commands: {', '.join(COMMANDS)}; "
                f"to lint a path that does not exist yet, run `synclint check {argv[0]}`)"
            )
        command = argv[0] if argv and argv[0] in SUBCOMMANDS else "check"
        rest = argv[1:] if argv and argv[0] in SUBCOMMANDS else argv
        if command == "check":
            return run_check(rest)
        if command == "rule":
            return run_rule(rest)
        if command == "rules":
            return run_rules(rest)
        if command == "prove":
            from synclint.prove.cli import main as prove_main

            return prove_main(rest)
        if command == "trace":
            from synclint.trace.cli import main as trace_main

            return trace_main(rest)
        if command == "server":
            from synclint.server import main as server_main

            return server_main(rest)
    except UsageError as exc:
        print(f"synclint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"synclint: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("synclint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `synclint check . | head`: the reader left. Point stdout at /dev/null so that the
        # interpreter's final flush does not fail again, and stop quietly (Python's advice).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except SystemExit as exc:  # argparse --help / --version
        return exc.code if isinstance(exc.code, int) else EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - an internal error is exit 2 with a message
        import traceback

        if os.environ.get("SYNCLINT_DEBUG"):
            traceback.print_exc()
        print(f"synclint: internal error: {exc.__class__.__name__}: {exc} (set SYNCLINT_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR

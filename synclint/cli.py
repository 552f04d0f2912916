"""The command line: `synclint check`, `synclint --fix`, `synclint rule`, `synclint rules`,
`synclint prove`, `synclint trace`, `synclint add-helper`. Exit codes: 0 clean, 1 findings remain, 2 usage,
configuration or internal error."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections import Counter
from pathlib import Path

from synclint import __version__
from synclint.adoption import AdoptionError
from synclint.config import H2D_HELPER_PRESETS, ConfigError, Settings, SettingsResolver
from synclint.terminal import LEGEND, Progress, Style, colour_enabled, summary_lines
from synclint.violation import ENGINE_CODES, INPUT_CODES, IO_ERROR, SYNTAX_ERROR, UNUSED_SUPPRESSION, Confidence

UNUSED_SUPPRESSION_DOC = """\
Reports a `# noqa: CODES` or `# synclint: ignore[CODES]` comment (or a code in it) that
suppresses no finding, as ruff's RUF100 does: the code was fixed, moved, or never fired.
Only rules enabled for the file count: a comment naming a rule that is not selected is
left alone, as are another linter's codes (`# noqa: E501`), a blanket `# noqa` and
`# gpu-sync-ok: <reason>`. Unknown `SL` codes are reported. `# noqa: SL003` on the line
keeps its comments.

The fix (safe) removes the unused codes, or the whole comment when none is used."""

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SUBCOMMANDS = ("check", "rule", "rules", "prove", "trace", "server", "add-helper")
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
    tiers = rules.add_mutually_exclusive_group()
    tiers.add_argument(
        "--include-cold",
        action="store_true",
        default=None,
        help="also report findings in code that runs once or rarely (init, weight loading, warm-up, tests)",
    )
    tiers.add_argument(
        "--only-hot",
        action="store_true",
        default=None,
        help="report only findings on paths that run every step (tier hot), not those of code whose frequency nothing shows",
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
    g = p.add_argument_group("gradual adoption")
    g.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding (--add-noqa=REASON writes a reason after the code)")
    g.add_argument("--add-noqa-reason", type=str, default=None, metavar="TEXT", help="the reason --add-noqa writes after the code")
    g.add_argument("--show-suppressions", action="store_true", help="list the findings that comments suppress, with their reasons")
    g.add_argument("--baseline", type=str, default=None, metavar="FILE", help="report only findings not in FILE; writes FILE when it does not exist")
    g.add_argument("--update-baseline", action="store_true", help="(re)write the --baseline FILE with the current findings")
    g.add_argument("--diff-base", type=str, default=None, metavar="REV", help="report only findings on lines added or changed since the git revision REV")
    files.add_argument("--show-settings", type=str, default=None, metavar="FILE", help="print the settings used for FILE and the files they come from")
    files.add_argument("--show-files", action="store_true", help="list the files that would be linted, with their configuration file")
    p.add_argument("--version", action="version", version=f"synclint {__version__}")
    return p


def _overrides(args):
    """The command-line options that override every configuration file, as a function
    from a file's Settings to the ones used."""
    changes: dict = {}
    if args.select is not None:
        changes["select"] = tuple(args.select)
    if args.force_exclude is not None:
        changes["force_exclude"] = args.force_exclude
    if args.unsafe_fixes is not None:
        changes["unsafe_fixes"] = args.unsafe_fixes
    if args.min_confidence is not None:
        changes["min_confidence"] = Confidence.parse(args.min_confidence)
    if args.include_cold is not None:
        changes["include_cold"] = args.include_cold
        changes["only_hot"] = False  # the command line's choice of tiers replaces the file's
    if args.only_hot is not None:
        changes["only_hot"] = args.only_hot
        changes["include_cold"] = False
    if args.cache_dir is not None:
        changes["cache_dir"] = args.cache_dir
    if args.h2d_helper is not None:
        from synclint.config import _helper

        changes["h2d_helper"] = _helper(args.h2d_helper, "--h2d-helper", "command line")
    for option, selectors in (("--select", args.select), ("--extend-select", args.extend_select), ("--ignore", args.ignore)):
        if not selectors:
            continue
        # Imported only here: the rules import the engine (libcst, the analysis), which a warm
        # run served from the cache never needs.
        from synclint.rules import validate_selectors

        try:
            validate_selectors(selectors, option)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def apply(settings: Settings) -> Settings:
        more = dict(changes)
        if args.extend_select is not None:
            more["extend_select"] = (*settings.extend_select, *args.extend_select)
        if args.ignore is not None:
            more["ignore"] = (*settings.ignore, *args.ignore)
        return settings.replace(**more) if more else settings

    return apply


def _resolver_from(args) -> SettingsResolver:
    """Each file's settings: its nearest configuration file's (or --config's), overridden."""
    config = Path(args.config) if args.config else None
    return SettingsResolver(config, _overrides(args))


def _settings_from(args) -> Settings:
    """The settings of the first path (or of stdin's file name)."""
    paths = [Path(p) for p in args.paths if p != "-"] or [Path(args.stdin_filename or ".")]
    return _resolver_from(args).for_path(paths[0] if _exists(paths[0]) else paths[0].parent)


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
        name = rule.name if rule else ENGINE_CODES.get(code, ("",))[0]
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
    if not errors:
        return [], []  # and the engine (libcst) stays unimported in a run served from the cache
    from synclint.discover import FOLDER_CYCLE
    from synclint.engine import io_error_violation

    findings, notes = [], []
    for path, message in errors:
        if message == FOLDER_CYCLE:
            notes.append(f"synclint: note: {path}: {message}")
        else:
            findings.append(io_error_violation(path, message))
    return findings, notes


def _write_fixes(changed, settings_of) -> list[str]:
    """Write each fixed file (see synclint.fix.write.write_fixed: never over an edit made
    during the run, never over a read-only file); a file that is not written is left as it
    was and named, its findings are reported as remaining (not fixed), and the others are
    still written. `settings_of(path)` gives a file's settings."""
    from synclint.fix.write import write_fixed
    from synclint.runner import process_file

    failures = []
    for o in changed:
        try:
            write_fixed(Path(o.filename), o.fixed.encode(o.encoding), o.source)
        except (OSError, UnicodeEncodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            failures.append(f"synclint: {o.filename}: cannot write the fixed file: {reason}")
            if o.source is not None:  # the file keeps its old text: report what it holds
                settings = settings_of(Path(o.filename))
                o.violations = process_file(o.filename, settings, False, settings.unsafe_fixes, source=o.source).violations
            o.applied = 0
            o.fixed = o.original
    return failures


def _split_add_noqa(argv: list[str]) -> list[str]:
    """`--add-noqa=REASON` (ruff's spelling) -> `--add-noqa --add-noqa-reason REASON`."""
    out = []
    for arg in argv:
        if arg.startswith("--add-noqa="):
            out += ["--add-noqa", "--add-noqa-reason", arg.split("=", 1)[1]]
        else:
            out.append(arg)
    return out


def _add_noqa(outcomes, reason: str | None) -> int:
    from synclint.fix.write import atomic_write
    from synclint.noqa import add_noqa

    added = skipped = 0
    for o in outcomes:
        if not o.violations:
            continue
        if o.filename.endswith(".ipynb"):
            skipped += len(o.violations)  # rows count in cells: not written into the JSON
            continue
        try:
            text = Path(o.filename).read_bytes().decode(o.encoding)
        except (OSError, UnicodeDecodeError, LookupError):
            continue
        new, count, left = add_noqa(text, o.violations, reason)
        skipped += left
        if count:
            try:
                atomic_write(Path(o.filename), new.encode(o.encoding))
            except (OSError, UnicodeEncodeError) as exc:
                print(f"synclint: {o.filename}: cannot write: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
                continue
            added += count
    if skipped:
        print(
            f"synclint: {skipped} finding{'s' * (skipped != 1)} left without a comment: "
            "no line of the statement ends outside a string, the file does not parse, or it is a notebook",
            file=sys.stderr,
        )
    return added


def _toml_value(value) -> str:
    import enum

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return f'"{value.name.lower()}"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # per-file-ignores
        return "{" + ", ".join(f'"{glob}" = {_toml_value(codes)}' for glob, codes in value) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def _show_settings(resolver: SettingsResolver, path: Path) -> int:
    """The settings a file is linted with, as TOML keys, and the files they come from."""
    import dataclasses

    from synclint.config import _KEYS
    from synclint.discover import project_root

    settings = resolver.for_path(path)
    print(f"Settings for {path}")
    if settings.source:
        chain = " (extends " + ", which extends ".join(_display_path(e) for e in settings.extends) + ")" if settings.extends else ""
        print(f"# from {_display_path(settings.source)}{chain}")
    else:
        print("# from the defaults: no configuration file found")
    print(f"# project root: {_display_path(str(project_root(settings))) or '.'}")
    names = {name: key for key, (name, _) in _KEYS.items() if not key.startswith("extend-") or name in ("extend_select", "extend_exclude")}
    for f in dataclasses.fields(settings):
        if f.name in names:
            value = getattr(settings, f.name)
            shown = "{}" if f.name == "per_file_ignores" and not value else _toml_value(value)
            print(f"{names[f.name]} = {shown}")
    return EXIT_CLEAN


def _show_files(resolver: SettingsResolver, paths: list[Path]) -> int:
    """The files a check of `paths` would lint, each with its configuration file."""
    from synclint.discover import discover

    found = discover(paths, resolver)
    for path in found.files:
        source = resolver.for_file(path).source
        print(f"{_display_path(str(path))}" + (f"  ({_display_path(source)})" if source else ""))
    for path, message in found.errors:
        print(f"synclint: {path}: {message}", file=sys.stderr)
    return EXIT_ERROR if found.errors and not found.files else EXIT_CLEAN


def _show_suppressions(resolver: SettingsResolver, paths: list[Path]) -> str:
    """Each finding a comment suppresses, with the comment and its reason."""
    from synclint.discover import discover
    from synclint.engine import lint_source

    lines = []
    for path in discover(paths, resolver).files:
        try:
            source = path.read_bytes()
        except OSError:
            continue  # a check reports it
        for v, directive in lint_source(source, str(path), resolver.for_file(path)).suppressions:
            reason = f": {directive.reason}" if directive.reason else ""
            lines.append(
                f"{_display_path(v.filename)}:{v.location.row}:{v.location.column}: {v.code} "
                f"suppressed by `{directive.text}` on line {directive.row}{reason}"
            )
    count = len(lines)
    lines.append(f"{count} suppressed finding{'s' * (count != 1)}.")
    return "\n".join(lines) + "\n"


def run_check(argv: list[str]) -> int:
    args = check_parser().parse_args(_split_add_noqa(argv))
    if (args.add_noqa or args.show_suppressions) and ("-" in args.paths or args.fix or args.diff):
        raise UsageError("--add-noqa and --show-suppressions work on files, without --fix or --diff")
    if args.update_baseline and not args.baseline:
        raise UsageError("--update-baseline goes with --baseline FILE")
    if args.diff_base is not None and ("-" in args.paths or args.fix or args.diff or args.add_noqa):
        raise UsageError("--diff-base reports findings; it does not go with stdin, --fix, --diff or --add-noqa")
    if args.add_noqa_reason is not None and not args.add_noqa:
        raise UsageError("--add-noqa-reason goes with --add-noqa")
    if args.add_noqa_reason is not None and ("\n" in args.add_noqa_reason or "\r" in args.add_noqa_reason):
        raise UsageError("--add-noqa-reason must be one line")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if "-" in args.paths and len(args.paths) > 1:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    resolver = _resolver_from(args)
    if args.show_settings is not None:
        return _show_settings(resolver, Path(args.show_settings))
    if args.show_files:
        return _show_files(resolver, [Path(p) for p in (args.paths or ["."])])
    if args.show_suppressions:
        _write_output(_show_suppressions(resolver, [Path(p) for p in (args.paths or ["."])]), args.output_file)
        return EXIT_CLEAN
    fmt = args.output_format or os.environ.get("SYNCLINT_OUTPUT_FORMAT") or "full"
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {fmt!r}")
    from_stdin = "-" in args.paths
    want_fix = bool(args.fix) or args.diff
    # Each file is fixed as its own settings say; the report's fix markers follow the
    # settings of the first path (or the command line's --unsafe-fixes).
    unsafe = _settings_from(args).unsafe_fixes

    from synclint import report
    from synclint.runner import lint_paths, process_file

    stdin_bytes = b""
    if from_stdin:
        stdin_bytes = sys.stdin.buffer.read()
        settings = resolver.for_file(args.stdin_filename or "-")
        outcomes = [process_file(args.stdin_filename or "-", settings, want_fix, settings.unsafe_fixes, source=stdin_bytes)]
        problems, notes = [], []
    else:
        paths = args.paths or ["."]
        progress = None if args.quiet else Progress
        changes = None
        if args.diff_base is not None:
            from synclint.adoption import changed_since

            changes = changed_since(args.diff_base)
        only = changes.has_file if changes is not None else None
        run = lint_paths([Path(p) for p in paths], resolver, fix=want_fix, unsafe=None, jobs=args.jobs,
                         use_cache=not args.no_cache, progress=progress, only=only)
        outcomes = run.outcomes
        errors = run.errors
        if changes is not None:  # a path deleted since the revision is skipped, not an error
            errors = [(path, message) for path, message in errors if not changes.is_deleted(path)]
            for outcome in outcomes:
                outcome.violations = [
                    v for v in outcome.violations if v.code in (SYNTAX_ERROR, IO_ERROR) or changes.touches(v)
                ]
        problems, notes = _input_problems(errors)
        if not outcomes and not run.errors and changes is None:
            print(f"synclint: warning: no Python files or notebooks found under {', '.join(paths)}", file=sys.stderr)
        if args.add_noqa:
            added = _add_noqa(outcomes, args.add_noqa_reason)
            print(f"Added {added} noqa directive{'s' * (added != 1)}.", file=sys.stderr)
            return EXIT_CLEAN

    for note in notes:
        print(note, file=sys.stderr)
    for outcome in outcomes:
        if outcome.error:
            print(f"synclint: {outcome.filename}: {outcome.error}", file=sys.stderr)

    changed = [o for o in outcomes if o.changed]
    fixed_total = sum(o.applied for o in outcomes)
    if args.diff:
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
        resolver = _resolver_from(args)
        write_failures = _write_fixes(changed, resolver.for_path)
        for line in write_failures:
            print(line, file=sys.stderr)
    fixed_total = sum(o.applied for o in outcomes)
    violations = sorted([*problems, *(v for o in outcomes for v in o.violations)], key=lambda v: v.sort_key)

    if args.baseline:
        from synclint.adoption import without_baselined, write_baseline

        texts = {o.filename: _source_of(o, stdin_bytes if from_stdin else None) for o in outcomes if o.violations}
        baseline = Path(args.baseline)
        if args.update_baseline or not baseline.exists():
            written = write_baseline(baseline, violations, texts)
            print(f"Wrote {written} finding{'s' * (written != 1)} to the baseline {args.baseline}.", file=sys.stderr)
            return EXIT_ERROR if write_failures else EXIT_CLEAN
        violations, hidden = without_baselined(violations, baseline, texts)
        if hidden and not args.quiet:
            print(f"synclint: {hidden} finding{'s' * (hidden != 1)} in the baseline {args.baseline} not shown.", file=sys.stderr)

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
        # Under --diff-base only the changed lines count, and a count of hidden findings cannot
        # say which lines they are on: it is left out there.
        hidden_tiers = {} if args.diff_base is not None else _hidden_tiers(outcomes)
        for line in _summary(violations, fixed_total, bool(args.fix), unsafe, legend=not args.statistics, hidden_tiers=hidden_tiers):
            print(line, file=stream)
    if write_failures:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if violations else EXIT_CLEAN


def _hidden_tiers(outcomes) -> Counter:
    """The findings that the tiers shown hid in every file, by tier."""
    return sum((Counter(outcome.hidden) for outcome in outcomes), Counter())


def _summary(violations, fixed: int, fixing: bool, unsafe: bool, legend: bool = True, hidden_tiers: dict | None = None) -> list[str]:
    """The legend of the markers (when something was found), then ruff's summary lines."""
    from synclint.report.concise import fixable as fixed_by_fix

    remaining = len(violations)
    fixable = sum(1 for v in violations if fixed_by_fix(v, unsafe))
    hidden = 0 if unsafe else sum(1 for v in violations if v.fix is not None and not fixed_by_fix(v, False))
    lines = [LEGEND] if legend and any(v.code not in INPUT_CODES for v in violations) else []
    return lines + summary_lines(remaining, fixed, fixing, fixable, hidden, hidden_tiers)


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
    if code == UNUSED_SUPPRESSION or args.code == ENGINE_CODES[UNUSED_SUPPRESSION][0]:
        print(f"# {UNUSED_SUPPRESSION} {ENGINE_CODES[UNUSED_SUPPRESSION][0]}\n")
        print("Fix: always (safe). Severity: warning.\n")
        print(UNUSED_SUPPRESSION_DOC)
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
            {"code": code, "name": name, "summary": summary, "fix": fix, "severity": "error" if fix == "never" else "warning"}
            for code, (name, summary, fix) in ENGINE_CODES.items()
        ] + [
            {"code": r.code, "name": r.name, "summary": r.summary, "fix": r.fix_availability.value, "severity": r.severity.value}
            for r in all_rules()
        ]
        print(json.dumps(data, indent=2))
        return EXIT_CLEAN
    for code, (name, summary, fix) in ENGINE_CODES.items():
        print(f"{code}  {name:<36} fix: {fix:<9} {summary}")
    for r in all_rules():
        print(f"{r.code}  {r.name:<36} fix: {r.fix_availability.value:<9} {r.summary}")
    return EXIT_CLEAN


COMMANDS = (*SUBCOMMANDS, "help", "version")
MAIN_HELP = """\
usage: synclint [check] [options] [PATHS...]
       synclint rule CODE | rules | prove [...] | trace [...] -- python script.py | server
       synclint add-helper PACKAGE
       synclint help [COMMAND] | version

commands:
  check    lint files (the default; `synclint --fix .` is `synclint check --fix .`)
  rule     print a rule's documentation
  rules    list the rules
  prove    show on a GPU that each flagged pattern stalls and each fix removes it
  trace    run a program and record the syncs that happen at run time
  server   run the language server (LSP on stdio) for an editor
  add-helper  write a host-to-device helper (torch only) into PACKAGE and set `h2d-helper`
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


def _end_now(code: int) -> None:
    """End the command here, once its output is flushed, without the interpreter's teardown:
    after a large file or tree, collecting and freeing its millions of objects (syntax trees,
    the repository index) at exit cost as much as a quarter of the run's CPU time, for
    nothing. Where the output cannot be flushed, the normal exit handles it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _quiet_parse_warnings() -> None:
    """What Python says of the code it parses for us (`invalid escape sequence '\\('`, as a
    SyntaxWarning from 3.12, a DeprecationWarning before) is about the user's file, not a
    finding, and names no file (`<unknown>:318`): the command prints none of it."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning, message="invalid escape sequence")


def main(argv: list[str] | None = None) -> int:
    command_itself = argv is None  # the command itself (not a caller in the same process)
    if command_itself:
        _terminate_cleanly()
        _quiet_parse_warnings()
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
            code = run_check(rest)
            if command_itself and isinstance(code, int):
                _end_now(code)
            return code
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
        if command == "add-helper":
            from synclint.addhelper import main as add_helper_main

            return add_helper_main(rest)
    except UsageError as exc:
        print(f"synclint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except AdoptionError as exc:
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

"""Lint (or fix) many files: discovery -> cache -> per-file engine -> outcomes, in order.

Each file is independent, so the cache misses are spread over processes (`jobs`, default:
all cores). Results come back in discovery order whatever the number of processes, so
`-j1` and `-jN` print the same.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from synclint import moved_lines
from synclint.config import Settings
from synclint.discover import discover
from synclint.violation import Applicability, Violation

# The engine (libcst, the analysis, the fixer) is imported only when a file must be linted:
# a warm run served from the cache does not pay for it.

# Below this much source to lint, starting worker processes costs more than it saves
# (one edited file in a warm tree is linted in this process).
PARALLEL_MIN_BYTES = 256 * 1024
# Tasks per batch sent to a worker: large enough to amortise the pickling round trip,
# small enough that the last batches balance the load.
MAX_BATCH = 16
# The cyclic garbage collector while a run lints (workers inherit it): Python's default
# (700, 10, 10) scans every live object again and again while the parses of a large file
# allocate millions of (acyclic) nodes: a fifth of the CPU time of a 27,820-line file went
# to full collections. Cycles are still collected, every 200,000 allocations.
GC_THRESHOLDS = (200_000, 30, 30)
# ... and a full collection every this many files a process lints. Under the thresholds above
# the oldest generation is collected only every ~180 million allocations, so the cycles each
# file's lint leaves (its parse, the analysis's tables) piled up to about 1 GiB a worker on a
# repository of 1.3 million lines. The repository index, frozen before the lint
# (`gc.freeze()`, which workers inherit), is not scanned by these collections, nor is what
# survived the last one.
COLLECT_EVERY = 20
_linted_since_collect = 0


def _collect_now_and_then() -> None:
    """Count one linted file; every `COLLECT_EVERY` files, collect the cycles left, then
    freeze what survived (the answers the process keeps between files: the call graph's
    verdicts, the caches of the analysis), so that the next collection scans only what the
    files linted since have left."""
    global _linted_since_collect
    _linted_since_collect += 1
    if _linted_since_collect >= COLLECT_EVERY:
        _linted_since_collect = 0
        gc.collect()
        gc.freeze()


@dataclass
class FileOutcome:
    filename: str
    violations: list[Violation] = field(default_factory=list)
    original: str | None = None  # decoded text, kept only when fixing
    fixed: str | None = None
    encoding: str = "utf-8"
    applied: int = 0
    error: str | None = None  # a fix that was refused, for the user to see
    source: bytes | None = None  # the bytes read, kept only when fixing (checked before writing)
    hidden: dict = field(default_factory=dict)  # findings the tiers shown hide, by tier (engine.FileResult)

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.original is not None and self.fixed != self.original


@dataclass
class RunResult:
    outcomes: list[FileOutcome] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # discovery problems
    cache_hits: int = 0
    linted: int = 0  # files that went through the engine (cache misses)
    linted_files: list[str] = field(default_factory=list)  # their names, in discovery order
    jobs: int = 1  # processes actually used

    @property
    def violations(self) -> list[Violation]:
        return [v for o in self.outcomes for v in o.violations]


def read_source(path: Path) -> bytes:
    return path.read_bytes()


def process_file(filename: str, settings: Settings, fix: bool, unsafe: bool | None, source: bytes | None = None) -> FileOutcome:
    """One file, start to finish. Never raises for bad input; a file over the per-file time
    or memory limit becomes an SL002 finding naming it."""
    from synclint.engine import io_error_violation
    from synclint.limits import FileLimitExceeded, guard

    try:
        with guard("linting this file"):
            return _process_file(filename, settings, fix, unsafe, source)
    except FileLimitExceeded as exc:
        return FileOutcome(filename, [io_error_violation(filename, str(exc))])
    except MemoryError:
        return FileOutcome(filename, [io_error_violation(filename, "out of memory while linting this file; skipped")])
    except Exception as exc:  # a defect of synclint on this file must not end the whole run
        if os.environ.get("SYNCLINT_DEBUG"):
            import traceback

            traceback.print_exc()
        return FileOutcome(filename, [io_error_violation(
            filename, f"internal error while linting this file ({type(exc).__name__}: {exc}); the file was not "
                      "linted or fixed. This is a defect of synclint: SYNCLINT_DEBUG=1 prints the traceback")])


def _process_file(filename: str, settings: Settings, fix: bool, unsafe: bool | None, source: bytes | None) -> FileOutcome:
    from synclint.api import fix_source, lint_source
    from synclint.engine import io_error_violation, source_encoding

    if source is None:
        try:
            source = read_source(Path(filename))
        except IsADirectoryError:
            return FileOutcome(filename, [io_error_violation(filename, "is a directory, not a file")])
        except OSError as exc:
            return FileOutcome(filename, [io_error_violation(filename, f"cannot read: {exc.strerror or exc}")])
    if filename.endswith(".ipynb"):
        from synclint.notebook import process

        return process(filename, source, settings, fix, unsafe)
    if fix:
        result = fix_source(source, filename, settings, unsafe=unsafe)
        return FileOutcome(filename, result.violations, result.original, result.fixed, result.encoding, result.applied, result.error, source=source,
                           hidden=result.hidden)
    found = lint_source(source, filename, settings)
    return FileOutcome(filename, list(found), encoding=source_encoding(source), hidden=found.hidden)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# --- one cache miss, in whichever process runs it --------------------------------------


@dataclass
class _Linted:
    outcome: FileOutcome
    stat: tuple[int, int] | None = None  # (size, mtime_ns) taken before reading; None: do not cache
    digest: bytes | None = None
    reads: dict | None = None  # what the lint asked of the repository index, and the answers
    screened: str = ""  # the digest of what the rules saw (screened.reusing)
    kept: tuple | None = None  # the last entry's questions and answer digests, where reused unchanged


class _LastFindings:
    """The engine's `reusing` hook for one file: its last findings, when what the rules see
    of its new content is what they saw then (the same screened digest), or the same lines at
    other rows (the same shape: the findings move with their lines, synclint/moved_lines.py),
    and what they read of the repository index has the same answers now. Remembers the digest
    and shape it was given."""

    def __init__(self, filename: str, settings: Settings, previous: tuple | None) -> None:
        self.filename, self.settings, self.previous = filename, settings, previous
        self.digest = ""
        self.shape = None
        self.kept = None  # the last entry's questions and answer digests, where they still hold

    def __call__(self, digest: str, shape=None):
        self.digest, self.shape = digest, shape
        if self.previous is None:
            return None
        screened, violations, deps, answers, loose, graph, placements, hidden = self.previous
        last_digest, last_shape, places = moved_lines.decode(screened)
        if last_digest != digest:
            if shape is None or not last_shape or last_shape != shape.digest:
                return None
            violations = moved_lines.moved(violations, places, shape.rows)
            if violations is None:
                return None
        from synclint import repo
        from synclint.cache import from_plain, recheck

        checked = recheck(violations, deps, answers, loose, graph, placements, repo.verifier(self.settings))
        if checked is None:
            return None
        if checked.found is None:  # the same call graph, the same other answers: the last entry's digests hold
            self.kept = (deps, answers, loose, graph, placements)
        else:
            repo.facts.FACTS.reads.update(checked.found)  # the new entry depends on what the last one did
        return from_plain(checked.violations, self.filename), dict(hidden)

    def screened(self, violations) -> str:
        """What the cache keeps of this lint's input beside its findings (`moved_lines.encode`)."""
        if not self.digest:
            return ""
        from synclint.cache import to_plain

        return moved_lines.encode(self.digest, self.shape, to_plain(violations))


def _lint_one(filename: str, settings: Settings, fix: bool, unsafe: bool, want_cache: bool, previous: tuple | None = None) -> _Linted:
    if not want_cache:
        return _Linted(process_file(filename, settings, fix, unsafe))
    from synclint.cache import content_digest

    try:
        st = os.stat(filename)  # before reading: a change after this shows in the next stat
        source = read_source(Path(filename))
    except OSError:
        return _Linted(process_file(filename, settings, fix, unsafe))  # reports the error
    from synclint import repo, screened

    # A fix rewrites the file, and a notebook is linted cell by cell: neither reuses findings.
    last = _LastFindings(filename, settings, previous) if not fix and not filename.endswith(".ipynb") else None
    with repo.recording() as reads, screened.reusing(last):
        outcome = None
        if last is not None and previous is not None and _CATALOG is not None:
            # The same screened input as last time? Asked with the cache's description of
            # the rules: the engine (libcst, the analysis) is imported only when it is not.
            found = screened.reuse(source, filename, settings, _CATALOG, last)
            if found is not None:
                from synclint.decoding import source_encoding

                outcome = FileOutcome(filename, found[0], encoding=source_encoding(source), hidden=found[1])
        if outcome is None:
            outcome = process_file(filename, settings, fix, unsafe, source=source)
    if outcome.changed or outcome.error:  # only unfixed results describe the file on disk
        return _Linted(outcome)
    return _Linted(outcome, (st.st_size, st.st_mtime_ns), content_digest(source), reads,
                   last.screened(outcome.violations) if last is not None else "", last.kept if last is not None else None)


_WORKER_ARGS: tuple | None = None
# The rules as the cache describes them (synclint/rule_catalog.py), while a run whose changed
# files have last findings lints them: set before the workers are forked, who inherit it.
_CATALOG: tuple | None = None


def _init_worker(settings_list: list[Settings], fix: bool, unsafe: bool | None, want_cache: bool) -> None:
    global _WORKER_ARGS
    _WORKER_ARGS = (settings_list, fix, unsafe, want_cache)
    _die_with_parent()


def _die_with_parent() -> None:
    """A worker ends when the run that started it is killed (even with SIGKILL), instead of
    waiting forever on its task queue (Linux: PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        # The command's own SIGTERM handler (inherited through fork) would turn the signal
        # into an exception that the pool catches as a task's error: the default kills.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before the call
            os._exit(1)
    except (OSError, AttributeError, ValueError):
        pass


def _lint_batch(tasks: list[tuple[str, int, tuple | None]]) -> list[_Linted]:
    assert _WORKER_ARGS is not None
    settings_list, fix, unsafe, want_cache = _WORKER_ARGS
    linted = []
    for name, index, previous in tasks:
        linted.append(_lint_one(name, settings_list[index], fix, unsafe, want_cache, previous))
        _collect_now_and_then()
    return linted


def _batches(names: list, jobs: int) -> list[list]:
    size = max(1, min(MAX_BATCH, len(names) // (jobs * 8)))
    return [names[i : i + size] for i in range(0, len(names), size)]


def _pool_context():
    # fork: workers start with synclint (and libcst) already imported. Elsewhere the
    # platform default (spawn) imports them once per worker.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _lint_many(names: list[str], sizes: dict[str, int], settings_of: dict[str, Settings], fix, unsafe, want_cache, jobs, advance=None,
               previous: dict | None = None) -> tuple[dict[str, _Linted], int]:
    """Lint `names` (each with its own settings); returns results by name and the number of
    processes used. `advance(n)` is called as files are done (for a progress bar).
    `previous`: each file's last findings in the cache, for the engine to reuse."""
    previous = previous or {}
    advance = advance or (lambda n: None)
    total = sum(sizes.get(n, 0) for n in names)
    jobs = min(jobs, len(names))
    results: dict[str, _Linted] = {}
    if jobs > 1 and total >= PARALLEL_MIN_BYTES:
        # Largest first: the long files start early and the small ones fill the gaps.
        ordered = sorted(names, key=lambda n: -sizes.get(n, 0))
        # Each distinct Settings is sent once; a task names its settings by index.
        distinct: dict[int, int] = {}
        settings_list: list[Settings] = []
        for name in ordered:
            if id(settings_of[name]) not in distinct:
                distinct[id(settings_of[name])] = len(settings_list)
                settings_list.append(settings_of[name])
        tasks = [(name, distinct[id(settings_of[name])], previous.get(name)) for name in ordered]
        try:
            with ProcessPoolExecutor(jobs, mp_context=_pool_context(), initializer=_init_worker,
                                     initargs=(settings_list, fix, unsafe, want_cache)) as pool:
                batches = _batches(tasks, jobs)
                for batch, linted in zip(batches, pool.map(_lint_batch, batches)):
                    results.update(zip((name for name, _, _ in batch), linted))
                    advance(len(batch))
            return results, jobs
        except (BrokenProcessPool, OSError):
            pass  # a worker died (killed, out of memory): finish what is left here
    for name in names:
        if name not in results:
            results[name] = _lint_one(name, settings_of[name], fix, unsafe, want_cache, previous.get(name))
            _collect_now_and_then()
            advance(1)
    return results, 1


def _fixable(violations: list[Violation], unsafe: bool) -> bool:
    return any(v.fix is not None and (unsafe or v.fix.applicability is Applicability.SAFE) for v in violations)


def index_repository(paths: list[Path], settings: Settings, use_cache: bool, jobs: int) -> str:
    """Read the repository the paths are in (synclint/repo/) and install what it says for
    the lint; returns its fingerprint ("" when off)."""
    from synclint import repo

    if not settings.repository_index:  # one Settings here (lint_paths passes a file's)
        repo.install(repo.EMPTY)
        return ""
    root = repo.find_root(paths)
    facts = repo.build_aside(root, use_cache=use_cache, jobs=jobs, meanwhile=_import_the_lint) if root is not None else repo.EMPTY
    repo.install(facts)
    return facts.fingerprint


def _import_the_lint() -> None:
    """Import what linting a file imports on first use (the engine, every rule, libcst's parser),
    while the index is built in a child: the lint's workers, forked after, start with it
    instead of each importing it on its first file."""
    import libcst

    from synclint import engine  # noqa: F401 - imported for the workers
    from synclint.rules import all_rules

    all_rules()
    libcst.parse_module("x = 1\n")


def _settings_of(settings):
    """A function from a file name to its Settings: `settings` is one Settings for every
    file or a `SettingsResolver`."""
    if hasattr(settings, "for_file"):
        return settings.for_file
    return lambda name, s=settings: s


def lint_paths(
    paths: list[Path],
    settings,
    *,
    fix: bool = False,
    unsafe: bool | None = False,
    jobs: int | None = None,
    use_cache: bool = True,
    progress=None,
    only=None,
) -> RunResult:
    """Lint the files under `paths`. `settings`: one Settings, or a SettingsResolver that
    gives each file the settings of its nearest configuration file. `unsafe=None`: each
    file's `unsafe-fixes` setting decides. `only`, when given, keeps the discovered files for
    which it returns True. `progress`: None, or a callable that takes the number of files
    and returns an object with `advance(n)` and `close()` (synclint.terminal.Progress)."""
    found = discover(paths, settings)
    run = RunResult(errors=found.errors)
    names = [str(p) for p in found.files if only is None or only(p)]
    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        # What the rest of the repository says (synclint/repo/), installed for the lint.
        if names:
            index_repository(paths, _settings_of(settings)(names[0]), use_cache, jobs or default_jobs())
        gc.freeze()  # the index and what the run has built so far: no collection scans them again
        bar = progress(len(names)) if progress is not None else None
        try:
            return _lint_found(run, names, settings, fix, unsafe, jobs, use_cache, bar)
        finally:
            if bar is not None:
                bar.close()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        if names:
            from synclint import repo

            repo.store.wait_for_writes()


def _lint_found(run: RunResult, names: list[str], settings, fix: bool, unsafe: bool | None, jobs, use_cache: bool, bar) -> RunResult:
    settings_for = _settings_of(settings)
    settings_of = {name: settings_for(name) for name in names}
    caches: dict[tuple, object] = {}

    def cache_for(file_settings: Settings):
        """One cache per configuration: its namespace hashes that file's settings."""
        if not use_cache:
            return None
        key = (id(file_settings), file_settings.source)
        if key not in caches:
            from synclint.cache import ResultCache

            caches[key] = ResultCache(file_settings)
        return caches[key]

    from_plain = None
    if use_cache:
        from synclint.cache import from_plain

    outcomes: dict[str, FileOutcome] = {}
    sizes: dict[str, int] = {}
    misses: list[str] = []
    previous: dict[str, tuple] = {}  # a changed file's last findings (screened.reusing)
    for name in names:
        try:
            st = os.stat(name)
        except OSError:
            misses.append(name)  # the engine reports why it cannot be read
            continue
        sizes[name] = st.st_size
        cache = cache_for(settings_of[name])
        entry = cache.lookup(name, st) if cache is not None else None
        if entry is not None:
            violations = from_plain(entry.violations, name)
            # A fix run still fixes: only an entry with nothing to fix saves the work.
            file_unsafe = settings_of[name].unsafe_fixes if unsafe is None else unsafe
            if not (fix and _fixable(violations, file_unsafe)):
                outcomes[name] = FileOutcome(name, violations, encoding=entry.encoding, hidden=dict(entry.hidden))
                run.cache_hits += 1
                if bar is not None:
                    bar.advance(1)
                continue
        misses.append(name)
        if cache is not None and not fix:
            last = cache.previous(name)
            if last is not None:
                previous[name] = last

    advance = bar.advance if bar is not None else None
    global _CATALOG
    if previous:  # edited files with last findings: the rules as the cache describes them
        from synclint.cache import read_catalog

        _CATALOG = read_catalog(settings_of[next(iter(previous))])
    try:
        linted, run.jobs = _lint_many(misses, sizes, settings_of, fix, unsafe, use_cache, jobs or default_jobs(), advance, previous)
    finally:
        _CATALOG = None
    run.linted = len(linted)
    run.linted_files = [name for name in names if name in linted]
    for name, result in linted.items():
        outcomes[name] = result.outcome
        cache = cache_for(settings_of[name])
        if cache is not None and result.stat is not None:
            cache.store(name, result.stat, result.digest, result.outcome.encoding, result.outcome.violations, result.reads, result.screened,
                        result.kept, result.outcome.hidden)
    for cache in caches.values():
        cache.save()
    if linted and caches:
        from synclint.cache import write_catalog

        write_catalog(settings_of[next(iter(linted))])  # where it is missing, beside a cache kept
    run.outcomes = [outcomes[name] for name in names]
    return run

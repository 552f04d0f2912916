"""Finding the repository and reading it once: the project root, its Python files, the
per-file summaries kept in a store shared by every checkout (keyed by content hash and by
the code that computed them), and the solve run again only when a summary changed.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import time
from pathlib import Path

from synclint.repo.citing import _shape, moved_lines
from synclint.repo.delta import derive
from synclint.repo.disk import _read, _write, store_folder
from synclint.repo.edges import _installed_top, _marked_folder, _package_top
from synclint.repo.facts import Facts, _FACTS_FIELDS, _facts_blob, _facts_of
from synclint.repo.incremental import _MAX_PATCHED, _incremental, _save_state
from synclint.repo.solver import solve
from synclint.repo.summary import summarize

# Files larger than this are not summarised (generated tables, test data).
MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", "site-packages",
                        "build", "dist", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".synclint_cache"})


INDEX_VERSION = "repo-index-42"
RACY_WINDOW_NS = 2_000_000_000  # as synclint/cache.py


def find_root(paths) -> Path | None:
    """The project root above the linted paths: the nearest folder with a marker. Without one,
    a file in an installed package (under site-packages, a namespace package's folders
    included) belongs to the whole package, and a folder
    named on the command line is read as it is (it is linted whole anyway); a loose file in a
    folder that is neither has no repository: its folder and everything below it (a home
    folder, /tmp) is not read to lint one script."""
    roots = []
    for path in paths:
        current = Path(path).resolve()
        is_file = current.is_file() or not current.exists()
        if is_file:
            current = current.parent
        marked = _marked_folder(str(current))
        if marked:
            roots.append(Path(marked))
        else:
            installed = _installed_top(current)
            top = _package_top(str(current)) if installed is None else ""
            if installed is not None:  # a package (namespace packages too) in site-packages
                roots.append(installed)
            elif top:  # the top of the package the path is in
                roots.append(Path(top))
            elif not is_file:
                roots.append(current)
    if not roots:
        return None
    common = Path(os.path.commonpath([str(r) for r in roots]))
    return common if common != Path(common.anchor) else None


def python_files(root: Path) -> list[str]:
    """The project's Python files, without tests and benchmarks (by the folder and file names
    synclint/analysis/tier.py reads as such): what they pass and assign is not what the
    project's own code is given, and generated test tables are the slowest files to read."""
    from synclint.analysis.pathkinds import TEST_FILE, TEST_FOLDERS

    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".") and d.lower() not in TEST_FOLDERS)
        for name in sorted(files):
            if name.endswith(".py") and not TEST_FILE.match(name.lower()):
                out.append(os.path.join(folder, name))
    return out


def _summarize_file(job: tuple) -> tuple[str, tuple | None, tuple | None]:
    """(path, summary, (size, mtime_ns, digest)) for one file; the summary from the store
    when its content was summarised before."""
    path, folder, known = job
    try:
        st = os.stat(path)
        if st.st_size > MAX_FILE_BYTES:
            return path, None, None
        stat = (st.st_size, st.st_mtime_ns)
        digest = known[2] if known is not None and tuple(known[:2]) == stat else None
        data = None
        if digest is None:
            with open(path, "rb") as handle:
                data = handle.read()
            digest = hashlib.sha256(_CODE.encode() + b"\0" + data).hexdigest()
    except OSError:
        return path, None, None
    stored = os.path.join(folder, digest[:2], digest[2:]) if folder else None
    if stored is not None:
        try:
            with open(stored, "rb") as handle:
                return path, marshal.loads(handle.read()), (*stat, digest)
        except (OSError, ValueError, EOFError, TypeError):
            pass
    if data is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return path, None, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    summary = summarize(text)
    if stored is not None:
        _write(stored, marshal.dumps(summary))
    return path, summary, (*stat, digest)


_CODE = ""

# The modules a summary is computed with: every module of the index (a summary is made and
# solved by them together), the screen's evaluator and its tables (tests/test_index_store.py
# checks the list against what summarising a file imports).
_INDEX_MODULES = tuple(sorted(f"repo/{p.name}" for p in Path(__file__).resolve().parent.glob("*.py")))
SUMMARY_MODULES = (*_INDEX_MODULES, "lines.py", "analysis/astwalk.py", "analysis/coldcode.py", "analysis/guards.py",
                   "analysis/platform_branches.py", "analysis/given_fields.py", "analysis/class_uses.py",
                   "analysis/platform_words.py", "screen/places.py", "screen/facts.py", "screen/__init__.py",
                   "apis/torch_api.py", "apis/tensor_members.py", "analysis/receivers.py", "analysis/host_fields.py")


def _index_code() -> str:
    """A hash of the modules a summary depends on (the index's own, the screen's evaluator and its
    tables): editing a rule does not throw the stored summaries away."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(INDEX_VERSION.encode())
    for rel in SUMMARY_MODULES:
        try:
            h.update((package / rel).read_bytes())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:16]


def build(root: Path, use_cache: bool = True, jobs: int = 1, deliver=None) -> Facts:
    """Summarise every Python file under `root` (from the store where seen before) and solve.
    A warm run stats the files (their digests are kept per root) and reads the solved facts
    back when no file changed. `deliver(facts)`, when given, is called once the facts of a
    whole solve are solved and kept, before the state an edit is solved from is written
    (`build_aside`)."""
    run = _Build(root, use_cache)
    facts = run.kept()
    return facts if facts is not None else run.solved(jobs, deliver)


class _Build:
    """One build of the index: the files, the store's tag and what it last knew of them."""

    def __init__(self, root: Path, use_cache: bool) -> None:
        global _CODE
        _CODE = _index_code()
        self.root = root
        self.started = time.time_ns()
        self.folder = folder = str(store_folder()) if use_cache else None
        self.files = python_files(root)
        self.tag = hashlib.sha256(f"{INDEX_VERSION}|{_CODE}|{root}".encode()).hexdigest()[:24]
        stats = (_read(os.path.join(folder, "roots", self.tag)) if folder else None) or {}
        self.stats = stats if isinstance(stats, dict) else {}
        if folder:
            from synclint import index_store

            index_store.touch(folder, self.tag)  # in use: a concurrent prune keeps it

    def kept(self) -> Facts | None:
        """The last solve's facts, when no file was added or removed and at most
        `_MAX_PATCHED` changed (`_reuse`); else None: the repository is solved whole."""
        folder, files, stats = self.folder, self.files, self.stats
        if not (folder and len(files) == len(stats)):
            return None
        changed: list[str] = []
        for path in files:
            known = stats.get(path)
            try:
                st = os.stat(path)
            except OSError:
                return None
            if known is None or known[0] != st.st_size or known[1] != st.st_mtime_ns:
                changed.append(path)
                if len(changed) > _MAX_PATCHED:
                    return None
        facts = _reuse(self.root, folder, self.tag, stats, changed, self.started, files)
        if facts is not None:
            from synclint import index_store

            index_store.keep_bounded(folder, self.tag)
        return facts

    def solved(self, jobs: int, deliver=None) -> Facts:
        """Every file summarised (from the store where seen before) and the whole repository
        solved; the store keeps the facts and the state an edit is solved from."""
        folder, tag = self.folder, self.tag
        results = _summarize_many([(f, folder, self.stats.get(f)) for f in self.files], jobs)
        summaries = {path: summary for path, summary, _ in results if summary is not None}
        state: dict | None = {} if folder else None
        facts = solve(summaries, state)
        if folder:
            from synclint import index_store

            _save(folder, tag, {p: st for p, _, st in results if st is not None}, facts, self.started)
            if deliver is not None:
                deliver(facts)
            _save_state(folder, tag, state, {p: st[2] for p, _, st in results if st is not None}, facts)
            index_store.keep_bounded(folder, tag)
        return facts


def _save(folder: str, tag: str, stats: dict, facts: Facts | None, started: int) -> None:
    """Write the files' stats and (unless None: the same as stored) the facts."""
    # A file modified just before this run may change again within the same mtime tick and
    # size: its stat is not trusted next time (its content is hashed again).
    trusted = {p: (st if st[1] < started - RACY_WINDOW_NS else (-1, *st[1:])) for p, st in stats.items()}
    _write(os.path.join(folder, "roots", tag), marshal.dumps(trusted))
    if facts is not None:
        _write(os.path.join(folder, "facts", tag), marshal.dumps(_facts_blob(facts)))


def _reuse(root: Path, folder: str, tag: str, stats: dict, changed: list[str], started: int, files: list[str]) -> Facts | None:
    """The last solve's facts, when the files whose stat changed have the same summary as
    before (a touch, an edit inside a function that assigns nothing new) or one that differs
    only in line numbers (the citations are patched); else the facts solved again from the last
    full solve for what the changed summaries reach (`_incremental`); None when the repository
    must be solved whole."""
    solved = _read(os.path.join(folder, "facts", tag))
    if not (isinstance(solved, tuple) and len(solved) == _FACTS_FIELDS):
        return None
    facts = last = _facts_of(solved)
    if not changed:
        return facts
    moved: dict[str, tuple] = {}
    reshaped: dict[str, tuple] = {}
    stats = dict(stats)
    for path in changed:
        old = stats.get(path)
        before = _read(os.path.join(folder, old[2][:2], old[2][2:])) if old is not None and len(old) == 3 else None
        _, summary, stat = _summarize_file((path, folder, old))
        if before is None or summary is None or stat is None:
            return None
        stats[path] = stat
        if summary == before:
            continue
        if _shape(summary) != _shape(before):
            reshaped[path] = summary
        moved[path] = summary
    if reshaped:
        digests = {p: st[2] for p, st in stats.items() if len(st) == 3}
        facts = _incremental(folder, tag, files, digests, moved, last)
        if facts is None:
            return None
    elif moved:
        facts = moved_lines(facts, moved)
    if facts is not last:
        derive(last, facts)
    _save(folder, tag, stats, facts if facts is not last else None, started)  # the facts, where the edit changed them
    return facts


def _summarize_many(paths: list[tuple], jobs: int) -> list[tuple]:
    if jobs > 1 and len(paths) > 64:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from synclint.runner import _die_with_parent

        try:
            # The workers end with the run, even one killed with SIGKILL (they were left
            # waiting on their queue); a run ended by SIGTERM waits only for the chunks
            # being summarised, not for the whole repository.
            pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent)
        except Exception:  # noqa: BLE001 - a pool that cannot start: do it here
            pool = None
        if pool is not None:
            from concurrent.futures.process import BrokenProcessPool

            try:
                return _largest_first(pool, paths, jobs)
            except (BrokenProcessPool, OSError):  # a worker that died (killed, out of memory): do it here
                pass
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    return [_summarize_file(p) for p in paths]


def _largest_first(pool, paths: list[tuple], jobs: int) -> list[tuple]:
    """Summarise `paths` in `pool`, the largest files first and in chunks small enough that
    every worker gets a share (the slowest file, not a chunk of 32, bounds the wall time);
    the results come back in the order of `paths`, which the solve's facts depend on."""
    sizes = {}
    for job in paths:
        try:
            sizes[job[0]] = os.stat(job[0]).st_size
        except OSError:
            sizes[job[0]] = 0
    order = sorted(range(len(paths)), key=lambda i: -sizes[paths[i][0]])
    chunk = max(1, min(32, len(paths) // (jobs * 8)))
    done = pool.map(_summarize_file, [paths[i] for i in order], chunksize=chunk)
    results: list = [None] * len(paths)
    for i, result in zip(order, done):
        results[i] = result
    return results


# The children building the index (`build_aside`), waited for by `wait_for_writes`.
_INDEX_CHILDREN: list[int] = []


def build_aside(root: Path, use_cache: bool = True, jobs: int = 1, meanwhile=None) -> Facts:
    """`build` in a forked child, where the run has workers to spare; the facts come back
    through a pipe as the store keeps them. Each of the lint's workers, forked from this
    process, starts with every page this process holds: built here, the index would leave
    its garbage (every file's summary, the solve's tables) in all of them. The child also
    writes the state an edit is solved from after the facts are sent, while the lint goes
    on; `wait_for_writes` waits for it. Where the child fails, the index is built here. A
    warm run and a run after a few edits read or patch the last facts here: no child (the
    facts would cross the pipe for nothing). `meanwhile()`, when given, runs here while the
    child builds (the lint's imports: each worker forked after it then has them)."""
    import threading

    # (not from a process with other threads: a forked child inherits their locks held)
    if jobs <= 1 or not hasattr(os, "fork") or threading.active_count() != 1:
        return build(root, use_cache, jobs)
    run = _Build(root, use_cache)
    facts = run.kept()  # a warm run, an edit: read here, as the child would send them
    if facts is not None:
        return facts
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return run.solved(jobs)
    if pid == 0:  # the child: solve, send, finish the store, leave
        os.close(read_end)
        try:
            from synclint.runner import _die_with_parent

            _die_with_parent()
            sent: list[bool] = []

            def send(facts: Facts) -> None:
                if not sent:
                    sent.append(True)
                    with os.fdopen(write_end, "wb") as out:
                        out.write(marshal.dumps(_facts_blob(facts)))

            send(run.solved(jobs, deliver=send))
        except BaseException:  # noqa: BLE001 - the parent reads no facts and builds them itself
            pass
        finally:
            os._exit(0)
    os.close(write_end)
    if meanwhile is not None:
        meanwhile()
    with os.fdopen(read_end, "rb") as received:
        data = received.read()
    _INDEX_CHILDREN.append(pid)
    try:
        blob = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        blob = None
    if isinstance(blob, tuple) and len(blob) == _FACTS_FIELDS:
        return _facts_of(blob)
    wait_for_writes()
    return run.solved(jobs)


def wait_for_writes() -> None:
    """Wait for the index's child to finish the store (a run ends with its store complete)."""
    while _INDEX_CHILDREN:
        pid = _INDEX_CHILDREN.pop()
        try:
            os.waitpid(pid, 0)
        except (ChildProcessError, InterruptedError):
            pass

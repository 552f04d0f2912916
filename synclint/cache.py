"""The results cache: a re-run over an unchanged tree reads one index file and stats the files.

Layout: `<cache-dir>/<namespace>.idx`, one file per namespace. The namespace is a hash of
everything that can change findings besides the file itself: the synclint version and the
content of its own modules (a rule edited during development must not serve stale results),
the Python version, `Settings.fingerprint()` (a config change invalidates) and the project
root (relative per-file-ignores depend on it).

The index maps an absolute path to `(size, mtime_ns, sha256 of the content, findings)`:
- size and mtime_ns equal: a hit without reading the file;
- otherwise the file is read and hashed; the same hash is still a hit (a checkout or `touch`
  that changed nothing), a different one a miss.

What the rest of the repository says (synclint/repo/) is not in the namespace: each entry
records the index fingerprint it was made under, the questions the file asked the index
(`repo.recording`: fields, parameters, results, call-graph tier verdicts) and a digest of the
answers. Under the same index the entry holds as it is; under another, it holds when the
same questions get the same answers (`repo.Verifier`), so a change in one file re-lints only
the files whose findings read what changed. The call graph's answers (tier verdicts, what
callers pass) are the costly ones to work out again: each entry also keeps the fingerprint
of the call graph it was made under and a digest of its other answers, and under an index
with the same call graph only those others are asked again. An answer that changed only in
the rows it cites (a line inserted in the file it cites) keeps the findings, their
citations rewritten (synclint/moved_lines.py).

Findings are stored as plain tuples of str/int (marshal: fast, and it cannot run code on
load) and rebuilt into the same `Violation` objects, fixes included.

Safety: the index is written to a temporary file and renamed over the old one, after merging
what another run may have written meanwhile, so concurrent runs never see half a file (at
worst one run's new entries are lost: a later miss, never a wrong hit). A file that fails its
checksum, is truncated or does not decode is an empty cache, never a crash.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from synclint import moved_lines
from synclint.config import Settings
from synclint.violation import Applicability, Confidence, Edit, Fix, Location, Severity, Violation

MAGIC = b"SYNCLINT-CACHE-5\n"
_DIGEST_SIZE = 32
# A file modified this close to the run's start may change again within the same mtime tick
# without its size changing; its stat is not trusted next time (its content hash is).
RACY_WINDOW_NS = 2_000_000_000
# Indexes of another configuration or synclint version are deleted after this long unused
# (each is rewritten, so its mtime refreshed, by every run that uses it).
STALE_AFTER_S = 30 * 24 * 3600


@dataclass(frozen=True)
class Entry:
    size: int  # -1: stat not trusted, check the content hash
    mtime_ns: int
    digest: bytes
    encoding: str
    violations: tuple  # plain tuples, see _plain_violation
    # The fingerprint of what the repository index said when these findings were made
    # (synclint/repo/): findings read fields and parameters placed by other files.
    index: str = ""
    # What the file asked of the index (fields, parameters and results it looked up, the
    # call graph's tier verdicts it used: repo.recording keys) and a digest of the answers.
    # Under another index the entry holds while the same questions get the same answers.
    deps: tuple = ()
    answers: str = ""
    # The digest of what the rules saw of the file (screened.screened_digest): an edit that
    # leaves it the same (a comment, a function no rule can flag) keeps these findings.
    screened: str = ""
    # The digest of the same answers with the rows they cite left out (moved_lines.loose_digest):
    # answers that changed in those rows alone keep the findings, their citations rewritten.
    loose: str = ""
    # The call graph the answers were given under (repo.graph_fingerprint) and the digest of
    # the answers that are not the call graph's (repo.graph_digest): under another index with
    # the same call graph, only those are asked again (the call graph's are the costly ones).
    graph: str = ""
    placements: str = ""
    # The findings the tiers shown hid, as (tier, count) pairs (engine.FileResult.hidden).
    hidden: tuple = ()

    def matches_stat(self, st: os.stat_result) -> bool:
        return self.size == st.st_size and self.mtime_ns == st.st_mtime_ns


def read_file(filename: str) -> bytes:
    with open(filename, "rb") as handle:
        return handle.read()


def content_digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of synclint's own version and modules: any change to the linter invalidates."""
    from synclint import __version__

    package = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{__version__}|{sys.version_info[:3]}|{marshal.version}".encode())
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()[:16]


def namespace(settings: Settings) -> str:
    from synclint.discover import project_root

    h = hashlib.sha256()
    for part in (code_fingerprint(), settings.fingerprint(), str(project_root(settings))):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def cache_folder(settings: Settings) -> Path:
    folder = Path(settings.cache_dir)
    if not folder.is_absolute():
        from synclint.discover import project_root

        folder = project_root(settings) / folder
    return folder


# --- the rules, described for a run that need not load them --------------------------------


def _catalog_path(settings: Settings) -> Path:
    return cache_folder(settings) / f"rules-{code_fingerprint()}.cat"


def read_catalog(settings: Settings) -> tuple | None:
    """The rules as a run of this code described them (synclint/rule_catalog.py), or None
    (none written yet, or damaged)."""
    from synclint.rule_catalog import from_plain as catalog_from_plain

    try:
        blob = _catalog_path(settings).read_bytes()
    except OSError:
        return None
    checksum, body = blob[:_DIGEST_SIZE], blob[_DIGEST_SIZE:]
    if hashlib.sha256(body).digest() != checksum:
        return None
    try:
        return catalog_from_plain(marshal.loads(body))
    except Exception:  # noqa: BLE001 - any damage is a miss, never a crash
        return None


def write_catalog(settings: Settings) -> None:
    """Describe the rules beside the cache, where no run of this code has yet (it loads the
    rules). Never raises: without it, the next run only imports the rules again."""
    path = _catalog_path(settings)
    if path.exists() or not path.parent.is_dir():
        return  # described already, or no cache kept (a fix run that stored nothing)
    from synclint.rule_catalog import describe
    from synclint.rules import all_rules

    try:
        body = marshal.dumps(describe(all_rules()))
        _replace_atomically(path, hashlib.sha256(body).digest() + body)
        _prune_stale(path.parent, keep=path, pattern="rules-*.cat")  # other versions' descriptions
    except OSError:
        return


# --- violations <-> plain tuples ---------------------------------------------------------


def _plain_violation(v: Violation) -> tuple:
    fix = None
    if v.fix is not None:
        fix = (
            v.fix.applicability.value,
            v.fix.message,
            tuple((e.content, e.location.row, e.location.column, e.end_location.row, e.end_location.column) for e in v.fix.edits),
        )
    return (
        v.code,
        v.message,
        v.location.row,
        v.location.column,
        v.end_location.row,
        v.end_location.column,
        fix,
        v.severity.value,
        int(v.confidence),
        v.noqa_row,
        v.url,
        tuple(v.provenance),
        v.hot_path,
        v.tier,
        v.tier_reason,
        v.cell,
    )


def _violation(plain: tuple, filename: str) -> Violation:
    code, message, row, col, end_row, end_col, fix, severity, confidence, noqa_row, url, provenance, hot_path, tier, tier_reason, cell = plain
    if fix is not None:
        applicability, fix_message, edits = fix
        fix = Fix(
            Applicability(applicability),
            fix_message,
            tuple(Edit(content, Location(r, c), Location(er, ec)) for content, r, c, er, ec in edits),
        )
    return Violation(
        code=code,
        message=message,
        filename=filename,
        location=Location(row, col),
        end_location=Location(end_row, end_col),
        fix=fix,
        severity=Severity(severity),
        confidence=Confidence(confidence),
        noqa_row=noqa_row,
        url=url,
        provenance=tuple(provenance),
        hot_path=hot_path,
        tier=tier,
        tier_reason=tier_reason,
        cell=cell,
    )


@dataclass(frozen=True)
class Rechecked:
    """A cache entry's findings and answer digests under the index installed now (`recheck`)."""

    violations: tuple  # plain, their citations rewritten where only cited rows moved
    answers: str
    graph: str
    placements: str
    found: dict | None  # every answer, where all were asked again; None: the call graph's kept


def recheck(violations: tuple, deps: tuple, answers: str, loose: str, graph: str, placements: str, verifier,
            index: str = "") -> Rechecked | None:
    """Whether findings made under another index (`index`: its fingerprint) hold under the
    one installed now, asking their questions again (`verifier`: a repo.Verifier): none of
    them where the index was derived from that one by an edit none of them names
    (synclint/repo/delta.py); under the same call graph, only the questions that are not the
    call graph's; else all of them, where answers that changed only in the rows they cite
    keep the findings with their citations rewritten (synclint/moved_lines.py). None when
    they do not hold."""
    from synclint import repo

    now = repo.graph_fingerprint()
    affected = verifier.affected(index)
    if affected is not None and graph == now and not affected.any(deps):
        return Rechecked(violations, answers, graph, placements, None)
    if placements and graph == now:
        found = {key: verifier.answer(key) for key in deps if key[0] not in repo.GRAPH_QUESTIONS}
        if repo.dependency_digest(found) == placements:
            return Rechecked(violations, answers, graph, placements, None)
    found = {key: verifier.answer(key) for key in deps}
    digest = repo.dependency_digest(found)
    if digest != answers:
        if not loose or moved_lines.loose_digest(found) != loose:
            return None
        violations = moved_lines.recite(violations, found)
        if violations is None:
            return None
    return Rechecked(violations, digest, now, repo.graph_digest(found), found)


def to_plain(violations) -> tuple:
    return tuple(_plain_violation(v) for v in violations)


def from_plain(plain: tuple, filename: str) -> list[Violation]:
    return [_violation(p, filename) for p in plain]


# --- the index file ----------------------------------------------------------------------


def _decode(blob: bytes) -> dict[str, Entry]:
    """The entries of an index file's bytes; {} for anything damaged."""
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + _DIGEST_SIZE:
        return {}
    checksum = blob[len(MAGIC) : len(MAGIC) + _DIGEST_SIZE]
    body = blob[len(MAGIC) + _DIGEST_SIZE :]
    if hashlib.sha256(body).digest() != checksum:
        return {}
    try:
        raw = marshal.loads(body)
        return {path: Entry(*fields) for path, fields in raw.items()}
    except Exception:  # noqa: BLE001 - any damage is a miss, never a crash
        return {}


def _encode(entries: dict[str, Entry]) -> bytes:
    raw = {
        path: (e.size, e.mtime_ns, e.digest, e.encoding, e.violations, e.index, e.deps, e.answers, e.screened, e.loose, e.graph,
               e.placements, e.hidden)
        for path, e in entries.items()
    }
    body = marshal.dumps(raw)
    return MAGIC + hashlib.sha256(body).digest() + body


class ResultCache:
    """One namespace's index: load once, look up per file, save once at the end of a run."""

    def __init__(self, settings: Settings, extra: str | None = None) -> None:
        from synclint import repo

        if extra is None:  # what the repository index installed last (synclint/repo/)
            extra = repo.facts.FACTS.fingerprint
        self.index = extra
        self.settings = settings
        self.verified = 0  # entries of another index found still valid by their answers
        self.folder = cache_folder(settings)
        self.path = self.folder / f"{namespace(settings)}.idx"
        self.entries: dict[str, Entry] = self._read()
        self.updates: dict[str, Entry] = {}
        self.seen: set[str] = set()  # paths this run looked up: known to exist
        self.started_ns = time.time_ns()

    def _read(self) -> dict[str, Entry]:
        try:
            blob = self.path.read_bytes()
        except OSError:
            return {}
        return _decode(blob)

    @staticmethod
    def key(filename: str) -> str:
        return os.path.abspath(filename)

    def lookup(self, filename: str, st: os.stat_result | None = None) -> Entry | None:
        """The stored entry if the file is unchanged, checking stat first, then the content.
        Returns None on any doubt (a miss), a malformed entry too (an index with a valid
        checksum but fields of the wrong shape is damage like any other)."""
        try:
            entry = self._lookup(filename, st)
            if entry is not None:
                from_plain(entry.violations, filename)  # readable, or a miss
                if not isinstance(entry.encoding, str):
                    return None
            return entry
        except Exception:  # noqa: BLE001 - any damage is a miss, never a crash
            self.entries.pop(self.key(filename), None)
            self.updates.pop(self.key(filename), None)
            return None

    def _lookup(self, filename: str, st: os.stat_result | None = None) -> Entry | None:
        key = self.key(filename)
        self.seen.add(key)
        entry = self.entries.get(key)
        if entry is None:
            return None  # a new file
        if entry.index != self.index:
            # The rest of the repository says something new: does it say anything new to
            # this file? Ask its questions again.
            if not entry.answers:
                return None
            checked = recheck(entry.violations, entry.deps, entry.answers, entry.loose, entry.graph, entry.placements, self.verifier(),
                              entry.index)
            if checked is None:
                return None
            entry = Entry(entry.size, entry.mtime_ns, entry.digest, entry.encoding, checked.violations, self.index, entry.deps,
                          checked.answers, entry.screened, entry.loose, checked.graph, checked.placements, entry.hidden)
            self.updates[key] = entry
            self.verified += 1
        try:
            st = st or os.stat(filename)
        except OSError:
            return None
        if entry.matches_stat(st):
            return entry
        try:
            data = read_file(filename)
        except OSError:
            return None
        if content_digest(data) != entry.digest:
            return None
        # Same content, new stat (a checkout, a touch): trust the new stat from now on.
        refreshed = Entry(self._trusted_size(st), st.st_mtime_ns, entry.digest, entry.encoding, entry.violations, entry.index, entry.deps, entry.answers,
                          entry.screened, entry.loose, entry.graph, entry.placements, entry.hidden)
        self.updates[key] = refreshed
        return refreshed

    def _trusted_size(self, st: os.stat_result) -> int:
        return -1 if st.st_mtime_ns >= self.started_ns - RACY_WINDOW_NS else st.st_size

    def verifier(self):
        from synclint import repo

        return repo.verifier(self.settings)

    def previous(self, filename: str) -> tuple | None:
        """What the file's last lint saw and reported, for a lint of its new content to reuse
        (screened.reusing): (screened digest, findings, questions, answers digest, the answers'
        digest less the rows they cite, the call graph's fingerprint, the other answers' digest,
        the findings the tiers hid), or None."""
        entry = self.updates.get(self.key(filename)) or self.entries.get(self.key(filename))
        if entry is None or not entry.screened or not entry.answers:
            return None
        return (entry.screened, entry.violations, entry.deps, entry.answers, entry.loose, entry.graph, entry.placements, entry.hidden)

    def store(self, filename: str, stat: tuple[int, int], digest: bytes, encoding: str, violations, reads: dict | None = None,
              screened: str = "", kept: tuple | None = None, hidden: dict | None = None) -> None:
        """Record a file's findings. `stat` (size, mtime_ns) must be taken before the content
        was read, so that a file changed meanwhile is caught by its stat next time. `reads`:
        what the lint asked of the repository index and the answers (repo.recording); None
        when unknown, and the entry then holds under this index only. `screened`: the digest
        of what the rules saw (screened.reusing). `kept`: the questions and the digests of their
        answers of the file's last entry, where its findings were reused with the same answers."""
        from synclint import repo

        size, mtime_ns = stat
        trusted = -1 if mtime_ns >= self.started_ns - RACY_WINDOW_NS else size
        if kept is not None:  # the last entry's questions, whose answers are the same now
            deps, answers, loose, graph, placements = kept
        elif reads is None:
            deps, answers, loose, graph, placements = (), "", "", "", ""
        else:
            deps, answers, loose, graph, placements = (tuple(sorted(reads)), repo.dependency_digest(reads),
                                                       moved_lines.loose_digest(reads), repo.graph_fingerprint(), repo.graph_digest(reads))
        self.updates[self.key(filename)] = Entry(trusted, mtime_ns, digest, encoding, to_plain(violations), self.index, deps, answers,
                                                 screened if reads is not None else "", loose, graph, placements,
                                                 tuple(sorted((hidden or {}).items())))

    def save(self) -> None:
        """Merge our updates into the index on disk and replace it atomically. Never raises:
        a cache that cannot be written only costs time on the next run."""
        if not self.updates:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _mark_folder(self.folder)
            merged = self._read()  # what concurrent runs wrote since we loaded
            merged.update(self.updates)
            _drop_deleted(merged, self.seen)
            _replace_atomically(self.path, _encode(merged))
            _prune_stale(self.folder, keep=self.path)
        except OSError:
            return
        self.entries = merged
        self.updates = {}


def _drop_deleted(entries: dict[str, Entry], seen: set[str]) -> None:
    """Forget files that no longer exist (only those this run did not see: it saw the rest)."""
    for key in [k for k in entries if k not in seen and not os.path.exists(k)]:
        del entries[key]


def _replace_atomically(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then put it in `path`'s place: a reader
    sees the old file or the new one, never a part (raises OSError; leaves no temporary file)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.suffix.lstrip('.')}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _prune_stale(folder: Path, keep: Path, pattern: str = "*.idx") -> None:
    """Delete indexes (or rule descriptions) of other configurations or synclint versions
    unused for STALE_AFTER_S."""
    cutoff = time.time() - STALE_AFTER_S
    for index in folder.glob(pattern):
        try:
            if index != keep and index.stat().st_mtime < cutoff:
                index.unlink()
        except OSError:
            pass


def _mark_folder(folder: Path) -> None:
    """Keep the cache out of git and backups, as ruff and pytest do."""
    for name, text in ((".gitignore", "# Created by synclint automatically.\n*\n"), ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")):
        marker = folder / name
        if not marker.exists():
            try:
                marker.write_text(text)
            except OSError:
                pass

"""The repository index store stays bounded (synclint/index_store.py): old tags past the cap or
the age go with their facts and state, summaries no tag names go after a grace period, the
markers keep an ordinary run from walking the store, and nothing else in the folder is touched."""

from __future__ import annotations

import hashlib
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from index_projects import BATCH_INFO, _store  # noqa: F401 - _store is an autouse fixture
from index_projects import project

from synclint import index_store, repo

HOUR = 3600.0
DAY = 86400.0
NOW = 2_000_000_000.0


def _tag(n) -> str:
    return hashlib.sha256(f"tag {n}".encode()).hexdigest()[:24]


def _digest(n) -> str:
    return hashlib.sha256(f"blob {n}".encode()).hexdigest()


def _put(path: Path, data: bytes, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def _blob(store: Path, digest: str, mtime: float) -> Path:
    return _put(store / digest[:2] / digest[2:], marshal.dumps(((), (), (), (), (), ())), mtime)


def _add_tag(store: Path, tag: str, used: float, digests=(), state_digests=None) -> None:
    """A tag as repo.store._save and repo.incremental._save_state write it, its roots/ file used at `used`."""
    stats = {f"/p/f{i}.py": (10, 1, d) for i, d in enumerate(digests)}
    _put(store / "roots" / tag, marshal.dumps(stats), used)
    _put(store / "facts" / tag, marshal.dumps(({}, "fp", {}, {}, (), ({}, {}), {})), used)
    if state_digests is not None:
        paths = tuple(f"/p/f{i}.py" for i in range(len(state_digests)))
        blob = ("state-2", paths, tuple(state_digests), (("P", "f"),), (b"\0" * 8,), {"f": {(): 1}}) + (None,) * 13
        _put(store / "state" / tag, marshal.dumps(blob), used)


def _tags(store: Path, sub: str = "roots") -> set[str]:
    return set(os.listdir(store / sub)) if (store / sub).is_dir() else set()


def _backdate(store: Path, seconds: float) -> None:
    """Every file of the store made `seconds` older (markers included)."""
    for folder, _, files in os.walk(store):
        for name in files:
            path = os.path.join(folder, name)
            st = os.stat(path, follow_symlinks=False)
            os.utime(path, (st.st_atime - seconds, st.st_mtime - seconds), follow_symlinks=False)


@pytest.fixture
def store(tmp_path) -> Path:
    folder = tmp_path / "store"
    folder.mkdir()
    return folder


# --- tags ------------------------------------------------------------------------------------------


def test_tags_past_the_cap_go_with_their_facts_and_state(store):
    tags = [_tag(i) for i in range(12)]
    for i, tag in enumerate(tags):  # tags[0] used last
        _add_tag(store, tag, NOW - i * HOUR, state_digests=[])
    gone = index_store.prune_tags(str(store), tags[0], now=NOW)
    assert sorted(gone) == sorted(tags[8:])
    for sub in ("roots", "facts", "state"):
        assert _tags(store, sub) == set(tags[:8])


def test_tags_unused_past_the_age_go_and_recent_ones_stay(store):
    old, recent, fresh = _tag("old"), _tag("recent"), _tag("fresh")
    _add_tag(store, old, NOW - 31 * DAY)
    _add_tag(store, recent, NOW - 29 * DAY)
    _add_tag(store, fresh, NOW - 60)
    index_store.prune_tags(str(store), fresh, now=NOW)
    assert _tags(store) == _tags(store, "facts") == {recent, fresh}


def test_the_current_tag_is_never_removed(store):
    current = _tag("current")
    _add_tag(store, current, NOW - 400 * DAY, state_digests=[])
    for i in range(10):
        _add_tag(store, _tag(i), NOW - i)
    gone = index_store.prune_tags(str(store), current, now=NOW)
    assert current not in gone and len(gone) == 2
    assert current in _tags(store) and current in _tags(store, "facts") and current in _tags(store, "state")
    assert len(_tags(store)) == 9


def test_facts_and_state_without_roots_go_after_the_grace(store):
    lost, writing = _tag("lost"), _tag("writing")
    _put(store / "facts" / lost, b"x", NOW - 2 * HOUR)
    _put(store / "state" / lost, b"x", NOW - 2 * HOUR)
    _put(store / "state" / writing, b"x", NOW - 60)
    index_store.prune_tags(str(store), _tag("current"), now=NOW)
    assert _tags(store, "facts") == set() and _tags(store, "state") == {writing}


def test_a_dry_run_deletes_nothing(store):
    for i in range(10):
        _add_tag(store, _tag(i), NOW - 40 * DAY)
    _blob(store, _digest(1), NOW - 2 * DAY)
    assert len(index_store.prune_tags(str(store), _tag(0), now=NOW, dry_run=True)) == 9
    assert len(index_store.sweep_summaries(str(store), now=NOW, dry_run=True)) == 1
    assert len(_tags(store)) == 10 and (store / _digest(1)[:2] / _digest(1)[2:]).exists()


# --- summaries -------------------------------------------------------------------------------------


def test_unnamed_old_summaries_are_swept_named_and_fresh_ones_stay(store):
    named, in_state, unnamed, fresh = _digest("named"), _digest("state"), _digest("unnamed"), _digest("fresh")
    _add_tag(store, _tag(0), NOW, digests=[named], state_digests=[in_state, named])
    for digest in (named, in_state, unnamed):
        _blob(store, digest, NOW - 40 * DAY)
    _blob(store, fresh, NOW - 60)
    stale_write = _put(store / "state" / "tmpab_cd123.tmp", b"partial", NOW - 2 * HOUR)
    live_write = _put(store / "ab" / "tmpzz99_x00.tmp", b"partial", NOW - 10)
    stale_summary = _put(store / "ab" / "tmp0123abcd.tmp", b"partial", NOW - 2 * HOUR)
    gone = index_store.sweep_summaries(str(store), now=NOW)
    left = {p.parent.name + p.name for p in store.glob("??/*") if not p.name.startswith("tmp")}
    assert left == {named, in_state, fresh}
    assert not stale_write.exists() and not stale_summary.exists() and live_write.exists()
    assert len(gone) == 3


def test_old_call_graph_memos_are_swept_fresh_ones_stay(store):
    old = _put(store / "graph" / "0123456789abcdef", marshal.dumps("fedcba9876543210"), NOW - 2 * HOUR)
    fresh = _put(store / "graph" / "abcdef0123456789", marshal.dumps("0123456789abcdef"), NOW - 60)
    other = _put(store / "graph" / "notes.txt", b"kept", NOW - 40 * DAY)
    gone = index_store.sweep_summaries(str(store), now=NOW)
    assert gone == [str(old)] and not old.exists() and fresh.exists() and other.exists()


def test_the_call_graph_fingerprint_is_kept_with_the_facts(tmp_path, monkeypatch):
    # Worked out once per solve and stored with the facts (a run that reads them back does not
    # walk the call graph again); the same for equal indexes, another for another.
    root = project(tmp_path / "proj", {"batch_info.py": BATCH_INFO})
    facts = repo.build(root.resolve(), use_cache=True)
    first = repo.graph_fingerprint(facts)
    again = repo.build(root.resolve(), use_cache=False)
    read_back = repo.build(root.resolve(), use_cache=True)
    monkeypatch.setattr(repo.Facts, "callers", property(lambda self: (_ for _ in ()).throw(AssertionError("walked"))), raising=False)
    assert repo.graph_fingerprint(again) == first and repo.graph_fingerprint(read_back) == first
    other = project(tmp_path / "other", {"batch_info.py": BATCH_INFO.replace("def ", "def other_", 1)})
    monkeypatch.undo()
    assert repo.graph_fingerprint(repo.build(other.resolve(), use_cache=False)) != first


def test_summaries_of_removed_tags_are_swept(store):
    kept, dropped, shared = _digest("kept"), _digest("dropped"), _digest("shared")
    _add_tag(store, _tag("new"), NOW, digests=[kept, shared])
    _add_tag(store, _tag("old"), NOW - 40 * DAY, digests=[dropped, shared], state_digests=[dropped])
    for digest in (kept, dropped, shared):
        _blob(store, digest, NOW - 40 * DAY)
    index_store.keep_bounded(str(store), _tag("new"), now=NOW)
    assert _tags(store) == {_tag("new")} and _tags(store, "state") == set()
    assert {p.parent.name + p.name for p in store.glob("??/*")} == {kept, shared}


def test_state_digests_are_read_from_the_start_of_the_file(tmp_path):
    shared = "d" * 64
    blob = ("state-2", ("/p/a.py", "/p/é.py", "/p/c.py"), (shared, "e" * 64, shared), ("key",) * 3) + (b"\0" * 5_000_000,)
    for version in range(2, marshal.version + 1):
        path = _put(tmp_path / f"state{version}", marshal.dumps(blob, version), NOW)
        assert index_store._state_digests(str(path)) == blob[2]
    # A layout the reader does not know is loaded whole; one that is not a state names nothing.
    odd = _put(tmp_path / "odd", marshal.dumps(("state-9", [1], ("f" * 64,))), NOW)
    assert index_store._state_digests(str(odd)) == ("f" * 64,)
    assert index_store._state_digests(str(_put(tmp_path / "bad", b"\xff\x00garbage", NOW))) == ()


# --- the markers -----------------------------------------------------------------------------------


def test_the_markers_make_a_second_prune_a_no_op(store):
    current = _tag("current")
    _add_tag(store, current, time.time() - 40 * DAY)
    index_store.keep_bounded(str(store), current, now=NOW)
    assert (store / index_store.TAG_MARKER).exists() and (store / index_store.SWEEP_MARKER).exists()
    assert abs(time.time() - (store / "roots" / current).stat().st_mtime) < HOUR  # marked used now
    # Past the cap and the age, unnamed and old: due for removal, but the markers are recent.
    for i in range(10):
        _add_tag(store, _tag(i), NOW - 40 * DAY)
    orphan = _blob(store, _digest("orphan"), NOW - 40 * DAY)
    index_store.keep_bounded(str(store), current, now=NOW + 60)
    assert len(_tags(store)) == 11 and orphan.exists()
    # An hour later the tags go, and the summaries are swept since tags went.
    index_store.keep_bounded(str(store), current, now=NOW + 2 * HOUR)
    assert _tags(store) == {current} and not orphan.exists()


def test_the_sweep_without_removed_tags_waits_a_week(store):
    current = _tag("current")
    _add_tag(store, current, NOW)
    index_store.keep_bounded(str(store), current, now=NOW)
    orphan = _blob(store, _digest("orphan"), NOW - 40 * DAY)
    index_store.keep_bounded(str(store), current, now=NOW + 2 * DAY)  # tags pruned, none removed
    assert orphan.exists()
    index_store.keep_bounded(str(store), current, now=NOW + 8 * DAY)
    assert not orphan.exists()


# --- what is not the store's -----------------------------------------------------------------------


def test_files_not_named_as_the_store_names_them_are_untouched(store, tmp_path):
    old = NOW - 400 * DAY
    foreign = [
        _put(store / "notes.txt", b"x", old),
        _put(store / "roots" / "README", b"x", old),
        _put(store / "roots" / (_tag(1) + ".bak"), b"x", old),
        _put(store / "facts" / _tag(2).upper(), b"x", old),
        _put(store / "ab" / "not-a-summary", b"x", old),
        _put(store / "ab" / ("c" * 63), b"x", old),
        _put(store / "AB" / ("c" * 62), b"x", old),
        _put(store / "zz" / ("c" * 62), b"x", old),
        _put(store / "sub" / "ab" / ("c" * 62), b"x", old),
        _put(store / "tmp.tmp", b"x", old),
    ]
    (store / "cd").mkdir()
    (store / "ab" / ("e" * 62)).mkdir()
    # Links out of the store: a bucket, a tag folder, a summary.
    outside = tmp_path / "outside"
    targets = [_put(outside / ("f" * 62), b"x", old), _put(outside / _tag(3), b"x", old)]
    os.symlink(outside, store / "ef")
    os.symlink(outside, store / "state")
    os.symlink(targets[0], store / "cd" / ("f" * 62))
    for i in range(10):
        _add_tag(store, _tag(10 + i), old)
    index_store.keep_bounded(str(store), _tag(10), now=NOW)
    assert _tags(store) == {_tag(10), "README", _tag(1) + ".bak"}
    assert all(p.exists() for p in foreign + targets)
    assert (store / "cd" / ("f" * 62)).is_symlink() and (store / "ab" / ("e" * 62)).is_dir()


def test_pruning_never_raises(store, monkeypatch):
    for i in range(10):
        _add_tag(store, _tag(i), NOW - 40 * DAY)
    _blob(store, _digest(1), NOW - 40 * DAY)

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(os, "unlink", refuse)
    index_store.keep_bounded(str(store), _tag(0), now=NOW)
    assert len(_tags(store)) == 10
    monkeypatch.undo()
    index_store.keep_bounded(str(store / "missing"), _tag(0), now=NOW)
    index_store.keep_bounded(str(store / "roots" / _tag(1)), _tag(0), now=NOW)  # a file, not a folder
    assert not (store / "missing").exists()


# --- with the index ---------------------------------------------------------------------------------


FILES = {
    "batch_info.py": BATCH_INFO,
    "runner.py": """\
        from batch_info import build


        def step(requests, device):
            batch = build(requests, device)
            return batch.lengths.max().item()
        """,
}


def _store_folder() -> Path:
    return repo.store_folder()


def _summaries(store: Path) -> set[str]:
    return {p.parent.name + p.name for p in store.glob("??/*")}


def _named(store: Path) -> set[str]:
    named = set()
    for path in (store / "roots").iterdir():
        named |= {st[2] for st in marshal.loads(path.read_bytes()).values()}
    return named


def test_lints_of_new_code_versions_leave_a_bounded_store(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", FILES).resolve()
    store = _store_folder()
    monkeypatch.setattr(repo.store, "_index_code", lambda: "a" * 16)
    first = repo.build(root, use_cache=True)
    first_tags, first_summaries = _tags(store), _summaries(store)
    assert len(first_tags) == 1 and len(first_summaries) == 2
    # A month later, another code version: the old tag and its summaries go.
    _backdate(store, 31 * DAY)
    monkeypatch.setattr(repo.store, "_index_code", lambda: "b" * 16)
    second = repo.build(root, use_cache=True)
    assert second.fingerprint == first.fingerprint
    assert len(_tags(store)) == 1 and _tags(store).isdisjoint(first_tags)
    assert _tags(store, "facts") == _tags(store, "state") == _tags(store)
    assert _summaries(store) == _named(store) and _summaries(store).isdisjoint(first_summaries)


def test_many_code_versions_keep_the_most_recent_tags(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", FILES).resolve()
    store = _store_folder()
    for version in range(12):
        monkeypatch.setattr(repo.store, "_index_code", lambda v=version: f"{v:016x}")
        repo.build(root, use_cache=True)
        _backdate(store, 2 * HOUR)  # the markers due again; the summaries past the grace
    latest = hashlib.sha256(f"{repo.INDEX_VERSION}|{11:016x}|{root}".encode()).hexdigest()[:24]
    assert len(_tags(store)) == index_store.KEEP_TAGS and latest in _tags(store)
    assert _tags(store, "facts") == _tags(store, "state") == _tags(store)
    assert _summaries(store) == _named(store) and len(_summaries(store)) == 2 * index_store.KEEP_TAGS


def test_a_reused_tag_is_marked_used(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", FILES).resolve()
    for path in root.glob("*.py"):  # not just written: their stat is trusted (repo.RACY_WINDOW_NS)
        os.utime(path, (time.time() - DAY, time.time() - DAY))
    store = _store_folder()
    repo.build(root, use_cache=True)
    (tag,) = _tags(store)
    stale = _tag("stale")
    _add_tag(store, stale, time.time(), digests=[_digest("stale")])
    _blob(store, _digest("stale"), time.time())
    _backdate(store, 40 * DAY)
    facts_mtime = (store / "facts" / tag).stat().st_mtime
    calls = []
    monkeypatch.setattr(repo.store, "solve", lambda *a, **k: calls.append(a))
    repo.build(root, use_cache=True)  # nothing changed: the facts are read back, nothing written
    assert calls == [] and (store / "facts" / tag).stat().st_mtime == facts_mtime
    assert time.time() - (store / "roots" / tag).stat().st_mtime < HOUR
    # The run that reused its tag pruned too: the other tag, unused for 40 days, went.
    assert _tags(store) == {tag} and _summaries(store) == _named(store) != set()


def test_the_summaries_are_keyed_by_every_module_that_computes_them():
    # A stored summary is reused while the code that computed it is the same: every module
    # summarising a file imports is hashed into the key (repo.store._index_code), but for package
    # markers and the violation model, which a summary never reads.
    code = (
        "import sys\n"
        "from synclint import repo\n"
        "repo.summarize('import torch\\n\\ndef f(x, wait=False):\\n    if wait:\\n        x.cuda()\\n    return x.tolist()\\n')\n"
        "print(' '.join(sorted(m.__file__ for n, m in sys.modules.items() if n.startswith('synclint') and getattr(m, '__file__', None))))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    package = Path(repo.__file__).resolve().parent.parent  # synclint/
    used = {Path(f).resolve().relative_to(package).as_posix() for f in loaded}
    never_read = {"__init__.py", "analysis/__init__.py", "apis/__init__.py", "violation.py"}
    assert used - never_read == set(repo.SUMMARY_MODULES)

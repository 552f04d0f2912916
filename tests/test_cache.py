"""The results cache: hits without reading unchanged files, misses on any change to the
file, the settings or the linter, exact round trips, and no crash on a damaged index."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from synclint import cache as cache_mod
from synclint import runner
from synclint.cache import ResultCache, from_plain, to_plain
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Applicability

REPO = Path(__file__).resolve().parent.parent

# SL101 (with a fix and an added import) and SL201 at default settings.
TWO_FINDINGS = textwrap.dedent(
    """\
    import torch


    def step(tokens):
        ids = torch.tensor(tokens, dtype=torch.long, device="cuda")
        total = torch.zeros(4, device="cuda").sum()
        return ids, total.item()
    """
)
CLEAN = "import torch\n\n\ndef step(x):\n    return torch.zeros(4, device=x.device) + x\n"


def full(violations) -> list[tuple]:
    return [(dataclasses.astuple(v), v.provenance) for v in violations]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(TWO_FINDINGS)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    # Files written just now are "racy" (their stat is not trusted yet): age them.
    old = 1_600_000_000_000_000_000
    for path in (tmp_path / "pkg").iterdir():
        os.utime(path, ns=(old, old))
    return tmp_path


@pytest.fixture
def count_reads(monkeypatch):
    """Counts every read of a linted file's content, by the runner or by the cache."""
    reads: list[str] = []
    real_runner_read, real_cache_read = runner.read_source, cache_mod.read_file

    def runner_read(path):
        reads.append(str(path))
        return real_runner_read(path)

    def cache_read(name):
        reads.append(str(name))
        return real_cache_read(name)

    monkeypatch.setattr(runner, "read_source", runner_read)
    monkeypatch.setattr(cache_mod, "read_file", cache_read)
    return reads


def lint(tree: Path, settings: Settings | None = None, **kw) -> runner.RunResult:
    return runner.lint_paths([tree / "pkg"], settings or Settings(), jobs=1, **kw)


def test_violations_round_trip_exactly_with_fixes():
    result = lint_source(TWO_FINDINGS, "model.py", Settings())
    assert {v.code for v in result.violations} == {"SL101", "SL201"}
    assert any(v.fix is not None and v.fix.edits for v in result.violations)
    back = from_plain(to_plain(result.violations), "model.py")
    assert back == result.violations
    assert full(back) == full(result.violations)
    assert all(type(b.fix.applicability) is Applicability for b in back if b.fix)


def test_warm_run_reads_no_file(tree, count_reads):
    cold = lint(tree)
    assert cold.cache_hits == 0 and cold.linted == 2
    assert len(count_reads) == 2
    count_reads.clear()
    warm = lint(tree)
    assert warm.cache_hits == 2 and warm.linted == 0
    assert count_reads == []
    assert full(warm.violations) == full(cold.violations)


def test_changed_file_is_relinted_alone(tree, count_reads):
    lint(tree)
    model = tree / "pkg" / "model.py"
    model.write_text(TWO_FINDINGS.replace("total.item()", "total"))
    count_reads.clear()
    run = lint(tree)
    assert run.cache_hits == 1 and run.linted == 1
    assert [v.code for v in run.violations] == ["SL101"]
    assert str(model) in count_reads[-1]


def test_touched_but_unchanged_file_is_a_hit_by_content(tree, count_reads):
    cold = lint(tree)
    model = tree / "pkg" / "model.py"
    os.utime(model, ns=(1_700_000_000_000_000_000,) * 2)
    count_reads.clear()
    run = lint(tree)
    assert run.cache_hits == 2 and run.linted == 0
    assert count_reads == [str(model)]  # hashed, not linted
    assert full(run.violations) == full(cold.violations)
    count_reads.clear()
    assert lint(tree).cache_hits == 2 and count_reads == []  # the new stat is trusted now


def test_same_size_same_mtime_edit_within_racy_window_is_caught(tmp_path, monkeypatch):
    # A file written during the run's own second could change again without its stat
    # changing; such entries are checked by content next time.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    model = tmp_path / "pkg" / "model.py"
    model.write_text(TWO_FINDINGS)
    lint(tmp_path)
    st = model.stat()
    model.write_text(TWO_FINDINGS.replace("total.item()", "total.neg_()"))  # same length
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert model.stat().st_size == st.st_size
    run = lint(tmp_path)
    assert [v.code for v in run.violations] == ["SL101"]


def test_config_change_invalidates(tree):
    lint(tree)
    run = lint(tree, Settings(ignore=("SL201",)))
    assert run.cache_hits == 0
    assert [v.code for v in run.violations] == ["SL101"]
    assert lint(tree).cache_hits == 2  # the first configuration's entries are still there


def test_linter_change_invalidates(tree, monkeypatch):
    lint(tree)
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: "another-synclint")
    assert lint(tree).cache_hits == 0


def test_no_cache_neither_reads_nor_writes(tree, monkeypatch):
    settings = Settings()
    lint(tree)
    # Poison the index: a valid entry with a made-up finding for the clean file.
    store = ResultCache(settings)
    clean = tree / "pkg" / "clean.py"
    entry = store.entries[ResultCache.key(str(clean))]
    fake = lint_source(TWO_FINDINGS, str(clean), settings).violations
    store.entries[ResultCache.key(str(clean))] = dataclasses.replace(entry, violations=to_plain(fake))
    store.updates = dict(store.entries)
    store.save()
    assert len(lint(tree).violations) == 4  # the cache is read (and poisoned)
    index = store.path.read_bytes()
    uncached = lint(tree, use_cache=False)
    assert len(uncached.violations) == 2 and uncached.cache_hits == 0
    assert store.path.read_bytes() == index
    fresh = tree / "fresh"
    (fresh / "pkg").mkdir(parents=True)
    (fresh / "pkg" / "m.py").write_text(TWO_FINDINGS)
    monkeypatch.chdir(fresh)
    lint(fresh, use_cache=False)
    assert not (fresh / ".synclint_cache").exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[: len(blob) // 2],  # truncated
        lambda blob: b"",  # empty
        lambda blob: b"garbage" * 100,  # not ours
        lambda blob: blob[:-5] + bytes(5),  # flipped tail, checksum fails
        lambda blob: cache_mod.MAGIC + blob[len(cache_mod.MAGIC) + 32 :],  # no checksum
    ],
)
def test_damaged_index_is_a_miss_not_a_crash(tree, damage):
    cold = lint(tree)
    path = ResultCache(Settings()).path
    path.write_bytes(damage(path.read_bytes()))
    run = lint(tree)
    assert run.cache_hits == 0
    assert full(run.violations) == full(cold.violations)
    assert lint(tree).cache_hits == 2  # rewritten whole


def test_valid_checksum_over_bad_records_is_a_miss(tree):
    lint(tree)
    path = ResultCache(Settings()).path
    import hashlib
    import marshal

    body = marshal.dumps({"x": (1, 2)})  # wrong record shape
    path.write_bytes(cache_mod.MAGIC + hashlib.sha256(body).digest() + body)
    assert lint(tree).cache_hits == 0


def test_unwritable_cache_dir_does_not_fail_the_run(tree):
    (tree / "blocker").write_text("a file where the cache folder should go")
    run = lint(tree, Settings(cache_dir="blocker/cache"))
    assert [v.code for v in run.violations] == ["SL101", "SL201"]


def test_cache_dir_setting_and_gitignore_marker(tree):
    lint(tree, Settings(cache_dir="elsewhere/cache"))
    folder = tree / "elsewhere" / "cache"
    assert list(folder.glob("*.idx"))
    assert (folder / ".gitignore").read_text().strip().endswith("*")
    assert not (tree / ".synclint_cache").exists()


def test_fix_still_fixes_with_a_warm_cache(tree):
    lint(tree)
    run = runner.lint_paths([tree / "pkg"], Settings(), fix=True, jobs=1)
    model = next(o for o in run.outcomes if o.filename.endswith("model.py"))
    clean = next(o for o in run.outcomes if o.filename.endswith("clean.py"))
    assert model.changed and model.applied == 1
    assert clean.original is None and not clean.violations  # nothing to fix: served by the cache
    assert run.cache_hits == 1


def test_cli_fix_then_relint_uses_the_fixed_content(tree):
    cmd = [sys.executable, "-m", "synclint", "check", "pkg", "--output-format", "concise"]
    first = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=120)
    assert "SL101" in first.stdout
    subprocess.run([*cmd, "--fix"], cwd=tree, capture_output=True, text=True, timeout=120, check=False)
    assert "pin_memory()" in (tree / "pkg" / "model.py").read_text()
    again = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=120)
    assert "SL101" not in again.stdout and "SL201" in again.stdout
    assert list((tree / ".synclint_cache").glob("*.idx"))


CONCURRENT = """
import sys
from pathlib import Path
from synclint import runner
from synclint.config import Settings
run = runner.lint_paths([Path(sys.argv[1])], Settings(), jobs=1)
print(sum(len(o.violations) for o in run.outcomes))
"""


def test_concurrent_runs_share_the_cache_safely(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for index in range(30):
        (pkg / f"m{index:02d}.py").write_text(TWO_FINDINGS if index % 2 else CLEAN)
    procs = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT, str(pkg)], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outputs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outputs == ["30"] * 6
    monkeypatch.chdir(tmp_path)
    entries = ResultCache(Settings()).entries
    assert len(entries) == 30  # a whole, readable index
    assert not list((tmp_path / ".synclint_cache").glob("*.tmp"))


def test_deleted_files_leave_the_index(tree):
    lint(tree)
    (tree / "pkg" / "clean.py").unlink()
    (tree / "pkg" / "new.py").write_text(CLEAN)  # a miss, so the index is written again
    lint(tree)
    keys = set(ResultCache(Settings()).entries)
    assert ResultCache.key(str(tree / "pkg" / "model.py")) in keys
    assert ResultCache.key(str(tree / "pkg" / "new.py")) in keys
    assert ResultCache.key(str(tree / "pkg" / "clean.py")) not in keys


def test_entries_of_files_not_linted_this_time_are_kept(tree):
    other = tree / "other"
    other.mkdir()
    (other / "m.py").write_text(TWO_FINDINGS)
    runner.lint_paths([other], Settings(), jobs=1)
    lint(tree)  # another part of the project
    keys = set(ResultCache(Settings()).entries)
    assert ResultCache.key(str(other / "m.py")) in keys and len(keys) == 3


def test_stale_indexes_of_other_configurations_are_pruned(tree):
    lint(tree, Settings(ignore=("SL201",)))
    old_index = ResultCache(Settings(ignore=("SL201",))).path
    recent_other = old_index.with_name("0" * 20 + ".idx")
    recent_other.write_bytes(old_index.read_bytes())
    month_ago = 1_000_000_000
    os.utime(old_index, (month_ago, month_ago))
    lint(tree)
    assert not old_index.exists()
    assert recent_other.exists()  # recently used by another configuration: kept
    assert ResultCache(Settings()).path.exists()


# The CLI in-process, then which modules it imported: `synclint.cli.main` ends the process
# with os._exit, so it is kept from doing that here.
IMPORTED_AFTER_CHECK = """
import sys
import synclint.cli as cli
cli._end_now = lambda code: None
sys.argv = ["synclint", "check", "pkg", "--output-format", sys.argv[1]]
cli.main()
print("libcst imported:", "libcst" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("fmt", ["full", "json", "sarif"])
def test_a_run_served_from_the_cache_never_imports_libcst(tree, fmt):
    # A warm run reads the cache and reports: parsing (libcst, the analysis, the rules) is
    # needed only for a file that changed. Importing libcst alone took about 0.2 s of a
    # 0.5 s warm run. SARIF describes every rule, so it may import them; the others do not.
    cold = subprocess.run([sys.executable, "-c", IMPORTED_AFTER_CHECK, fmt], cwd=tree, capture_output=True, text=True, timeout=120)
    assert "libcst imported: True" in cold.stderr, cold.stderr
    warm = subprocess.run([sys.executable, "-c", IMPORTED_AFTER_CHECK, fmt], cwd=tree, capture_output=True, text=True, timeout=120)
    assert "SL101" in warm.stdout
    assert f"libcst imported: {fmt == 'sarif'}" in warm.stderr, warm.stderr

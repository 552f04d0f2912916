"""Per-file configuration, as ruff does it: every file gets the settings of its nearest
configuration file, `extend` inherits, `--show-settings` and `--show-files` say what applies.
Exercised through the CLI in real processes on a monorepo with two configurations."""

from __future__ import annotations

import json
import os

import pytest

from conftest import TWO_FINDINGS, run_process, write

MONOREPO = {
    "base/synclint.toml": 'extend-select = ["SL5"]\nextend-exclude = ["generated"]\n',
    "a/pyproject.toml": '[project]\nname = "a"\n\n[tool.synclint]\nignore = ["SL201"]\n',
    "a/m.py": TWO_FINDINGS,
    "a/generated/g.py": TWO_FINDINGS,  # a's config does not exclude it
    "b/pyproject.toml": (
        '[tool.synclint]\nextend = "../base/synclint.toml"\nignore = ["SL101"]\n\n'
        '[tool.synclint.per-file-ignores]\n"sub/*" = ["SL2"]\n'
    ),
    "b/m.py": TWO_FINDINGS,
    "b/sub/s.py": TWO_FINDINGS,
    "b/generated/g.py": TWO_FINDINGS,  # excluded by the config b extends
    "c/m.py": TWO_FINDINGS,  # no configuration: the defaults
}


def _found(result) -> list[str]:
    """`path:CODE` for each finding, the path relative to the working directory."""
    return sorted(f"{os.path.relpath(d['filename'])}:{d['code']}" for d in json.loads(result.out))


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the subprocesses run there too: relative paths agree
    return write(tmp_path, MONOREPO)


def test_each_file_gets_its_nearest_configuration_in_any_argument_order(monorepo):
    expected = [
        "a/generated/g.py:SL101",
        "a/m.py:SL101",
        "b/m.py:SL201",
        "c/m.py:SL101",
        "c/m.py:SL201",
    ]
    orders = (["a", "b", "c"], ["c", "b", "a"], ["b/m.py", "a", "c", "b/sub"], ["."])
    for paths in orders:
        result = run_process("check", "--no-cache", "--output-format", "json", *paths, cwd=monorepo)
        assert result.code == 1, result.err
        assert _found(result) == expected, paths


def test_command_line_options_override_every_configuration(monorepo):
    result = run_process("check", "--no-cache", "--output-format", "json", "--select", "SL2", "b", "a", cwd=monorepo)
    assert _found(result) == ["b/m.py:SL201"]  # a ignores SL201 still: --select keeps the file's ignore


def test_show_settings_prints_the_resolved_settings_and_where_they_come_from(monorepo):
    result = run_process("check", "--show-settings", "b/sub/s.py", cwd=monorepo)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[:3] == [
        "Settings for b/sub/s.py",
        "# from b/pyproject.toml (extends base/synclint.toml)",
        "# project root: b",
    ]
    assert 'ignore = ["SL101"]' in lines
    assert 'extend-select = ["SL5"]' in lines  # inherited
    assert 'per-file-ignores = {"sub/*" = ["SL2"]}' in lines
    assert 'extend-exclude = ["generated"]' in lines
    plain = run_process("check", "--show-settings", "c/m.py", cwd=monorepo).out.splitlines()
    assert plain[1] == "# from the defaults: no configuration file found"
    assert 'select = ["SL"]' in plain and "per-file-ignores = {}" in plain
    overridden = run_process("check", "--show-settings", "a/m.py", "--select", "SL1", cwd=monorepo).out.splitlines()
    assert 'select = ["SL1"]' in overridden and 'ignore = ["SL201"]' in overridden


def test_show_files_lists_what_would_be_linted_with_its_configuration(monorepo):
    result = run_process("check", "--show-files", "b", "a", "c", cwd=monorepo)
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "b/m.py  (b/pyproject.toml)",
        "b/sub/s.py  (b/pyproject.toml)",
        "a/generated/g.py  (a/pyproject.toml)",
        "a/m.py  (a/pyproject.toml)",
        "c/m.py",
    ]


def test_synclint_toml_wins_over_pyproject_in_one_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "p/pyproject.toml": '[tool.synclint]\nignore = ["SL101"]\n',
        "p/synclint.toml": 'ignore = ["SL201"]\n',
        "p/m.py": TWO_FINDINGS,
    })
    result = run_process("check", "--no-cache", "--output-format", "json", "p", cwd=tmp_path)
    assert _found(result) == ["p/m.py:SL101"]


def test_a_pyproject_without_the_table_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "pyproject.toml": '[tool.synclint]\nignore = ["SL101"]\n',
        "pkg/pyproject.toml": '[project]\nname = "pkg"\n# a comment naming tool.synclint\n',
        "pkg/m.py": TWO_FINDINGS,
    })
    result = run_process("check", "--no-cache", "--output-format", "json", "pkg", cwd=tmp_path)
    assert _found(result) == ["pkg/m.py:SL201"]


def test_extend_errors_name_the_file(tmp_path):
    write(tmp_path, {
        "x/synclint.toml": 'extend = "../y/synclint.toml"\n',
        "y/synclint.toml": 'extend = "../x/synclint.toml"\n',
        "x/m.py": TWO_FINDINGS,
        "z/synclint.toml": 'extend = "missing.toml"\n',
        "z/m.py": TWO_FINDINGS,
    })
    cycle = run_process("check", "x", cwd=tmp_path)
    assert cycle.code == 2 and "`extend` makes a cycle" in cycle.err and "x/synclint.toml" in cycle.err
    missing = run_process("check", "z", cwd=tmp_path)
    assert missing.code == 2 and "missing.toml does not exist" in missing.err


def test_the_explicit_config_applies_to_every_file(monorepo):
    result = run_process("check", "--no-cache", "--output-format", "json", "--config", "a/pyproject.toml", "b/m.py", "c", cwd=monorepo)
    assert _found(result) == ["b/m.py:SL101", "c/m.py:SL101"]


def test_the_cache_follows_each_file_configuration(monorepo):
    first = run_process("check", "--output-format", "json", "a", "b", cwd=monorepo)
    assert _found(first) == ["a/generated/g.py:SL101", "a/m.py:SL101", "b/m.py:SL201"]
    (monorepo / "b" / "pyproject.toml").write_text('[tool.synclint]\nignore = ["SL201"]\n')
    second = run_process("check", "--output-format", "json", "b", "a", cwd=monorepo)
    assert _found(second) == [
        "a/generated/g.py:SL101",
        "a/m.py:SL101",
        "b/generated/g.py:SL101",  # no longer excluded: b no longer extends base
        "b/m.py:SL101",
        "b/sub/s.py:SL101",
    ]


def test_each_folder_is_resolved_once_and_each_config_read_once(monorepo, monkeypatch):
    from synclint import config

    reads, probes = [], []
    real_read, real_in = config.read_config_file, config.config_in
    monkeypatch.setattr(config, "read_config_file", lambda path, *a: reads.append(str(path)) or real_read(path, *a))
    monkeypatch.setattr(config, "config_in", lambda folder: probes.append(str(folder)) or real_in(folder))
    resolver = config.SettingsResolver()
    for _ in range(3):
        for name in ("a/m.py", "a/generated/g.py", "b/m.py", "b/sub/s.py", "b/generated/g.py"):
            resolver.for_file(monorepo / name)
    assert len(probes) == len(set(probes))
    assert sorted(p.rsplit("/", 2)[-2] for p in reads if p.endswith("pyproject.toml")) == ["a", "b"]
    assert resolver.for_file(monorepo / "b/m.py") is resolver.for_file(monorepo / "b/sub/s.py")


def test_readme_monorepo_example_prints_what_it_shows(tmp_path, monkeypatch):
    import re
    import shlex

    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tail = readme[readme.index("For a monorepo whose") :]
    commands = re.search(r"```bash\n(.*?)```", tail, re.S).group(1).splitlines()
    shown = re.search(r"```text\n(.*?)```", tail, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "base/synclint.toml": 'extend-select = ["SL5"]\n',
        "a/pyproject.toml": '[tool.synclint]\nignore = ["SL201"]\n',
        "a/m.py": TWO_FINDINGS,
        "b/pyproject.toml": '[tool.synclint]\nextend = "../base/synclint.toml"\nignore = ["SL101"]\n',
        "b/m.py": TWO_FINDINGS,
    })
    printed = "".join(run_process(*shlex.split(c)[1:], cwd=tmp_path).out for c in commands)
    assert printed.startswith(shown)

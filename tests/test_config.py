"""`[tool.synclint]`: found upward from the linted path, every key honoured, every bad key or
value an exit-2 error that names the key and the file."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import TWO_FINDINGS

SL101_ONLY = TWO_FINDINGS.replace("total.item()", "total")


def _codes(result) -> list[tuple[str, str]]:
    return [(d["filename"], d["code"]) for d in json.loads(result.out)]


def _rel(project, result) -> list[tuple[str, str]]:
    """(path relative to the project, code) of each JSON finding."""
    return [(Path(f).relative_to(project.root).as_posix(), c) for f, c in _codes(result)]


def test_config_is_found_upward_from_the_linted_path(project, synclint, monkeypatch):
    project.write({"repo/pyproject.toml": '[tool.synclint]\nselect = ["SL2"]\n', "repo/src/pkg/a.py": TWO_FINDINGS, "elsewhere/.keep": ""})
    monkeypatch.chdir(project.root / "elsewhere")
    result = synclint("check", "--output-format", "json", str(project.root / "repo" / "src" / "pkg" / "a.py"))
    assert _rel(project, result) == [("repo/src/pkg/a.py", "SL201")]
    folder = synclint("check", "--output-format", "json", str(project.root / "repo" / "src"))
    assert _rel(project, folder) == [("repo/src/pkg/a.py", "SL201")]


def test_a_pyproject_without_the_table_is_passed_over(project, synclint):
    project.write(
        {
            "pyproject.toml": '[tool.synclint]\nignore = ["SL201"]\n',
            "sub/pyproject.toml": '[project]\nname = "sub"\n',
            "sub/a.py": TWO_FINDINGS,
        }
    )
    assert _rel(project, synclint("check", "--output-format", "json", "sub")) == [("sub/a.py", "SL101")]


def test_no_config_anywhere_means_defaults(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    assert [c for _, c in _codes(synclint("check", "--output-format", "json", "a.py"))] == ["SL101", "SL201"]


@pytest.mark.parametrize(
    "body, message",
    [
        ('selct = ["SL1"]', "unknown key `selct` in [tool.synclint] (did you mean `select`?)"),
        ('per_file_ignores = {}', "unknown key `per_file_ignores` in [tool.synclint] (did you mean `per-file-ignores`?)"),
        ('colour = "red"', "unknown key `colour` in [tool.synclint]"),
        ('select = "SL1"', "`select` must be a list of strings, got 'SL1'"),
        ('ignore = ["SL9"]', "`ignore`: unknown rule selector `SL9`"),
        ('extend-select = [1]', "`extend-select` must be a list of strings, got [1]"),
        ('unsafe-fixes = "yes"', "`unsafe-fixes` must be true or false, got 'yes'"),
        ('respect-gitignore = 1', "`respect-gitignore` must be true or false, got 1"),
        ('h2d-helper = "not a path"', "`h2d-helper` must be 'inline', a preset (synclint, vllm, vllm-legacy, sglang) or a dotted path like 'pkg.module.func', got 'not a path'"),
        ('min-confidence = "very"', "`min-confidence`: unknown confidence 'very' (expected low, medium or high)"),
        ('max-file-size = 0', "`max-file-size` must be a positive integer, got 0"),
        ('per-file-ignores = ["x"]', "`per-file-ignores` must be a table of glob = [codes], got ['x']"),
        ('per-file-ignores = {"t/*" = ["XYZ"]}', "`per-file-ignores`: unknown rule selector `XYZ`"),
        ('exclude = "build"', "`exclude` must be a list of strings, got 'build'"),
    ],
)
def test_bad_key_or_value_names_the_key_and_the_file(project, synclint, body, message):
    project.write({"pyproject.toml": f"[tool.synclint]\n{body}\n", "a.py": TWO_FINDINGS})
    result = synclint("check", "a.py")
    assert (result.code, result.out) == (2, "")
    assert result.err == f"synclint: configuration error: {project.root / 'pyproject.toml'}: {message}\n"


def test_per_file_ignores_globs_relative_to_the_config(project, synclint):
    project.write(
        {
            # include-cold: findings in a tests folder are cold, hidden by default
            "pyproject.toml": '[tool.synclint]\ninclude-cold = true\n[tool.synclint.per-file-ignores]\n"tests/*" = ["SL2"]\n"scripts/warmup.py" = ["ALL"]\n"*/legacy_*.py" = ["SL101"]\n',
            "tests/t.py": TWO_FINDINGS,
            "scripts/warmup.py": TWO_FINDINGS,
            "pkg/legacy_io.py": TWO_FINDINGS,
            "pkg/a.py": TWO_FINDINGS,
        }
    )
    result = synclint("check", "--output-format", "json", ".")
    assert _rel(project, result) == [
        ("pkg/a.py", "SL101"),
        ("pkg/a.py", "SL201"),
        ("pkg/legacy_io.py", "SL201"),
        ("tests/t.py", "SL101"),
    ]


def test_exclude_replaces_and_extend_exclude_adds_to_the_defaults(project, synclint):
    files = {name: TWO_FINDINGS for name in ("src/a.py", "build/gen.py", ".venv/lib/x.py", "__pycache__/c.py", "gen/out.py", "vendor/v.py")}
    project.write(files)
    default = synclint("check", "--output-format", "json", ".")
    assert sorted({f for f, _ in _rel(project, default)}) == ["gen/out.py", "src/a.py", "vendor/v.py"]

    project.write({"pyproject.toml": '[tool.synclint]\nextend-exclude = ["gen", "vendor/*.py"]\n'})
    extended = synclint("check", "--output-format", "json", ".")
    assert sorted({f for f, _ in _rel(project, extended)}) == ["src/a.py"]

    project.write({"pyproject.toml": '[tool.synclint]\nexclude = ["src"]\n'})
    replaced = synclint("check", "--output-format", "json", ".")
    assert sorted({f for f, _ in _rel(project, replaced)}) == [".venv/lib/x.py", "__pycache__/c.py", "build/gen.py", "gen/out.py", "vendor/v.py"]


def test_an_excluded_file_named_on_the_command_line_is_still_linted(project, synclint):
    project.write({"pyproject.toml": '[tool.synclint]\nextend-exclude = ["gen"]\n', "gen/out.py": TWO_FINDINGS})
    assert len(_codes(synclint("check", "--output-format", "json", "gen/out.py"))) == 2
    assert _codes(synclint("check", "--output-format", "json", ".")) == []


def test_gitignore_is_respected_unless_turned_off(project, synclint):
    project.write(
        {
            ".gitignore": "generated/\n*_pb2.py\n",
            "sub/.gitignore": "local.py\n",
            "generated/g.py": TWO_FINDINGS,
            "api_pb2.py": TWO_FINDINGS,
            "sub/local.py": TWO_FINDINGS,
            "sub/kept.py": TWO_FINDINGS,
        }
    )
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    respected = synclint("check", "--output-format", "json", ".")
    assert sorted({f for f, _ in _rel(project, respected)}) == ["sub/kept.py"]

    project.write({"pyproject.toml": "[tool.synclint]\nrespect-gitignore = false\n"})
    everything = synclint("check", "--output-format", "json", ".")
    assert sorted({f for f, _ in _rel(project, everything)}) == ["api_pb2.py", "generated/g.py", "sub/kept.py", "sub/local.py"]


@pytest.mark.parametrize(
    "helper, import_line, call",
    [
        (None, None, '(torch.as_tensor(tokens, dtype=torch.long).pin_memory() if torch.cuda.is_available() else torch.tensor(tokens, dtype=torch.long)).to("cuda", non_blocking=torch.cuda.is_available())'),
        ('"inline"', None, '(torch.as_tensor(tokens, dtype=torch.long).pin_memory() if torch.cuda.is_available() else torch.tensor(tokens, dtype=torch.long)).to("cuda", non_blocking=torch.cuda.is_available())'),
        ('"synclint"', "from synclint.runtime import async_tensor_h2d", 'async_tensor_h2d(tokens, dtype=torch.long, device="cuda")'),
        ('"vllm"', "from vllm.utils.torch_utils import async_tensor_h2d", 'async_tensor_h2d(tokens, dtype=torch.long, device="cuda")'),
        # older vLLM: async_tensor_h2d(data, dtype, target_device, pin_memory), all required
        (
            '"vllm-legacy"',
            "from vllm.utils import async_tensor_h2d",
            'async_tensor_h2d(tokens, dtype=torch.long, target_device="cuda", pin_memory=torch.cuda.is_available())',
        ),
        # SGLang: async_h2d(args, *, dtype, device)
        ('"sglang"', "from sglang.srt.utils.common import async_h2d", 'async_h2d(tokens, dtype=torch.long, device="cuda")'),
        ('"myproj.cuda_utils.to_gpu"', "from myproj.cuda_utils import to_gpu", 'to_gpu(tokens, dtype=torch.long, device="cuda")'),
    ],
)
def test_h2d_helper_presets_and_dotted_path(project, synclint, helper, import_line, call):
    config = f"[tool.synclint]\nh2d-helper = {helper}\n" if helper else "[tool.synclint]\n"
    project.write({"pyproject.toml": config, "a.py": SL101_ONLY})
    result = synclint("check", "--fix", "a.py")
    assert result.code == 0
    text = (project.root / "a.py").read_text()
    if import_line is None:
        assert "import" not in text.replace("import torch\n", "", 1)  # the default adds no import
    else:
        assert text.splitlines()[1] == import_line
    # (a call that would push its line far past the line length is broken over lines)
    assert f"ids = {call}" in re.sub(r"([(\[])\s+", r"\1", re.sub(r",?\s+([)\]])", r"\1", " ".join(text.split())))


def test_h2d_helper_on_the_command_line_overrides_the_file(project, synclint):
    project.write({"pyproject.toml": '[tool.synclint]\nh2d-helper = "vllm"\n', "a.py": SL101_ONLY})
    synclint("check", "--fix", "--h2d-helper", "pkg.h2d.copy_async", "a.py")
    assert (project.root / "a.py").read_text().splitlines()[1] == "from pkg.h2d import copy_async"
    bad = synclint("check", "--h2d-helper", "x", "a.py")
    assert bad.code == 2
    assert "`--h2d-helper` must be 'inline', a preset (synclint, vllm, vllm-legacy, sglang) or a dotted path" in bad.err


def test_select_in_the_file_and_extend_select_on_the_command_line(project, synclint):
    project.write({"pyproject.toml": '[tool.synclint]\nselect = ["SL1"]\n', "a.py": TWO_FINDINGS})
    assert [c for _, c in _codes(synclint("check", "--output-format", "json", "a.py"))] == ["SL101"]
    both = synclint("check", "--output-format", "json", "--extend-select", "SL2", "a.py")
    assert [c for _, c in _codes(both)] == ["SL101", "SL201"]
    cli_select = synclint("check", "--output-format", "json", "--select", "SL2", "a.py")
    assert [c for _, c in _codes(cli_select)] == ["SL201"]


def test_min_confidence_key_and_option(project, synclint):
    project.write({"a.py": TWO_FINDINGS})  # SL101 here is medium, SL201 high
    assert [c for _, c in _codes(synclint("check", "--output-format", "json", "--min-confidence", "high", "a.py"))] == ["SL201"]
    project.write({"pyproject.toml": '[tool.synclint]\nmin-confidence = "high"\n'})
    assert [c for _, c in _codes(synclint("check", "--output-format", "json", "a.py"))] == ["SL201"]


def test_unsafe_fixes_key_is_read(project):
    from synclint.config import read_config_file

    project.write({"pyproject.toml": "[tool.synclint]\nunsafe-fixes = true\n"})
    assert read_config_file(project.root / "pyproject.toml").unsafe_fixes is True
    project.write({"synclint.toml": "unsafe-fixes = true\nselect = ['SL2']\n"})
    settings = read_config_file(project.root / "synclint.toml")
    assert (settings.unsafe_fixes, settings.select) == (True, ("SL2",))


def test_extend_lists_add_to_the_defaults(project):
    from synclint.config import DEFAULT_HOT_FUNCTIONS, read_config_file

    project.write({"pyproject.toml": '[tool.synclint]\nextend-hot-functions = ["run_batch"]\n'})
    settings = read_config_file(project.root / "pyproject.toml")
    assert settings.hot_functions == (*DEFAULT_HOT_FUNCTIONS, "run_batch")


def test_force_exclude_applies_excludes_to_named_files(project, synclint):
    project.write({"pyproject.toml": '[tool.synclint]\nextend-exclude = ["gen"]\n', "gen/deep/out.py": TWO_FINDINGS, "build/b.py": TWO_FINDINGS, "a.py": TWO_FINDINGS})
    named = ("gen/deep/out.py", "build/b.py", "a.py")
    assert _rel(project, synclint("check", "--output-format", "json", "--select", "SL201", *named)) == [
        ("a.py", "SL201"),
        ("build/b.py", "SL201"),
        ("gen/deep/out.py", "SL201"),
    ]
    forced = synclint("check", "--output-format", "json", "--select", "SL201", "--force-exclude", *named)
    assert _rel(project, forced) == [("a.py", "SL201")]
    project.write({"pyproject.toml": '[tool.synclint]\nextend-exclude = ["gen"]\nforce-exclude = true\n'})
    assert _rel(project, synclint("check", "--output-format", "json", "--select", "SL201", *named)) == [("a.py", "SL201")]

"""The README tells the truth: its first commands work on the bundled example, its test
command is the one CI runs, its configuration table lists every key, its samples parse."""

from __future__ import annotations

import re

from conftest import REPO, run_process, unwrapped

README = (REPO / "README.md").read_text(encoding="utf-8")


def _code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_first_command_installs_and_runs_on_the_bundled_example():
    install_and_run, test_command = _code_blocks("bash")[:2]
    assert install_and_run.strip() == "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && synclint check examples/"
    result = run_process("check", "examples/", cwd=REPO)
    assert result.code == 1, result.out + result.err
    shown = _code_blocks("text")[0]
    assert shown in result.out  # the finding the README shows is the one synclint prints
    for code in ("SL101", "SL201"):
        assert f": {code} [" in result.out
    assert "it reports two" in README and result.out.endswith("Found 2 findings.\n[*] 1 fixable with the `--fix` option.\n")


def test_the_example_is_fixed_to_code_that_compiles(tmp_path):
    import shutil

    shutil.copytree(REPO / "examples", tmp_path / "examples")
    result = run_process("check", "--fix", "--select", "SL101,SL201", "examples/", cwd=tmp_path)
    assert result.code == 1  # the readback in the loop has no automatic fix
    fixed = (tmp_path / "examples" / "decode_loop.py").read_text()
    assert "import synclint" not in fixed and "from synclint" not in fixed  # no new dependency
    assert 'ids = torch.tensor(token_ids, dtype=torch.long, pin_memory=torch.cuda.is_available()).to("cuda", non_blocking=torch.cuda.is_available())' in unwrapped(fixed)
    compile(fixed, "decode_loop.py", "exec")
    assert result.out.splitlines()[-1] == "Found 2 findings (1 fixed, 1 remaining)."


def test_test_command_is_the_one_ci_runs():
    test_command = _code_blocks("bash")[1].strip()
    assert test_command == "pip install -e '.[test]' torch==2.13.0 && python -m pytest -q"
    ci = (REPO / ".ci" / "run").read_text()
    assert "python -m pip install --quiet -e '.[test]' 'torch==2.13.0'" in ci
    assert "python -m pytest -q" in ci
    assert (REPO / ".ci" / "run").stat().st_mode & 0o111  # executable


def test_configuration_table_lists_every_key_with_its_default():
    from synclint.config import _KEYS, DEFAULT_ALLOW_FUNCTIONS, DEFAULT_COLD_FUNCTIONS, DEFAULT_EXCLUDE, DEFAULT_HOT_FUNCTIONS

    table = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z0-9-]+)` \| (.*?) \|", README, flags=re.M)}
    assert set(_KEYS) <= set(table), sorted(set(_KEYS) - set(table))
    assert re.findall(r"`([^`]+)`", table["exclude"]) == list(DEFAULT_EXCLUDE)
    assert re.findall(r"`([^`]+)`", table["hot-functions"]) == list(DEFAULT_HOT_FUNCTIONS)
    assert re.findall(r"`([^`]+)`", table["cold-functions"]) == list(DEFAULT_COLD_FUNCTIONS)
    assert re.findall(r"`([^`]+)`", table["allow-functions"]) == list(DEFAULT_ALLOW_FUNCTIONS)


def test_tiers_page_lists_the_default_cold_functions():
    from synclint.config import DEFAULT_COLD_FUNCTIONS

    page = (REPO / "docs" / "tiers.md").read_text()
    [listing] = [line for line in page.splitlines() if line.startswith("`__init__`, ")]
    assert re.findall(r"`([^`]+)`", listing) == list(DEFAULT_COLD_FUNCTIONS)

def test_configuration_sample_is_valid(tmp_path):
    from synclint.config import read_config_file

    [sample] = _code_blocks("toml")
    (tmp_path / "pyproject.toml").write_text(sample)
    settings = read_config_file(tmp_path / "pyproject.toml")
    assert settings.h2d_helper == "vllm.utils.torch_utils.async_tensor_h2d"
    assert dict(settings.per_file_ignores) == {"tests/*": ("SL2",), "scripts/*": ("ALL",)}


def test_precommit_snippet_names_the_hooks_that_exist():
    hooks = re.findall(r"^- id: (\S+)", (REPO / ".pre-commit-hooks.yaml").read_text(), flags=re.M)
    assert hooks == ["synclint", "synclint-fix"]
    for hook in hooks:
        assert f"id: {hook} " in README or f"id: {hook}\n" in README

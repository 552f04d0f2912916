"""The public Python API: `synclint.lint_source`, `synclint.fix_source`, `synclint.settings_for`,
used as a library user would, and checked to be what the CLI, the proof harness and the
tracer's join go through."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import unwrapped
import synclint

# SL403 (unsafe fix), SL103 (safe fix) and SL106 (no fix) on a hot path.
SOURCE = textwrap.dedent(
    """\
    import torch


    def step(req_gpu, n: list[int], device):
        counts = torch.tensor(n, dtype=torch.int32, pin_memory=True).to(device, non_blocking=True)
        ids = torch.repeat_interleave(req_gpu, counts)
        y = torch.tensor([1, 2, 3]).cuda()
        return ids, y
    """
)


def _codes(violations) -> list[tuple[int, str]]:
    return [(v.location.row, v.code) for v in violations]


def test_lint_source_returns_sorted_violations():
    found = synclint.lint_source(SOURCE, "model.py")
    assert isinstance(found, list) and all(isinstance(v, synclint.Violation) for v in found)
    assert _codes(found) == [(6, "SL403"), (7, "SL103"), (7, "SL106")]
    assert {v.filename for v in found} == {"model.py"}
    by_code = {v.code: v for v in found}
    assert by_code["SL103"].fix.applicability is synclint.Applicability.SAFE
    assert by_code["SL403"].fix.applicability is synclint.Applicability.UNSAFE
    assert by_code["SL106"].fix is None
    assert by_code["SL103"].location == synclint.Location(7, 9)
    assert by_code["SL103"].confidence is synclint.Confidence.HIGH


def test_lint_source_bytes_and_text_agree_and_default_filename():
    assert synclint.lint_source(SOURCE.encode()) == synclint.lint_source(SOURCE)
    assert {v.filename for v in synclint.lint_source(SOURCE)} == {"<string>"}
    latin = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + SOURCE
    assert _codes(synclint.lint_source(latin.encode("latin-1"))) == [(8, "SL403"), (9, "SL103"), (9, "SL106")]


def test_lint_source_honours_settings_and_suppressions():
    settings = synclint.Settings(select=("SL1",))
    assert _codes(synclint.lint_source(SOURCE, "m.py", settings)) == [(7, "SL103"), (7, "SL106")]
    settings = synclint.Settings(per_file_ignores=(("gen_*.py", ("SL106",)),))
    assert "SL106" not in {v.code for v in synclint.lint_source(SOURCE, "gen_model.py", settings)}
    assert "SL106" in {v.code for v in synclint.lint_source(SOURCE, "model.py", settings)}
    suppressed = SOURCE.replace("    y = torch.tensor([1, 2, 3]).cuda()", "    y = torch.tensor([1, 2, 3]).cuda()  # noqa: SL103")
    assert _codes(synclint.lint_source(suppressed)) == [(6, "SL403"), (7, "SL106")]


def test_bad_input_becomes_findings_not_exceptions():
    assert [v.code for v in synclint.lint_source("def f(:\n")] == ["SL001"]
    assert [v.code for v in synclint.lint_source(b"\xff\xfe\x00garbage\xff")] in (["SL002"], ["SL001"])
    big = synclint.Settings(max_file_size=10)
    assert [v.code for v in synclint.lint_source(SOURCE.encode(), "m.py", big)] == ["SL002"]


def test_fix_source_safe_then_unsafe():
    safe = synclint.fix_source(SOURCE, "model.py")
    assert isinstance(safe, synclint.FixResult)
    assert safe.applied == 1 and safe.changed and safe.error is None
    assert 'torch.tensor([1, 2, 3], pin_memory=torch.cuda.is_available()).to("cuda", non_blocking=torch.cuda.is_available())' in unwrapped(safe.fixed)
    assert "synclint" not in safe.fixed  # the default fix adds no dependency
    assert safe.original == SOURCE
    # What remains is what lint_source says of the fixed text.
    assert safe.violations == synclint.lint_source(safe.fixed, "model.py")
    assert "SL403" in {v.code for v in safe.violations}

    both = synclint.fix_source(SOURCE, "model.py", unsafe=True)
    assert both.applied == 2 and "output_size=sum(n)" in both.fixed
    assert "SL403" not in {v.code for v in both.violations}
    # `unsafe=None` follows the settings.
    via_settings = synclint.fix_source(SOURCE, "model.py", synclint.Settings(unsafe_fixes=True))
    assert via_settings.fixed == both.fixed
    # Idempotent: fixing the fixed text changes nothing.
    again = synclint.fix_source(both.fixed, "model.py", unsafe=True)
    assert again.applied == 0 and not again.changed and again.fixed == both.fixed


def test_fix_source_undecodable_returns_no_text():
    result = synclint.fix_source(b"# coding: nonesuch\nx = 1\n", "m.py")
    assert result.fixed is None and not result.changed
    assert [v.code for v in result.violations] == ["SL002"]


def test_settings_for_reads_the_nearest_project_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.synclint]\nignore = ["SL106"]\n', encoding="utf-8")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    path = pkg / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    settings = synclint.settings_for(path)
    assert settings.ignore == ("SL106",) and settings.source == str(tmp_path / "pyproject.toml")
    assert "SL106" not in {v.code for v in synclint.lint_source(path.read_bytes(), str(path), settings)}
    # An unsaved file (an editor buffer) gets its folder's settings.
    assert synclint.settings_for(pkg / "not_yet_saved.py").ignore == ("SL106",)
    (tmp_path / "pyproject.toml").write_text('[tool.synclint]\nnonsense = 1\n', encoding="utf-8")
    with pytest.raises(synclint.ConfigError, match="nonsense"):
        synclint.settings_for(path)


def test_public_names_resolve_and_unknown_ones_raise():
    for name in synclint.__all__:
        assert getattr(synclint, name) is not None
        assert name in dir(synclint)
    assert isinstance(synclint.__version__, str) and synclint.__version__
    with pytest.raises(AttributeError):
        synclint.no_such_name  # noqa: B018
    assert synclint.lint_source.__doc__ and synclint.fix_source.__doc__


def test_import_synclint_does_not_load_the_engine():
    code = (
        "import sys, synclint\n"
        "heavy = [m for m in ('libcst', 'synclint.engine', 'synclint.api', 'importlib.metadata', 'typing') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
        "synclint.lint_source('x = 1\\n')\n"
        "print('libcst' in sys.modules or 'synclint.engine' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["", "True"], out


def test_the_cli_reports_what_lint_source_returns(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "synclint", "check", "--no-cache", "--output-format", "json", str(path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    cli = [(v["location"]["row"], v["location"]["column"], v["code"]) for v in json.loads(proc.stdout)]
    api = [(v.location.row, v.location.column, v.code) for v in synclint.lint_source(path.read_bytes(), str(path), synclint.settings_for(path))]
    assert cli == api


class _Spy:
    def __init__(self, monkeypatch):
        import synclint.api as api

        self.calls: list[tuple[str, str]] = []
        for name in ("lint_source", "fix_source"):
            real = getattr(api, name)

            def spy(*args, _real=real, _name=name, **kwargs):
                self.calls.append((_name, args[1] if len(args) > 1 else kwargs.get("filename")))
                return _real(*args, **kwargs)

            monkeypatch.setattr(api, name, spy)


def test_findings_count_what_the_tiers_hide():
    source = textwrap.dedent("""\
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.n = torch.zeros(4, device="cuda").sum().item()
    """)
    found = synclint.lint_source(source, "model.py")
    assert isinstance(found, synclint.Findings) and found == [] and found.hidden == {"cold": 1}
    shown = synclint.lint_source(source, "model.py", synclint.Settings(include_cold=True))
    assert [v.tier for v in shown] == ["cold"] and shown.hidden == {}
    assert synclint.fix_source(source, "model.py").hidden == {"cold": 1}


def test_runner_goes_through_the_public_api(monkeypatch, tmp_path):
    from synclint.runner import process_file

    spy = _Spy(monkeypatch)
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    linted = process_file(str(path), synclint.Settings(), fix=False, unsafe=False)
    fixed = process_file(str(path), synclint.Settings(), fix=True, unsafe=False)
    assert spy.calls == [("lint_source", str(path)), ("fix_source", str(path))]
    assert _codes(linted.violations) == _codes(synclint.lint_source(SOURCE))
    assert fixed.fixed == synclint.fix_source(SOURCE).fixed and fixed.encoding == "utf-8"


def test_notebooks_go_through_the_public_api(monkeypatch, tmp_path):
    from synclint.runner import process_file

    spy = _Spy(monkeypatch)
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [], "source": SOURCE.splitlines(keepends=True)}
    path = tmp_path / "model.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n", encoding="utf-8")
    linted = process_file(str(path), synclint.Settings(), fix=False, unsafe=False)
    fixed = process_file(str(path), synclint.Settings(), fix=True, unsafe=False)
    assert [name for name, _ in spy.calls] == ["lint_source", "fix_source"]
    assert sorted(v.code for v in linted.violations) == ["SL103", "SL106", "SL403"]
    assert fixed.applied == 1 and "pin_memory=torch.cuda.is_available()" in fixed.fixed and "synclint" not in fixed.fixed


def test_proof_harness_and_tracer_join_go_through_the_public_api(monkeypatch, tmp_path):
    from synclint.prove.cases import prepare
    from synclint.trace.compare import lint_files_for
    from synclint.trace.events import TraceReport

    spy = _Spy(monkeypatch)
    case = prepare("SL103")
    assert case.flagged and ("lint_source", str(case.path)) in spy.calls and ("fix_source", str(case.path)) in spy.calls

    spy.calls.clear()
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    found = lint_files_for(TraceReport(sites=[]), [str(path)])
    assert spy.calls == [("lint_source", str(path))]
    assert _codes(found) == _codes(synclint.lint_source(SOURCE))


def test_readme_api_sample_runs(tmp_path, monkeypatch, capsys):
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Python API", 1)[1]
    sample = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    exec(compile(sample, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [f"{row} {col} {code} {label} {msg}" for row, col, code, label, msg in (
        (v.location.row, v.location.column, v.code, v.confidence.label, v.message) for v in synclint.lint_source(SOURCE, "model.py")
    )]
    assert out[3] == "1 fixed; 2 remaining"
    assert (tmp_path / "model.py").read_text(encoding="utf-8") == SOURCE


def test_all_lists_exactly_the_lazy_exports():
    assert sorted(synclint.__all__) == sorted(["__version__", *synclint._EXPORTS])

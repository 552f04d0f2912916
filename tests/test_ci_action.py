"""The GitHub Action (action.yml) and the README's CI recipes, read and run as a CI runner
would: the SARIF upload runs whatever synclint found, the job fails last on findings, the
workflow grants `security-events: write` and checks the code out first.

The action's shell steps are run here with bash, in order, under the runner's rules for
`if:` (a step is skipped after a failure unless its condition says `always()`); `uses:`
steps (the SARIF upload) are recorded, not run, with the SARIF file checked at that moment.
The install step is replaced by a `synclint` on PATH that runs this checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CLEAN, REPO, TWO_FINDINGS
from test_report import _validate_sarif

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
README = (REPO / "README.md").read_text(encoding="utf-8")


def _readme_yaml() -> list:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", README, flags=re.S)]


def _workflow() -> dict:
    [workflow] = [b for b in _readme_yaml() if isinstance(b, dict) and "jobs" in b]
    return workflow


def _manual_steps() -> list[dict]:
    [steps] = [b["steps"] for b in _readme_yaml() if isinstance(b, dict) and set(b) == {"steps"}]
    return steps


# --- a small runner: expressions, `if:`, step outputs -----------------------------------------


def _value(name: str, ctx: dict):
    scope, _, rest = name.partition(".")
    if scope == "inputs":
        return ctx["inputs"].get(rest, "")
    if scope == "steps":
        step, _, output = rest.partition(".outputs.")
        return ctx["outputs"].get(step, {}).get(output, "")
    raise AssertionError(f"expression not supported by this test runner: {name}")


def _evaluate(expr: str, ctx: dict):
    """GitHub's expression language, as much of it as the action and README use."""
    py = expr.replace("always()", "True").replace("success()", "(not FAILED)").replace("failure()", "FAILED")
    py = py.replace("&&", " and ").replace("||", " or ").replace("!=", " != ")
    py = re.sub(r"\b(inputs|steps)\.[A-Za-z0-9_.-]+", lambda m: repr(_value(m.group(0), ctx)), py)
    return eval(py, {"FAILED": ctx["failed"], "True": True})  # noqa: S307 - test-only evaluator


def _substitute(text: str, ctx: dict) -> str:
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: str(_evaluate(m.group(1), ctx)), str(text))


def _shim(folder: Path) -> Path:
    """A `synclint` command that runs this checkout (what the install step provides)."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "synclint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m synclint "$@"\n')
    shim.chmod(0o755)
    return folder


def run_steps(steps: list[dict], workdir: Path, inputs: dict, tmp: Path) -> dict:
    """Run `steps` as the runner would; returns what happened."""
    ctx = {"inputs": inputs, "outputs": {}, "failed": False}
    env_base = {
        **os.environ,
        "PATH": f"{_shim(tmp / 'bin')}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "GITHUB_ACTION_PATH": str(REPO),
    }
    env_base.pop("SYNCLINT_OUTPUT_FORMAT", None)
    log = {"ran": [], "skipped": [], "uploads": [], "stdout": "", "exit": 0}
    for index, step in enumerate(steps):
        name = step.get("name") or step.get("id") or step.get("uses") or f"step {index}"
        condition = step.get("if", "success()")
        if not _evaluate(str(condition).replace("${{", "").replace("}}", ""), ctx):
            log["skipped"].append(name)
            continue
        if "uses" in step:
            if "upload-sarif" in step["uses"]:
                sarif = workdir / _substitute(step["with"]["sarif_file"], ctx)
                log["uploads"].append(sarif.read_text() if sarif.exists() else None)
            log["ran"].append(name)
            continue
        script = step["run"]
        if "pip install" in script:
            log["ran"].append(name)  # the shim stands for the installed package
            continue
        output_file = tmp / f"output-{index}"
        output_file.write_text("")
        env = {**env_base, **{k: _substitute(v, ctx) for k, v in (step.get("env") or {}).items()}, "GITHUB_OUTPUT": str(output_file)}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _substitute(script, ctx)], cwd=workdir, env=env, capture_output=True, text=True, timeout=300)
        log["ran"].append(name)
        log["stdout"] += proc.stdout
        outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
        if "id" in step:
            ctx["outputs"][step["id"]] = outputs
        if proc.returncode != 0:
            ctx["failed"] = True
            log["exit"] = proc.returncode
    return log


def _action_inputs(**given) -> dict:
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    return {**defaults, **given}


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    work = tmp_path / "work"
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    return work


# --- the action, read ------------------------------------------------------------------------


def test_action_is_composite_and_its_steps_keep_the_upload_alive():
    assert ACTION["runs"]["using"] == "composite"
    steps = ACTION["runs"]["steps"]
    by_name = {s["name"]: s for s in steps}
    assert "$GITHUB_ACTION_PATH" in by_name["Install synclint"]["run"]  # its own checkout
    sarif = by_name["synclint (SARIF)"]
    assert "--output-format sarif" in sarif["run"] and "--exit-zero" in sarif["run"]
    annotate = by_name["synclint (annotations)"]
    assert "--output-format github" in annotate["run"] and "|| status=$?" in annotate["run"]
    assert "GITHUB_OUTPUT" in annotate["run"]
    upload = by_name["Upload SARIF"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "always()" in upload["if"]
    fail = steps[-1]
    assert fail["if"] == "always()" and "steps.annotate.outputs.exit-code" in fail["env"]["SYNCLINT_EXIT"]
    # The upload comes after every step that can fail, and the failing step comes last.
    names = [s["name"] for s in steps]
    assert names.index("Upload SARIF") > names.index("synclint (annotations)") > names.index("synclint (SARIF)")
    # Inputs never go into a script through an expression (a path with `$(...)` stays a path).
    for step in steps:
        assert "${{" not in step.get("run", "")


# --- the action, run ---------------------------------------------------------------------------


def test_action_with_findings_annotates_uploads_and_fails(tmp_path):
    work = _project(tmp_path, {"src/a.py": TWO_FINDINGS, "README.txt": "not python\n"})
    log = run_steps(ACTION["runs"]["steps"], work, _action_inputs(args="src/"), tmp_path)
    assert log["exit"] == 1
    assert log["skipped"] == []
    assert "Upload SARIF" in log["ran"] and log["ran"][-1] == "Fail on findings"
    [uploaded] = log["uploads"]
    sarif = _validate_sarif(uploaded)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["SL101", "SL201"]
    assert "::warning file=src/a.py,line=5,col=11," in log["stdout"]
    assert "title=synclint (SL101)::" in log["stdout"]


def test_action_on_clean_code_passes_and_still_uploads(tmp_path):
    work = _project(tmp_path, {"a.py": CLEAN})
    log = run_steps(ACTION["runs"]["steps"], work, _action_inputs(), tmp_path)
    assert log["exit"] == 0
    [uploaded] = log["uploads"]
    assert _validate_sarif(uploaded)["runs"][0]["results"] == []


def test_action_report_only_and_without_upload(tmp_path):
    work = _project(tmp_path, {"a.py": TWO_FINDINGS})
    log = run_steps(ACTION["runs"]["steps"], work, _action_inputs(**{"fail-on-findings": "false", "upload-sarif": "false"}), tmp_path)
    assert log["exit"] == 0
    assert log["uploads"] == [] and "Upload SARIF" in log["skipped"]


def test_action_with_a_bad_option_fails_with_exit_2_after_trying_the_upload(tmp_path):
    work = _project(tmp_path, {"a.py": TWO_FINDINGS})
    log = run_steps(ACTION["runs"]["steps"], work, _action_inputs(args="--no-such-option ."), tmp_path)
    assert log["exit"] == 2
    assert "synclint (annotations)" in log["skipped"]  # after a failed step, as on GitHub
    assert log["uploads"] == [None]  # the upload still ran (and finds no report)
    assert log["ran"][-1] == "Fail on findings"


# --- the README ---------------------------------------------------------------------------------


def test_readme_workflow_grants_permissions_checks_out_and_uses_the_action():
    workflow = _workflow()
    assert workflow["permissions"]["security-events"] == "write"
    [job] = workflow["jobs"].values()
    steps = job["steps"]
    uses = [s.get("uses", "") for s in steps]
    checkout = next(i for i, u in enumerate(uses) if u.startswith("actions/checkout@"))
    action = next(i for i, u in enumerate(uses) if re.fullmatch(r"[^/]+/synclint@.+", u))
    assert checkout < action
    assert set(steps[action].get("with", {})) <= set(ACTION["inputs"])
    readme_inputs = re.search(r"Inputs: (.*?); output: `([^`]+)`", README, flags=re.S)
    assert re.findall(r"`([^`]+)`", readme_inputs.group(1)) == list(ACTION["inputs"])
    assert [readme_inputs.group(2)] == [o for o in ACTION["outputs"] if o != "sarif-file"]


def test_readme_manual_steps_upload_always_and_fail_last(tmp_path):
    steps = _manual_steps()
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["if"] == "always()"
    assert steps[-1]["if"] == "always()" and "exit" in steps[-1]["run"]
    assert any("--exit-zero" in s.get("run", "") and "sarif" in s.get("run", "") for s in steps)
    work = _project(tmp_path, {"a.py": TWO_FINDINGS})
    log = run_steps(steps, work, {}, tmp_path)
    assert log["exit"] == 1 and log["skipped"] == []
    [uploaded] = log["uploads"]
    assert len(_validate_sarif(uploaded)["runs"][0]["results"]) == 2
    clean = run_steps(steps, _project(tmp_path / "clean", {"a.py": CLEAN}), {}, tmp_path / "clean")
    assert clean["exit"] == 0


def test_readme_gitlab_job_writes_a_report_gitlab_reads(tmp_path):
    [job] = [b["synclint"] for b in _readme_yaml() if isinstance(b, dict) and "synclint" in b and "script" in b["synclint"]]
    assert job["artifacts"]["when"] == "always"
    report = job["artifacts"]["reports"]["codequality"]
    work = _project(tmp_path, {"a.py": TWO_FINDINGS})
    steps = [{"run": line} for line in job["script"]]
    log = run_steps(steps, work, {}, tmp_path)
    assert log["exit"] == 1  # the last line fails the job on findings
    issues = json.loads((work / report).read_text())
    assert [i["check_name"] for i in issues] == ["SL101", "SL201"]


def test_no_readme_recipe_installs_a_release_that_does_not_exist():
    assert "pip install synclint" not in README
    assert "rev: v0.1.0" not in README
    assert "github.com/synclint" not in README

"""Intentional syncs: code inside an allow-context (synclint's `with synclint.trace.allowed():`,
or one a project names, such as vLLM's `gpu_sync_allowed`) or an allow-function (warm-up,
profiling, logging) is not reported; both lists are configurable in `[tool.synclint]`. Real
files and a real pyproject.toml on disk, linted by the runner."""

from __future__ import annotations

import textwrap
from pathlib import Path

from synclint.config import DEFAULT_ALLOW_CONTEXTS, DEFAULT_ALLOW_FUNCTIONS, Settings, load_settings
from synclint.runner import lint_paths

SOURCE = textwrap.dedent(
    """\
    import torch
    from vllm.utils import gpu_sync_allowed


    def execute_model(logits, device):
        logits = logits.to(device)
        flagged = logits.argmax().item()
        with gpu_sync_allowed():
            quiet = logits.argmax().item()
            if logits.isnan().any():
                raise RuntimeError("nan")
        with debug_sync():
            loud_by_default = logits.max().item()
        return flagged, quiet, loud_by_default


    def _dummy_run(logits, device):
        logits = logits.to(device)

        def nested():
            return logits.sum().item()

        return logits.argmax().item(), nested()


    def check_outputs(logits, device):
        logits = logits.to(device)
        return logits.argmax().tolist()
    """
)


def _write(tmp_path: Path, config: str | None = None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "runner.py").write_text(SOURCE)
    if config is not None:
        (project / "pyproject.toml").write_text(config)
    return project


def _rows(project: Path) -> list[tuple[int, str]]:
    settings = load_settings([project], None)
    run = lint_paths([project], settings.replace(select=("SL2",)), use_cache=False)
    return sorted((v.location.row, v.code) for v in run.violations)


def test_defaults_include_the_tracer_context_and_warmup_profiling_logging_functions():
    # vLLM's `gpu_sync_allowed()` marks syncs its runtime check tolerates: they still cost,
    # so they are reported unless a project names the context.
    assert DEFAULT_ALLOW_CONTEXTS == ("synclint.trace.allowed",)
    for name in ("_dummy_*", "profile_run", "log_*", "*warmup*"):
        assert name in DEFAULT_ALLOW_FUNCTIONS
    assert Settings().allow_contexts == DEFAULT_ALLOW_CONTEXTS


def test_default_allow_function_suppresses_findings_inside_only(tmp_path):
    rows = _rows(_write(tmp_path))
    # 7: before the `with`; 9 and 10: inside vLLM's context, not allowed by default; 13:
    # inside an unknown context; 28: a function not allowed
    assert rows == [(7, "SL201"), (9, "SL201"), (10, "SL203"), (13, "SL201"), (28, "SL202")]


def test_a_project_that_names_vllms_context_allows_its_body(tmp_path):
    rows = _rows(_write(tmp_path, '[tool.synclint]\nextend-allow-contexts = ["gpu_sync_allowed"]\n'))
    assert rows == [(7, "SL201"), (13, "SL201"), (28, "SL202")]


def test_config_replaces_contexts_and_extends_functions(tmp_path):
    config = textwrap.dedent(
        """\
        [tool.synclint]
        allow-contexts = ["debug_sync"]
        extend-allow-functions = ["check_*"]
        """
    )
    rows = _rows(_write(tmp_path, config))
    # gpu_sync_allowed is not listed: lines 9 and 10 are reported; debug_sync now allows
    # line 13; check_outputs() is allowed; _dummy_run stays allowed (the default list is extended)
    assert rows == [(7, "SL201"), (9, "SL201"), (10, "SL203")]


def test_config_can_drop_the_default_functions(tmp_path):
    rows = _rows(_write(tmp_path, '[tool.synclint]\nallow-functions = []\nextend-allow-contexts = ["gpu_sync_allowed"]\ninclude-cold = true\n'))
    # `_dummy_run` (and the function nested in it) is reported again (a cold tier: warm-up)
    assert (21, "SL201") in rows and (23, "SL201") in rows
    assert (9, "SL201") not in rows  # the context named still allows its body


def test_a_sync_inside_vllms_context_says_why_it_is_reported(tmp_path):
    project = _write(tmp_path)
    settings = load_settings([project], None)
    run = lint_paths([project], settings.replace(select=("SL2",)), use_cache=False)
    messages = {v.location.row: v.message for v in run.violations}
    assert "inside `gpu_sync_allowed()`" in messages[9]
    assert "inside `gpu_sync_allowed()`" in messages[10]
    assert "gpu_sync_allowed" not in messages[7] and "gpu_sync_allowed" not in messages[13]

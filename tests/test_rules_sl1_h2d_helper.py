"""The H2D helper that SL101/SL102/SL103 fixes call: the `h2d-helper` presets and custom
paths. Every emitted call must bind to the real signature of the helper it imports:
synclint's `async_tensor_h2d(data, dtype=None, device=None)` and vLLM's (0.33.0,
`vllm/utils/torch_utils.py`) `async_tensor_h2d(data, device=None, dtype=None, out=None)`,
whose positional orders differ."""

from __future__ import annotations

import inspect
from pathlib import Path

import libcst as cst
import pytest

from synclint.config import H2D_HELPER_PRESETS, Settings, settings_from_table
from synclint.fix import fix_source
from synclint.runtime import async_tensor_h2d

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
H2D_FIXTURES = ["SL101", "SL102", "SL103"]


def vllm_async_tensor_h2d(data, device=None, dtype=None, out=None):
    """The signature of vllm.utils.torch_utils.async_tensor_h2d in vLLM 0.33.0 (body elided)."""


SIGNATURES = {
    "synclint": inspect.signature(async_tensor_h2d),
    "vllm": inspect.signature(vllm_async_tensor_h2d),
}


def _helper_calls(text: str, name: str) -> list[cst.Call]:
    calls = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == name:
                calls.append(node)

    cst.parse_module(text).visit(Collect())
    return calls


def _bind(signature: inspect.Signature, call: cst.Call) -> inspect.BoundArguments:
    positional = [object() for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: object() for a in call.args if a.keyword is not None}
    return signature.bind(*positional, **keywords)


@pytest.mark.parametrize("preset", ["synclint", "vllm"])
@pytest.mark.parametrize("case", H2D_FIXTURES)
def test_every_emitted_call_binds_to_the_preset_signature(case, preset):
    settings = settings_from_table({"h2d-helper": preset}, "pyproject.toml")
    result = fix_source((FIXTURES / case / "before.py").read_text(), "before.py", settings, unsafe=True)
    module, _, name = H2D_HELPER_PRESETS[preset].rpartition(".")
    calls = _helper_calls(result.fixed, name)
    assert calls, f"{case}: no helper call emitted"
    assert f"from {module} import {name}\n" in result.fixed
    for call in calls:
        bound = _bind(SIGNATURES[preset], call)
        # The device always reaches the helper (vLLM's asserts it is not None).
        assert "device" in bound.arguments
        # Only the data is positional: the orders of the two signatures differ after it.
        assert [a for a in call.args if a.keyword is None] == [call.args[0]]


def test_vllm_preset_fixture_text():
    settings = Settings(h2d_helper=H2D_HELPER_PRESETS["vllm"])
    case = FIXTURES / "SL101"
    result = fix_source((case / "before.py").read_text(), "before.py", settings)
    assert result.fixed == (case / "after_vllm.py").read_text()
    again = fix_source(result.fixed, "before.py", settings)
    assert again.applied == 0


def test_custom_dotted_path_is_imported_and_called_with_the_synclint_signature():
    settings = settings_from_table({"h2d-helper": "engine.transfer.to_device_async"}, "pyproject.toml")
    source = "import torch\n\ndef step(ids, device):\n    return torch.tensor(ids, dtype=torch.int32, device=device)\n"
    result = fix_source(source, "step.py", settings)
    assert result.fixed == (
        "import torch\nfrom engine.transfer import to_device_async\n\n"
        "def step(ids, device):\n    return to_device_async(ids, dtype=torch.int32, device=device)\n"
    )
    (call,) = _helper_calls(result.fixed, "to_device_async")
    _bind(SIGNATURES["synclint"], call)


def test_an_existing_import_of_the_helper_is_not_repeated():
    source = (
        "import torch\nfrom synclint.runtime import async_tensor_h2d\n\n"
        "def forward(self, ids, device):\n    return torch.tensor(ids, device=device)\n"
    )
    result = fix_source(source, "m.py", Settings())
    assert result.fixed.count("import async_tensor_h2d") == 1
    assert "return async_tensor_h2d(ids, device=device)" in result.fixed

"""The H2D copy that SL101/SL102/SL103 (and SL301/SL303) fixes write: by default inline with
torch alone (no new dependency), else the `h2d-helper` presets and custom paths, or the
helper the file already imports. Every emitted call must bind to the real signature of
the helper it calls: synclint's `async_tensor_h2d(data, dtype=None, device=None)`, vLLM's
(0.33.0, `vllm/utils/torch_utils.py`) `async_tensor_h2d(data, device=None, dtype=None,
out=None)`, older vLLM's `vllm.utils.async_tensor_h2d(data, dtype, target_device,
pin_memory)` (all required) and SGLang's (0.5, `sglang/srt/utils/common.py`)
`async_h2d(args, *, dtype, device)`."""

from __future__ import annotations

import inspect
import re
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


def vllm_legacy_async_tensor_h2d(data, dtype, target_device, pin_memory):
    """The signature of vllm.utils.async_tensor_h2d in older vLLM releases (body elided)."""


def sglang_async_h2d(args, *, dtype, device):
    """The signature of sglang.srt.utils.common.async_h2d in SGLang 0.5.23 (body elided)."""


SIGNATURES = {
    "synclint": inspect.signature(async_tensor_h2d),
    "vllm": inspect.signature(vllm_async_tensor_h2d),
    "vllm-legacy": inspect.signature(vllm_legacy_async_tensor_h2d),
    "sglang": inspect.signature(sglang_async_h2d),
}
DEVICE_PARAMETER = {"synclint": "device", "vllm": "device", "vllm-legacy": "target_device", "sglang": "device"}


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


@pytest.mark.parametrize("preset", ["synclint", "vllm", "vllm-legacy", "sglang"])
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
        assert DEVICE_PARAMETER[preset] in bound.arguments
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


@pytest.mark.parametrize(
    "imported, expected",
    [
        # r09: the file imports vLLM's helper; the fix calls it (keywords), and adds nothing.
        ("from vllm.utils.torch_utils import async_tensor_h2d", "async_tensor_h2d(toks, device=\"cuda\")"),
        ("from vllm.utils import async_tensor_h2d", "async_tensor_h2d(toks, dtype=None, target_device=\"cuda\", pin_memory=torch.cuda.is_available())"),
        ("from sglang.srt.utils import async_h2d", "async_h2d(toks, dtype=None, device=\"cuda\")"),
        ("from sglang.srt.utils.common import async_h2d as h2d", "h2d(toks, dtype=None, device=\"cuda\")"),
    ],
)
@pytest.mark.parametrize("configured", [None, "synclint"])
def test_a_file_that_imports_a_helper_never_gets_a_second_one(imported, expected, configured):
    source = (
        f"import torch\n{imported}\n\n\n"
        "def prep(x, dev):\n    return x\n\n\n"
        "def forward(self, toks):\n    return torch.tensor(toks, device=\"cuda\")\n"
    )
    settings = Settings() if configured is None else settings_from_table({"h2d-helper": configured}, "pyproject.toml")
    result = fix_source(source, "m.py", settings)
    assert result.applied == 1
    # (a call that would make its line far too long is broken over lines)
    assert f"return {expected}" in re.sub(r"\(\s+", "(", re.sub(r",?\s+\)", ")", " ".join(result.fixed.split())))
    imports = [line for line in result.fixed.splitlines() if "import" in line]
    # no second helper, no synclint; `import torch` goes where the fix took its last use
    assert imports == (["import torch", imported] if "torch." in expected else [imported])
    (call,) = [c for c in _helper_calls(result.fixed, expected.split("(")[0])]
    preset = "vllm-legacy" if "vllm.utils import" in imported else "sglang" if "sglang" in imported else "vllm"
    _bind(SIGNATURES[preset], call)


def test_default_fix_is_inline_and_imports_nothing():
    source = "import torch\n\ndef step(ids: list[int], device):\n    return torch.tensor(ids, dtype=torch.int32, device=device)\n"
    result = fix_source(source, "step.py", Settings())
    assert result.fixed == (
        "import torch\n\ndef step(ids: list[int], device):\n    return torch.tensor(\n        ids, dtype=torch.int32, "
        "pin_memory=torch.cuda.is_available()\n    ).to(device, non_blocking=torch.cuda.is_available())\n"
    )
    # Data that may be a numpy array is pinned as a tensor: torch.tensor(ndarray,
    # pin_memory=True) raises on a CUDA machine.
    unknown = fix_source(source.replace("ids: list[int]", "ids"), "step.py", Settings())
    assert "return (\n        torch.as_tensor(ids, dtype=torch.int32).pin_memory()\n        if torch.cuda.is_available()\n        else " in unknown.fixed


def _inline_namespace():
    import numpy as np
    import torch

    return {"torch": torch, "np": np}


@pytest.mark.parametrize(
    "before",
    [
        "torch.tensor([3, 1, 2], dtype=torch.long, device='cpu')",
        "torch.tensor([[0.5, 1.5]], device='cpu')",
        "torch.as_tensor(arr, device='cpu')",
        "torch.from_numpy(arr).to('cpu')",
        "torch.tensor([True, False]).to('cpu')",
    ],
)
def test_the_inline_copy_gives_the_same_tensor_on_a_machine_without_cuda(before):
    """Without CUDA, `pin_memory=torch.cuda.is_available()` is False: nothing is pinned (a
    pin there would raise) and the values, dtype and device are those of the original."""
    import torch

    source = f"import torch\nimport numpy as np\n\ndef forward(self):\n    arr = np.arange(6, dtype=np.int32)\n    return {before}\n"
    settings = settings_from_table({"select": ["SL101", "SL103"]}, "pyproject.toml")
    fixed = fix_source(source.replace("'cpu'", "'cuda'"), "m.py", settings, unsafe=True).fixed
    assert "pin_memory" in fixed and "torch.cuda.is_available()" in fixed
    want, got = {}, {}
    exec(source, {**_inline_namespace()}, want)
    exec(fixed.replace("'cuda'", "'cpu'"), {**_inline_namespace()}, got)
    a, b = want["forward"](None), got["forward"](None)
    assert a.dtype == b.dtype and a.device == b.device and torch.equal(a, b)
    assert not torch.cuda.is_available() or b.device.type == "cuda"


@pytest.mark.parametrize(
    "before",
    [
        "torch.as_tensor(arr, device='cuda')",
        "torch.tensor(arr, dtype=torch.float32, device='cuda')",
        "torch.from_numpy(arr).to('cuda')",
        "torch.from_numpy(arr).to('cuda', non_blocking=True)",
        "torch.tensor(unknown, device='cuda')",
    ],
)
def test_the_inline_copy_never_pins_a_tensor_built_from_numpy(before, monkeypatch):
    """`torch.tensor(ndarray, pin_memory=True)` raises "Can't pin tensor constructed from
    numpy" on a CUDA machine (measured on the H200; the check comes first, so it raises
    here too). Data that is, or may be, a numpy array is pinned as a tensor instead."""
    import numpy as np
    import torch

    source = f"import torch\nimport numpy as np\n\ndef forward(self, arr: np.ndarray, unknown):\n    return {before}\n"
    fixed = fix_source(source, "m.py", settings_from_table({"select": ["SL1"]}, "pyproject.toml"), unsafe=True).fixed
    assert "pin_memory" in fixed, fixed
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # as on a CUDA machine
    ns = {}
    exec(fixed, ns)
    with pytest.raises(RuntimeError) as raised:  # pinning itself needs an accelerator here
        ns["forward"](None, np.arange(6, dtype=np.float32), np.arange(3))
    assert "constructed from numpy" not in str(raised.value)

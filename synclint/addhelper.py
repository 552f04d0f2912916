"""`synclint add-helper PACKAGE`: vendor a host-to-device helper into the user's package.

Writes `PACKAGE/async_h2d.py` (torch only, no dependency on synclint), a test of it (under
the project's `tests/` folder when there is one, else next to the module), and sets
`h2d-helper = "PACKAGE.async_h2d.async_tensor_h2d"` in the `[tool.synclint]` table of the
project's pyproject.toml (the one in the working directory; the table is created when
absent, other keys are left as they are). Running it again changes nothing and says so.

The vendored function has the signature H2D fixes call a dotted-path helper with:
`async_tensor_h2d(data, dtype=None, device=None)`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MODULE = "async_h2d"
FUNCTION = "async_tensor_h2d"

HELPER_SOURCE = '''\
"""Host data to a device tensor without blocking the host.

Written by `synclint add-helper`; it depends on torch alone and is yours to keep and edit.

`torch.tensor(data, device="cuda")` copies from pageable memory with a blocking copy: the
host waits until every kernel queued before it has run. Staging the data in pinned
(page-locked) memory and copying with `non_blocking=True` queues the copy on the stream
instead. The pinned staging buffer may be dropped at once: PyTorch's caching host allocator
records the copy's stream and reuses the block only after the copy has run.

On a machine without CUDA nothing is pinned and the copy is the plain one it replaces.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["{function}"]


def _pinning_available() -> bool:
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a broken CUDA install: behave as on a CPU-only host
        return False


def {function}(data: Any, dtype=None, device=None):
    """Like `torch.tensor(data, dtype=dtype, device=device)`, but the copy does not block.

    `data`: a list, tuple, scalar, numpy array or tensor. A CPU target (or no device) just
    converts. The result never shares memory with `data` and carries no autograd history,
    as with `torch.tensor`; a tensor already on a device is copied there (cast to `dtype`).
    """
    target = torch.device(device) if device is not None else torch.device("cpu")
    if isinstance(data, torch.Tensor):
        data = data.detach()  # torch.tensor(t) drops t's autograd history: so do we
        if data.device.type != "cpu" or target.type == "cpu":
            return data.to(device=target, dtype=dtype, copy=True)
        host = data.to(dtype) if dtype is not None else data
        shares_input = dtype is None or data.dtype == dtype
    elif type(data).__module__ == "numpy" and hasattr(data, "__array_interface__"):
        # torch.tensor(array, pin_memory=True) raises for numpy arrays: pin a tensor of it.
        host, shares_input = torch.as_tensor(data, dtype=dtype), True
    else:
        host, shares_input = torch.tensor(data, dtype=dtype), False
    if target.type == "cpu":
        return host.clone() if shares_input else host  # torch.tensor always copies: so do we
    if not _pinning_available():
        return host.to(target)
    # pin_memory() copies into page-locked memory, so the input may change afterwards.
    return (host if host.is_pinned() and not shares_input else host.pin_memory()).to(target, non_blocking=True)
'''

TEST_SOURCE = '''\
"""Tests of `{package}.{module}.{function}` (written by `synclint add-helper`)."""

import torch

from {package}.{module} import {function}


def test_a_list_becomes_the_tensor_torch_tensor_builds():
    out = {function}([1, 2, 3], dtype=torch.long, device="cpu")
    assert out.device.type == "cpu" and out.dtype == torch.long
    assert torch.equal(out, torch.tensor([1, 2, 3], dtype=torch.long))


def test_a_tensor_is_copied_not_shared():
    src = torch.arange(4.0)
    out = {function}(src, device="cpu")
    src.add_(1)
    assert torch.equal(out, torch.arange(4.0))


def test_numpy_input():
    try:
        import numpy as np
    except ImportError:
        return
    arr = np.arange(5, dtype=np.int32)
    out = {function}(arr, device="cpu")
    arr[0] = 7
    assert out.tolist() == [0, 1, 2, 3, 4] and out.dtype == torch.int32


def test_on_the_gpu_when_there_is_one():
    if not torch.cuda.is_available():
        return
    out = {function}([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    assert out.is_cuda and out.cpu().tolist() == [[1.0, 2.0], [3.0, 4.0]]
'''


class AddHelperError(Exception):
    pass


_HEADER = re.compile(r"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*synclint[ \t]*\][ \t]*(#.*)?$", re.M)


def _package_dir(root: Path, package: str) -> Path:
    parts = package.split(".")
    if not all(p.isidentifier() for p in parts):
        raise AddHelperError(f"`{package}` is not a Python package name")
    for base in (root, root / "src"):
        folder = base.joinpath(*parts)
        if folder.is_dir():
            return folder
    raise AddHelperError(f"no folder for package `{package}` under {root} (or {root / 'src'})")


def _configured(text: str, helper: str) -> str | None:
    """The pyproject.toml text with `h2d-helper = helper` set, or None when it already is."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AddHelperError(f"pyproject.toml: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("synclint")
    if table is not None and "h2d-helper" in table:
        if table["h2d-helper"] == helper:
            return None
        raise AddHelperError(
            f"pyproject.toml: `h2d-helper` is already {table['h2d-helper']!r}; remove it to use the vendored helper"
        )
    newline = "\r\n" if "\r\n" in text else "\n"
    line = f'h2d-helper = "{helper}"'
    match = _HEADER.search(text)
    if match is not None:
        new = text[: match.end()] + newline + line + text[match.end() :]
    elif table is None:
        sep = "" if not text or text.endswith("\n") else newline
        new = f"{text}{sep}{newline if text.strip() else ''}[tool.synclint]{newline}{line}{newline}"
    else:
        raise AddHelperError(f"pyproject.toml: the [tool.synclint] table is not a plain table header; add `{line}` to it by hand")
    # Check the edit: the new key, and everything else as it was.
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        after = None
    if after is not None:
        got = after.get("tool", {}).get("synclint", {}).pop("h2d-helper", None)
        if not after["tool"]["synclint"] and table is None:
            del after["tool"]["synclint"]
            if not after["tool"] and "tool" not in data:
                del after["tool"]
    if after is None or got != helper or after != data:
        raise AddHelperError(f"pyproject.toml: could not add `{line}` to [tool.synclint] safely; add it by hand")
    return new


def add_helper(package: str, root: Path) -> list[str]:
    """Vendor the helper into `package` of the project at `root`; the lines to print.
    Checks everything before writing anything."""
    folder = _package_dir(root, package)
    helper = f"{package}.{MODULE}.{FUNCTION}"
    pyproject = root / "pyproject.toml"
    old_config = pyproject.read_bytes().decode("utf-8") if pyproject.exists() else ""
    new_config = _configured(old_config, helper)
    module_path = folder / f"{MODULE}.py"
    tests = root / "tests"
    test_path = (tests if tests.is_dir() else folder) / f"test_{MODULE}.py"
    wanted = {
        module_path: HELPER_SOURCE.format(function=FUNCTION),
        test_path: TEST_SOURCE.format(package=package, module=MODULE, function=FUNCTION),
    }
    lines = []
    for path, text in wanted.items():
        shown = path.relative_to(root)
        if path.exists():
            same = path.read_text(encoding="utf-8") == text
            lines.append(f"{shown}: unchanged" if same else f"{shown}: exists and differs from what synclint writes; left as it is")
            continue
        path.write_text(text, encoding="utf-8")
        lines.append(f"{shown}: written")
    if new_config is None:
        lines.append(f'pyproject.toml: h2d-helper = "{helper}" already set; unchanged')
    else:
        pyproject.write_bytes(new_config.encode("utf-8"))
        lines.append(f'pyproject.toml: set h2d-helper = "{helper}" in [tool.synclint]')
    if all(l.endswith("unchanged") for l in lines):
        lines.append("Nothing to do: the helper is already in place.")
    return lines


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="synclint add-helper",
        description=(
            "Write a host-to-device helper (torch only) into PACKAGE as PACKAGE/async_h2d.py, with a test, "
            "and set `h2d-helper` in pyproject.toml's [tool.synclint] so that `synclint --fix` calls it "
            "instead of writing the inline form. Run it from the project's root folder."
        ),
    )
    p.add_argument("package", help="the importable package (a folder under . or src/), e.g. mypkg")
    args = p.parse_args(argv)
    try:
        lines = add_helper(args.package, Path.cwd())
    except (AddHelperError, OSError) as exc:
        print(f"synclint: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0

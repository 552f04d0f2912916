"""`--fix` on real files: exact fixed text across encodings, line endings, headers and files
without a final newline; the atomic write keeps the old content on failure and the mode."""

from __future__ import annotations

import os
import stat

import pytest

from synclint.fix.apply import apply_edits
from synclint.fix.write import atomic_write
from synclint.violation import Edit, Location

IMPORT = b"from synclint.runtime import async_tensor_h2d"


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param(
            b'import torch\r\n\r\ndef step(tokens):\r\n    return torch.tensor(tokens, device="cuda")  # ids\r\n',
            # (`import torch` goes with its last use)
            IMPORT + b'\r\n\r\ndef step(tokens):\r\n    return async_tensor_h2d(tokens, device="cuda")  # ids\r\n',
            id="crlf-line-endings-and-comment-kept",
        ),
        pytest.param(
            b'"""Doc."""\nfrom __future__ import annotations\nimport torch\ndef step(tokens):\n    return torch.tensor(tokens, device="cuda")',
            b'"""Doc."""\nfrom __future__ import annotations\n' + IMPORT + b'\ndef step(tokens):\n    return async_tensor_h2d(tokens, device="cuda")',
            id="after-docstring-and-future-no-final-newline",
        ),
        pytest.param(
            b'# -*- coding: latin-1 -*-\nimport torch\n\ndef step(tokens):\n    # caf\xe9\n    return torch.tensor(tokens, device="cuda")\n',
            b"# -*- coding: latin-1 -*-\n" + IMPORT + b'\n\ndef step(tokens):\n    # caf\xe9\n    return async_tensor_h2d(tokens, device="cuda")\n',
            id="latin-1-cookie-kept",
        ),
        pytest.param(
            b'import torch\na = torch.tensor([1, 2], device="cuda")\nb = torch.as_tensor(\n    [2, 3],  # two\n    device="cuda",\n)\n',
            IMPORT + b'\na = async_tensor_h2d([1, 2], device="cuda")\nb = async_tensor_h2d(\n    [2, 3],  # two\n    device="cuda",\n)\n',
            id="import-added-once-multiline-call-formatting-kept",
        ),
        pytest.param(
            b"import torch\n" + IMPORT + b'\na = torch.tensor([1, 2], device="cuda")\n',
            IMPORT + b'\na = async_tensor_h2d([1, 2], device="cuda")\n',
            id="import-already-there",
        ),
        pytest.param(
            b"#!/usr/bin/env python\n# Copyright header.\n\nx = __import__('torch').tensor([1], device='cuda')\n",
            b"#!/usr/bin/env python\n# Copyright header.\n\nx = __import__('torch').tensor([1], device='cuda')\n",
            id="no-finding-no-change",
        ),
    ],
)
def test_fix_writes_the_exact_text(project, synclint, before, after):
    # A configured helper: the fix adds its import (the default adds none, see below).
    project.write({"m.py": before})
    result = synclint("check", "--fix", "--h2d-helper", "synclint", "m.py")
    assert result.code == 0, result.out + result.err
    assert (project.root / "m.py").read_bytes() == after
    again = synclint("check", "--fix", "--h2d-helper", "synclint", "m.py")  # idempotent
    assert (project.root / "m.py").read_bytes() == after
    assert again.code == 0
    compile(after, "m.py", "exec")


def test_unsafe_fixes_flag_is_accepted_and_applies_safe_fixes(project, synclint):
    project.write({"m.py": 'import torch\nx = torch.tensor([1, 2], device="cuda")\n'})
    assert synclint("check", "--fix", "--unsafe-fixes", "m.py").code == 0
    assert (project.root / "m.py").read_text() == f"import torch\nx = {WRAPPED.format(data='[1, 2]', device=chr(34) + 'cuda' + chr(34))}\n"


INLINE = "torch.tensor({data}, pin_memory=torch.cuda.is_available()).to({device}, non_blocking=torch.cuda.is_available())"
# The same, where it would push its line far past the file's line length (88 here).
WRAPPED = "torch.tensor(\n    {data}, pin_memory=torch.cuda.is_available()\n).to({device}, non_blocking=torch.cuda.is_available())"


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param(
            b'import torch\r\n\r\ndef step(tokens: list[int]):\r\n    return torch.tensor(tokens, device="cuda")  # ids\r\n',
            # (a line that ends in a comment is not broken: the comment stays on its line)
            b"import torch\r\n\r\ndef step(tokens: list[int]):\r\n    return " + INLINE.format(data="tokens", device='"cuda"').encode() + b"  # ids\r\n",
            id="crlf-line-endings-and-comment-kept",
        ),
        pytest.param(
            b'import torch as th\nx = th.tensor([1, 2], device="cuda")\n',
            b"import torch as th\nx = " + INLINE.replace("torch.", "th.").format(data="[1, 2]", device='"cuda"').encode() + b"\n",
            id="torch-under-an-alias",
        ),
        pytest.param(
            b'from torch import tensor\nx = tensor([1, 2], device="cuda")\n',
            b"from torch import tensor\nimport torch\nx = " + WRAPPED.replace("torch.tensor", "tensor", 1).format(data="[1, 2]", device='"cuda"').encode() + b"\n",
            id="torch-not-bound-imported-once",
        ),
        pytest.param(
            b'import torch\nb = torch.as_tensor(\n    [2, 3],  # two\n    device="cuda",\n)\n',
            b'import torch\nb = torch.tensor(\n    [2, 3],  # two\n    pin_memory=torch.cuda.is_available(),\n).to("cuda", non_blocking=torch.cuda.is_available())\n',
            id="multiline-call-formatting-kept",
        ),
    ],
)
def test_default_fix_is_inline_and_adds_no_dependency(project, synclint, before, after):
    """The default H2D fix needs torch alone: no import of synclint (or of anything the
    project does not already use)."""
    project.write({"m.py": before})
    result = synclint("check", "--fix", "m.py")
    assert result.code == 0, result.out + result.err
    assert (project.root / "m.py").read_bytes() == after
    assert b"synclint" not in after
    again = synclint("check", "--fix", "m.py")  # idempotent
    assert (project.root / "m.py").read_bytes() == after
    assert again.code == 0
    compile(after, "m.py", "exec")


def test_fix_leaves_files_without_fixable_findings_untouched(project, synclint):
    text = "import torch\nx = torch.zeros(1, device='cuda').item()\n"
    project.write({"m.py": text})
    before = os.stat(project.root / "m.py")
    assert synclint("check", "--fix", "m.py").code == 1
    after = os.stat(project.root / "m.py")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten


def test_atomic_write_replaces_content_and_keeps_mode(tmp_path):
    path = tmp_path / "x.py"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o700)
    atomic_write(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert [p.name for p in tmp_path.iterdir()] == ["x.py"]


def test_atomic_write_failure_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    path = tmp_path / "x.py"
    path.write_bytes(b"old\n")

    def failing_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        atomic_write(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.py"]


def test_atomic_write_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    atomic_write(link, b"new\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"


def test_apply_edits_replacements_and_insertions():
    text = "a = f(x)\nb = g(y)\n"
    edits = [
        Edit("F(x)", Location(1, 5), Location(1, 9)),
        Edit("import h\n", Location(2, 1), Location(2, 1)),
        Edit("G", Location(2, 5), Location(2, 6)),
    ]
    assert apply_edits(text, edits) == "a = F(x)\nimport h\nb = G(y)\n"


def test_apply_edits_insertion_after_last_line_without_newline():
    assert apply_edits("x = 1", [Edit("import y\n", Location(2, 1), Location(2, 1))]) == "x = 1\nimport y\n"

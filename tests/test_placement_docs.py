"""docs/placement.md shows what `reveal_placements` prints for its example: keep it true."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "placement.md"


def _blocks_after(text: str, marker: str) -> tuple[str, str]:
    """The ```python block after `marker` and the plain ``` block after "prints"."""
    tail = text.split(marker, 1)[1]
    code = re.search(r"```python\n(.*?)```", tail, re.S).group(1)
    printed = re.search(r"prints\n\n```\n(.*?)```", tail, re.S).group(1)
    return code, printed


def test_reveal_example_output_is_current():
    code, printed = _blocks_after(DOC.read_text(encoding="utf-8"), "## Asking the analysis directly")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "placement.md", "exec"), {})
    assert out.getvalue() == printed


def test_documented_api_exists_on_the_context():
    from synclint.analysis.placement import Placement
    from synclint.context import LintContext

    text = DOC.read_text(encoding="utf-8")
    for name in re.findall(r"`ctx\.(\w+)", text):
        assert hasattr(LintContext, name), name
    for name in ("on_device", "maybe_device", "is_host_data", "is_tensor", "known", "is_", "may_be", "describe"):
        assert f"`{name}" in text and hasattr(Placement, name), name

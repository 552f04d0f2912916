"""Jupyter notebooks, as a user runs synclint on them: linted cell by cell (JSON `cell` and
rows within the cell, as ruff reports them), IPython magics masked, `--fix` writing the
cells back and leaving the rest of the notebook's JSON as it was, then re-read clean."""

from __future__ import annotations

import difflib
import json

import pytest

from conftest import REPO, run_process

CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Décodage\n", "A decode loop."]},
    {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
     "source": ["%matplotlib inline\n", "import torch\n", "!nvidia-smi"]},
    {"cell_type": "code", "execution_count": 2, "metadata": {"tags": ["hot"]},
     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}],
     "source": [
         "def step(tokens):\n",
         "    ids = torch.tensor(tokens, dtype=torch.long, device=\"cuda\")\n",
         "    total = torch.zeros(4, device=\"cuda\").sum()\n",
         "    %time y = 1\n",
         "    return ids, total.item()",
     ]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["%%bash\n", "echo \"torch.tensor(x, device='cuda').item()\""]},
]


def notebook(**layout) -> str:
    data = {
        "cells": CELLS,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    layout = layout or {"indent": 1, "sort_keys": True, "ensure_ascii": False}
    return json.dumps(data, **layout) + "\n"


def test_findings_are_reported_per_cell(tmp_path):
    (tmp_path / "nb.ipynb").write_text(notebook(), encoding="utf-8")
    result = run_process("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path)
    assert result.code == 1, result.err
    found = [(f["code"], f["cell"], f["location"]["row"], f["location"]["column"]) for f in json.loads(result.out)]
    # Cell 3 (1-based among all cells): rows 2 and 5 of that cell; the %%bash cell is not Python.
    assert found == [("SL101", 3, 2, 11), ("SL201", 3, 5, 17)]
    full = run_process("check", "nb.ipynb", cwd=tmp_path).out
    assert full.startswith("nb.ipynb:cell 3:2:11: SL101 [*] [medium confidence]")
    assert '2 |     ids = torch.tensor(tokens, dtype=torch.long, device="cuda")' in full  # the cell's line
    sarif = json.loads(run_process("check", "--output-format", "sarif", "nb.ipynb", cwd=tmp_path).out)
    assert [(r["properties"]["cell"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in sarif["runs"][0]["results"]] == [(3, 2), (3, 5)]


def test_fix_writes_the_cells_back_and_the_rest_unchanged(tmp_path):
    original = notebook()
    path = tmp_path / "nb.ipynb"
    path.write_text(original, encoding="utf-8")
    # A configured helper, so that the fix also adds an import line to the notebook's cell
    # (the default inline copy adds none).
    result = run_process("check", "--fix", "--h2d-helper", "synclint", "nb.ipynb", cwd=tmp_path)
    assert result.code == 1  # the `.item()` has no automatic fix
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.out
    fixed = path.read_text(encoding="utf-8")
    data = json.loads(fixed)
    assert data["cells"][1]["source"] == ["%matplotlib inline\n", "import torch\n", "from synclint.runtime import async_tensor_h2d\n", "!nvidia-smi"]
    assert data["cells"][2]["source"][1] == '    ids = async_tensor_h2d(tokens, dtype=torch.long, device="cuda")\n'
    assert data["cells"][2]["source"][3] == "    %time y = 1\n"  # the magic is back
    assert data["cells"][2]["source"][-1] == "    return ids, total.item()"  # no newline added
    # Everything else, outputs, metadata, the markdown, the layout, is byte for byte the same.
    changed = [l for l in difflib.ndiff(original.splitlines(), fixed.splitlines()) if l[:1] in "+-"]
    assert changed == [
        '+     "from synclint.runtime import async_tensor_h2d\\n",',
        '-     "    ids = torch.tensor(tokens, dtype=torch.long, device=\\"cuda\\")\\n",',
        '+     "    ids = async_tensor_h2d(tokens, dtype=torch.long, device=\\"cuda\\")\\n",',
    ]
    assert fixed.endswith("}\n")
    # Re-read: the fix holds, only the readback remains, and a second --fix changes nothing.
    again = run_process("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path)
    assert [(f["code"], f["cell"], f["location"]["row"]) for f in json.loads(again.out)] == [("SL201", 3, 5)]
    run_process("check", "--fix", "--h2d-helper", "synclint", "nb.ipynb", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == fixed


@pytest.mark.parametrize(
    "layout",
    [
        {"indent": 2, "sort_keys": False, "ensure_ascii": False},
        {"indent": 4, "sort_keys": True, "ensure_ascii": True},
    ],
)
def test_fix_keeps_the_notebooks_own_json_layout(tmp_path, layout):
    original = notebook(**layout)
    path = tmp_path / "nb.ipynb"
    path.write_text(original, encoding="utf-8")
    run_process("check", "--fix", "--h2d-helper", "synclint", "nb.ipynb", cwd=tmp_path)
    fixed = path.read_text(encoding="utf-8")
    changed = [l for l in difflib.ndiff(original.splitlines(), fixed.splitlines()) if l[:1] in "+-"]
    assert len(changed) == 3 and all("async_tensor_h2d" in l or "torch.tensor(tokens" in l for l in changed), changed


def test_diff_and_stdin(tmp_path):
    (tmp_path / "nb.ipynb").write_text(notebook(), encoding="utf-8")
    diff = run_process("check", "--diff", "--h2d-helper", "synclint", "nb.ipynb", cwd=tmp_path)
    assert diff.code == 1 and "\n+    \"from synclint.runtime import async_tensor_h2d\\n\",\n" in diff.out
    piped = run_process("check", "--output-format", "json", "-", "--stdin-filename", "nb.ipynb", cwd=tmp_path, stdin=notebook().encode())
    assert [f["cell"] for f in json.loads(piped.out)] == [3, 3]


def test_default_fix_of_a_notebook_adds_no_import(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook(), encoding="utf-8")
    run_process("check", "--fix", "nb.ipynb", cwd=tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["cells"][1]["source"] == ["%matplotlib inline\n", "import torch\n", "!nvidia-smi"]
    assert data["cells"][2]["source"][1:6] == [
        "    ids = (\n",
        "        torch.as_tensor(tokens, dtype=torch.long).pin_memory()\n",
        "        if torch.cuda.is_available()\n",
        "        else torch.tensor(tokens, dtype=torch.long)\n",
        '    ).to("cuda", non_blocking=torch.cuda.is_available())\n',
    ]


def test_folders_include_notebooks_and_bad_notebooks_are_findings(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "nb.ipynb").write_text(notebook(), encoding="utf-8")
    (tmp_path / "pkg" / "broken.ipynb").write_text("{not json", encoding="utf-8")
    other = json.loads(notebook())
    other["metadata"]["language_info"]["name"] = "julia"
    (tmp_path / "pkg" / "julia.ipynb").write_text(json.dumps(other), encoding="utf-8")
    result = run_process("check", "--output-format", "concise", ".", cwd=tmp_path)
    lines = result.out.splitlines()
    assert lines[0].startswith("pkg/broken.ipynb:1:1: SL002 not a valid notebook (JSON error")
    assert [l.split(" ")[0] for l in lines[1:3]] == ["pkg/nb.ipynb:cell", "pkg/nb.ipynb:cell"]
    assert not any("julia" in l for l in lines)


def test_notebook_suffix_is_what_the_walk_and_the_readme_say():
    from synclint.discover import SOURCE_SUFFIXES

    assert ".ipynb" in SOURCE_SUFFIXES
    assert "notebook.ipynb:cell 3:2:11:" in (REPO / "README.md").read_text(encoding="utf-8")


def test_ipython_syntax_is_masked_and_restored(tmp_path):
    from synclint.notebook import read, write

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": [
        "files = !ls\n", "%time f()\n", "torch.tensor?\n", "??torch.zeros\n", "t = %timeit -o g()\n",
        "def h(x):\n", "    %time y = x\n", "    return x != 1\n", "a = b % 3\n", "print('!')"]}
    capture = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
               "source": ["%%capture out\n", "import torch\n", "x = 1"]}
    raw = json.dumps({"cells": [cell, capture], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    nb = read(raw)
    source = nb.source
    compile(source, "nb", "exec")  # what is left is Python
    lines = source.splitlines()
    assert lines[:5] == ["#~ipython~"] * 5
    assert lines[6] == "    pass  #~ipython~"
    assert lines[7:10] == ["    return x != 1", "a = b % 3", "print('!')"]  # Python, kept
    assert lines[10:] == ["#~ipython~", "import torch", "x = 1"]  # %%capture: the body is Python
    assert write(nb, source) == raw  # nothing changed: the same bytes

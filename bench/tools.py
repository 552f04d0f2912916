"""The peers the benchmark compares against, each in its own virtual environment under
bench/.venvs/ (their libcst pins differ from ours and from each other's)."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

BENCH = Path(__file__).resolve().parent
VENVS_DIR = BENCH / ".venvs"

# tool -> the pip requirement that installs it (pinned).
TOOLS = {
    "torchfix": "torchfix==0.7.0",
    "fixit": "fixit==2.2.1",
}


def venv_python(tool: str) -> Path:
    return VENVS_DIR / tool / "bin" / "python"


def ensure(tool: str) -> Path:
    """Create the tool's venv and install it (once); returns the venv's python."""
    python = venv_python(tool)
    marker = VENVS_DIR / tool / ".installed"
    if marker.exists() and marker.read_text().strip() == TOOLS[tool]:
        return python
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENVS_DIR / tool)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", TOOLS[tool]], check=True)
    marker.write_text(TOOLS[tool] + "\n")
    return python


def versions(tool: str) -> str:
    python = venv_python(tool)
    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('" + tool + "'), m.version('libcst'))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    return f"{tool} {out[0]} (libcst {out[1]})"


if __name__ == "__main__":
    for name in TOOLS:
        ensure(name)
        print(versions(name))

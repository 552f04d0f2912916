"""The benchmark corpus: pinned releases of pure-Python packages full of PyTorch code,
fetched with pip (wheels, no dependencies) and unpacked under bench/.corpus/.

Pinned so that numbers measured on different days compare; the wheels are not committed.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CORPUS_DIR = BENCH / ".corpus"
WHEELS_DIR = CORPUS_DIR / "wheels"
SOURCE_DIR = CORPUS_DIR / "src"

# name -> version: 1.29 million lines of Python in 2,440 files together (transformers 906k,
# diffusers 266k, sglang 119k). Sized so that the slowest peer finishes in minutes.
PACKAGES = {
    "transformers": "4.40.2",
    "sglang": "0.4.6",
    "diffusers": "0.31.0",
}


def _wheel_for(name: str, version: str) -> Path | None:
    prefix = f"{name.replace('-', '_')}-{version}-"
    found = sorted(WHEELS_DIR.glob(f"{prefix}*.whl"))
    return found[0] if found else None


def fetch(python: str = sys.executable) -> Path:
    """Download (once) and unpack (once) every pinned package; returns the corpus root."""
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    for name, version in PACKAGES.items():
        target = SOURCE_DIR / f"{name}-{version}"
        if target.is_dir() and (target / ".complete").exists():
            continue
        wheel = _wheel_for(name, version)
        if wheel is None:
            subprocess.run(
                [python, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                 f"{name}=={version}", "-d", str(WHEELS_DIR)],
                check=True,
            )
            wheel = _wheel_for(name, version)
            if wheel is None:
                raise RuntimeError(f"pip did not leave a wheel for {name}=={version} in {WHEELS_DIR}")
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            # Only the Python sources: the benchmark lints .py files.
            members = [m for m in archive.namelist() if m.endswith(".py") and ".dist-info/" not in m]
            archive.extractall(target, members)
        (target / ".complete").write_text(wheel.name + "\n")
    _write_config(SOURCE_DIR)
    return SOURCE_DIR


# The corpus root is its own project: synclint's own config (which excludes bench/) must
# not apply, and Fixit is told to run its built-in rules.
CORPUS_CONFIG = """\
[tool.synclint]
respect-gitignore = false

[tool.fixit]
root = true
enable = ["fixit.rules"]
"""


def _write_config(root: Path) -> None:
    config = root / "pyproject.toml"
    if not config.exists() or config.read_text() != CORPUS_CONFIG:
        config.write_text(CORPUS_CONFIG)


def python_files(root: Path = SOURCE_DIR) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def count_lines(files: list[Path]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += sum(1 for _ in handle)
    return total


if __name__ == "__main__":
    root = fetch()
    files = python_files(root)
    print(f"{root}: {len(files):,} files, {count_lines(files):,} lines")

"""Run `synclint check --fix --unsafe-fixes` over a copy of a source tree and check what a fixer
must never do: crash (an internal error, exit 2), write a file that does not compile, fix a
file that a second run fixes again, add pyflakes messages, or print a `--diff` that `git apply`
rejects or that gives other text than `--fix` writes.

    python scripts/fix_corpus_check.py SOURCE_TREE WORK_FOLDER

The tree is copied twice into WORK_FOLDER (its .py files only): one copy is fixed with
--fix, the other gets the --diff of the whole tree applied with `git apply`; the two must then
be identical. A defect of synclint on one file (an SL002 "internal error" finding) counts as a
crash, as does exit 2.
Prints one JSON object of counts (and the first problems found)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


def _copy_py(src: Path, dst: Path) -> list[Path]:
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                rel = Path(root, name).relative_to(src)
                (dst / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(root, name), dst / rel)
                files.append(rel)
    return files


def _synclint(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synclint", "check", "--no-cache", "--unsafe-fixes", "--exit-zero", *args, "."],
                          cwd=cwd, capture_output=True)


def _pyflakes(text: str, name: str) -> Counter:
    from pyflakes import api, reporter

    messages: list = []

    class Collect(reporter.Reporter):
        def __init__(self):
            pass

        def unexpectedError(self, filename, msg):
            messages.append(("error", str(msg)))

        def syntaxError(self, filename, msg, lineno, offset, text):
            messages.append(("syntax", str(msg)))

        def flake(self, message):
            # "redefinition of unused 'f' from line 1315" names a row that a fix above it moves:
            # the same message at a shifted row is not a new one.
            text = re.sub(r"\bline \d+", "line N", message.message % message.message_args)
            messages.append((type(message).__name__, text))

    api.check(text, name, Collect())
    return Counter(messages)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("source", type=Path)
    p.add_argument("work", type=Path)
    args = p.parse_args()
    fixed_tree, patched_tree = args.work / "fixed", args.work / "patched"
    for tree in (fixed_tree, patched_tree):
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
    files = _copy_py(args.source, fixed_tree)
    out: dict = {"source": str(args.source), "files": len(files), "problems": []}
    lines = 0
    for rel in files:
        with open(args.source / rel, "rb") as handle:
            lines += handle.read().count(b"\n")
    out["lines"] = lines

    # 1. --fix over the whole tree (the real command: discovery, worker processes, writes)
    start = time.monotonic()
    fix = _synclint(["--fix", "-q", "--output-format", "concise"], fixed_tree)
    out["fix_exit"] = fix.returncode
    out["fix_seconds"] = round(time.monotonic() - start, 1)
    err = fix.stderr.decode(errors="replace")
    # exit 2 ends the run; a defect on one file is an SL002 "internal error" finding and the run goes on
    out["crashes"] = int(fix.returncode == 2) + err.count("internal error") + fix.stdout.count(b"SL002 internal error")
    if out["crashes"]:
        out["problems"].append(err[-2000:])
    out["fix_report_lines"] = fix.stdout.count(b"\n")

    changed, corrupted, new_flakes = [], 0, 0
    for rel in files:
        original = (args.source / rel).read_bytes()
        fixed = (fixed_tree / rel).read_bytes()
        if fixed == original:
            continue
        changed.append(rel)
        try:
            compile(fixed, str(rel), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            corrupted += 1
            out["problems"].append(f"{rel}: fixed file does not compile: {exc}")
            continue
        before = _pyflakes(original.decode("utf-8", "replace"), str(rel))
        after = _pyflakes(fixed.decode("utf-8", "replace"), str(rel))
        added = after - before
        if added:
            new_flakes += sum(added.values())
            if len(out["problems"]) < 40:
                out["problems"].append(f"{rel}: new pyflakes messages {dict(added)}")
    out["files_fixed"] = len(changed)
    out["corrupted"] = corrupted
    out["new_pyflakes_messages"] = new_flakes

    # 2. --diff of pristine copies of the fixed files, applied with git apply: must give
    #    exactly what --fix wrote (an unchanged file has an empty diff by the same code path)
    #    (the whole tree is copied: what synclint reads from the other files, the repository
    #    index, must be the same as in the --fix run)
    _copy_py(args.source, patched_tree)
    diff = _synclint(["--diff"], patched_tree) if changed else None
    differs = 0
    out["git_apply_failures"] = 0
    if diff is not None:
        out["crashes"] += int(diff.returncode == 2) + diff.stdout.count(b"SL002 internal error")
        patch = args.work / "synclint.diff"
        patch.write_bytes(diff.stdout)
        applied = subprocess.run(["git", "apply", "--unsafe-paths", str(patch.resolve())], cwd=patched_tree, capture_output=True)
        out["diff_bytes"] = len(diff.stdout)
        out["git_apply_failures"] = int(applied.returncode != 0)
        if applied.returncode:
            out["problems"].append("git apply: " + applied.stderr.decode(errors="replace")[:2000])
        for rel in changed:
            if (patched_tree / rel).read_bytes() != (fixed_tree / rel).read_bytes():
                differs += 1
                if len(out["problems"]) < 60:
                    out["problems"].append(f"{rel}: --diff applied differs from --fix")
    out["diff_differs_from_fix"] = differs

    # 3. idempotent: a second run over the fixed files changes nothing
    non_idempotent = []
    if changed:
        again = subprocess.run([sys.executable, "-m", "synclint", "check", "--no-cache", "--unsafe-fixes", "--exit-zero", "--diff",
                                *map(str, changed)], cwd=fixed_tree, capture_output=True)
        out["crashes"] += int(again.returncode == 2)
        non_idempotent = [line[6:] for line in again.stdout.decode(errors="replace").splitlines() if line.startswith("--- a/")]
    out["non_idempotent_files"] = len(non_idempotent)
    if non_idempotent:
        out["problems"].append(f"fixed again on a second run: {non_idempotent[:10]}")
    print(json.dumps(out, indent=2))
    return 0 if not out["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Run `synclint check --fix --unsafe-fixes` over a copy of a source tree and check what a fixer
must never do: crash (an internal error, exit 2), write a file that does not compile, fix a
file that a second run fixes again, add pyflakes messages, or print a `--diff` that `git apply`
rejects or that gives other text than `--fix` writes.

    python scripts/fix_corpus_check.py SOURCE_TREE WORK_FOLDER [--jobs N]

The tree's .py files are copied into WORK_FOLDER; `--diff` runs over the pristine copy, then
`--fix` over the same copy (both read the same repository index); the diff is applied with
`git apply` to pristine copies of the files it names, which must then equal what --fix wrote.
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

    # 1. --diff over the pristine tree, before --fix changes it: both runs see the same tree and
    #    so the same repository index (a --diff over a copy of only the fixed files would read
    #    an index of those files alone, whose call graph and facts differ)
    diff = _synclint(["--diff"], fixed_tree)
    out["crashes"] = int(diff.returncode == 2)
    patch = args.work / "synclint.diff"
    patch.write_bytes(diff.stdout)
    out["diff_bytes"] = len(diff.stdout)
    in_diff = [Path(line[6:]) for line in diff.stdout.decode(errors="replace").splitlines() if line.startswith("+++ b/")]

    # 2. --fix over the whole tree (the real command: discovery, worker processes, writes)
    start = time.monotonic()
    fix = _synclint(["--fix", "-q", "--output-format", "concise"], fixed_tree)
    out["fix_exit"] = fix.returncode
    out["fix_seconds"] = round(time.monotonic() - start, 1)
    err = fix.stderr.decode(errors="replace")
    crashes = int(fix.returncode == 2) + err.count("internal error")
    out["crashes"] += crashes
    if crashes:
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

    # 3. the --diff applied with git apply to pristine copies of the files it names and of the
    #    fixed files: must give exactly what --fix wrote (a file in only one of them differs)
    touched = sorted(set(changed) | set(in_diff))
    for rel in touched:
        (patched_tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.source / rel, patched_tree / rel)
    differs = 0
    out["git_apply_failures"] = 0
    if in_diff:
        applied = subprocess.run(["git", "apply", "--unsafe-paths", str(patch.resolve())], cwd=patched_tree, capture_output=True)
        out["git_apply_failures"] = int(applied.returncode != 0)
        if applied.returncode:
            out["problems"].append("git apply: " + applied.stderr.decode(errors="replace")[:2000])
    for rel in touched:
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

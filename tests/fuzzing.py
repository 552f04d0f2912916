"""Generated modules for the fixer's property test (tests/test_fix_properties.py) and the long
fuzz run (scripts/fuzz_fix.py): a module from hypothesmith (or none) with sync-shaped
statements injected at top-level boundaries, in a chosen line-terminator style, with stray
line-break-like characters in comments and strings and `# noqa` lines, so that fixes actually
happen; and `check`, which returns what a fixer must never do on it."""

from __future__ import annotations

import ast
import os
import random
import shutil
import subprocess
import tempfile

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix.apply import fix_source
from synclint.lines import split_lines, unified_diff

# Sync-shaped statements (each a top-level definition; {n} makes names unique).
SNIPPETS = [
    'def fwd_{n}(self, toks):\n    return torch.tensor(toks, device="cuda")\n',
    'def sup_{n}(self, toks):\n    return torch.tensor(toks, device="cuda")  # noqa: SL101\n',
    "def rng_{n}(n, device):\n    return torch.tensor(range(n), device=device)\n",
    "def lit_{n}(device):\n    return torch.tensor(list(range(0, 8, 2)), device=device)\n",
    "def npy_{n}(a):\n    return torch.from_numpy(a).cuda()\n",
    "def npto_{n}(a, device):\n    return torch.from_numpy(a).to(device, non_blocking=True)\n",
    "def zero_{n}(x):\n    y = x.cuda()\n    return y.new_tensor([0, 0])\n",
    "def full_{n}(x):\n    y = x.cuda()\n    return y.new_tensor([2.5, 2.5]), y.new_tensor([-0.0])\n",
    "def item_{n}(xs):\n    for x in xs:\n        t = torch.ones(2, device=\"cuda\")\n        print(t.sum().item())\n",
    "def ar_{n}(seq_len, device):\n    return torch.arange(seq_len).to(device)\n",
    "class M_{n}(torch.nn.Module):\n    def forward(self, toks, mask):\n        ids = torch.tensor(toks, device=\"cuda\")\n        if ids.sum() > 0:\n            return ids[mask]\n        return torch.zeros(4).to(\"cuda\")\n",
    "def multi_{n}(self, toks):\n    a = torch.tensor(\n        toks,  # the tokens\n        device=\"cuda\",\n    )\n    return a\n",
    "def el_{n}(self, toks):\n    y = torch.tensor(toks, device=\"cuda\")\n    if y: pass\n" + "".join(f"    elif y == {i}: pass\n" for i in range(30)),
]
# Characters that str.splitlines, but not Python, takes for line breaks (and a lone CR, which
# Python does), put inside comments and strings.
ODD = ["\r", "\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
NEWLINES = ["\n", "\r\n", "\r"]


def compose(base: str, picks: list[int], odd: list[int], newline: int, places: list[int], final_newline: bool = True) -> str | None:
    """`base` with `import torch` first and the chosen snippets (and odd characters in
    comments and strings) at top-level boundaries; None when the result is not valid Python."""
    try:
        tree = ast.parse(base)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    nl = NEWLINES[newline % len(NEWLINES)]
    base_lines = split_lines(base, keepends=True)
    if base_lines and not base_lines[-1].endswith(("\n", "\r")):
        base_lines[-1] += "\n"
    # Top-level boundaries: before each statement (its first line, decorators included).
    bounds = sorted({0, len(base_lines), *((min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", []))]) - 1) for s in tree.body)})
    blocks: dict[int, list[str]] = {}
    for i, pick in enumerate(picks):
        snippet = SNIPPETS[pick % len(SNIPPETS)].replace("{n}", str(i)).replace("\n", nl)
        if i < len(odd):
            char = ODD[odd[i] % len(ODD)]
            snippet = f"# odd{char}comment{nl}s_{i} = '''a{char}b'''{nl}" + snippet
        where = bounds[places[i % len(places)] % len(bounds)] if places else len(base_lines)
        blocks.setdefault(where, []).append(snippet)
    out = [f"import torch{nl}"]
    for index in range(len(base_lines) + 1):
        out.extend(blocks.get(index, ()))
        if index < len(base_lines):
            out.append(base_lines[index])
    text = "".join(out)
    if not final_newline:
        text = text.rstrip("\r\n")
    try:
        compile(text, "m.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text


def check(text: str, unsafe: bool = True, git_apply: bool = True, stats: dict | None = None) -> list[str]:
    """What went wrong fixing `text` (empty: nothing). Properties: no crash; the fixed text
    compiles; a second fix changes nothing; findings conserved (before = fixed + remaining);
    lines carrying `# noqa` kept as they were; the --diff applies with `git apply` and gives
    exactly the fixed text."""
    settings = Settings()
    try:
        before = lint_source(text, "m.py", settings)
        result = fix_source(text, "m.py", settings, unsafe=unsafe)
    except Exception as exc:  # noqa: BLE001 - the property under test
        return [f"crash: {exc.__class__.__name__}: {exc}"]
    problems = []
    fixed = result.fixed
    if fixed is None:
        return problems
    if stats is not None:
        stats["findings"] = stats.get("findings", 0) + len(before.violations)
        stats["fixes_applied"] = stats.get("fixes_applied", 0) + result.applied
        stats["cases_changed"] = stats.get("cases_changed", 0) + (fixed != text)
    if fixed != text:
        try:
            compile(fixed, "m.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            problems.append(f"corrupted: the fixed text does not compile ({exc})")
        again = fix_source(fixed, "m.py", settings, unsafe=unsafe)
        if again.applied or again.fixed != fixed:
            problems.append(f"not idempotent: a second run applied {again.applied} fixes")
    if len(before.violations) != result.applied + len(result.violations):
        problems.append(f"findings not conserved: {len(before.violations)} before, {result.applied} fixed + {len(result.violations)} remaining")
    kept = split_lines(fixed)
    position = 0
    for line in split_lines(text):
        if "noqa" in line:
            try:
                position = kept.index(line, position) + 1
            except ValueError:
                problems.append(f"suppressed line changed: {line!r}")
    if git_apply and fixed != text and shutil.which("git"):
        problems.extend(_diff_applies(text, fixed))
    return problems


def _diff_applies(text: str, fixed: str) -> list[str]:
    diff = unified_diff(text, fixed, "a/m.py", "b/m.py")
    with tempfile.TemporaryDirectory(prefix="synclint-fuzz-") as folder:
        path = os.path.join(folder, "m.py")
        with open(path, "wb") as handle:
            handle.write(text.encode("utf-8"))
        proc = subprocess.run(["git", "apply", "--unsafe-paths", "-"], cwd=folder, input=diff.encode("utf-8"), capture_output=True)
        if proc.returncode != 0:
            return [f"--diff does not apply: {proc.stderr.decode(errors='replace').strip()}"]
        with open(path, "rb") as handle:
            if handle.read() != fixed.encode("utf-8"):
                return ["--diff applied gives other text than --fix"]
    return []


def random_case(rng: random.Random, bases: list[str]) -> str | None:
    """One case for the long run: a base from the pool and random injections."""
    count = rng.randint(1, 6)
    return compose(
        rng.choice(bases) if bases else "",
        [rng.randrange(len(SNIPPETS)) for _ in range(count)],
        [rng.randrange(len(ODD)) for _ in range(rng.randint(0, count))],
        rng.randrange(len(NEWLINES)),
        [rng.randrange(1000) for _ in range(count)],
        final_newline=rng.random() > 0.2,
    )

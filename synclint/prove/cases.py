"""Executable proof cases: `fixtures/<CODE>/proof.py` holds `def case(device):`, the pattern
written exactly as rule <CODE> flags it; `fixtures/<CODE>/proof_<kind>.py` holds one more case
per further kind of fix the rule writes (a value built on the device, a Python scalar
operand, a pinned copy), so each fix kind's host cost with an idle GPU and its stall with a
busy one are measured. The fixed variant is not a file: it is what synclint's own fixer
makes of the case at the moment of the run."""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from pathlib import Path

# Every rule that has (or will have) a proof case.
RULE_CODES = (
    "SL101", "SL102", "SL103", "SL104", "SL105", "SL106",
    "SL201", "SL202", "SL203", "SL204", "SL205", "SL206", "SL207", "SL208", "SL209",
    "SL301", "SL302", "SL303", "SL304",
    "SL401", "SL402", "SL403", "SL404",
    "SL501",
)

# How a case shows its rule's problem: "stall" (the host waits for the queue) or "race"
# (host data read before the copy that fills it has run: wrong values, no wait).
STALL, RACE = "stall", "race"


def fixtures_dir() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "fixtures"


@dataclass
class ProofCase:
    code: str
    path: Path
    source: str
    kind: str = STALL
    status: str = "ready"  # ready | no proof case | rule not registered | not flagged | fix failed
    problem: str = ""
    rule_fixable: bool = False  # the rule offers a fix, at least sometimes
    rule_always_fixes: bool = False
    fixed_source: str | None = None  # None: the rule's findings here carry no fix
    flagged: list[tuple[int, int]] = field(default_factory=list)  # (first row, last row) of each finding of `code`
    fixed_findings: list[str] = field(default_factory=list)  # findings of `code` left after fixing

    @property
    def fixable(self) -> bool:
        return self.fixed_source is not None

    @property
    def label(self) -> str:
        """`SL101` for proof.py, `SL101/proof_scalar` for a further case."""
        return self.code if self.path.name == "proof.py" else f"{self.code}/{self.path.stem}"

    @property
    def fixed_path(self) -> Path:
        return self.path.with_name(f"{self.path.stem}_fixed.py")  # a name for tracebacks; never written


def case_files(code: str, root: Path | None = None) -> list[str]:
    """proof.py, then the further cases proof_<kind>.py of rule `code`, by name."""
    folder = (root or fixtures_dir()) / code
    extra = sorted(p.name for p in folder.glob("proof_*.py") if not p.stem.endswith("_fixed"))
    return ["proof.py", *extra]


def proof_kind(source: str) -> str:
    """A case declares `PROOF_KIND = "race"` at module level; the default is a stall."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return STALL
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "PROOF_KIND" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and node.value.value in (STALL, RACE)
        ):
            return node.value.value
    return STALL


def select(codes, prefixes) -> list[str]:
    if not prefixes:
        return list(codes)
    wanted = [p.strip().upper() for p in prefixes if p.strip()]
    return [c for c in codes if any(c.startswith(p) for p in wanted)]


def prepare(code: str, root: Path | None = None, name: str = "proof.py") -> ProofCase:
    """Read the case, check that the rule flags it, and get the fixer's version."""
    from synclint.config import Settings
    from synclint.api import fix_source, lint_source
    from synclint.rules import rule_by_code
    from synclint.rules.base import FixAvailability

    path = (root or fixtures_dir()) / code / name
    if not path.exists():
        return ProofCase(code, path, "", status="no proof case", problem=f"{path} does not exist")
    source = path.read_text(encoding="utf-8")
    case = ProofCase(code, path, source, kind=proof_kind(source))
    rule = rule_by_code(code)
    if rule is None:
        case.status, case.problem = "rule not registered", f"no rule {code} in synclint.rules"
        return case
    case.rule_fixable = rule.fix_availability is not FixAvailability.NEVER
    case.rule_always_fixes = rule.fix_availability is FixAvailability.ALWAYS
    settings = Settings()
    found = [v for v in lint_source(source, str(path), settings) if v.code == code]
    case.flagged = [(v.location.row, v.end_location.row) for v in found]
    if not found:
        case.status, case.problem = "not flagged", f"{code} does not flag {path.name} at default settings"
        return case
    if not any(v.fix is not None for v in found):
        return case  # report-only here: proven by its `before` alone
    # The whole fixer runs, as `synclint --fix --unsafe-fixes` would: other rules' fixes on
    # the same lines are part of what a user gets.
    fixed = fix_source(source, str(path), settings, unsafe=True)
    if fixed.error:
        case.status, case.problem = "fix failed", fixed.error
        return case
    if fixed.changed:
        case.fixed_source = fixed.fixed
        case.fixed_findings = [f"{v.location.row}:{v.location.column} {v.code}" for v in fixed.violations if v.code == code]
    return case


def load(source: str, filename: str, name: str) -> types.ModuleType:
    """Exec the source as a fresh module (the file's name kept for tracebacks and the tracer)."""
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    if not callable(getattr(module, "case", None)):
        raise ValueError(f"{filename} defines no `case(device)`")
    return module

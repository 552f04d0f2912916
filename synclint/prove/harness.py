"""Prove each rule on a real GPU: its `before` case stalls, the fixer's version does not,
and both give the same results. Verdicts are reported as measured, failures included."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from synclint.prove import cases as case_mod
from synclint.prove.cases import RACE, ProofCase
from synclint.prove.measure import CLEAN, ERROR, STALL, Measurement, measure

SEED = 1234
RACE_SHOWN, NO_RACE_SEEN, CORRECT = "RACE", "NO RACE SEEN", "CORRECT"


@dataclass
class RuleProof:
    case: ProofCase
    before: Measurement | None = None
    after: Measurement | None = None
    results_match: bool | None = None
    mismatch: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return self.before is not None

    @property
    def proven(self) -> bool:
        if not self.ran or self.problems:
            return False
        if self.case.kind == RACE:
            return self.before.verdict == RACE_SHOWN and (not self.case.fixable or self.after.verdict == CORRECT)
        if not self.case.fixable:
            return self.before.verdict == STALL
        return self.before.verdict == STALL and self.after.verdict == CLEAN and bool(self.results_match)

    def outcome(self) -> str:
        if not self.ran:
            return self.case.status
        return "proven" if self.proven else "FAILED"

    def to_json(self) -> dict:
        c = self.case
        return {
            "fixable": c.fixable,
            "rule_offers_fix": c.rule_fixable,
            "kind": c.kind,
            "status": self.outcome(),
            "problems": self.problems or ([c.problem] if c.problem else []),
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "results_match": self.results_match,
            "mismatch": self.mismatch or None,
            "flagged_rows": [list(r) for r in c.flagged],
            "left_after_fix": c.fixed_findings,
            "fix_diff": fix_diff(c),
        }


def fix_diff(case: ProofCase) -> str:
    if case.fixed_source is None:
        return ""
    diff = difflib.unified_diff(
        case.source.splitlines(keepends=True), case.fixed_source.splitlines(keepends=True),
        "proof.py", "proof.py (fixed)", n=0,
    )
    return "".join(line for line in diff if not line.startswith("@@"))


def seeded(torch, fn):
    def run():
        torch.manual_seed(SEED)
        try:
            import numpy

            numpy.random.seed(SEED)
        except ImportError:
            pass
        return fn()

    return run


def prove_rule(case: ProofCase, torch, device) -> RuleProof:
    proof = RuleProof(case)
    if case.status != "ready":
        return proof
    try:
        before = case_mod.load(case.source, str(case.path), f"proof_{case.label}")
        after = case_mod.load(case.fixed_source, str(case.fixed_path), f"proof_{case.label}_fixed") if case.fixable else None
    except Exception as exc:  # noqa: BLE001 - a case that does not load is a failure, reported
        proof.problems.append(f"cannot load the case: {exc.__class__.__name__}: {exc}")
        proof.before = Measurement(ERROR, error=proof.problems[-1])
        return proof
    if case.kind == RACE:
        return _prove_race(proof, before, after, torch, device)
    proof.before = measure(seeded(torch, lambda: before.case(device)), torch)
    if after is not None:
        proof.after = measure(seeded(torch, lambda: after.case(device)), torch)
        proof.results_match, proof.mismatch = same_results(torch, seeded(torch, lambda: before.case(device)), seeded(torch, lambda: after.case(device)))
    if case.rule_always_fixes and not case.fixable:
        proof.problems.append("the rule says it always fixes, but the fixer changed nothing in proof.py")
    if case.fixed_findings:
        proof.problems.append(f"still flagged after fixing: {', '.join(case.fixed_findings)}")
    for label, m in (("before", proof.before), ("after", proof.after)):
        if m is not None and m.error:
            proof.problems.append(f"{label}: {m.error}")
    return proof


def same_results(torch, run_a, run_b) -> tuple[bool, str]:
    try:
        a = run_a()
        torch.cuda.synchronize()
        b = run_b()
        torch.cuda.synchronize()
        torch.testing.assert_close(b, a)
        return True, ""
    except AssertionError as exc:
        return False, str(exc).strip().splitlines()[0][:300]
    except Exception as exc:  # noqa: BLE001
        return False, f"{exc.__class__.__name__}: {exc}"[:300]


def _prove_race(proof: RuleProof, before, after, torch, device) -> RuleProof:
    """A race case reads host data before the copy that fills it has run; it returns
    `(what_it_read, device_values)`. Under a queued backlog the copy has not run when the
    host reads, so the two differ (compared after a sync)."""
    from synclint.prove.measure import SleepClock

    clock = SleepClock(torch)
    before.case(device)
    torch.cuda.synchronize()
    clock.calibrate()

    def verdict(fn) -> Measurement:
        try:
            torch.cuda.synchronize()
            torch.cuda._sleep(clock.cycles(100))
            read, truth = seeded(torch, lambda: fn(device))()
            torch.cuda.synchronize()
            torch.testing.assert_close(read, truth.cpu())
            return Measurement(CORRECT)
        except AssertionError:
            return Measurement(RACE_SHOWN)
        except Exception as exc:  # noqa: BLE001
            return Measurement(ERROR, error=f"{exc.__class__.__name__}: {exc}")

    proof.before = verdict(before.case)
    if proof.before.verdict == CORRECT:
        proof.before.verdict = NO_RACE_SEEN
    if after is not None:
        proof.after = verdict(after.case)
        proof.results_match = proof.after.verdict == CORRECT
    return proof


def prove_all(codes, torch, device, on_proof=None) -> list[RuleProof]:
    """Prove each rule in turn; `on_proof(proofs_so_far)` runs after each one (the CLI
    prints and saves as it goes, so a run cut short still leaves its results)."""
    out = []
    for code in codes:
        for name in case_mod.case_files(code):
            case = case_mod.prepare(code, name=name)
            out.append(prove_rule(case, torch, device) if torch is not None else RuleProof(case))
            if on_proof is not None:
                on_proof(out)
    return out

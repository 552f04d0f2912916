"""The fixer: fixes -> text edits -> apply -> re-parse -> repeat until stable -> atomic write."""

from synclint.fix.apply import FixResult, apply_fixes, apply_edits, fix_source
from synclint.fix.write import atomic_write

__all__ = ["FixResult", "apply_edits", "apply_fixes", "atomic_write", "fix_source"]

"""What the terminal sees: colour (honouring NO_COLOR / FORCE_COLOR and whether the stream is
a terminal), the summary lines in ruff's words, the legend of the markers, and a progress bar
on stderr for long runs."""

from __future__ import annotations

import os
import sys
import time

# --- colour ------------------------------------------------------------------------------


def colour_enabled(stream) -> bool:
    """NO_COLOR (any non-empty value) turns colour off and wins; FORCE_COLOR (non-empty, not
    `0`) turns it on; otherwise colour only on a terminal that is not `TERM=dumb`."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}


class Style:
    """`style.red("x")` is `x` in red when colour is on, `x` otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, text: str, *styles: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(_CODES[s] for s in styles)}m{text}\x1b[0m"

    def __getattr__(self, name: str):
        if name in _CODES:
            return lambda text: self.paint(text, name)
        raise AttributeError(name)


PLAIN = Style(False)

# --- summary -----------------------------------------------------------------------------

LEGEND = (
    "[*] = fixed by `--fix`; confidence that the value is on the GPU: "
    "high = proven from the code, medium = inferred from names, low = unknown."
)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


# What shows the findings of each tier that a setting hides (synclint/tier.py).
_SHOWN_BY = {"cold": "in cold code (shown by `--include-cold`)", "unknown": "of tier unknown (shown without `--only-hot`)"}


def hidden_tiers_line(hidden: dict) -> str | None:
    """The line that counts the findings hidden by the tiers shown ({tier: count}), or None
    when there are none: a run that hid every finding must not read as if it found nothing."""
    parts = [
        f"{_plural(count, 'finding')} {_SHOWN_BY[tier]}"
        for tier, count in sorted(hidden.items(), key=lambda item: item[0] != "cold")
        if count and tier in _SHOWN_BY
    ]
    return f"Not shown: {'; '.join(parts)}." if parts else None


def summary_lines(remaining: int, fixed: int, fixing: bool, fixable: int, hidden: int, hidden_tiers: dict | None = None) -> list[str]:
    """ruff's summary: the count, what `--fix` would fix, what `--unsafe-fixes` would add.
    `fixable`: remaining findings that `--fix` fixes (with the unsafe ones when they are
    enabled); `hidden`: remaining findings whose only fix is unsafe, not enabled;
    `hidden_tiers`: the findings the tiers shown hid, by tier (`hidden_tiers_line`)."""
    lines = []
    if fixing and fixed:
        lines.append(f"Found {_plural(remaining + fixed, 'finding')} ({fixed} fixed, {remaining} remaining).")
    elif not remaining:
        lines.append("All checks passed!")
    else:
        lines.append(f"Found {_plural(remaining, 'finding')}.")
    hidden_text = f"{_plural(hidden, 'hidden fix', 'hidden fixes')} can be enabled with the `--unsafe-fixes` option"
    if fixable and not fixing:
        lines.append(f"[*] {fixable} fixable with the `--fix` option" + (f" ({hidden_text})." if hidden else "."))
    elif hidden:
        lines.append(f"No fixes available ({hidden_text}).")
    tiers_line = hidden_tiers_line(hidden_tiers or {})
    if tiers_line:
        lines.append(tiers_line)
    return lines


# --- progress ----------------------------------------------------------------------------


class Progress:
    """A one-line bar on a terminal's stderr, shown only once a run has taken `delay` seconds
    (a short run prints nothing), and erased at the end."""

    def __init__(self, total: int, stream=None, delay: float | None = None, clock=time.monotonic, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.clock = clock
        self.start = clock()
        if delay is None:
            delay = float(os.environ.get("SYNCLINT_PROGRESS_DELAY", "2"))
        self.delay = delay
        if enabled is None:
            try:
                enabled = self.stream.isatty() and os.environ.get("TERM") != "dumb"
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled and total > 0
        self.shown = False
        self._last = -1.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay or (now - self._last < 0.1 and self.done < self.total):
            return
        self._last = now
        width = 30
        filled = int(width * self.done / self.total)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} files, {now - self.start:.0f}s")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.shown = False

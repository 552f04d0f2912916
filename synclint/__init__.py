"""synclint: find and fix the places where the host blocks on the GPU in PyTorch code.

The public Python API (see `synclint.api` for the details):

    lint_source(source, filename="<string>", settings=None) -> Findings (a list of Violation)
    fix_source(source, filename="<string>", settings=None, *, unsafe=None) -> FixResult
    settings_for(path) -> Settings

with the types they use: Findings, Violation, Location, Edit, Fix, Applicability, Severity,
Confidence, FixResult, Settings, ConfigError. Everything else is internal and may change.

`import synclint` is cheap: each name is imported on first use (PEP 562), so the command
line's start-up does not pay for the engine, and `__version__` reads the installed metadata
only when asked for.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs 5 ms here

# Public name -> the module that defines it.
_EXPORTS = {
    "lint_source": "synclint.api",
    "Findings": "synclint.api",
    "fix_source": "synclint.api",
    "settings_for": "synclint.api",
    "FixResult": "synclint.fix.apply",
    "Settings": "synclint.config",
    "ConfigError": "synclint.config",
    "Violation": "synclint.violation",
    "Location": "synclint.violation",
    "Edit": "synclint.violation",
    "Fix": "synclint.violation",
    "Applicability": "synclint.violation",
    "Severity": "synclint.violation",
    "Confidence": "synclint.violation",
}

__all__ = [
    "Applicability",
    "Confidence",
    "ConfigError",
    "Edit",
    "Fix",
    "Findings",
    "FixResult",
    "Location",
    "Settings",
    "Severity",
    "Violation",
    "__version__",
    "fix_source",
    "lint_source",
    "settings_for",
]

if TYPE_CHECKING:
    from synclint.api import Findings, fix_source, lint_source, settings_for
    from synclint.config import ConfigError, Settings
    from synclint.fix.apply import FixResult
    from synclint.violation import Applicability, Confidence, Edit, Fix, Location, Severity, Violation

    __version__: str


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("synclint")
    except PackageNotFoundError:  # running from a checkout without an install
        return "0.1.0"


def __getattr__(name: str):
    if name == "__version__":
        value = _version()
    elif name in _EXPORTS:
        from importlib import import_module

        value = getattr(import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'synclint' has no attribute {name!r}")
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})

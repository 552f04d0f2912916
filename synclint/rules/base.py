"""What a rule is: one class, one file, its docstring in ruff's template, its examples tests.

A rule subscribes to node types by defining `visit_<NodeType>(self, node, ctx)` methods; the
engine calls every enabled rule's handlers from one batched libcst pass. A rule reports with
`ctx.report(...)`, optionally with a `FixSpec` that the engine turns into text edits.
"""

from __future__ import annotations

import enum
import inspect
import re
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from synclint.violation import Applicability, Confidence, Severity


class FixAvailability(str, enum.Enum):
    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NEVER = "never"


@dataclass(frozen=True)
class FixSpec:
    """A fix as rules express it: replace nodes with nodes (or code), add imports."""

    message: str
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode | str], ...]
    applicability: Applicability = Applicability.SAFE
    # (module, name): `from module import name` (`import name` for module "") is added when
    # `name` is not bound yet.
    imports: tuple[tuple[str, str], ...] = ()


@dataclass
class Finding:
    """A rule's report before positions are known (they are resolved only if there are findings)."""

    code: str
    node: cst.CSTNode
    message: str
    severity: Severity
    confidence: Confidence
    statement: cst.CSTNode | None
    fix: FixSpec | None = None
    evidence: tuple = ()
    hot_path: str | None = None
    tier: str = "unknown"
    tier_reason: str | None = None
    # Indentation of the blocks around the node, so a multi-line replacement keeps its layout.
    indents: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)


class Rule:
    """Base class. Subclasses set the class attributes and define visit_* handlers."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, e.g. "blocking-tensor-factory"
    summary: ClassVar[str]  # the one-line message template's gist
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NEVER
    severity: ClassVar[Severity] = Severity.WARNING
    # Identifiers at least one of which appears in any source this rule can flag. The
    # prefilter skips a file (before parsing) when no enabled rule's trigger appears in it.
    triggers: ClassVar[tuple[str, ...]] = ()
    # For the function-level screen (synclint/screen/), which decides before the libcst
    # parse which functions can hold a finding. `shape_words`: names of the functions or
    # methods (or of keywords passed to a call) one of which a function must call for this
    # rule to flag anything in it; None: any function. `device_only`: the rule reports only
    # values the placement analysis puts on the device (medium confidence or more), so a
    # function with no device source in reach cannot hold its finding. A rule that sets
    # neither turns the screen off: every function is parsed.
    shape_words: ClassVar[tuple[str, ...] | None] = None
    device_only: ClassVar[bool] = False
    # With `device_only`: the places where the rule looks for a device value, as the screen
    # names them (synclint/screen/places.py `PlaceModel.holds`): "receiver" / "data" (the
    # receiver / the receiver and arguments of the calls named by shape_words), "factory"
    # (their `device=` target), "truth" (tested values),
    # "convert" (arguments of int()/float()/print()/max()...), "text" (f-string and `%`
    # values), "sizing" (int()/range() arguments, `.item()` receivers), "move" (`.cuda()`,
    # `.to(<device>)`), "store" (`t[...] = v` targets), "stored" (their values),
    # "copy" (`t.copy_(...)` receivers), "numbers" (arguments read as Python numbers:
    # apis/torch_api.py NUMBER_ARGUMENT_*), "loop" (iterated values, `list(t)`), "index" (subscripted values with a
    # non-literal index), "mask" (index values), "bound" (slice bounds). None: the screen
    # asks only whether a device source is in reach of the function.
    device_sites: ClassVar[tuple[str, ...] | None] = None

    # True where the rule flags a loop header and the host waits where the loop's body uses
    # an element (the runtime join reads the whole loop: synclint/trace/spans.py).
    waits_in_loop_body: ClassVar[bool] = False

    # "module:function" of a function (without libcst) that gives the screen's words for one
    # file from its `ast` tree, where the rule learns more names from the file itself; "":
    # `shape_words` for every file. A name, not code: synclint/rule_catalog.py keeps it.
    words_of: ClassVar[str] = ""

    @classmethod
    def screen_words(cls, tree) -> tuple[str, ...] | None:
        """The screen's `shape_words` for one file (its `ast` tree): `shape_words`, unless the
        rule learns more names from the file itself (`words_of`)."""
        if cls.words_of:
            from synclint.rule_catalog import words_function

            return words_function(cls.words_of)(tree)
        return cls.shape_words

    def __init__(self, settings) -> None:
        self.settings = settings

    @classmethod
    def handlers(cls) -> dict[str, str]:
        """Node type name -> method name, for the engine's dispatch table."""
        return {
            name[len("visit_"):]: name
            for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if name.startswith("visit_")
        }

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_section(cls, title: str) -> str:
        """The text under `## <title>` in the docstring."""
        match = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", cls.doc(), re.M | re.S)
        return match.group(1).strip() if match else ""

    @classmethod
    def doc_code_blocks(cls, title: str) -> list[str]:
        """The ```python blocks under `## <title>`: a rule's examples, run as its tests."""
        return [inspect.cleandoc(b) + "\n" for b in re.findall(r"```python\n(.*?)```", cls.doc_section(title), re.S)]

    @classmethod
    def anchor(cls) -> str:
        """The rule's heading anchor in docs/rules.md, as GitHub renders it. There is no
        published URL for the reference: `synclint rule CODE` prints it."""
        return f"{cls.code.lower()}-{cls.name}"

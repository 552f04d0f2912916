"""While a module is summarised, the screen's evaluator asks what other files decide (a field,
a parameter, a function's result); `_Recorder` answers each question with a symbolic bit,
so that a summary is a set of flows `target <- local places | symbols`, independent of
every other file.
"""

from __future__ import annotations

import ast

from synclint.repo.classes import _Types
from synclint.repo.conventions import convention
from synclint.repo.keys import (
    METHOD_RESULT, METHOD_RESULT_ITEM, PASSED_ARGUMENT, PLACES, RESULT_ITEM, RETURNED_BY, _FIRST_SYMBOL,
)
from synclint.screen import places
from synclint.screen.facts import param_key


class _Recorder(_Types, places.NoRepository):
    """Installed as places.REPO while a file is summarised: a question about another file is
    answered with a bit that stands for it."""

    symbolic = True

    def __init__(self) -> None:
        self.bits: dict[tuple, int] = {}
        self.keys: list[tuple] = []
        self.learn(((), (), ()))

    def learn(self, info: tuple) -> None:
        classes, field_types, returns = info
        self.bases = {name: bases for name, bases, _ in classes}
        self.field_types = _unique(((c, f), t) for c, f, t in field_types)
        self.returns = _unique(((o, f), t) for o, f, t in returns)

    def is_class(self, name: str) -> bool:
        # A class of this file, or a capitalised name another file may define: a field
        # read through it is a symbol the solve answers (by name where no class has it).
        return name in self.bases or places.spelt_as_class(name)

    def field(self, cls: str, name: str) -> int:
        return convention(name) or self._symbol(("A", cls, name))

    def passed(self, mask: int, func, func_unit, call, place) -> int:
        key = param_key(func, func_unit)
        args = func.args
        params = [a.arg for a in [*args.posonlyargs, *args.args] if a.arg not in ("self", "cls")]

        def argument(name: str):
            arg = next((kw.value for kw in call.keywords if kw.arg == name), None)
            if arg is None and name in params:
                position = params.index(name)
                positional = [a for a in call.args]
                if position < len(positional) and not any(type(a) is ast.Starred for a in positional[: position + 1]):
                    arg = positional[position]
            return arg

        return self._substituted(mask, key, argument, place)

    def _substituted(self, mask: int, key: str, argument, place) -> int:
        """`mask` with the parameters of function `key` replaced by where this call's
        arguments are, also inside the arguments it passes on to a method that may return
        them (PASSED_ARGUMENT: `return self.pool.translate(loc)` of a wrapper)."""
        rest = mask >> 6
        keys = self.keys
        while rest:
            low = rest & -rest
            rest ^= low
            symbol = keys[low.bit_length() - 1]
            if symbol[0] == "p" and symbol[1] == key:
                arg = argument(symbol[2])
                if arg is not None:
                    mask = (mask & ~(low << 6)) | place(arg)
            elif symbol[0] == PASSED_ARGUMENT and _reads_parameter(symbol[4], key):
                inner = symbol[3]
                for one in symbol[4]:
                    inner |= self._symbol(one)
                now = self._substituted(inner, key, argument, place)
                if now != inner:
                    mask = (mask & ~(low << 6)) | self._passed_argument(symbol[1], symbol[2], now)
        return mask

    def _symbol(self, key: tuple) -> int:
        bit = self.bits.get(key)
        if bit is None:
            bit = self.bits[key] = _FIRST_SYMBOL << len(self.keys)
            self.keys.append(key)
        return bit

    def attr(self, name: str) -> int:
        return convention(name) or self._symbol(("a", name))

    def param(self, function: str, name: str) -> int:
        return convention(name) or self._symbol(("p", function, name))

    def ret(self, function: str) -> int:
        return self._symbol(("r", function))

    def ret_item(self, function: str, position: int) -> int:
        return self._symbol((RESULT_ITEM, function, position))

    def method_ret(self, cls: str, name: str) -> int:
        return self._symbol((METHOD_RESULT, f"{cls}.{name}"))

    def method_ret_item(self, cls: str, name: str, position: int) -> int:
        return self._symbol((METHOD_RESULT_ITEM, f"{cls}.{name}", position))

    def method_passed(self, cls: str, name: str, call, place) -> int:
        """The arguments of `obj.<name>(...)` (`obj` of class `cls`), each as a symbol that
        stands for where it is if the method the call runs returns that parameter as it is
        (PASSED_ARGUMENT, `_Resolver`): `pool.translate(loc)` with `def translate(self, loc):
        return loc` is where this call's `loc` is."""
        mask = 0
        ref = f"{cls}.{name}"
        for position, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                break
            mask |= self._passed_argument(ref, position, place(arg))
        for keyword in call.keywords:
            if keyword.arg is not None:
                mask |= self._passed_argument(ref, keyword.arg, place(keyword.value))
        return mask

    def _passed_argument(self, ref: str, slot, mask: int) -> int:
        # Not the arguments of other such calls it holds (`x = pool.m(x)` in a loop would nest
        # them without end while the bindings' fixpoint grows): the symbols of an argument
        # stay those of the file's fields, parameters and results, a finite set.
        local, symbols = self.split(mask)
        symbols = tuple(s for s in symbols if s[0] != PASSED_ARGUMENT)
        if not local and not symbols:
            return 0
        return self._symbol((PASSED_ARGUMENT, ref, slot, local, symbols))

    def split(self, mask: int) -> tuple[int, tuple]:
        local = mask & PLACES
        symbols = []
        rest = mask >> 6
        keys = self.keys
        while rest:
            low = rest & -rest
            symbols.append(keys[low.bit_length() - 1])
            rest ^= low
        return local, tuple(symbols)


def _reads_parameter(symbols: tuple, function: str) -> bool:
    """Whether `symbols` (those of a PASSED_ARGUMENT, at any depth) read a parameter of `function`."""
    return any(s[0] == "p" and s[1] == function or s[0] == PASSED_ARGUMENT and _reads_parameter(s[4], function)
               for s in symbols)


def _unique(keys_values) -> dict:
    """key -> value, "" where a key has several values (the class of a field built two ways).
    A class the code names wins over what a factory method returns (`RETURNED_BY`)."""
    out: dict = {}
    for key, value in keys_values:
        old = out.get(key)
        if old is None or old == value:
            out[key] = value
        elif isinstance(value, str) and value.startswith(RETURNED_BY) and old:
            continue
        elif isinstance(old, str) and old.startswith(RETURNED_BY) and value:
            out[key] = value
        else:
            out[key] = ""
    return out

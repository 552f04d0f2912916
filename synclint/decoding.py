"""A source file's bytes as text, decoded as Python decodes it (without libcst: a run that
reuses a file's last findings decodes it too, synclint/screened.py)."""

from __future__ import annotations

import io
import tokenize


class DecodeError(Exception):
    pass


def decode(source: bytes) -> tuple[str, str]:
    """Decode as Python does: PEP 263 cookie or BOM, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError as exc:
        raise DecodeError(str(exc)) from None
    try:
        return source.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(f"cannot decode as {encoding}: {exc}") from None


def source_encoding(source: bytes | str) -> str:
    """The encoding `decode` reads `source` with (its first two lines say), "utf-8" when
    they name none or an unknown one, or for text."""
    if isinstance(source, str):
        return "utf-8"
    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:
        return "utf-8"

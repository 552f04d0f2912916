"""`synclint server`: a language server on stdio (LSP, built with pygls).

Diagnostics for each open Python document (from the editor's buffer, with the settings of
the file's project configuration), quick fixes as code actions, "suppress on this line",
and each rule's documentation on hover or through a code action. pygls is an optional
dependency: `pip install 'synclint[server]'`.
"""

from __future__ import annotations

import sys

MISSING_PYGLS = (
    "synclint: error: `synclint server` needs pygls, which is not installed.\n"
    "Install the server extra:  pip install 'synclint[server]'   (or: pip install 'pygls>=1.3')"
)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="synclint server",
        description="Run synclint as a language server (LSP) on stdin/stdout, for an editor to start.",
    )
    parser.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (the default; accepted for editors that pass it)")
    parser.parse_args(argv)
    from importlib import import_module

    try:
        import_module("pygls")
        import_module("lsprotocol")
    except ImportError:
        print(MISSING_PYGLS, file=sys.stderr)
        return 2
    from synclint.server.lsp import serve

    serve()
    return 0

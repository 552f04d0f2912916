"""The baseline: parse every file of a list in one process, with libcst (what any
libcst-based linter pays at least) or with Python's own `ast` (for scale).

Usage: parse_baseline.py {libcst|ast} FILE_LIST
"""

from __future__ import annotations

import ast
import sys
import time


def main() -> int:
    parser, listing = sys.argv[1], sys.argv[2]
    with open(listing, encoding="utf-8") as handle:
        files = [line.rstrip("\n") for line in handle if line.strip()]
    if parser == "libcst":
        import libcst

        parse = libcst.parse_module
    else:
        parse = ast.parse
    failed = 0
    start = time.perf_counter()
    for name in files:
        with open(name, "rb") as handle:
            data = handle.read()
        try:
            parse(data.decode("utf-8"))
        except Exception:  # noqa: BLE001 - a file the parser rejects still counts as visited
            failed += 1
    print(f"{parser}: {len(files)} files, {failed} not parsed, {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

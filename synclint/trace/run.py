"""Run a Python program in this process, as `python script.py args` / `python -m mod args`
would, so that the hooks see it. Returns its exit code; its output is left untouched."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from pathlib import Path


class ProgramError(Exception):
    """The command line does not name a program we can run."""


def parse_program(argv: list[str]) -> tuple[str, str, list[str]]:
    """`python script.py a b` / `script.py a b` / `python -m pkg.mod a` ->
    ("path" or "module", target, args). Interpreter options other than -m are refused."""
    args = list(argv)
    if args and Path(args[0]).name.startswith("python"):
        args = args[1:]
    if not args:
        raise ProgramError("no program given (usage: synclint trace [--json FILE] -- python script.py args...)")
    if args[0] == "-m":
        if len(args) < 2:
            raise ProgramError("-m needs a module name")
        return "module", args[1], args[2:]
    if args[0].startswith("-"):
        raise ProgramError(f"interpreter option {args[0]} is not supported; run the script directly")
    if not Path(args[0]).is_file():
        raise ProgramError(f"can't open file {args[0]!r}: no such file")
    return "path", args[0], args[1:]


def run_program(kind: str, target: str, args: list[str]) -> int:
    """Run it as __main__; SystemExit becomes the exit code, an uncaught exception is printed
    as Python prints it and gives 1."""
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    try:
        if kind == "module":
            sys.argv = [target, *args]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [target, *args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
        return 0
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 - the program's own failure, reported as Python would
        etype, value, tb = sys.exc_info()
        # Drop our own frames (this function, runpy) from the traceback, as `python` shows none.
        while tb is not None and _is_plumbing(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb)
        return 1
    finally:
        sys.argv = saved_argv
        if sys.path and saved_path0 is not None and sys.path[0] != saved_path0:
            sys.path.pop(0)
        sys.stdout.flush()
        sys.stderr.flush()


def _is_plumbing(filename: str) -> bool:
    return filename == __file__ or filename.endswith(("runpy.py", "<frozen runpy>")) or "<frozen runpy>" in filename


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # `sys.exit("message")`: printed, exit status 1
    return 1

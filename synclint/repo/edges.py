"""The call graph's edges as one file gives them: the marks on a call (a cold branch, a worker
thread, a script's `__main__` block, a handler table), module names and the folders that
name a platform or a package.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from pathlib import Path

from synclint.analysis import class_uses, platform_branches
from synclint.analysis.host_fields import module_candidates
from synclint.analysis.platform_words import host_class, host_file, path_platforms
from synclint.repo.keys import (
    BASE_MODULE_MARK, BUILT_MARK, COLD_CALLER, GUARDED_CALLER, HOST_MARK, MARK_CALLER, PASSED_FUNCTION_MARK,
    ROOT_MARKERS, UNTAKEN_CALLER, WORKER_MARK, WORKER_PARAM_MARK, _MODULE_MARKS,
)
from synclint.screen import places

_INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


def _installed_top(folder: Path) -> Path | None:
    """The top-level package folder under `site-packages` that `folder` is in (a namespace
    package has no `__init__.py` to walk up by), or None outside an install folder."""
    for child, parent in zip((folder, *folder.parents), folder.parents):
        if parent.name in _INSTALL_FOLDERS:
            return child
    return None


def _worker_functions(callers: dict) -> frozenset[str]:
    """The functions the repository hands to a thread or executor: directly (`WORKER_MARK`)
    or as an argument of a helper that does (`WORKER_PARAM_MARK`, `PASSED_FUNCTION_MARK`),
    matched by the helper's name and the argument's position or keyword."""
    found = set(callers.get(WORKER_MARK, ()))
    handing: dict[str, set[str]] = {}
    for one in callers.get(WORKER_PARAM_MARK, ()):
        name, position, param = one.split(":", 2)
        handing.setdefault(name, set()).update((position, param) if position != "-1" else (param,))
    if handing:
        for one in callers.get(PASSED_FUNCTION_MARK, ()):
            name, position, keyword, ref = one.split(":", 3)
            ways = handing.get(name)
            if ways and (position in ways if position != "-1" else keyword in ways):
                found.add(ref)
    return frozenset(found)


def _generic_host_methods(tree: ast.Module) -> list[str]:
    """`Cls.m` for the methods of a module-level class that is host-side pre-processing only
    by a generic base (`class VideoProcessor(BaseMultiModalProcessor[Info])`), which the
    class table leaves out of the bases: `_CallGraphTiers._host_side` reads the others."""
    found = []
    for node in tree.body:
        if type(node) is not ast.ClassDef or not any(type(b) is ast.Subscript for b in node.bases):
            continue
        bases = [places._last_name(b.value if type(b) is ast.Subscript else b) for b in node.bases]
        if host_class(node.name, bases):
            found.extend(f"{node.name}.{m.name}" for m in node.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef))
    return found


def _marked_folder(folder: str) -> str:
    """The nearest folder at or above `folder` with a project marker (`ROOT_MARKERS`), or ""."""
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return ""
        folder = parent


def _naming_root(folder: str) -> str:
    """The folder a module in `folder` is named from: its project's root (`_marked_folder`);
    without a marker (an unpacked wheel, site-packages), the folder above the top package
    `folder` is in (`_package_top`); "" for a loose folder. One answer for a file however it is given
    (relative to the working folder or absolute), so that the index and the file linted
    name a module alike."""
    marked = _marked_folder(folder)
    if marked:
        return marked
    installed = _installed_top(Path(folder))
    if installed is not None:
        return str(installed.parent)
    top = _package_top(folder)
    return os.path.dirname(top) if top else ""


def _package_top(folder: str) -> str:
    """The highest package folder (one with `__init__.py`) at or above `folder`, climbing
    across namespace folders (no `__init__.py`): `wheel/pkg` for `wheel/pkg/srt/layers/dcp`
    where only `pkg` and `dcp` have one; "" where no folder at or above has one."""
    top = ""
    while True:
        if os.path.exists(os.path.join(folder, "__init__.py")):
            top = folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return top
        folder = parent


_project_root_of = lru_cache(maxsize=4096)(_naming_root)  # asked for every file's edges


def _below_project_root(path: str) -> str:
    """`path` from its project's root (`/home/amd-team/repo/pkg/x.py` -> `pkg/x.py`): the
    folders above the project say nothing of the platforms its files are for."""
    root = _project_root_of(os.path.dirname(os.path.abspath(path)))
    return os.path.relpath(os.path.abspath(path), root) if root else path


def _built_class(func: ast.expr) -> str:
    """`Cls` of a call `Cls(...)` or `module.Cls(...)`, "" for any other call."""
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
    return name if class_uses.capitalised(name) else ""


def _file_edges(path: str, edges) -> tuple:
    """A file's call edges with what its path adds: the functions it defines, marked host-side
    where the file is pre-processing by its name or folder (`platform_words.host_file`); and
    in a file for other platforms by its name or folder (`platforms/rocm.py`), the classes it
    builds and the registry entries it uses outside any platform branch are built and used on
    those platforms only. A class it uses as a value (`cls=Runner`) may still be built
    anywhere: such uses keep `class_uses.ANY_USE`."""
    if any(callee in _MODULE_MARKS for caller, callee, _ in edges if caller == MARK_CALLER):
        edges = _module_marks(path, edges)
    platforms = path_platforms(_below_project_root(path))
    if platforms:
        guard = platform_branches.ON_PLATFORMS + "+".join(sorted(platforms))

        def there(arguments: str) -> str:  # "" or a query made outside any branch: on the file's platforms
            return guard if not arguments else arguments + guard if arguments[:1] == class_uses.QUERY and arguments[-1:] == "\t" else arguments

        def on_platforms(caller: str) -> str:  # the calls of its functions are made on its platforms only
            if not caller or caller == MARK_CALLER or caller.endswith((COLD_CALLER, UNTAKEN_CALLER)):
                return caller
            if GUARDED_CALLER in caller:
                return f"{caller[:-1]};{guard}]"
            return f"{caller}{GUARDED_CALLER}{guard}]"

        edges = tuple((caller, callee, there(arguments)) if caller == MARK_CALLER and callee.startswith(BUILT_MARK)
                      else (on_platforms(caller), callee, arguments)
                      for caller, callee, arguments in edges)
    if not host_file(path):
        return tuple(edges)
    return (*edges, *((MARK_CALLER, HOST_MARK, callee) for caller, callee, _ in edges if not caller))


def module_name(path: str) -> str:
    """A module's path from its project's root, `/`-separated, without `.py` (a package's
    `__init__.py` by its folder): how the marks of `_module_marks` name it."""
    name = _below_project_root(path).replace(os.sep, "/")
    name = re.sub(r"\.pyi?$", "", name)
    return name[: -len("/__init__")] if name.endswith("/__init__") else name


def _module_marks(path: str, edges) -> tuple:
    """The module marks of a file's edges keyed by the file's module name; a base module's
    spec (`1:qwen2_vl`) turned into the module names it may be (`host_fields.module_candidates`)."""
    here = module_name(path)
    out = []
    for caller, callee, arguments in edges:
        if caller != MARK_CALLER or callee not in _MODULE_MARKS:
            out.append((caller, callee, arguments))
        elif callee == BASE_MODULE_MARK:
            out.extend((caller, callee + here, name) for name in module_candidates(arguments, here))
        else:
            out.append((caller, callee + here, arguments))
    return tuple(out)

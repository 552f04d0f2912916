"""Find the Python files to lint: walk folders, honour excludes and .gitignore, survive
symlink loops, missing paths and unreadable folders (each reported, the walk goes on)."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

import pathspec

from synclint.config import Settings


# A folder reached again through a symlink (`loop/up -> ..`). Not an input problem: every
# file in it is linted once; the CLI prints it as a note rather than a finding.
FOLDER_CYCLE = "symlink loop: folder already visited, skipped"

# What a folder walk lints: Python files and Jupyter notebooks (synclint/notebook.py).
SOURCE_SUFFIXES = (".py", ".ipynb")


def _symlink_problem(path: Path) -> str:
    """Why a symlink cannot be followed: a loop (`a.py -> b.py -> a.py`) or a missing target."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop: too many levels of symbolic links"
        return "broken symbolic link: its target does not exist"
    return "not a regular file or folder"


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)


def project_root(settings: Settings) -> Path:
    if settings.source and settings.source.endswith(".toml"):
        return Path(settings.source).resolve().parent
    return Path.cwd().resolve()


def _relative(path: Path, root: Path) -> str:
    try:
        if path.is_absolute():
            return path.resolve().relative_to(root).as_posix()
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _matches(patterns, rel: str) -> bool:
    """Whether an exclude pattern matches the path's name, the path, or a folder above it
    (`fnmatchcase(name, p)`, `fnmatchcase(rel, p)`, `fnmatchcase(rel, p + "/*")`, or `rel`
    under `p/`), for each pattern of `patterns`."""
    if not patterns:
        return False
    rel = rel.lstrip("./") if rel.startswith("./") else rel
    plain = rel and not rel.endswith(("/", ".")) and "//" not in rel  # as `as_posix()` writes a path
    name = rel.rpartition("/")[2] if plain else PurePosixPath(rel).name
    by_name, by_path = _compiled(tuple(patterns))
    return by_name.match(name) is not None or by_path.match(rel) is not None


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern]:
    """`_matches`' tests of every pattern as two regular expressions (one walk tests each of
    hundreds of entries against the same excludes)."""
    names, paths = [], []
    for pattern in patterns:
        p = pattern.rstrip("/")
        names.append(fnmatch.translate(p))
        paths += [fnmatch.translate(p), fnmatch.translate(p + "/*"), f"(?s:{re.escape(p + '/')}.*)\\Z"]
    return re.compile("|".join(names)), re.compile("|".join(paths))


def _excluded_anywhere(path: Path, root: Path, excludes) -> bool:
    """Whether the file or any folder above it (up to the project root) is excluded."""
    rel = _relative(path.absolute(), root)
    parts = PurePosixPath(rel).parts
    return any(_matches(excludes, "/".join(parts[: i + 1])) for i in range(len(parts)))


def _load_gitignore(folder: Path) -> pathspec.PathSpec | None:
    path = folder / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _git_root(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


class _Ignores:
    """The .gitignore files that apply to a folder: its own and its parents' up to the repo root."""

    def __init__(self) -> None:
        self.specs: dict[Path, pathspec.PathSpec | None] = {}
        self.chains: dict[Path, list[tuple[int, pathspec.PathSpec]]] = {}

    def _chain(self, folder: Path) -> list[tuple[int, pathspec.PathSpec]]:
        """(depth, spec) of each .gitignore from `folder` (absolute) up to the repository root
        above it, nearest first: a path's pattern text there is its parts below that depth."""
        found = self.chains.get(folder)
        if found is None:
            found = self.chains[folder] = []
            top = _git_root(folder) or folder
            current = folder
            while True:
                if current not in self.specs:
                    self.specs[current] = _load_gitignore(current)
                spec = self.specs[current]
                if spec is not None:
                    found.append((len(current.parts), spec))
                if current == top or current.parent == current:
                    break
                current = current.parent
        return found

    def ignored_in(self, folder: Path, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the entry of absolute `parts` in `folder` (absolute) is ignored."""
        for depth, spec in self._chain(folder):
            if spec.match_file("/".join(parts[depth:]) + ("/" if is_dir else "")):
                return True
        return False


class _Folder:
    """What discovery needs from one folder's settings, computed once per Settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = project_root(settings)
        self.excludes = (*settings.exclude, *settings.extend_exclude)


def discover(paths: list[Path], settings) -> Discovery:
    """The files to lint under `paths`. `settings` is one Settings for every folder, or a
    `SettingsResolver`: each folder's excludes are then those of its own configuration."""
    out = Discovery()
    resolve = settings.for_folder if hasattr(settings, "for_folder") else (lambda folder, s=settings: s)
    views: dict[int, _Folder] = {}

    def view(folder) -> _Folder:
        folder_settings = resolve(folder)
        found = views.get(id(folder_settings))
        if found is None or found.settings is not folder_settings:
            found = views[id(folder_settings)] = _Folder(folder_settings)
        return found

    ignores = _Ignores()
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[Path] = set()

    def add(path: Path) -> None:
        key = path.absolute()
        if key not in seen_files:
            seen_files.add(key)
            out.files.append(path)

    def walk(folder: Path) -> None:
        try:
            st = folder.stat()
        except OSError as exc:
            out.errors.append((str(folder), f"cannot read folder: {exc.strerror or exc}"))
            return
        if (st.st_dev, st.st_ino) in seen_dirs:
            if folder.is_symlink() or any(p.is_symlink() for p in [folder, *folder.parents][:8]):
                out.errors.append((str(folder), FOLDER_CYCLE))
            return
        seen_dirs.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.errors.append((str(folder), f"cannot read folder: {exc.strerror or exc}"))
            return
        here = view(folder)
        # An entry's path relative to the project root is its folder's and its name, where the
        # folder was given relative (`.`, as a hook gives it): no path arithmetic per entry.
        under = None if folder.is_absolute() else _relative(folder, here.root)
        if under is not None and (under.startswith("..") or under.startswith("/")):
            under = None
        absolute = folder.absolute()
        parts = absolute.parts
        for entry in entries:
            path = Path(entry.path)
            if under is None:
                rel = _relative(path, here.root)
            else:
                rel = entry.name if under == "." else f"{under}/{entry.name}"
            if _matches(here.excludes, rel):
                continue
            try:
                is_dir = entry.is_dir()  # follows symlinks
                is_file = entry.is_file()
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    if entry.name.endswith(SOURCE_SUFFIXES):
                        out.errors.append((str(path), _symlink_problem(path)))
                    continue
                out.errors.append((str(path), f"cannot stat: {exc.strerror or exc}"))
                continue
            if entry.is_symlink() and not (is_dir or is_file):
                if entry.name.endswith(SOURCE_SUFFIXES):
                    out.errors.append((str(path), _symlink_problem(path)))
                continue
            if here.settings.respect_gitignore and ignores.ignored_in(absolute, (*parts, entry.name), is_dir):
                continue
            if is_dir:
                walk(path)
            elif is_file and entry.name.endswith(SOURCE_SUFFIXES):
                add(path)

    for path in paths:
        if str(path) == "-":
            continue
        try:
            os.lstat(path)
        except OSError as exc:  # missing, or inside a folder we may not search
            out.errors.append((str(path), _not_there(exc)))
            continue
        try:
            path_is_dir, path_is_file = path.is_dir(), path.is_file()
        except OSError as exc:  # a symlink into a folder we may not search
            out.errors.append((str(path), _not_there(exc)))
            continue
        if path_is_dir:
            walk(path)
        elif path_is_file:
            # Named explicitly: linted even if excluded, as in ruff, unless --force-exclude.
            here = view(path.absolute().parent)
            if not (here.settings.force_exclude and _excluded_anywhere(path, here.root, here.excludes)):
                add(path)
        elif path.is_symlink():
            out.errors.append((str(path), _symlink_problem(path)))
        else:
            out.errors.append((str(path), "not a regular file or folder"))
    # A path named on the command line and met again in a folder walk is reported once.
    unique: dict[tuple[str, str], tuple[str, str]] = {}
    for path, message in out.errors:
        unique.setdefault((os.path.abspath(path), message), (path, message))
    out.errors = list(unique.values())
    return out


def per_file_ignored_codes(settings: Settings, filename: str) -> frozenset[str]:
    if not settings.per_file_ignores:
        return frozenset()
    # Settings compare equal whatever file they came from; the globs are relative to it.
    return _per_file_ignored(settings, settings.source, filename)


@lru_cache(maxsize=4096)
def _per_file_ignored(settings: Settings, source: str | None, filename: str) -> frozenset[str]:
    from synclint.rules import known_codes

    rel = _relative(Path(filename), project_root(settings))
    codes: set[str] = set()
    for glob, prefixes in settings.per_file_ignores:
        if _matches((glob,), rel):
            for code in known_codes():
                if any(code.startswith(p.upper()) or p.upper() == "ALL" for p in prefixes):
                    codes.add(code)
    return frozenset(codes)


def _not_there(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    return f"cannot read: {exc.strerror or exc}"

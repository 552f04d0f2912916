"""File discovery on real trees: order, default excludes at any depth, duplicates, special
files and unreadable folders."""

from __future__ import annotations

import os
from pathlib import Path

from synclint.config import Settings
from synclint.discover import FOLDER_CYCLE, discover


def _names(found, root: Path) -> list[str]:
    return [p.absolute().relative_to(root).as_posix() for p in found.files]


def test_walk_is_sorted_python_only_and_skips_default_excludes_at_any_depth(project):
    project.write(
        {
            "b.py": "",
            "a.py": "",
            "notes.txt": "",
            "stub.pyi": "",
            "pkg/z.py": "",
            "pkg/build/gen.py": "",
            "pkg/__pycache__/c.py": "",
            "pkg/node_modules/n.py": "",
            "x.egg-info/e.py": "",
            ".git/hooks/h.py": "",
            ".tox/t.py": "",
        }
    )
    found = discover([Path(".")], Settings())
    assert _names(found, project.root) == ["a.py", "b.py", "pkg/z.py"]
    assert found.errors == []


def test_a_file_named_twice_or_also_inside_a_named_folder_is_listed_once(project):
    project.write({"pkg/a.py": ""})
    found = discover([Path("pkg/a.py"), Path("pkg"), Path("pkg/a.py")], Settings())
    assert _names(found, project.root) == ["pkg/a.py"]


def test_special_file_named_explicitly_is_an_error_and_skipped_in_a_walk(project):
    os.mkfifo(project.root / "pipe.py")
    project.write({"a.py": ""})
    assert discover([Path("pipe.py")], Settings()).errors == [("pipe.py", "not a regular file or folder")]
    walked = discover([Path(".")], Settings())
    assert (_names(walked, project.root), walked.errors) == (["a.py"], [])


def test_unreadable_folder_is_reported_and_the_walk_goes_on(project, monkeypatch):
    project.write({"locked/a.py": "", "open/b.py": ""})
    real_scandir = os.scandir

    def scandir(path):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover([Path(".")], Settings())
    assert _names(found, project.root) == ["open/b.py"]
    assert found.errors == [("locked", "cannot read folder: Permission denied")]


def test_folder_cycle_through_a_symlink_is_walked_once(project):
    project.write({"pkg/a.py": ""})
    os.symlink("..", project.root / "pkg" / "parent")
    found = discover([Path(".")], Settings())
    assert _names(found, project.root) == ["pkg/a.py"]
    assert found.errors == [("pkg/parent", FOLDER_CYCLE)]


def test_symlinked_folder_outside_the_tree_is_followed(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "o.py").write_text("")
    os.symlink(outside, project.root / "linked")
    assert _names(discover([Path(".")], Settings()), project.root) == ["linked/o.py"]


def test_a_walk_from_a_relative_or_an_absolute_folder_excludes_the_same_files(project):
    # The walk builds an entry's path from its folder's where the folder is relative, and
    # asks each .gitignore of the chain with the entry's parts: both ways agree.
    import subprocess

    project.write(
        {
            ".gitignore": "generated/\n*_pb2.py\n",
            "pkg/.gitignore": "local.py\n/top_only.py\n",
            "pkg/a.py": "",
            "pkg/local.py": "",
            "pkg/top_only.py": "",
            "pkg/deep/top_only.py": "",
            "pkg/deep/local.py": "",
            "pkg/deep/api_pb2.py": "",
            "pkg/gen/skip.py": "",
            "pkg/gen/keep/inner.py": "",
            "generated/g.py": "",
            "tools/run.py": "",
        }
    )
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    settings = Settings(extend_exclude=("pkg/gen/*.py", "tools"))
    relative = _names(discover([Path(".")], settings), project.root)
    assert relative == ["pkg/a.py", "pkg/deep/top_only.py"]  # fnmatch's `*` crosses `/`
    assert _names(discover([project.root], settings), project.root) == relative
    assert _names(discover([Path("pkg")], settings), project.root) == relative

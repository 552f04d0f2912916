"""`synclint add-helper PACKAGE`, as a user runs it: the vendored helper is written, tested
and configured, `--fix` then calls it (not synclint), and a second run changes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, run_process, write

HOT_LOOP = (
    "import torch\n\n\n"
    "def decode(steps, lst):\n"
    "    for _ in range(steps):\n"
    '        lens = torch.tensor(lst, device="cuda")  # the lengths\n'
    "        n = int(lens.max()) + 1\n"
    "    return n\n"
)

PYPROJECT = (
    '[project]\nname = "mypkg"\n\n'
    "[tool.synclint]\n"
    'select = ["SL1", "SL2"]  # kept\n\n'
    "[tool.synclint.per-file-ignores]\n"
    '"legacy/*.py" = ["SL101"]\n'
)


def _project(root, pyproject: str | None = PYPROJECT, tests: bool = True):
    files = {"mypkg/__init__.py": "", "mypkg/loop.py": HOT_LOOP}
    if pyproject is not None:
        files["pyproject.toml"] = pyproject
    if tests:
        files["tests/__init__.py"] = ""
    write(root, files)
    return root


def _toml(path):
    from synclint.config import tomllib

    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_add_helper_then_fix_calls_the_vendored_helper(tmp_path):
    root = _project(tmp_path)
    first = run_process("add-helper", "mypkg", cwd=root)
    assert first.code == 0, first.err
    assert (root / "mypkg" / "async_h2d.py").is_file()
    assert (root / "tests" / "test_async_h2d.py").is_file()
    config = _toml(root / "pyproject.toml")["tool"]["synclint"]
    assert config["h2d-helper"] == "mypkg.async_h2d.async_tensor_h2d"
    assert config["select"] == ["SL1", "SL2"] and config["per-file-ignores"] == {"legacy/*.py": ["SL101"]}
    assert "# kept" in (root / "pyproject.toml").read_text()

    fixed_run = run_process("check", "--fix", "--output-format", "concise", "mypkg/loop.py", cwd=root)
    fixed = (root / "mypkg" / "loop.py").read_text()
    assert "from mypkg.async_h2d import async_tensor_h2d" in fixed
    assert 'lens = async_tensor_h2d(lst, device="cuda")  # the lengths' in fixed
    assert "synclint" not in fixed
    compile(fixed, "loop.py", "exec")
    # The analysis knows the helper returns a device tensor: the readback after it stays.
    assert fixed_run.code == 1 and "SL204" in fixed_run.out
    assert "Found 2 findings (1 fixed, 1 remaining)." in fixed_run.out.splitlines()
    # The vendored files themselves lint clean.
    clean = run_process("check", "mypkg/async_h2d.py", "tests/test_async_h2d.py", cwd=root)
    assert clean.code == 0, clean.out


def test_the_vendored_helper_works_on_the_cpu_and_its_test_passes(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    root = _project(tmp_path)
    assert run_process("add-helper", "mypkg", cwd=root).code == 0
    script = (
        "import torch, numpy as np\n"
        "from mypkg.async_h2d import async_tensor_h2d as h\n"
        "lst = [[1, 2], [3, 4]]\n"
        "out = h(lst, device='cpu')\n"
        "assert out.device.type == 'cpu' and torch.equal(out, torch.tensor(lst)), out\n"
        "assert h(lst).device.type == 'cpu'\n"
        "out = h([1.5, 2.5], dtype=torch.float64, device='cpu')\n"
        "assert out.dtype == torch.float64 and out.tolist() == [1.5, 2.5]\n"
        "a = np.arange(6, dtype=np.int64).reshape(2, 3)\n"
        "out = h(a, device='cpu'); a[0, 0] = 9\n"
        "assert out.tolist() == [[0, 1, 2], [3, 4, 5]] and out.dtype == torch.int64\n"
        "t = torch.ones(3, requires_grad=True)\n"
        "out = h(t, device='cpu')\n"
        "assert not out.requires_grad and out.data_ptr() != t.data_ptr()\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_async_h2d.py"],
                           cwd=root, capture_output=True, text=True, timeout=120)
    assert tests.returncode == 0 and "4 passed" in tests.stdout, tests.stdout + tests.stderr


def test_a_second_run_changes_nothing_and_says_so(tmp_path):
    root = _project(tmp_path)
    assert run_process("add-helper", "mypkg", cwd=root).code == 0
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    again = run_process("add-helper", "mypkg", cwd=root)
    assert again.code == 0
    assert "Nothing to do" in again.out and "unchanged" in again.out
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_without_a_tests_folder_or_a_synclint_table(tmp_path):
    root = _project(tmp_path, pyproject='[project]\nname = "mypkg"\n', tests=False)
    assert run_process("add-helper", "mypkg", cwd=root).code == 0
    assert (root / "mypkg" / "test_async_h2d.py").is_file()
    data = _toml(root / "pyproject.toml")
    assert data == {"project": {"name": "mypkg"}, "tool": {"synclint": {"h2d-helper": "mypkg.async_h2d.async_tensor_h2d"}}}


def test_a_project_without_pyproject_gets_one_and_src_layout_works(tmp_path):
    write(tmp_path, {"src/mypkg/__init__.py": ""})
    assert run_process("add-helper", "mypkg", cwd=tmp_path).code == 0
    assert (tmp_path / "src" / "mypkg" / "async_h2d.py").is_file()
    assert _toml(tmp_path / "pyproject.toml") == {"tool": {"synclint": {"h2d-helper": "mypkg.async_h2d.async_tensor_h2d"}}}


def test_a_different_configured_helper_is_not_clobbered(tmp_path):
    root = _project(tmp_path, pyproject='[tool.synclint]\nh2d-helper = "vllm"\n')
    result = run_process("add-helper", "mypkg", cwd=root)
    assert result.code == 2 and "already 'vllm'" in result.err
    assert (root / "pyproject.toml").read_text() == '[tool.synclint]\nh2d-helper = "vllm"\n'
    assert not (root / "mypkg" / "async_h2d.py").exists()  # nothing written when it cannot finish


def test_an_edited_helper_is_left_as_it_is(tmp_path):
    root = _project(tmp_path)
    write(root, {"mypkg/async_h2d.py": "def async_tensor_h2d(data, dtype=None, device=None):\n    ...\n"})
    result = run_process("add-helper", "mypkg", cwd=root)
    assert result.code == 0 and "left as it is" in result.out
    assert (root / "mypkg" / "async_h2d.py").read_text().endswith("    ...\n")


def test_an_unknown_package_is_an_error(tmp_path):
    result = run_process("add-helper", "nopkg", cwd=_project(tmp_path))
    assert result.code == 2 and "no folder for package `nopkg`" in result.err
    assert "h2d-helper" not in (tmp_path / "pyproject.toml").read_text()


def test_help_lists_the_command():
    assert "synclint add-helper PACKAGE" in run_process("help", cwd=REPO).out
    assert "usage: synclint add-helper" in run_process("help", "add-helper", cwd=REPO).out


@pytest.mark.parametrize(
    "data, dtype",
    [([1, 2, 3], None), ([[1.5, 2.0]], "float64"), (7, "int32"), ((True, False), None), ("ndarray", None), ("tensor", "float16")],
)
def test_the_vendored_helper_matches_synclints_runtime_helper(tmp_path, monkeypatch, data, dtype):
    """The vendored copy and `synclint.runtime.async_tensor_h2d` agree on the CPU (values,
    dtype, device), so the two cannot drift apart unnoticed."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    from synclint.addhelper import HELPER_SOURCE, FUNCTION
    from synclint.runtime import async_tensor_h2d

    namespace: dict = {}
    exec(compile(HELPER_SOURCE.format(function=FUNCTION), "async_h2d.py", "exec"), namespace)
    vendored = namespace[FUNCTION]
    if data == "ndarray":
        data = np.arange(4, dtype=np.float32)
    elif data == "tensor":
        data = torch.arange(3.0)
    dt = getattr(torch, dtype) if dtype else None
    for device in (None, "cpu"):
        ours, theirs = vendored(data, dtype=dt, device=device), async_tensor_h2d(data, dtype=dt, device=device)
        assert ours.dtype == theirs.dtype and ours.device == theirs.device and torch.equal(ours, theirs)

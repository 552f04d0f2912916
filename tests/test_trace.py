"""The runtime tracer without a GPU: the program runs unchanged, events (fed through the
real warning path and wrappers) are blamed on the right line of user code, regions are per
thread, and the hooks leave nothing behind."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import threading
import warnings
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from synclint.trace import TraceReport, allowed, hooks, watch  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
SYNC_TEXT = hooks.SYNC_WARNING_TEXT


def _trace(tmp_path, program: str, *args: str, prog_args=()):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(program))
    return subprocess.run(
        [sys.executable, "-m", "synclint.trace", *args, "--", "python", str(script), *prog_args],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )


@pytest.mark.skipif(HAS_CUDA, reason="checks the no-CUDA path; this machine has a CUDA device")
def test_without_cuda_the_program_runs_unchanged_and_nothing_is_recorded(tmp_path):
    run = _trace(
        tmp_path,
        """\
        import sys
        print("args", sys.argv[1:])
        print("to stderr", file=sys.stderr)
        sys.exit(7)
        """,
        "--json", "trace.json",
        prog_args=("a", "--b"),
    )
    assert run.returncode == 7
    assert run.stdout == "args ['a', '--b']\n"
    assert run.stderr.splitlines()[0] == "synclint trace: no CUDA device present: running the program without tracing; nothing recorded"
    assert run.stderr.splitlines()[1:] == ["to stderr"]
    report = json.loads((tmp_path / "trace.json").read_text())
    assert report["cuda"] is False and report["sites"] == [] and report["exit_code"] == 7


def test_uncaught_exception_exits_1_with_the_programs_traceback(tmp_path):
    run = _trace(tmp_path, "def f():\n    raise KeyError('boom')\nf()\n", "--quiet")
    assert run.returncode == 1
    assert "KeyError: 'boom'" in run.stderr
    assert 'prog.py", line 2, in f' in run.stderr
    assert "runpy" not in run.stderr


def test_sys_exit_with_a_message_and_module_form(tmp_path):
    run = _trace(tmp_path, "import sys\nsys.exit('bad input')\n", "--quiet")
    assert run.returncode == 1 and run.stderr.rstrip().endswith("bad input")
    (tmp_path / "mymod.py").write_text("import sys\nprint('mod', __name__, sys.argv[1:])\n")
    run = subprocess.run([sys.executable, "-m", "synclint.trace", "-q", "--", "python", "-m", "mymod", "x"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == "mod __main__ ['x']\n"


def test_missing_program_is_a_usage_error(tmp_path):
    run = subprocess.run([sys.executable, "-m", "synclint.trace", "--", "python", str(tmp_path / "nope.py")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "no such file" in run.stderr


def _user_module(tmp_path, source: str, name: str = "user_code"):
    """Code on disk, outside torch and synclint: what the tracer blames."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def test_debug_mode_warning_is_blamed_on_the_user_line_and_kept_off_stderr(tmp_path, capsys):
    mod, path = _user_module(
        tmp_path,
        f"""\
        import warnings

        def step():
            warnings.warn({SYNC_TEXT!r})
        """,
    )
    with watch() as report:
        mod.step()
        mod.step()
    assert [(s.file, s.line, s.function, s.kind, s.count, s.untimed) for s in report.sites] == [(path, 4, "step", "sync", 2, 2)]
    assert SYNC_TEXT not in capsys.readouterr().err


def test_a_sync_inside_a_wrapped_call_gets_its_op_name_and_host_time(tmp_path):
    def fake_readback():  # stands for a torch op that blocks, then PyTorch warns
        import time

        time.sleep(0.02)
        warnings.warn(SYNC_TEXT)
        return 1

    timed = hooks._timed("Tensor.fake_readback", fake_readback)
    mod, path = _user_module(tmp_path, "def step(op):\n    x = 1\n    return op()\n")
    with watch() as report:
        assert mod.step(timed) == 1
    (site,) = report.sites
    assert (site.file, site.line, site.op, site.kind) == (path, 3, "Tensor.fake_readback", "sync")
    assert site.untimed == 0 and 0.015 < site.blocked_s < 1.0


def test_other_warnings_still_reach_the_user():
    with watch():
        with pytest.warns(UserWarning, match="unrelated"):
            warnings.warn("unrelated")


def test_regions_are_per_thread(tmp_path):
    mod, path = _user_module(
        tmp_path,
        f"""\
        import warnings

        def sync():
            warnings.warn({SYNC_TEXT!r})
        """,
    )
    in_region, release = threading.Event(), threading.Event()

    def background():
        mod.sync()  # not the watching thread: neither recorded nor counted
        from synclint.trace import allowed as bg_allowed

        with bg_allowed():
            in_region.set()
            release.wait(10)

    thread = threading.Thread(target=background, name="bg")
    with watch() as report:
        thread.start()
        in_region.wait(10)
        mod.sync()  # the background thread's allowed() must not silence this one
        release.set()
        thread.join(10)
        with allowed():
            mod.sync()
    assert [(s.line, s.count, s.threads) for s in report.sites] == [(4, 1, ["MainThread"])]
    assert report.allowed == 1


def test_all_threads_watch_records_every_thread(tmp_path):
    mod, _ = _user_module(tmp_path, f"import warnings\n\ndef sync():\n    warnings.warn({SYNC_TEXT!r})\n", "user_all")
    with watch(all_threads=True) as report:
        thread = threading.Thread(target=mod.sync, name="worker")
        thread.start()
        thread.join(10)
        mod.sync()
    (site,) = report.sites
    assert site.count == 2 and sorted(site.threads) == ["MainThread", "worker"]


def test_hooks_are_removed_when_the_last_watch_ends():
    before = (warnings._showwarnmsg, list(warnings.filters), torch.Tensor.to, torch.cuda.synchronize, torch.Tensor.__format__)
    with watch():
        with watch():
            assert torch.Tensor.to is not before[2]
        assert torch.Tensor.to is not before[2]  # the outer watch still needs the hooks
    after = (warnings._showwarnmsg, list(warnings.filters), torch.Tensor.to, torch.cuda.synchronize, torch.Tensor.__format__)
    assert after == before
    assert "to" not in torch.Tensor.__dict__  # not copied down from the C base class


def _tensor(device: str, mib: float, pinned=False, contiguous=True):
    numel = int(mib * 2**20 / 4)
    return SimpleNamespace(device=SimpleNamespace(type=device), numel=lambda: numel, element_size=lambda: 4,
                           is_pinned=lambda: pinned, is_contiguous=lambda: contiguous)


@pytest.mark.parametrize(
    "src, kwargs, expected",
    [
        (_tensor("cpu", 8), {"non_blocking": True}, "pageable-copy"),
        (_tensor("cpu", 8), {}, None),  # blocking: sync debug mode reports it
        (_tensor("cpu", 0.01), {"non_blocking": True}, None),  # small: did not stall
        (_tensor("cpu", 8, pinned=True), {"non_blocking": True}, None),
        (_tensor("cpu", 8, pinned=True, contiguous=False), {"non_blocking": True}, "pageable-copy"),
    ],
)
def test_classify_h2d_to(src, kwargs, expected):
    kind, _ = hooks.classify_to((src, "cuda"), kwargs, _tensor("cuda", 8))
    assert kind == expected


def test_classify_copy_into_pageable_memory_at_any_size():
    assert hooks.classify_copy((_tensor("cpu", 0.001), _tensor("cuda", 0.001), True), {}, None)[0] == "pageable-copy"
    assert hooks.classify_copy((_tensor("cpu", 0.001, pinned=True), _tensor("cuda", 0.001)), {"non_blocking": True}, None)[0] is None
    assert hooks.classify_copy((_tensor("cuda", 8), _tensor("cpu", 8)), {"non_blocking": True}, None)[0] == "pageable-copy"


def test_report_round_trips_through_json(tmp_path):
    report = TraceReport(program=["python", "x.py"], cuda=True, device="gpu")
    from synclint.trace.events import SyncEvent

    report.add(SyncEvent("sync", "Tensor.item", "/a.py", 3, "f", "MainThread", 0.5))
    report.add(SyncEvent("sync", "Tensor.item", "/a.py", 3, "f", "T2", None))
    report.write(tmp_path / "t.json")
    again = TraceReport.read(tmp_path / "t.json")
    (site,) = again.sites
    assert (site.count, site.blocked_s, site.untimed, site.threads) == (2, 0.5, 1, ["MainThread", "T2"])
    assert "2 synchronizing calls at 1 site" in again.summary()


def test_compare_after_a_run_lists_the_scripts_static_findings(tmp_path):
    run = _trace(
        tmp_path,
        """\
        import torch


        def _prepare_inputs(token_ids, device):
            return torch.tensor(token_ids, dtype=torch.long, device=device)


        print("ran")
        """,
        "--compare",
    )
    assert run.returncode == 0 and run.stdout == "ran\n"
    assert "Runtime only (0)" in run.stderr
    assert "Static only (1)" in run.stderr and "prog.py:5:12: SL101" in run.stderr


def test_min_copy_bytes_zero_reports_every_pageable_h2d_copy(monkeypatch):
    small = (_tensor("cpu", 0.01), "cuda")
    assert hooks.classify_to(small, {"non_blocking": True}, _tensor("cuda", 0.01))[0] is None
    monkeypatch.setattr(hooks, "pageable_h2d_report_bytes", 0)
    assert hooks.classify_to(small, {"non_blocking": True}, _tensor("cuda", 0.01))[0] == "pageable-copy"

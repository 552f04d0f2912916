"""Run one command and measure it: wall time, CPU time, peak memory, the load around it.

Peak memory is measured three ways, because a linter that forks workers uses several
processes at once: the largest single process (ru_maxrss, what `/usr/bin/time -v` prints),
and the largest sum over the whole process tree at any moment (sampled from /proc), summed
two ways. The sum of the processes' resident sets (RSS) counts a page that forked workers
share with their parent (the interpreter, the imported modules) once per process. The sum of
their proportional sets (PSS, /proc/<pid>/smaps_rollup) counts each shared page once, split
between the processes that share it: the memory the tree takes from the machine.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measurement:
    name: str
    wall_s: float
    cpu_s: float
    peak_process_mib: float  # the largest single process
    peak_tree_mib: float  # the largest sum of RSS over the process tree (sampled every 250 ms)
    load_before: float  # 1-minute load average just before
    load_after: float
    returncode: int
    peak_tree_pss_mib: float = 0.0  # the largest sum of PSS over the process tree (0: not measured)


def _pss(pid: int) -> int:
    """Bytes of the process's proportional set size, or 0 where the kernel does not say."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree_memory(root: int) -> tuple[int, int]:
    """Bytes resident in `root` and all its descendants now: (RSS summed, PSS summed)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
            with open(f"/proc/{pid}/statm", "rb") as handle:
                statm = handle.read().split()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        parents[pid] = int(fields[1])
        rss[pid] = int(statm[1]) * PAGE
    total, proportional, stack = 0, 0, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    while stack:
        pid = stack.pop()
        if pid in rss:
            total += rss[pid]
            proportional += _pss(pid)
        stack.extend(children.get(pid, ()))
    return total, proportional


class _TreeSampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak = 0  # RSS summed
        self.peak_pss = 0  # PSS summed
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                rss, pss = _tree_memory(self.pid)
                self.peak, self.peak_pss = max(self.peak, rss), max(self.peak_pss, pss)
            except OSError:
                pass
            self.done.wait(self.interval)


def run(name: str, argv: list[str], cwd: Path, output: Path, env: dict | None = None, timeout: float | None = None) -> Measurement:
    """Run argv with stdout/stderr to `output`; measure it."""
    load_before = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(output, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        sampler = _TreeSampler(proc.pid)
        sampler.start()
        # wait4 gives this child's own rusage: ru_maxrss of its largest process.
        try:
            _, status, usage = os.wait4(proc.pid, 0) if timeout is None else _wait_with_timeout(proc, timeout)
        finally:
            sampler.done.set()
            sampler.join()
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status) if status is not None else -9
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_process = usage.ru_maxrss / 1024 if usage is not None else 0.0  # KiB -> MiB
    return Measurement(name, wall, cpu, peak_process, max(sampler.peak / 2**20, peak_process), load_before,
                       os.getloadavg()[0], proc.returncode, sampler.peak_pss / 2**20)


def _wait_with_timeout(proc: subprocess.Popen, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return pid, status, usage
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and any workers it started
            pid, status, usage = os.wait4(proc.pid, 0)
            return pid, None, usage
        time.sleep(0.1)

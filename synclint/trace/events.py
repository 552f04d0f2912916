"""What the tracer records: one `SyncEvent` per synchronizing call, folded into `Site`s
(one per source line, kind and operation) in a `TraceReport` that reads and writes JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Event kinds. "sync": PyTorch's sync debug mode reported it. "pageable-copy": a
# non_blocking copy between pageable host memory and the device, which debug mode misses
# although it waits for the queue (>= ~4 MiB H2D, any size D2H). "explicit-sync":
# torch.cuda.synchronize / Event.synchronize / Stream.synchronize.
SYNC, PAGEABLE_COPY, EXPLICIT_SYNC = "sync", "pageable-copy", "explicit-sync"
KINDS = (SYNC, PAGEABLE_COPY, EXPLICIT_SYNC)

REPORT_VERSION = 1


@dataclass(frozen=True)
class SyncEvent:
    kind: str
    op: str  # what was called: "Tensor.item", "torch.cuda.synchronize", "Tensor.copy_"
    filename: str  # the innermost frame in the user's code
    line: int
    function: str
    thread: str
    blocked_s: float | None  # host time spent in the call; None when it could not be timed
    detail: str = ""  # "H2D 8.0 MiB from pageable memory"


@dataclass
class Site:
    file: str
    line: int
    function: str
    kind: str
    op: str
    count: int = 0
    blocked_s: float = 0.0  # total over the timed events
    untimed: int = 0  # events whose blocked time is unknown
    threads: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def key(self) -> tuple:
        return (self.file, self.line, self.kind, self.op)


@dataclass
class TraceReport:
    program: list[str] = field(default_factory=list)
    cuda: bool = False
    device: str | None = None
    sites: list[Site] = field(default_factory=list)
    allowed: int = 0  # events inside `allowed()` regions: counted, not reported
    exit_code: int | None = None

    @property
    def events(self) -> int:
        return sum(s.count for s in self.sites)

    def add(self, event: SyncEvent) -> None:
        key = (event.filename, event.line, event.kind, event.op)
        site = self._index().get(key)
        if site is None:
            site = Site(event.filename, event.line, event.function, event.kind, event.op, detail=event.detail)
            self.sites.append(site)
            self._by_key[key] = site
        site.count += 1
        if event.blocked_s is None:
            site.untimed += 1
        else:
            site.blocked_s += event.blocked_s
        if event.thread not in site.threads:
            site.threads.append(event.thread)

    def _index(self) -> dict:
        index = getattr(self, "_by_key", None)
        if index is None or len(index) != len(self.sites):
            index = self._by_key = {s.key: s for s in self.sites}
        return index

    def sorted_sites(self) -> list[Site]:
        """Most blocking first, then most frequent."""
        return sorted(self.sites, key=lambda s: (-s.blocked_s, -s.count, s.file, s.line))

    def to_json(self) -> dict:
        return {
            "version": REPORT_VERSION,
            "program": self.program,
            "cuda": self.cuda,
            "device": self.device,
            "exit_code": self.exit_code,
            "events": self.events,
            "allowed": self.allowed,
            "sites": [asdict(s) for s in self.sorted_sites()],
        }

    def write(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, data: dict) -> TraceReport:
        if not isinstance(data, dict) or "sites" not in data:
            raise ValueError("not a `synclint trace --json` report (no `sites`)")
        report = cls(
            program=list(data.get("program") or []),
            cuda=bool(data.get("cuda")),
            device=data.get("device"),
            allowed=int(data.get("allowed") or 0),
            exit_code=data.get("exit_code"),
        )
        fields = Site.__dataclass_fields__
        for raw in data["sites"]:
            report.sites.append(Site(**{k: v for k, v in raw.items() if k in fields}))
        return report

    @classmethod
    def read(cls, path: Path) -> TraceReport:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def summary(self, limit: int = 20) -> str:
        """A few lines for the terminal: the heaviest sites first."""
        if not self.cuda:
            return "no CUDA device present: nothing recorded"
        sites = self.sorted_sites()
        total_ms = sum(s.blocked_s for s in sites) * 1e3
        head = f"{self.events} synchronizing call{'s' * (self.events != 1)} at {len(sites)} site{'s' * (len(sites) != 1)}, {total_ms:.1f} ms host time blocked"
        if self.allowed:
            head += f" ({self.allowed} more inside allowed() regions)"
        lines = [head]
        for s in sites[:limit]:
            lines.append(f"  {format_site(s)}")
        if len(sites) > limit:
            lines.append(f"  ... and {len(sites) - limit} more (see --json)")
        return "\n".join(lines)


def format_site(s: Site) -> str:
    timed = s.count - s.untimed
    blocked = f"{s.blocked_s * 1e3:.2f} ms" if timed else "time unknown"
    detail = f"; {s.detail}" if s.detail else ""
    return f"{s.file}:{s.line}: {s.kind} {s.op} x{s.count}, {blocked} (in {s.function}){detail}"

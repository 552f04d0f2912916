"""The runtime tracer: run a program, record the syncs that happen, tie them to the static
findings. `synclint trace -- python script.py`, or in code:

    with synclint.trace.watch() as report:
        step()
    with synclint.trace.allowed():
        torch.cuda.synchronize()  # intentional
"""

from synclint.trace.events import Site, SyncEvent, TraceReport
from synclint.trace.regions import allowed, watch

__all__ = ["Site", "SyncEvent", "TraceReport", "allowed", "watch"]

"""The repository index alone (synclint/repo/): build it for a tree and say how big it is.

Usage: index_build.py ROOT [--jobs N]

Reads SYNCLINT_INDEX_DIR (the store of per-file summaries) like synclint does: an empty
store is a cold build, a filled one a warm build. Prints the files read, the facts solved,
the call-graph size, the store's size on disk, the peak memory of this process (the parent:
the summaries of every file are joined here) and the time.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path


def _folder_bytes(folder: str) -> int:
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(base, name))
            except OSError:
                pass
    return total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    from synclint import repo

    start = time.perf_counter()
    root = Path(args.root).resolve()
    facts = repo.build(root, use_cache=True, jobs=args.jobs)
    took = time.perf_counter() - start
    files = len(repo.python_files(root))
    edges = sum(len(c) for c in facts.callers.values())
    store = _folder_bytes(str(repo.store_folder()))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"index: {files} files, {len(facts.values)} facts, {len(facts.callers)} called functions ({edges} call edges), "
          f"store {store / 2**20:.1f} MiB, parent peak {peak:.0f} MiB, {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

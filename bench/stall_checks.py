"""Measure whether single indexing snippets make the host wait for the GPU, by the method of
`synclint prove` (synclint/prove/measure.py: a sleep kernel queued first, the snippet timed
on the host, the sleep's event queried at once; STALL, CLEAN or UNCLEAR).

Run on a CUDA machine; writes a JSON list of {name, code, verdict, ratio, sync_debug_mode}:

    python bench/stall_checks.py --json out.json

Each case is a question a rule's look-alike depends on (docs/gpu-facts.md): the controls
(an integer CPU index) must read STALL for the others' CLEAN to mean anything.
"""

from __future__ import annotations

import argparse
import json
import sys


def cases(torch, device):
    n, k = 4096, 64
    table = torch.arange(n * k, device=device, dtype=torch.int32).view(n, k)
    lens = torch.arange(n, device=device)
    draft_cpu = torch.randint(-1, 4, (n,))
    starts_cpu = torch.arange(n + 1, dtype=torch.int32)
    idx_cpu = torch.randperm(n)[: n // 2]

    def narrowed_mask():
        mask = draft_cpu >= 0
        mask |= starts_cpu.diff() > 0
        mask &= starts_cpu.diff() <= 3
        return mask

    return [
        ("1-D gather by a CPU bool mask", "lens[mask_cpu]", lambda: lens[draft_cpu >= 0]),
        ("rows of a 2-D table by a CPU bool mask and a slice", "table[mask_cpu, :k]",
         lambda: table[draft_cpu >= 0, : k // 2]),
        ("a CPU bool mask narrowed in place (|=, &=), then indexing", "table[mask_cpu, :k] after mask |= ...; mask &= ...",
         lambda: table[narrowed_mask(), : k // 2]),
        ("a CPU bool mask and an integer", "table[mask_cpu, 0]", lambda: table[draft_cpu >= 0, 0]),
        ("control: rows by an integer CPU index", "table[idx_cpu, :k]", lambda: table[idx_cpu, : k // 2]),
        ("control: 1-D gather by an integer CPU index", "lens[idx_cpu]", lambda: lens[idx_cpu]),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="-", help="where to write the results (default: stdout)")
    args = parser.parse_args(argv)
    import torch

    from synclint.prove.measure import measure

    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    results = []
    for name, code, fn in cases(torch, torch.device("cuda")):
        m = measure(fn, torch)
        results.append({"name": name, "code": code, "verdict": m.verdict,
                        "ratio": None if m.stall_ratio is None else round(m.stall_ratio, 3),
                        "sync_debug_mode": m.sync_debug_mode, "error": m.error})
        print(f"{m.verdict:8} {results[-1]['ratio']!s:>6}  {code}")
    text = json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": results}, indent=1)
    if args.json == "-":
        print(text)
    else:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

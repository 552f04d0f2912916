"""Runtime truth: trace released model code on a GPU, then measure what synclint finds
statically at the lines where syncs really happened.

    python bench/runtime_truth/run.py --out DIR [--models mixtral,whisper,...] [--args "..."]
    python bench/runtime_truth/run.py --out DIR --trace-only       # the GPU part alone
    python bench/runtime_truth/run.py --out DIR --rescore DIR/runtime_truth.json

For each model (models.py): build it from a small config with random weights, run its warm-up
steps, then trace its steady-state steps with `synclint.trace.watch()`. Every site the tracer
reports in the library's own code (transformers or diffusers) is a true steady-state sync site.
synclint then checks the files those sites are in (and the model's own file), the way a user
would run it (`python -m synclint check --output-format json`, default settings unless
`--args` says otherwise), and a site counts as found when a finding in that file spans its line.
Writes DIR/runtime_truth.json and DIR/runtime_truth.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import models  # noqa: E402
import synclint.trace  # noqa: E402


def package_root(name: str) -> Path:
    mod = __import__(name)
    return Path(mod.__file__).resolve().parent


def trace_model(key: str, device: str) -> dict:
    w = models.BUILDERS[key](device)
    for _ in range(w.warmup):
        w.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with synclint.trace.watch() as report:
        for _ in range(w.steps):
            w.step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    root = package_root(w.package)
    lib, other = [], []
    for s in report.sorted_sites():
        path = Path(s.file).resolve()
        entry = {"file": str(path), "line": s.line, "function": s.function, "kind": s.kind, "op": s.op,
                 "count": s.count, "per_step": s.count / w.steps, "detail": s.detail}
        if root in path.parents:
            entry["rel"] = str(path.relative_to(root.parent))
            lib.append(entry)
        else:
            other.append(entry)
    return {"key": key, "name": w.name, "family": w.family, "package": w.package, "steps": w.steps,
            "seconds": round(elapsed, 3), "sites": lib, "driver_sites": other}


def static_findings(files: list[str], cwd: Path, extra: list[str]) -> list[dict]:
    if not files:
        return []
    cmd = [sys.executable, "-m", "synclint", "check", "--output-format", "json", "--exit-zero", "--no-cache",
           *extra, *files]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"synclint gave no JSON (exit {p.returncode}): {p.stderr[-2000:]}")


def score(result: dict, extra: list[str]) -> None:
    root = package_root(result["package"]).parent
    for s in result["sites"]:  # where the package is installed here (a re-score may run elsewhere)
        s["file"] = str(root / s["rel"])
    files = sorted({s["file"] for s in result["sites"]})
    t0 = time.perf_counter()
    found = static_findings(files, root, extra)
    result["static_seconds"] = round(time.perf_counter() - t0, 2)
    spans: dict[str, list] = {}
    for f in found:
        path = str((root / f["filename"]).resolve()) if not os.path.isabs(f["filename"]) else str(Path(f["filename"]).resolve())
        end = (f.get("end_location") or f["location"])["row"]
        spans.setdefault(path, []).append((f["location"]["row"], end, f["code"], f.get("confidence")))
    for s in result["sites"]:
        hits = [c for lo, hi, c, _ in spans.get(s["file"], ()) if lo <= s["line"] <= hi]
        s["found_by"] = sorted(set(hits))
    result["static_findings"] = len(found)
    n = len(result["sites"])
    result["found"] = sum(bool(s["found_by"]) for s in result["sites"])
    result["recall"] = (result["found"] / n) if n else None


def line_text(path: str, line: int) -> str:
    try:
        return Path(path).read_text(errors="replace").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def markdown(results: list[dict], meta: dict) -> str:
    out = ["# Runtime truth", "",
           f"Device: {meta['device']}; torch {meta['torch']}; transformers {meta['transformers']}; "
           f"diffusers {meta['diffusers']}; synclint options: `{meta['args'] or '(defaults)'}`.", "",
           "| model | family | steady-state sync sites | found statically | recall | syncs per step |",
           "|---|---|---|---|---|---|"]
    tot_n = tot_f = 0
    for r in results:
        if "error" in r:
            out.append(f"| {r['key']} | - | error: {r['error'][:80]} | | | |")
            continue
        n, f = len(r["sites"]), r["found"]
        tot_n, tot_f = tot_n + n, tot_f + f
        per_step = sum(s["per_step"] for s in r["sites"])
        rec = f"{f / n:.0%}" if n else "-"
        out.append(f"| {r['name']} | {r['family']} | {n} | {f} | {rec} | {per_step:g} |")
    if tot_n:
        out.append(f"| **all** | | {tot_n} | {tot_f} | **{tot_f / tot_n:.0%}** | |")
    out.append("")
    for r in results:
        if "error" in r or not r["sites"]:
            continue
        out.append(f"## {r['name']}")
        out.append("")
        out.append("| site | op | per step | found by | line |")
        out.append("|---|---|---|---|---|")
        for s in r["sites"]:
            by = ", ".join(s["found_by"]) or "**missed**"
            text = line_text(s["file"], s["line"]).replace("|", "\\|")[:90]
            out.append(f"| `{s['rel']}:{s['line']}` | {s['op']} | {s['per_step']:g} | {by} | `{text}` |")
        if r["driver_sites"]:
            out.append("")
            out.append(f"Syncs in the driver script itself (not counted): {len(r['driver_sites'])}")
        out.append("")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(models.DEFAULT))
    ap.add_argument("--args", default="", help="extra options for `synclint check`")
    ap.add_argument("--rescore", help="score an earlier runtime_truth.json again (no GPU needed)")
    ap.add_argument("--trace-only", action="store_true",
                    help="trace and write the sites, unscored (score them later with --rescore)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    extra = shlex.split(a.args)
    if a.rescore:
        data = json.loads(Path(a.rescore).read_text())
        results, meta = data["results"], data["meta"]
    else:
        if not torch.cuda.is_available():
            print("runtime truth needs a CUDA device", file=sys.stderr)
            return 2
        import transformers
        try:
            import diffusers
            dver = diffusers.__version__
        except ImportError:
            dver = "absent"
        meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "transformers": transformers.__version__, "diffusers": dver}
        results = []
        for key in a.models.split(","):
            try:
                results.append(trace_model(key, "cuda"))
            except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the rest run
                traceback.print_exc()
                results.append({"key": key, "error": repr(exc)})
            torch.cuda.empty_cache()
    meta["args"] = a.args
    if a.trace_only:
        (out / "runtime_truth.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
        for r in results:
            print(r["key"], r.get("error") or f"{len(r['sites'])} sites")
        return 0
    for r in results:
        if "error" not in r:
            score(r, extra)
    (out / "runtime_truth.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    (out / "runtime_truth.md").write_text(markdown(results, meta))
    print(markdown(results, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Proof on real model code: released transformers / diffusers model code, fixed by
`synclint --fix`, run on a GPU before and after.

    python bench/real_models/run.py --out DIR [--models gemma3n,ddim_unet,...] [--reps 5] [--work DIR]

For each model (MODELS below):

1. The modules its per-step path runs through are copied and fixed the way a user would:
   `python -m synclint check --fix` (safe fixes, default settings), and a second copy with
   `--unsafe-fixes` too. The diff is kept; a fixed file that imports synclint is a failure.
2. Each fixed copy is loaded as a sibling of the installed module (`<module>__synclint_safe`),
   so its relative imports resolve into the installed package, and the model is built from
   its classes with the original model's weights (random, from a config: nothing is
   downloaded).
3. Per variant (original, safe, unsafe): syncs per step, counted twice, by
   `torch.cuda.set_sync_debug_mode("warn")` (its warnings) and by `synclint.trace.watch()`;
   the step's outputs compared bit for bit with the original's (`torch.equal`, same seed);
   and the step time in a GPU-bound setting: `reps` rounds, each timing every variant
   (`steps` steps between two synchronizations) in a rotated order, so the variants are
   interleaved in one process; ms/step is the median over rounds, and the ratio
   original/variant is the median of the per-round ratios.

Writes DIR/real_models.json and DIR/real_models.md.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

REPO = Path(__file__).resolve().parents[2]
VARIANTS = ("original", "safe", "unsafe")


@dataclass
class Model:
    name: str
    package: str
    modules: tuple[str, ...]  # modules whose fixed copies the variant is built from
    build: Callable  # build(mods: dict[str, module], device, base=None) -> (object, step())
    steps: int  # steps per timing
    regime: str  # what keeps the GPU busy


# --- fixing ----------------------------------------------------------------------------


def fix_copy(module: str, out: Path, unsafe: bool) -> dict:
    """Copy `module`'s file under `out`, run `synclint check --fix` on the copy, return the
    copy's path, the diff and the number of fixes."""
    src = Path(importlib.import_module(module).__file__)
    folder = out / ("unsafe" if unsafe else "safe") / module.replace(".", "_")
    folder.mkdir(parents=True, exist_ok=True)
    dst = folder / src.name
    original = src.read_text(encoding="utf-8")
    dst.write_text(original, encoding="utf-8")
    cmd = [sys.executable, "-m", "synclint", "check", "--fix", "--exit-zero", "--no-cache", "--output-format", "concise"]
    if unsafe:
        cmd.append("--unsafe-fixes")
    proc = subprocess.run([*cmd, str(dst)], capture_output=True, text=True, cwd=folder)
    fixed = dst.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(original.splitlines(True), fixed.splitlines(True), src.name, src.name + " (fixed)", n=0))
    summary = next((line for line in reversed(proc.stdout.splitlines()) if line.startswith("Found")), "no findings")
    imports_synclint = any(line.startswith(("import synclint", "from synclint")) for line in fixed.splitlines())
    return {"module": module, "path": str(dst), "diff": diff, "summary": summary, "rc": proc.returncode,
            "stderr": proc.stderr[-2000:], "imports_synclint": imports_synclint}


def load_sibling(module: str, path: str, tag: str):
    """Load the fixed file as `<module>__synclint_<tag>`, a sibling of the original: its
    relative imports (`from ...cache_utils import ...`) resolve into the installed package."""
    name = f"{module}__synclint_{tag}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# --- models ----------------------------------------------------------------------------


def _decode_step(model, ids, decode_steps: int):
    """Prefill, then greedy decode steps with the cache; everything stays on the device.
    Returns the logits of every step (what is compared bit for bit)."""

    def step():
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
            logits = [out.logits[:, -1]]
            for _ in range(decode_steps):
                nxt = out.logits[:, -1:].argmax(-1)
                out = model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
                logits.append(out.logits[:, -1])
            return torch.stack(logits)

    return step


def build_gemma3n(mods, device, base=None):
    mod = mods["transformers.models.gemma3n.modeling_gemma3n"]
    from transformers import Gemma3nTextConfig

    cfg = Gemma3nTextConfig(vocab_size=4096, vocab_size_per_layer_input=4096, hidden_size=1024,
                            hidden_size_per_layer_input=64, intermediate_size=4096, num_hidden_layers=4,
                            num_attention_heads=8, num_key_value_heads=2, head_dim=128, num_kv_shared_layers=2,
                            laurel_rank=32, altup_num_inputs=4, sliding_window=256,
                            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                            activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0], max_position_embeddings=2048)
    torch.manual_seed(0)
    with torch.device(device):
        model = mod.Gemma3nForCausalLM(cfg).eval()
    if base is not None:
        model.load_state_dict(base[0].state_dict())
    ids = torch.randint(0, cfg.vocab_size, (64, 128), device=device, generator=torch.Generator(device).manual_seed(1))
    return model, _decode_step(model, ids, 8)


def _unet(device):
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    with torch.device(device):
        return UNet2DConditionModel(sample_size=64, in_channels=4, out_channels=4, layers_per_block=1,
                                    block_out_channels=(128, 256), cross_attention_dim=256, attention_head_dim=32,
                                    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")).eval()


def _denoise(unet, make_scheduler, device, steps: int):
    text = torch.randn(8, 77, 256, device=device, generator=torch.Generator(device).manual_seed(2))

    def step():
        with torch.no_grad():
            sched = make_scheduler()
            sched.set_timesteps(steps, device=device)
            latents = torch.randn(8, 4, 64, 64, device=device, generator=torch.Generator(device).manual_seed(3))
            for t in sched.timesteps:
                noise = unet(latents, t, encoder_hidden_states=text).sample
                latents = sched.step(noise, t, latents).prev_sample
            return latents

    return step


def build_ddim_unet(mods, device, base=None):
    mod = mods["diffusers.schedulers.scheduling_ddim"]
    unet = base[0] if base is not None else _unet(device)
    return unet, _denoise(unet, lambda: mod.DDIMScheduler(num_train_timesteps=1000), device, 10)


def build_euler_unet(mods, device, base=None):
    mod = mods["diffusers.schedulers.scheduling_euler_discrete"]
    unet = base[0] if base is not None else _unet(device)
    return unet, _denoise(unet, lambda: mod.EulerDiscreteScheduler(num_train_timesteps=1000), device, 10)


MODELS = {
    "gemma3n": Model("Gemma3n text decoder (transformers)", "transformers",
                     ("transformers.models.gemma3n.modeling_gemma3n",), build_gemma3n, 2,
                     "prefill 64x128 tokens + 8 greedy decode steps at batch 64, fp32, no CUDA graphs"),
    "ddim_unet": Model("UNet2DCondition + DDIM scheduler (diffusers)", "diffusers",
                       ("diffusers.schedulers.scheduling_ddim",), build_ddim_unet, 1,
                       "10 denoise steps of a 64x64 latent at batch 8, fp32"),
    "euler_unet": Model("UNet2DCondition + Euler discrete scheduler (diffusers)", "diffusers",
                        ("diffusers.schedulers.scheduling_euler_discrete",), build_euler_unet, 1,
                        "10 denoise steps of a 64x64 latent at batch 8, fp32"),
}


# --- measuring ---------------------------------------------------------------------------


def count_syncs(step, steps: int) -> dict:
    """Syncs per step: sync debug mode's warnings, and the tracer's sites."""
    import synclint.trace

    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for _ in range(steps):
                step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    debug = sum("synchroniz" in str(w.message) for w in caught)
    torch.cuda.synchronize()
    with synclint.trace.watch() as report:
        for _ in range(steps):
            step()
    torch.cuda.synchronize()
    sites = [{"file": Path(s.file).name, "line": s.line, "op": s.op, "per_step": s.count / steps} for s in report.sorted_sites()]
    return {"debug_mode_per_step": debug / steps, "trace_per_step": sum(s["per_step"] for s in sites), "trace_sites": sites}


def time_interleaved(steps_by_variant: dict, steps: int, reps: int) -> dict:
    names = list(steps_by_variant)
    ms = {n: [] for n in names}
    for r in range(reps):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            step = steps_by_variant[n]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            ms[n].append((time.perf_counter() - t0) * 1e3 / steps)
    out = {n: {"ms_per_step": round(statistics.median(v), 3), "rounds": [round(x, 3) for x in v]} for n, v in ms.items()}
    for n in names[1:]:
        ratios = [a / b for a, b in zip(ms[names[0]], ms[n])]
        out[n]["speedup_median"] = round(statistics.median(ratios), 4)
        out[n]["speedup_min"] = round(min(ratios), 4)
        out[n]["speedup_max"] = round(max(ratios), 4)
    return out


def run_model(key: str, work: Path, reps: int) -> dict:
    m = MODELS[key]
    device = "cuda"
    result = {"key": key, "name": m.name, "package": m.package, "regime": m.regime, "fixes": {}}
    mods = {v: {} for v in VARIANTS}
    for module in m.modules:
        mods["original"][module] = importlib.import_module(module)
        for tag in ("safe", "unsafe"):
            info = fix_copy(module, work / key, unsafe=tag == "unsafe")
            result["fixes"].setdefault(tag, []).append({k: v for k, v in info.items() if k != "path"})
            mods[tag][module] = load_sibling(module, info["path"], tag)
    built = {}
    base = None
    for v in VARIANTS:
        built[v] = m.build(mods[v], device, base)
        if base is None:
            base = built[v]
    steps = {v: built[v][1] for v in VARIANTS}
    # Warm up and compare outputs bit for bit (same seeds, same weights).
    outputs = {}
    for v in VARIANTS:
        steps[v]()
        torch.manual_seed(123)
        outputs[v] = steps[v]()
    torch.cuda.synchronize()
    result["bit_identical"] = {v: bool(torch.equal(outputs["original"], outputs[v])) for v in VARIANTS[1:]}
    result["syncs"] = {v: count_syncs(steps[v], m.steps) for v in VARIANTS}
    result["timing"] = time_interleaved(steps, m.steps, reps)
    return result


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        f"Device: {meta['device']}; torch {meta['torch']}; transformers {meta['transformers']}; diffusers {meta['diffusers']}; "
        f"{meta['reps']} interleaved rounds per model.",
        "",
        "| model | fixes applied (safe / +unsafe) | syncs per step, debug mode: original / safe / unsafe | syncs per step, tracer: original / safe / unsafe | bit-identical (safe, unsafe) | ms per step original / safe / unsafe | speedup safe (min-max) | speedup unsafe (min-max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['key']} | error: {r['error'][:120]} | | | | | | |")
            continue
        s, t = r["syncs"], r["timing"]

        def n_fixed(tag):
            return " + ".join(f["summary"] for f in r["fixes"][tag])

        debug = " / ".join(f"{s[v]['debug_mode_per_step']:g}" for v in VARIANTS)
        traced = " / ".join(f"{s[v]['trace_per_step']:g}" for v in VARIANTS)
        lines.append(
            f"| {r['name']} | {n_fixed('safe')} / {n_fixed('unsafe')} "
            f"| {debug} "
            f"| {traced} "
            f"| {r['bit_identical']['safe']}, {r['bit_identical']['unsafe']} "
            f"| {' / '.join(str(t[v]['ms_per_step']) for v in VARIANTS)} "
            f"| {t['safe']['speedup_median']} ({t['safe']['speedup_min']}-{t['safe']['speedup_max']}) "
            f"| {t['unsafe']['speedup_median']} ({t['unsafe']['speedup_min']}-{t['unsafe']['speedup_max']}) |"
        )
    lines.append("")
    for r in results:
        if "error" in r:
            continue
        lines += [f"### {r['name']}", "", f"Regime: {r['regime']}.", ""]
        for tag in ("safe", "unsafe"):
            for f in r["fixes"][tag]:
                lines += [f"`synclint check --fix{' --unsafe-fixes' if tag == 'unsafe' else ''}` on `{f['module']}`: {f['summary']}"
                          + (" **(imports synclint)**" if f["imports_synclint"] else " (no import of synclint)"), ""]
                if f["diff"]:
                    lines += ["```diff", f["diff"].rstrip("\n"), "```", ""]
        for v in VARIANTS:
            sites = r["syncs"][v]["trace_sites"]
            if sites:
                where = "; ".join(f"{x['file']}:{x['line']} {x['op']} x{x['per_step']:g}" for x in sites[:8])
                lines += [f"- tracer, {v}: {where}"]
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", default=None, help="where the fixed copies go (default: OUT/fixed)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if not torch.cuda.is_available():
        print("real_models needs a CUDA device", file=sys.stderr)
        return 2
    import transformers

    try:
        import diffusers

        dver = diffusers.__version__
    except ImportError:
        dver = "absent"
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "transformers": transformers.__version__,
            "diffusers": dver, "reps": a.reps}
    results = []
    for key in a.models.split(","):
        t0 = time.perf_counter()
        try:
            results.append(run_model(key, Path(a.work) if a.work else out / "fixed", a.reps))
        except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the rest run
            traceback.print_exc()
            results.append({"key": key, "error": f"{type(exc).__name__}: {exc}"})
        results[-1]["seconds"] = round(time.perf_counter() - t0, 1)
        print(f"{key}: {results[-1]['seconds']} s", flush=True)
        (out / "real_models.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
        torch.cuda.empty_cache()
    (out / "real_models.md").write_text(markdown(results, meta))
    print(markdown(results, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())

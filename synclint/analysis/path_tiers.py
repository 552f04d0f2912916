"""The tiers a file's path alone decides, without libcst: tests, benchmarks, debugging
tools, model and weight loading, VAE and diffusion condition-encoder code. Read by the
engine before it parses a file (a file all of whose findings would be cold is not parsed for
the default report), and by synclint/analysis/tier.py."""

from __future__ import annotations

import enum
import functools
import os
import re
from dataclasses import dataclass

from synclint.analysis.coldcode import VAE_WORDS
from synclint.analysis.pathkinds import TEST_FILE as _TEST_FILE
from synclint.analysis.pathkinds import TEST_FOLDERS as _TEST_FOLDERS


class Tier(str, enum.Enum):
    HOT = "hot"
    COLD = "cold"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class TierVerdict:
    tier: Tier
    reason: str  # "in load_weights(): weight loading and initialisation run once"


UNKNOWN_TIER = TierVerdict(Tier.UNKNOWN, "no signal says how often this code runs")

# Folders and files of tests and benchmarks (path components, compared in lower case).
# `decode_bench_connector.py`, `attn_benchmark_utils.py`: a benchmark word among the parts.
# ... and test doubles: `hf3fs_mock_client.py`, `fake_store.py`.
_BENCH_PART = re.compile(r"(^|_)(bench|benchmark|benchmarks|mock|mocks|fake)(_|\.py)")
# Folders and files (without `.py`) of model and weight loading: run once at start-up.
_LOADING_PARTS = frozenset({"model_loader", "weight_loader", "weight_transfer", "weight_utils", "weight_loading"})
# Folders and file names of debugging tools (`debug_utils/dumper.py`, `debug.py`,
# `gpu_sync_debug.py`): tensor dumps and comparisons that run only while someone debugs.
_DEBUG_PART = re.compile(r"(^|_)(debug|debugging|debugger)(_|\.py$|$)")

# Folders of work done once per output, after generation (a diffusion engine's upscaler and
# frame interpolator), and of offline tools and scripts (a weight converter run by hand).
_POSTPROCESS_FOLDERS = frozenset({"postprocess", "postprocessing", "post_process", "post_processing"})
_TOOL_FOLDERS = frozenset({"tools", "scripts"})

_VAE_REASON = "VAE code: encodes or decodes once per generation, not per denoise step"

# Training losses, by folder (`loss/`, `losses/`) or file name (`loss.py`, `loss_rt_detr.py`,
# `focal_loss.py`): computed only when the model is trained, never while it serves.
_LOSS_PART = re.compile(r"^(loss|losses)$|^loss_|_loss$|_losses$")
_LOSS_REASON = "training losses (by their folder or file name): computed only when training"

# A modular model definition (`modular_llama.py` beside `modeling_llama.py`): the source a
# code generator expands into the modeling file, which is what the library imports; the
# modular file itself is never imported (Hugging Face transformers' "modular transformers").
_MODULAR_FILE = re.compile(r"^modular_(\w+)\.py$")
_MODULAR_REASON = "a modular model definition: the library generates `{}` from it and imports that, never this file"

# The blocks of a modular diffusion pipeline around its denoise loop (diffusers' layout:
# `encoders.py`, `before_denoise.py`, `denoise.py`, `decoders.py` in one folder): beside a
# `denoise.py`, the others run once per generation, before or after the loop.
_AROUND_DENOISE_FILES = frozenset({"encoders.py", "before_denoise.py", "after_denoise.py", "decoders.py"})
_AROUND_DENOISE_REASON = "a modular pipeline's block beside `denoise.py`, before or after the denoise loop: runs once per generation"

# The condition encoders of a diffusion model zoo: a folder of encoders beside a folder of
# VAEs (`models/encoders/` next to `models/vaes/`). They encode the prompt or the reference
# image once per generation, before the denoise loop. An `encoders` folder with no VAE
# folder beside it (a serving engine's vision encoders, which run in every prefill step)
# says nothing.
_ENCODER_FOLDERS = frozenset({"encoders", "text_encoders", "image_encoders", "condition_encoders"})
_ENCODERS_REASON = (
    "a diffusion model's condition encoder (an encoders folder beside a VAE folder): "
    "encodes once per generation, before the denoise loop"
)




def _vae_words(words) -> bool:
    return any(w.lower() in VAE_WORDS for w in words)


@functools.lru_cache(maxsize=256)
def _beside_vae_folder(folder: str) -> bool:
    """Whether the folder `folder` holds a VAE folder (`vaes`, `autoencoders`)."""
    try:
        return any(entry.is_dir() and entry.name.lower() in VAE_WORDS for entry in os.scandir(folder))
    except OSError:
        return False


def _diffusion_encoder(filename: str, parts: list[str]) -> bool:
    for index, part in enumerate(parts[:-1]):
        if part in _ENCODER_FOLDERS:
            folder = os.path.dirname(os.path.abspath(filename))
            for _ in range(len(parts) - 1 - index):
                folder = os.path.dirname(folder)
            return _beside_vae_folder(folder)
    return False


def _beside(filename: str, name: str) -> bool:
    """Whether a file `name` is in the folder of `filename`."""
    return os.path.isfile(os.path.join(os.path.dirname(filename), name))


def _generated_from(filename: str) -> str | None:
    """`modeling_x.py` for a `modular_x.py` that has it beside it; else None."""
    found = _MODULAR_FILE.match(os.path.basename(filename))
    if found is None:
        return None
    generated = f"modeling_{found.group(1)}.py"
    return generated if _beside(filename, generated) else None


def file_tier(filename: str) -> TierVerdict | None:
    """Tests, benchmarks and debugging tools, by folder or file name; loading, VAE and
    diffusion condition-encoder code, by folder; training losses; modular model definitions
    and the blocks of a modular pipeline around its denoise loop."""
    parts = re.split(r"[\\/]", filename.lower())
    if any(p in _TEST_FOLDERS for p in parts[:-1]):
        return TierVerdict(Tier.COLD, "in a tests or benchmarks folder")
    if parts and (_TEST_FILE.match(parts[-1]) or _BENCH_PART.search(parts[-1])):
        return TierVerdict(Tier.COLD, "in a test, mock or benchmark file")
    if any(_DEBUG_PART.search(p) for p in parts):
        return TierVerdict(Tier.COLD, "in debugging tools (by its folder or file name): runs only while debugging")
    if any(p.removesuffix(".py") in _LOADING_PARTS for p in parts):
        return TierVerdict(Tier.COLD, "in model or weight loading code (by its folder or file name)")
    if any(p in _POSTPROCESS_FOLDERS for p in parts[:-1]):
        return TierVerdict(Tier.COLD, "in a post-processing folder: runs once per output, after generation")
    if any(p in _TOOL_FOLDERS for p in parts[:-1]):
        return TierVerdict(Tier.COLD, "in a folder of offline tools or scripts: run by hand, not while serving")
    if _vae_words(parts[:-1]) or (parts and _vae_words(re.split(r"[_.\-]", parts[-1].removesuffix(".py")))):
        return TierVerdict(Tier.COLD, f"{_VAE_REASON} (by its folder or file name)")
    if _diffusion_encoder(filename, parts):
        return TierVerdict(Tier.COLD, _ENCODERS_REASON)
    if any(_LOSS_PART.search(p) for p in parts[:-1]) or (parts and _LOSS_PART.search(parts[-1].removesuffix(".py"))):
        return TierVerdict(Tier.COLD, _LOSS_REASON)
    generated = _generated_from(filename)
    if generated is not None:
        return TierVerdict(Tier.COLD, _MODULAR_REASON.format(generated))
    if parts and parts[-1] in _AROUND_DENOISE_FILES and _beside(filename, "denoise.py"):
        return TierVerdict(Tier.COLD, _AROUND_DENOISE_REASON)
    return None

"""Platform words, platform predicates and host-side classes by name, without libcst: read by
synclint/analysis/platforms.py (the libcst signals), by the repository index's argument kinds
(synclint/analysis/guards.py: `allow_sync=current_platform.is_cpu()`) and by its call graph
(synclint/repo/: what only host-side pre-processing calls)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

WORDS = {
    "cuda": "cuda",
    "nvidia": "cuda",
    "rocm": "rocm",
    "hip": "rocm",
    "aiter": "rocm",
    "amd": "rocm",
    "xpu": "xpu",
    "tpu": "tpu",
    "npu": "npu",
    "ascend": "npu",
    "hpu": "hpu",
    "habana": "hpu",
    "gaudi": "hpu",
    "mps": "mps",
    "mlx": "mps",
    "cpu": "cpu",
    "amx": "cpu",  # Intel AMX: matrix instructions of the CPU
}
_GFX = re.compile(r"^gfx\d+\w*$")
PLATFORMS = frozenset(WORDS.values())


def word_platform(word: str) -> str | None:
    word = word.lower()
    if word in WORDS:
        return WORDS[word]
    if _GFX.match(word):
        return "rocm"
    return None


# Triton runs on the GPU platforms: `if not current_platform.capabilities.supports_triton:`
# and `if not HAS_TRITON:` guard the fallback of the platforms without it.
_TRITON_PREDICATES = frozenset({"supports_triton", "has_triton", "is_triton_available", "triton_available"})
_TRITON_PLATFORMS = frozenset({"cuda", "rocm", "xpu"})


def predicate_platforms(name: str) -> frozenset[str] | None:
    """The platforms where a predicate named `name` holds: `is_xpu`, `_is_npu`,
    `is_cuda_alike` (cuda and rocm), `use_aiter` (a library of one platform); None when the
    name is no platform predicate."""
    name = name.lstrip("_").lower()
    if name in _TRITON_PREDICATES:
        return _TRITON_PLATFORMS
    if name.startswith("is_"):
        rest = name[3:]
        if rest == "cuda_alike":
            return frozenset({"cuda", "rocm"})
        platform = word_platform(rest) if "_" not in rest else None
        return frozenset({platform}) if platform is not None else None
    if name.startswith("use_"):
        # `use_aiter`, `_use_aiter_moe`: a library that exists on one platform only. Not
        # `use_cuda_graph` / `use_cpu_offload`: options, not platforms.
        platform = word_platform(name[4:].split("_")[0])
        if platform is not None and platform not in ("cuda", "cpu"):
            return frozenset({platform})
    return None


# A tensor's device type compared with a platform's (`x.device.type != "cuda"`,
# `device_type in ("npu", "xpu")`): a dispatch on where the data lives, read as `t.is_cuda`
# is. PyTorch names a ROCm device `cuda` too.
_DEVICE_TYPES = {"cuda": frozenset({"cuda", "rocm"})}


def device_type_platforms(words: Sequence[str], negated: bool) -> frozenset[str] | None:
    """Where `<device>.type == word` (or `in words`) holds; with `negated`, where `!=` (or
    `not in`) does. None where a word is no platform's."""
    found: set[str] = set()
    for word in words:
        platforms = _DEVICE_TYPES.get(word) or (frozenset({word_platform(word)}) if word_platform(word) else None)
        if platforms is None or word != word.lower():
            return None
        found |= platforms
    if not found:
        return None
    return PLATFORMS - found if negated else frozenset(found)


def names_device_type(dotted: str) -> bool:
    """`x.device.type`, `device.type`, `self.device_type`, `device_type`: a device's type."""
    last = dotted.rpartition(".")[2]
    return dotted.endswith("device.type") or last == "device_type"


# Pre-processing classes, which run on the host: Hugging Face-style processors, feature
# extractors, image and video processors (a class named so, or deriving from one), not the
# logits or attention processors that run on the device every step.
_HOST_BASE_SUFFIXES = (
    "Processor",
    "ProcessorFast",
    "FeatureExtractor",
    "ImageProcessor",
    "ImageProcessorFast",
    "VideoProcessor",
)
# Hugging Face's own mixins, by their exact names: a scheduler's `SchedulerOutputProcessorMixin`
# is a part of the scheduler, which runs every step.
_HOST_BASES = frozenset({"ProcessorMixin", "FeatureExtractionMixin", "ImageProcessingMixin"})
_HOST_CLASS_SUFFIXES = ("FeatureExtractor", "Extractor", "ImageProcessor", "VideoProcessor", "AudioProcessor", "Preprocessor")
_DEVICE_PROCESSOR_WORDS = ("Logits", "Attn", "Attention", "Sampl")


def host_class(name: str, bases) -> bool:
    """Whether a class named `name` with base classes named `bases` (last names) is host-side
    pre-processing."""
    if name.endswith(_HOST_CLASS_SUFFIXES) and not any(w in name for w in _DEVICE_PROCESSOR_WORDS):
        return True
    return any(
        base in _HOST_BASES or base.endswith(_HOST_BASE_SUFFIXES) and not any(w in base for w in _DEVICE_PROCESSOR_WORDS) for base in bases
    )


# Pre-processing files: `processing_*.py`, `image_processing_*.py`, `*_preprocessing.py`, ...,
# and the files of a `processors` / `processing` folder.
_HOST_FILE = re.compile(r"^((processing|image_processing|video_processing|feature_extraction)_\w+|\w+_(processing|preprocessing|feature_extraction))\.pyi?$")
_HOST_FOLDERS = frozenset({"processors", "processing"})


@lru_cache(maxsize=4096)
def host_file(filename: str) -> bool:
    """Whether a file is host-side pre-processing by its name or a folder of its path."""
    parts = [p for p in re.split(r"[\\/]", filename) if p]
    return bool(parts) and (bool(_HOST_FILE.match(parts[-1])) or any(p in _HOST_FOLDERS for p in parts[:-1]))


# Words that make a `cpu` word mean "data moved to the host" rather than "the CPU platform".
_HOST_MOVE_WORDS = frozenset({"offload", "offloading", "swap", "transfer", "connector", "gpu"})


def platforms_of_words(words: Sequence[str], cpu_anywhere: bool = True, cpu_positions: tuple[int, ...] = ()) -> frozenset[str] | None:
    lowered = [w.lower() for w in words]
    found: set[str] = set()
    pieces = [p for w in lowered for p in re.split(r"[_\-.]", w)]
    host_move = any(p in _HOST_MOVE_WORDS or p.startswith("offload") for p in pieces)
    for index, word in enumerate(lowered):
        platform = word_platform(word)
        if platform is None:
            continue
        if platform == "cpu":
            if host_move:
                continue
            if not cpu_anywhere and index not in cpu_positions and index - len(lowered) not in cpu_positions:
                continue
        found.add(platform)
    return frozenset(found) if found else None


@lru_cache(maxsize=4096)
def path_platforms(filename: str) -> frozenset[str] | None:
    """Platforms a file is for, by its folders and file-name parts; None: any platform."""
    parts = [p for p in re.split(r"[\\/]", filename) if p]
    if not parts:
        return None
    stem = re.sub(r"\.pyi?$", "", parts[-1])
    words = [*parts[:-1], *re.split(r"[_\-.]", stem)]
    return platforms_of_words(words)


# The packages of one vendor's software stack, which install only there: a module that imports
# one unconditionally at its top level (`from aiter.ops import ...`, `import torch_npu`) fails
# to import anywhere else, so its code runs on that platform alone.
VENDOR_PACKAGES = {
    "aiter": frozenset({"rocm"}),  # AMD's AI tensor engine for ROCm
    "wave_lang": frozenset({"rocm"}),  # the Wave kernel language, which targets AMD GPUs only
    "torch_npu": frozenset({"npu"}),  # Ascend's PyTorch adapter
    "habana_frameworks": frozenset({"hpu"}),  # Intel Gaudi's PyTorch bridge
    "torch_xla": frozenset({"tpu"}),
    "intel_extension_for_pytorch": frozenset({"xpu", "cpu"}),
}


def package_platforms(module: str) -> frozenset[str] | None:
    """The platforms where the top-level package of the dotted `module` installs; None when it
    is no vendor's own."""
    return VENDOR_PACKAGES.get(module.partition(".")[0])

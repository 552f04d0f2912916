"""Platform words and platform predicates by name, without libcst: read by
synclint/analysis/platforms.py (the libcst signals) and by the repository index's argument
kinds (synclint/analysis/guards.py: `allow_sync=current_platform.is_cpu()`)."""

from __future__ import annotations

import re

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


def word_platform(word: str) -> str | None:
    word = word.lower()
    if word in WORDS:
        return WORDS[word]
    if _GFX.match(word):
        return "rocm"
    return None


def predicate_platforms(name: str) -> frozenset[str] | None:
    """The platforms where a predicate named `name` holds: `is_xpu`, `_is_npu`,
    `is_cuda_alike` (cuda and rocm), `use_aiter` (a library of one platform); None when the
    name is no platform predicate."""
    name = name.lstrip("_").lower()
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

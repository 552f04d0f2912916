"""Names as evidence of place: the suffixes and prefixes that say a value is a device tensor
(`_gpu`, `_cuda`, `_dev`) or host data (`_cpu`, `_host`, `_np`, `_list`, `host_`), and the
heads that say a name is a flag or a count (`is_cuda`, `num_gpu`), whatever its suffix.
"""

from __future__ import annotations

from functools import lru_cache

from synclint.apis import torch_api as api
from synclint.repo.keys import DEVICE, HOST, LIST, NUMPY

DEVICE_SUFFIXES = ("_gpu", "_cuda", "_dev")
HOST_SUFFIXES = {"_cpu": HOST, "_host": HOST, "_pinned": HOST, "_cpu_tensor": HOST, "_np": NUMPY, "_numpy": NUMPY, "_list": LIST}
HOST_PREFIXES = ("host_", "cpu_")
MIRROR_SUFFIXES = ("_cpu", "_host", "_np", "_cpu_tensor", "_numpy")


# A name that starts like a flag or a count is not a tensor, whatever its suffix
# (`is_cuda`, `use_gpu`, `init_cuda`, `num_gpu`, `flops_per_gpu`).
_COUNT_HEADS = ("num_", "n_", "max_", "min_", "total_", "count_")
_NOT_TENSOR_HEADS = ("is_", "_is_", "has_", "use_", "_use_", "init_", "enable_", "disable_", "with_", "should_",
                     "can_", "allow_", *_COUNT_HEADS,
                     # methods of a platform dispatch (`act_fn.forward_cuda`, `_forward_cpu`, `run_gpu`)
                     "forward_", "_forward_", "run_", "_run_", "launch_", "dispatch_")


@lru_cache(maxsize=65536)
def convention(name: str) -> int:
    """The place a name's suffix says, as a mask (0: it says nothing)."""
    lower = name.lower()
    if lower in api.DEVICE_LIKE_NAMES or "_per_" in lower:
        return 0  # a device object, not a tensor
    if lower.startswith(_NOT_TENSOR_HEADS):
        # a flag or a count (`is_cuda`, `num_gpu`): never a device tensor by its suffix; a
        # count kept on the host (`num_draft_tokens_cpu`, `max_seq_lens_host`) is host data
        head = next((h for h in _COUNT_HEADS if lower.startswith(h)), "")
        rest = lower[len(head):]  # `num_cpu`: a number of CPUs
        return next((place for suffix, place in HOST_SUFFIXES.items() if head and rest.endswith(suffix)), 0)
    for suffix, place in HOST_SUFFIXES.items():
        if lower.endswith(suffix) and len(lower) > len(suffix):
            return place
    if lower.endswith(DEVICE_SUFFIXES) and len(lower) > 4:
        return DEVICE
    if lower.startswith(HOST_PREFIXES) and len(lower) > 5:
        return HOST  # `host_indices`, `cpu_lens`: the prefix says where, as the suffix does
    return 0

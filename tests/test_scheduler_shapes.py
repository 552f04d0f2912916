"""Shapes of diffusion schedulers that the runtime tracer saw sync and the analysis missed
(docs/recall.md, runtime truth, second round): a comparison whose tensor operand makes the
result a tensor even beside an operand that may be a Python number; the element of
`nonzero(as_tuple=True)` as a 0-dim index; a host table indexed by a value the code does
not show, moved to the device with a blocking copy."""

from __future__ import annotations

import textwrap

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence

ANY = Settings(min_confidence=Confidence.LOW, include_cold=True)


def findings(source: str, code: str) -> list[int]:
    result = lint_source(textwrap.dedent(source), "sched.py", ANY)
    return sorted(v.location.row for v in result.violations if v.code == code)


PREVIOUS_TIMESTEP = """\
    import numpy as np
    import torch


    class Scheduler:
        def __init__(self, n: int):
            self.timesteps = torch.from_numpy(np.arange(0, n)[::-1].copy())

        def set_timesteps(self, timesteps, device):
            self.timesteps = torch.from_numpy(timesteps).to(device)

        def previous_timestep(self, timestep, late: bool):
            t = timestep.cuda() if late else 0
            index = (self.timesteps == t).nonzero(as_tuple=True)[0][0]
            if index == self.timesteps.shape[0] - 1:
                prev_t = torch.tensor(-1)
            else:
                prev_t = self.timesteps[index + 1]
            return prev_t
    """


def test_a_comparison_with_a_tensor_is_a_tensor_beside_a_maybe_number():
    # `t` may be a Python number or a device tensor; `self.timesteps` is a tensor either way,
    # so `index` is a tensor that may be on the device: `if index == ...` reads it back.
    assert findings(PREVIOUS_TIMESTEP, "SL203") == [15]


def test_the_element_of_a_nonzero_tuple_is_a_zero_dim_index():
    # `nonzero(as_tuple=True)[0][0]`: one index of one dimension, a 0-dim device tensor,
    # read back as a Python integer where it indexes.
    assert findings(PREVIOUS_TIMESTEP, "SL208") == [18]


def test_a_python_number_comparison_stays_a_number():
    source = """\
        def previous_timestep(timestep: int, n: int):
            index = timestep == n
            if index:
                return 0
            return 1
        """
    assert findings(source, "SL203") == []


SIGMAS = """\
    import torch


    class UniPC:
        def set_timesteps(self, sigmas_np):
            self.sigmas = torch.from_numpy(sigmas_np)
            self.sigmas = self.sigmas.to("cpu")  # to avoid too much CPU/GPU communication
            self.device_sigmas = self.sigmas.to("cuda")

        def update(self, sample: torch.Tensor, order: int):
            device = sample.device
            sigma_t = self.sigmas[self.step_index + 1].to(device)
            sigma_s = self.device_sigmas[self.step_index].to(device)
            sigma_u = self.sigmas[1].to(device, non_blocking=True)
            return sigma_t, sigma_s, sigma_u

        def restore(self, saved_cpu, indices: torch.Tensor):
            return saved_cpu["mask"].to(indices.device)
    """


def test_an_element_of_a_host_table_moved_with_a_blocking_copy():
    # The index is not shown to be a Python number, but the table is a host tensor: the
    # element is new pageable memory, and `.to(device)` waits for the queue (as the table's
    # own move does, line 8). The device table's element, a non-blocking copy and a dict's
    # value looked up by key (whatever the dict holds) are not SL103's.
    assert findings(SIGMAS, "SL103") == [8, 12]

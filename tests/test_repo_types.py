"""Fields read through the class of their object (synclint/repo/): `obj.field` where the code
says what `obj` is (an annotated parameter, `Cls(...)`, a classmethod constructor, `self`, a
field of a known class) is placed by what the repository assigns to THAT class's field, not
to every field of the name; and `with torch.device(d):` is a device context for the
factories in it. Real-shaped multi-file projects, each with look-alikes that stay quiet."""

from __future__ import annotations

from index_projects import _store, findings, lint, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo
from synclint.screen import places


# One field name, two classes: a device mask in the step's batch, a host mask in the
# scheduler's bookkeeping. By the name alone it is neither.
TWO_CLASSES = {
    "pkg/__init__.py": "",
    "pkg/batch.py": """\
        from __future__ import annotations

        from dataclasses import dataclass
        from typing import Optional

        import torch


        @dataclass
        class StepBatch:
            seq_lens: torch.Tensor
            track_mask: Optional[torch.Tensor] = None

            @classmethod
            def init_new(cls, lens, device):
                ret = cls(
                    seq_lens=torch.tensor(lens, dtype=torch.int64, device=device),
                    track_mask=torch.zeros(len(lens), dtype=torch.bool, device=device),
                )
                return ret


        class SchedulerState:
            def __init__(self, n: int):
                self.track_mask = torch.zeros(n, dtype=torch.bool)
                self.seq_lens = torch.zeros(n, dtype=torch.int64)
        """,
    "pkg/backend.py": """\
        from pkg.batch import SchedulerState, StepBatch


        class Backend:
            def forward_extend(self, batch: "StepBatch", state: SchedulerState):
                if batch.track_mask is not None and batch.track_mask.any():
                    self.note()
                if state.track_mask.any():
                    self.note()
                return state.seq_lens.tolist()

            def plan(self, lens, device):
                built = StepBatch.init_new(lens, device)
                return built.seq_lens.tolist()

            def note(self):
                pass
        """,
}


def test_a_field_host_in_one_class_and_device_in_another_is_read_through_each_type(tmp_path):
    root = project(tmp_path / "proj", TWO_CLASSES)
    found = findings(root, "pkg/backend.py")
    assert ("backend.py", 6, "SL203") in found  # StepBatch.track_mask: device
    assert ("backend.py", 14, "SL202") in found  # built by the classmethod constructor
    # SchedulerState's fields are host tensors: quiet, also at low confidence.
    low = findings(root, "pkg/backend.py", min_confidence="low")
    assert not [f for f in low if f[1] in (8, 10)]


def test_explain_names_the_class_and_where_the_device_value_is_assigned(tmp_path):
    root = project(tmp_path / "proj", TWO_CLASSES)
    (finding,) = [v for v in lint(root, "pkg/backend.py") if v.location.row == 6]
    text = " ".join(finding.provenance)
    assert "StepBatch.track_mask is assigned device tensors in batch.py:" in text


def test_without_the_type_the_name_alone_decides(tmp_path):
    files = dict(TWO_CLASSES)
    # An unannotated parameter: the field's name is device in one class and host in the
    # other, so nothing is claimed.
    files["pkg/backend.py"] = TWO_CLASSES["pkg/backend.py"].replace('batch: "StepBatch"', "batch")
    root = project(tmp_path / "proj", files)
    assert not [f for f in findings(root, "pkg/backend.py") if f[1] == 6]


# A metadata object built in one file, stored on `self` in a second and written and read
# through `self.<field>.<field>` in a third.
CHAINED = {
    "lora/__init__.py": "",
    "lora/info.py": """\
        from dataclasses import dataclass

        import torch


        @dataclass
        class AdapterBatchInfo:
            bs: int
            weight_indices: torch.Tensor
            ranks: torch.Tensor
            host_ranks: list
        """,
    "lora/manager.py": """\
        import torch

        from lora.info import AdapterBatchInfo


        class AdapterManager:
            def init_graph_state(self, max_bs: int):
                with torch.device("cuda"):
                    self.graph_info = AdapterBatchInfo(
                        bs=max_bs,
                        weight_indices=torch.zeros(max_bs, dtype=torch.int32),
                        ranks=torch.zeros(8, dtype=torch.int32),
                        host_ranks=[0] * 8,
                    )

            def prepare(self, bs: int):
                used = self.graph_info.weight_indices[:bs].tolist()
                ranks = self.graph_info.host_ranks[:bs]
                return used, ranks
        """,
}


def test_a_buffer_built_under_with_torch_device_and_written_through_a_typed_field(tmp_path):
    root = project(tmp_path / "proj", CHAINED)
    assert ("manager.py", 17, "SL202") in findings(root, "lora/manager.py")
    # A Python list field of the same object is host data.
    assert not [f for f in findings(root, "lora/manager.py", min_confidence="low") if f[1] == 18]


def test_a_buffer_outside_the_device_context_stays_on_the_host(tmp_path):
    files = dict(CHAINED)
    files["lora/manager.py"] = CHAINED["lora/manager.py"].replace('with torch.device("cuda"):', 'with torch.device("cpu"):')
    root = project(tmp_path / "proj", files)
    assert not [f for f in findings(root, "lora/manager.py", min_confidence="low") if f[1] == 17]


DEVICE_CONTEXT = {
    "buffers.py": """\
        import torch


        def allocate(max_bs: int, device: torch.device):
            with torch.device(device):
                lens = torch.zeros((max_bs,), dtype=torch.int32)
                mask = torch.ones((max_bs,), dtype=torch.bool)
            host = torch.zeros((max_bs,), dtype=torch.int32)
            if mask.any():
                pass
            return lens.tolist(), host.tolist()


        def allocate_on_cpu(max_bs: int):
            with torch.device("cpu"):
                lens = torch.zeros((max_bs,), dtype=torch.int32)
            return lens.tolist()


        def selects_a_gpu(max_bs: int):
            with torch.cuda.device(0):
                lens = torch.zeros((max_bs,), dtype=torch.int32)
            return lens.tolist()
        """,
}


def test_with_torch_device_is_a_device_context_in_the_function(tmp_path):
    root = project(tmp_path / "proj", DEVICE_CONTEXT)
    found = findings(root, "buffers.py")
    assert ("buffers.py", 9, "SL203") in found
    assert ("buffers.py", 11, "SL202") in found
    low = findings(root, "buffers.py", min_confidence="low")
    # `host` is built after the context; a CPU context builds on the host; torch.cuda.device
    # selects a GPU and builds nothing there.
    assert [f for f in low if f[1] == 11] == [("buffers.py", 11, "SL202")]
    assert not [f for f in low if f[1] in (17, 23)]


def test_the_index_reads_with_torch_device_too(tmp_path):
    files = {
        "runner.py": """\
            import torch


            class GraphBuffers:
                def __init__(self, max_bs: int, device):
                    with torch.device(device):
                        self.out_cache_loc: torch.Tensor = torch.zeros((max_bs,), dtype=torch.int64)
                    self.host_counts: torch.Tensor = torch.zeros((max_bs,), dtype=torch.int64)
            """,
        "user.py": """\
            from runner import GraphBuffers


            def replay(buffers: GraphBuffers):
                first = buffers.out_cache_loc.tolist()
                counts = buffers.host_counts.tolist()
                return first, counts
            """,
    }
    root = project(tmp_path / "proj", files)
    found = findings(root, "user.py")
    assert ("user.py", 5, "SL202") in found
    assert not [f for f in findings(root, "user.py", min_confidence="low") if f[1] == 6]


def test_inherited_fields_and_annotated_returns(tmp_path):
    files = {
        "meta.py": """\
            import torch


            class BaseMeta:
                positions: torch.Tensor

                def __init__(self, n, device):
                    self.positions = torch.arange(n, device=device)


            class DecodeMeta(BaseMeta):
                pass


            class HostMeta:
                def __init__(self, n):
                    self.positions = list(range(n))


            def make_meta(n, device) -> "DecodeMeta":
                return DecodeMeta(n, device)
            """,
        "use.py": """\
            import copy

            from meta import DecodeMeta, HostMeta, make_meta


            def step(meta: DecodeMeta, other: HostMeta):
                a = meta.positions.tolist()
                b = make_meta(4, "cuda").positions.tolist()
                c = other.positions[0]
                return a, b, c


            def fork(meta: DecodeMeta, other: HostMeta):
                meta = copy.deepcopy(meta)
                mine = copy.copy(other)
                return meta.positions.tolist(), mine.positions[0]
            """,
    }
    root = project(tmp_path / "proj", files)
    found = findings(root, "use.py")
    assert ("use.py", 7, "SL202") in found
    assert ("use.py", 8, "SL202") in found
    assert ("use.py", 16, "SL202") in found  # a copy has the class of what it copies
    assert not [f for f in findings(root, "use.py", min_confidence="low") if f[1] == 9]


def test_annotation_class_reads_the_forms_of_an_annotation():
    import ast

    from synclint.screen.places import annotation_class

    def of(text, imports=None):
        return annotation_class(ast.parse(text, mode="eval").body, imports)

    assert of("ForwardBatch") == "ForwardBatch"
    assert of("Optional[ForwardBatch]") == "ForwardBatch"
    assert of("'ForwardBatch'") == "ForwardBatch"
    assert of("ForwardBatch | None") == "ForwardBatch"
    assert of("Union[None, mod.ForwardBatch]") == "ForwardBatch"
    assert of("FB", {"FB": ("pkg.batch.ForwardBatch",)}) == "ForwardBatch"
    for text in ("torch.Tensor", "Optional[torch.Tensor]", "List[Req]", "int", "Union[A, B]", "Any", "MAX"):
        assert of(text) is None, text


def test_the_elements_of_a_list_of_objects_have_its_class(tmp_path):
    files = {
        "req.py": """\
            from typing import List, Optional

            import torch


            class Req:
                def __init__(self, device):
                    self.track_buffer: Optional[torch.Tensor] = torch.zeros(2, dtype=torch.int64, device=device)
                    self.output_ids: List[int] = []


            class Batch:
                reqs: List["Req"]


            class HostReq:
                def __init__(self):
                    self.track_buffer = torch.zeros(2, dtype=torch.int64)
            """,
        "pool.py": """\
            from typing import List

            from req import Batch, Req


            def collect(reqs: List["Req"], batch: Batch):
                out = []
                for req in reqs:
                    out.append(req.track_buffer.tolist())
                for i, req in enumerate(batch.reqs):
                    out.append(req.track_buffer.tolist())
                    out.append(req.output_ids[-1])
                return out


            def unknown(reqs):
                return [req.track_buffer.tolist() for req in reqs]
            """,
    }
    root = project(tmp_path / "proj", files)
    found = findings(root, "pool.py")
    assert ("pool.py", 9, "SL202") in found
    assert ("pool.py", 11, "SL202") in found
    assert not [f for f in findings(root, "pool.py", min_confidence="low") if f[1] == 12]
    # Without a class, the name holds device data in one class and host data in another.
    assert not [f for f in found if f[1] == 17]


# A private class (`_StepBatch`) is a class: its declared tensor field is read through it,
# not by the name, which another class's list also has.
PRIVATE_CLASS = {
    "pkg/__init__.py": "",
    "pkg/transfer.py": """\
        from typing import List


        class TransferChunk:
            def __init__(self, state_indices: List[int]):
                self.state_indices = state_indices
        """,
    "pkg/layer.py": """\
        from typing import Optional

        import torch
        from torch import nn

        from pkg.transfer import TransferChunk


        class _StepBatch:
            state_indices: torch.Tensor
            lengths: torch.Tensor

            def __init__(self, state_indices: torch.Tensor, lengths: torch.Tensor):
                self.state_indices = state_indices
                self.lengths = lengths


        def _prepare(pool, lens: torch.Tensor) -> _StepBatch:
            indices = pool.alloc(lens.numel())
            return _StepBatch(state_indices=indices, lengths=lens)


        class ShortConv(nn.Module):
            def forward(self, x: torch.Tensor, batch: _StepBatch, chunk: TransferChunk, pool):
                conv_state = pool.conv_cache(0)
                conv_state[batch.state_indices] = x
                pool.host_cache[chunk.state_indices] = x.cpu()
                return conv_state
        """,
    "pkg/pool.py": """\
        import torch


        class Pool:
            def __init__(self, size: int, device: str):
                self.cache = torch.zeros(size, 4, device=device)
                self.host_cache = torch.zeros(size, 4)

            def conv_cache(self, layer: int) -> torch.Tensor:
                return self.cache
        """,
}


def test_a_private_class_reads_its_declared_tensor_field_through_the_class(tmp_path):
    root = project(tmp_path / "proj", PRIVATE_CLASS)
    found = findings(root, "pkg/layer.py", min_confidence="low")
    # `batch.state_indices` is the batch class's tensor, not the transfer chunk's list.
    assert not [f for f in found if f[1] == 26], found
    assert places.names_a_class("_StepBatch") and places.names_a_class("StepBatch")
    assert not places.names_a_class("_MAX_LEN") and not places.names_a_class("_helper")


def test_a_declared_tensor_field_given_nothing_known_is_not_another_classs_list(tmp_path):
    files = dict(PRIVATE_CLASS)
    files["pkg/layer.py"] = files["pkg/layer.py"].replace("_StepBatch", "StepBatch")
    root = project(tmp_path / "proj", files)
    assert not [f for f in findings(root, "pkg/layer.py", min_confidence="low") if f[1] == 26]
    # The field says nothing of its own: the index gives no fact, not the list of the name.
    facts = repo.build(root.resolve(), use_cache=False)
    assert facts.typed_fact("StepBatch", "state_indices") is None
    assert facts.typed_fact("TransferChunk", "state_indices")[0] == repo.LIST


# A field annotated a Python container (`OrderedDict[str, int]`) holds no tensor, whatever a
# same-named device field of another class holds.
COUNTS = {
    "spec/__init__.py": "",
    "spec/estimator.py": """\
        import torch


        class AcceptanceEstimator:
            def __init__(self, num_slots: int, device: torch.device):
                self.counts: torch.Tensor = torch.zeros(num_slots, dtype=torch.int64, device=device)

            def update(self, accepted: torch.Tensor) -> None:
                self.counts.add_(accepted)
        """,
    "spec/offload.py": """\
        from collections import OrderedDict
        from typing import Optional

        from spec.estimator import AcceptanceEstimator


        class OffloadingManager:
            def __init__(self, track: bool, store_threshold: int = 2):
                self.counts: Optional[OrderedDict[str, int]] = OrderedDict() if track else None
                self.store_threshold = store_threshold

            def prepare_store(self, keys):
                return [key for key in keys if self.counts.get(key, 0) >= self.store_threshold]

            def saturated(self, estimator: AcceptanceEstimator) -> bool:
                return bool(estimator.counts.max() > self.store_threshold)
        """,
}


def test_a_field_annotated_a_python_container_is_not_a_device_field_of_its_name(tmp_path):
    root = project(tmp_path / "proj", COUNTS)
    found = findings(root, "spec/offload.py")
    assert not [f for f in found if f[1] == 13], found
    # The estimator's own device counter, read through its class, still syncs.
    assert ("offload.py", 16, "SL203") in found


# The fields of a configuration object are Python values: `config.logit_scale` is the
# model config's float, not the `logit_scale` parameter some head registers.
CONFIG_FIELDS = {
    "models/__init__.py": "",
    "models/head.py": """\
        import torch
        from torch import nn


        class ScaledHead(nn.Module):
            def __init__(self, vocab_size: int):
                super().__init__()
                self.lm_head = nn.Linear(16, vocab_size)
                self.lm_head.logit_scale = nn.Parameter(torch.empty(vocab_size))
        """,
    "models/logits.py": """\
        import torch
        from torch import nn


        class LogitsProcessor(nn.Module):
            def __init__(self, vocab_size: int, scale: float = 1.0):
                super().__init__()
                self.vocab_size = vocab_size
                self.scale = scale

            def forward(self, logits: torch.Tensor) -> torch.Tensor:
                if self.scale != 1.0:
                    logits = logits * self.scale
                return logits
        """,
    "models/command.py": """\
        from torch import nn

        from models.logits import LogitsProcessor


        class CommandModel(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.logits_scale = config.logit_scale
                self.logits_processor = LogitsProcessor(config.vocab_size, scale=self.logits_scale)
        """,
}


def test_a_field_of_a_configuration_object_is_a_python_value_in_the_index(tmp_path):
    root = project(tmp_path / "proj", CONFIG_FIELDS)
    assert not [f for f in findings(root, "models/logits.py") if f[1] == 12]
    facts = repo.build(root.resolve(), use_cache=False)
    assert not (facts.typed.get(("CommandModel", "logits_scale"), (0,))[0] & repo.DEVICE)
    assert not (facts.typed.get(("LogitsProcessor", "scale"), (0,))[0] & repo.DEVICE)

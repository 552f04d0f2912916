"""Fields a framework keeps on the host, read from a module's text without libcst, for the
placement analysis of that module (synclint/analysis/sources.py, flow.py).

Only the module's own declarations count. Read across the repository (every module's
`keep_on_cpu` names for every other module) they were measured to be wrong as often as
right: the same name is a host tensor in one model and a device tensor in another
(`grid_thws` of one vision tower, `num_tokens` of an audio field and of a runner), and a
runner may move a host field to the device for a CUDA graph (docs/precision.md).

A field is declared by a keyword or a dict key whose value is a call
(`image_grid_thw=MultiModalFieldConfig.batched("image", keep_on_cpu=True)`,
`"grid": FieldConfig(..., keep_on_cpu=True)`); it is kept on the host where that call says
`keep_on_cpu=True`. The others that a module declares with vLLM's `MultiModalFieldConfig`
(`pixel_values=MultiModalFieldConfig.batched("image")`) are moved to the device by vLLM's
model runner before the model reads them from its `**kwargs` (`device_fields`).
"""

from __future__ import annotations

import ast
import re

_FIELD_CALL = re.compile(r"""(?:["'](\w+)["']\s*:|\b(\w+)\s*=)\s*[\w.]+\(""")
# vLLM's multimodal field declarations (`pixel_values=MultiModalFieldConfig.batched("image")`).
_MULTIMODAL_FIELD_CALL = re.compile(r"""(?:["'](\w+)["']\s*:|\b(\w+)\s*=)\s*MultiModalFieldConfig\.\w+\(""")
_MODALITIES = frozenset({"image", "video", "audio", "vision", "speech", "visual"})
_KEEP_ON_HOST = re.compile(r"\bkeep_on_cpu\s*=\s*True\b")


def _declarations(text: str, pattern: re.Pattern = _FIELD_CALL):
    """(name, kept on the host) for each field declaration of the text: kept where the
    call's own arguments say `keep_on_cpu=True` (not a call inside them: of
    `FIELDS = dict(grid=FieldConfig(..., keep_on_cpu=True))` only `grid` is kept)."""
    for match in pattern.finditer(text):
        depth, i = 1, match.end()
        own = []  # the spans of the call's text at its own depth
        start = i
        while i < len(text) and depth:
            c = text[i]
            if c == "(":
                if depth == 1:
                    own.append((start, i))
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 1:
                    start = i + 1
                elif depth == 0:
                    own.append((start, i))
            i += 1
        kept = any(_KEEP_ON_HOST.search(text, a, b) for a, b in own)
        yield match.group(1) or match.group(2), kept


def _with_encoder_name(name: str) -> tuple[str, ...]:
    """`image_grid_thw` reaches the encoder as `grid_thw`: the name without its modality too."""
    head, _, rest = name.partition("_")
    return (name, rest) if head in _MODALITIES and rest else (name,)


def host_fields(text: str) -> frozenset[str]:
    """The fields this module declares kept on the host (`keep_on_cpu=True`). Read from the
    whole text with patterns, so the answer does not depend on which functions the screen kept."""
    if "keep_on_cpu" not in text:
        return frozenset()
    return frozenset(n for name, kept in _declarations(text) if kept for n in _with_encoder_name(name))


def device_fields(text: str) -> frozenset[str]:
    """The multimodal fields this module declares with vLLM's `MultiModalFieldConfig` and
    does not keep on the host: vLLM's model runner moves every such field of a batch to the
    device before the model reads it (`**kwargs` of `embed_multimodal`, `_parse_and_validate_*`)."""
    if "MultiModalFieldConfig" not in text:
        return frozenset()
    kept = host_fields(text)
    found = {name for name, on_host in _declarations(text, _MULTIMODAL_FIELD_CALL) if not on_host}
    return frozenset(found - kept)


# --- declarations a module inherits ------------------------------------------------------------
#
# A model module often declares no fields of its own: its processor derives from another
# model's (`class PanguProcessor(Qwen2_5_VLMultiModalProcessor)`), whose `_get_mm_fields_config`
# (and its own base's, through `super()`) declares them, or the processor it registers
# (`@MULTIMODAL_REGISTRY.register_processor(KimiK3MultiModalProcessor, ...)`) comes from a
# module of the model's package that declares them. The module then reads the fields kept
# on the host by the modules its classes' bases come from: the same inputs, by the same names.
# Only through the bases of its own classes, imported from modules of the repository (not every
# module of it: the same name is a host tensor in one model and a device tensor in another),
# and never against a field the module itself declares for the device. The repository index
# keeps each module's declarations and base modules (synclint/repo/keys.py `KEPT_FIELD_MARK`) and
# answers for the modules a lint reads (`_CallGraphTiers.inherited_host_fields`).


def declares_fields(text: str) -> bool:
    """Whether a module may declare or inherit multimodal fields (a cheap test on its text)."""
    return "keep_on_cpu" in text or "MultiModal" in text or "register_processor" in text


def base_modules(tree: ast.Module) -> set[str]:
    """`<level>:<module>` of each module the bases of the module's classes are imported from
    (`1:qwen2_vl` for `from .qwen2_vl import Qwen2VLProcessor`, `0:pkg.models.qwen2_vl`),
    and of each module the processor a class registers comes from: vLLM's
    `@MULTIMODAL_REGISTRY.register_processor(KimiProcessor, info=..., dummy_inputs=...)`
    hands the model the fields that processor declares."""
    bases = {b.id for node in tree.body if type(node) is ast.ClassDef for b in node.bases if type(b) is ast.Name}
    bases |= {name for node in tree.body if type(node) is ast.ClassDef for name in _registered_processors(node)}
    if not bases:
        return set()
    return {f"{node.level}:{node.module or ''}" for node in tree.body
            if type(node) is ast.ImportFrom and (node.module or node.level) and any((a.asname or a.name) in bases for a in node.names)}


def _registered_processors(node: ast.ClassDef):
    """The names a class decorator `@<registry>.register_processor(...)` is given."""
    for decorator in node.decorator_list:
        if type(decorator) is ast.Call and type(decorator.func) is ast.Attribute and decorator.func.attr == "register_processor":
            for value in (*decorator.args, *(k.value for k in decorator.keywords)):
                if type(value) is ast.Name:
                    yield value.id


def module_candidates(spec: str, importer: str) -> tuple[str, ...]:
    """The module names (paths from the project's root, `/`-separated, no `.py`) a
    `<level>:<module>` spec of `base_modules` may name from the module named `importer`: a
    relative one by the folders of `importer`; an absolute one by its dotted name, matched
    against the end of the module names."""
    level_text, _, module = spec.partition(":")
    level = int(level_text)
    parts = [p for p in module.split(".") if p]
    if not level:
        return ("/".join(parts),) if parts else ()
    folder = importer.split("/")[:-1]
    if level - 1 > len(folder):
        return ()
    base = folder[: len(folder) - (level - 1)]
    joined = "/".join([*base, *parts])
    return (joined,) if joined else ()

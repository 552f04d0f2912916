"""Settings: each file gets those of its nearest configuration file (`.synclint.toml`,
`synclint.toml`, or a `pyproject.toml` with a `[tool.synclint]` table, in that order within a
folder), found upward from the file's folder, as ruff does; `extend = "../base.toml"`
inherits from another file. `--config FILE` gives every file the settings of FILE. Then the
command-line overrides. A bad key or value is a `ConfigError` that names the key and the
file. `SettingsResolver` resolves each folder once and reads each file once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path

from synclint.violation import Confidence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration problem: the message names the file and the key."""


# What the H2D fixes call. "inline" (the default): a pinned, non-blocking copy written out with
# torch alone, so a fix adds no dependency. Otherwise a preset name or a dotted path
# "pkg.mod.func" of a helper that the project has (a file that already imports a known
# helper keeps using it whatever this says).
INLINE_H2D = "inline"
H2D_HELPER_PRESETS = {
    "synclint": "synclint.runtime.async_tensor_h2d",
    "vllm": "vllm.utils.torch_utils.async_tensor_h2d",
    "vllm-legacy": "vllm.utils.async_tensor_h2d",
    "sglang": "sglang.srt.utils.common.async_h2d",
}

# Function names that run every step of an inference engine (fnmatch patterns).
DEFAULT_HOT_FUNCTIONS = (
    "forward",
    "__call__",
    "execute_model",
    "compute_logits",
    "sample",
    "sample_*",
    "_sample*",
    "_prepare_inputs",
    "prepare_*_metadata",
    "_prepare_*_metadata",
    "step",
    "decode_step",
    "prefill",
)

# Function names (fnmatch patterns) that run once or rarely: initialisation, weight loading,
# warm-up, profiling, CUDA graph capture, autotuning. Findings in them are `cold` and shown
# only with `--include-cold` (see synclint/analysis/tier.py).
DEFAULT_COLD_FUNCTIONS = (
    "__init__",
    "__post_init__",
    "__new__",
    "__init_subclass__",
    "__setstate__",
    "__del__",
    "shutdown",
    "*_shutdown",
    "_shutdown*",
    "destroy*",
    "*_destroy",
    "teardown*",
    "_teardown*",
    "*_teardown",
    "*rebalance*",
    # A request's abort, and a batch's retraction or a request's preemption under memory
    # pressure (`handle_preemptions`, `_preempt_request`): per event, not per step.
    "abort",
    "abort_*",
    "*_abort",
    "*retract*",
    "*preempt*",
    "*scale_up*",
    "*scale_down*",
    "close",
    "cleanup*",
    "_cleanup*",
    "setup*",
    "_setup*",
    "init",
    "create",
    "connect",
    "clear",
    "_ensure_*",
    "*create_buffer*",
    "_allocate",
    "*allocate_kv_cache*",
    "initialize*",
    "_initialize*",
    "load_weight*",
    "_load_weight*",
    "load_state_dict",
    "_load_from_state_dict",
    "*weight_loader*",
    "*load_model*",
    "process_weights_after_loading",
    "*process_weights*",
    "*_after_loading",
    "*merge*weights*",
    "create_weights",
    "create_*weights*",
    "_create_*weights*",
    # Managing the weights as a whole, never a step of serving: loading them in another form
    # (`post_load_weights`, `load_fused_expert_weights`, `reload_weights`), initialising and
    # tying them (`_init_weights`, `tie_weights`), a trainer's weight sync
    # (`update_weights_from_tensor`) and reads of named weights (`get_weights_by_name`).
    # Not `apply_weights` (a quantized layer's matmul, every step).
    "*load*_weights",
    "*init_weights*",
    "tie_weights",
    "update_weights*",
    # A trainer's weight update, begun and finished around the transfer
    # (`start_weight_update`, `finish_weight_update`, `begin_weight_update`).
    "*weight_update*",
    "restore_weights*",
    "finalize_*weights*",
    "*weights_by_name*",
    # Training losses (a MoE router's `load_balancing_loss_func`, a trainer's `compute_loss`):
    # computed only when the model is trained (files and folders of losses: analysis/path_tiers.py).
    "*loss_func",
    "*loss_fn",
    "compute_*loss",
    "*warmup*",
    "*warm_up*",
    "_warm*",
    "warm_*",
    "*prewarm*",
    # Compiling kernels ahead of the first step (`precompile_recompute_w_u_kernel`): warm-up.
    "precompile*",
    "_precompile*",
    "*profile*",
    "*capture*",
    "*autotune*",
    "*_tune",
    "tune_*",
    "_tune_*",
    "*benchmark*",
    "generate_*inputs*",
    "*_reference",
    "_dummy_*",
    "dummy_*",
    "*_dummy*",
    "_compute_*cache*",
    "_set_*cache*",
    "*cos_sin_cache*",
    "*inv_freq*",
    "*rope_parameters*",
    "*precompute*",
    # Diffusion pipelines (the diffusers conventions): once per generation, before the denoise
    # loop. Not a scheduler's `set_timesteps`: measured on the H200, its copy of the timesteps
    # to the device is a sync of every generation (docs/recall.md, runtime truth).
    "encode_prompt",
    "_encode_prompt",
    "prepare_latents",
    "check_inputs",
)

# The platforms the code is linted for; code that only runs on others is not reported
# (see synclint/analysis/platforms.py for the conventions that say where code runs).
DEFAULT_TARGET_PLATFORMS = ("cuda",)

# `with <call>():` blocks whose body syncs on purpose: synclint's own tracer context. Not
# vLLM's `gpu_sync_allowed()`: it marks the syncs vLLM's runtime check tolerates, which still
# drain the queue, and vLLM's engineers go on to remove them (docs/recall.md, "A second
# engine"); a project that wants them silent names it in `extend-allow-contexts`.
DEFAULT_ALLOW_CONTEXTS = ("synclint.trace.allowed",)

# Functions (fnmatch on the name) where syncing is expected: warm-up, profiling, logging.
DEFAULT_ALLOW_FUNCTIONS = (
    "*warmup*",
    "*warm_up*",
    "profile_run",
    "_dummy_*",  # vLLM: _dummy_run, _dummy_sampler_run, _dummy_pooler_run_task
    "*profile*",
    "log_*",
    "_log_*",
    "*_stats",
    "__repr__",
    "__str__",
    "extra_repr",
    "capture_model",
    "*_test",
    "test_*",
)

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".synclint_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "site-packages",
    "node_modules",
    ".eggs",
    "*.egg-info",
)


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("SL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    # Apply `exclude` even to files named on the command line (pre-commit names every file).
    force_exclude: bool = False
    unsafe_fixes: bool = False
    h2d_helper: str = INLINE_H2D
    min_confidence: Confidence = Confidence.MEDIUM
    hot_functions: tuple[str, ...] = DEFAULT_HOT_FUNCTIONS
    allow_contexts: tuple[str, ...] = DEFAULT_ALLOW_CONTEXTS
    allow_functions: tuple[str, ...] = DEFAULT_ALLOW_FUNCTIONS
    cold_functions: tuple[str, ...] = DEFAULT_COLD_FUNCTIONS
    # Show findings in code that runs once or rarely (tier `cold`) too.
    include_cold: bool = False
    # Show only findings on paths that run every step (tier `hot`): not those of code that
    # nothing says how often it runs (`unknown`). A stricter gate, with fewer real syncs
    # found (docs/tiers.md, "Choosing the tiers to show"). Contradicts `include_cold`.
    only_hot: bool = False
    target_platforms: tuple[str, ...] = DEFAULT_TARGET_PLATFORMS
    # Report-only rules about syncs that only matter on a hot path (SL5xx, SL106) look here.
    cache_dir: str = ".synclint_cache"
    max_file_size: int = 2_000_000  # bytes; larger files get SL002 rather than a slow parse
    # Parse with libcst only the functions that can hold a finding (synclint/screen/).
    # Off only to check the screen against a whole-file parse: the findings are the same.
    screen: bool = True
    # Read the whole repository the linted files are in (synclint/repo/): fields,
    # parameters and helpers placed by what the rest of the repository gives them.
    repository_index: bool = True
    # Where the settings came from (for messages); not part of the cache key.
    source: str | None = field(default=None, compare=False)
    # The files `source` extends, nearest first (for --show-settings).
    extends: tuple[str, ...] = field(default=(), compare=False)

    def fingerprint(self) -> str:
        """A stable hash of everything that can change findings (the cache key's part)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.compare}
        blob = json.dumps(data, default=str, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)


def _str_list(value, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def _bool(value, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: `{key}` must be true or false, got {value!r}")
    return value


def _helper(value, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: `{key}` must be {INLINE_H2D!r}, a preset ({', '.join(H2D_HELPER_PRESETS)}) or a dotted path")
    if value == INLINE_H2D:
        return value
    value = H2D_HELPER_PRESETS.get(value, value)
    parts = value.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        raise ConfigError(
            f"{where}: `{key}` must be {INLINE_H2D!r}, a preset ({', '.join(H2D_HELPER_PRESETS)}) or a dotted path "
            f"like 'pkg.module.func', got {value!r}"
        )
    return value


def _confidence(value, key: str, where: str) -> Confidence:
    try:
        return Confidence.parse(value) if isinstance(value, str) else Confidence.parse(repr(value))
    except ValueError as exc:
        raise ConfigError(f"{where}: `{key}`: {exc}") from None


def _per_file_ignores(value, key: str, where: str):
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `{key}` must be a table of glob = [codes], got {value!r}")
    return tuple((glob, _str_list(codes, f"{key}.{glob}", where)) for glob, codes in value.items())


def _positive_int(value, key: str, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where}: `{key}` must be a positive integer, got {value!r}")
    return value


def _string(value, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: `{key}` must be a non-empty string, got {value!r}")
    return value


def _platforms(value, key: str, where: str) -> tuple[str, ...]:
    from synclint.analysis.platforms import PLATFORMS

    names = _str_list(value, key, where)
    for name in names:
        if name.lower() not in PLATFORMS:
            raise ConfigError(f"{where}: `{key}`: unknown platform {name!r} (known: {', '.join(sorted(PLATFORMS))})")
    if not names:
        raise ConfigError(f"{where}: `{key}` must name at least one platform")
    return tuple(n.lower() for n in names)


# TOML key -> (Settings field, parser). `extend-*` list keys add to the defaults.
_KEYS = {
    "select": ("select", _str_list),
    "ignore": ("ignore", _str_list),
    "extend-select": ("extend_select", _str_list),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "exclude": ("exclude", _str_list),
    "extend-exclude": ("extend_exclude", _str_list),
    "respect-gitignore": ("respect_gitignore", _bool),
    "force-exclude": ("force_exclude", _bool),
    "unsafe-fixes": ("unsafe_fixes", _bool),
    "h2d-helper": ("h2d_helper", _helper),
    "min-confidence": ("min_confidence", _confidence),
    "hot-functions": ("hot_functions", _str_list),
    "extend-hot-functions": ("hot_functions", _str_list),
    "allow-contexts": ("allow_contexts", _str_list),
    "extend-allow-contexts": ("allow_contexts", _str_list),
    "allow-functions": ("allow_functions", _str_list),
    "extend-allow-functions": ("allow_functions", _str_list),
    "cold-functions": ("cold_functions", _str_list),
    "extend-cold-functions": ("cold_functions", _str_list),
    "include-cold": ("include_cold", _bool),
    "only-hot": ("only_hot", _bool),
    "target-platforms": ("target_platforms", _platforms),
    "cache-dir": ("cache_dir", _string),
    "max-file-size": ("max_file_size", _positive_int),
    "repository-index": ("repository_index", _bool),
}


def _check_selectors(key: str, parsed, where: str) -> None:
    """Rule codes in `select`, `ignore`, `extend-select` and `per-file-ignores` must exist."""
    if key in ("select", "ignore", "extend-select"):
        selectors = parsed
    elif key == "per-file-ignores":
        selectors = [code for _, codes in parsed for code in codes]
    else:
        return
    from synclint.rules import validate_selectors

    try:
        validate_selectors(selectors, f"{where}: `{key}`")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def settings_from_table(table: dict, where: str, base: Settings | None = None) -> Settings:
    """Build Settings from a `[tool.synclint]` table; `where` names the file for messages."""
    settings = base or Settings()
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.synclint] must be a table")
    changes: dict = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = get_close_matches(key.replace("_", "-"), list(_KEYS), n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.synclint]{hint}")
        name, parse = _KEYS[key]
        parsed = parse(value, key, where)
        _check_selectors(key, parsed, where)
        if key.startswith("extend-"):  # added to the defaults, or to what an extended file set
            parsed = tuple(getattr(settings, name)) + parsed
        changes[name] = parsed
    if changes.get("include_cold") and changes.get("only_hot"):
        raise ConfigError(f"{where}: `include-cold` and `only-hot` contradict each other: choose one")
    # One file's choice of tiers replaces the one it extends (`only-hot` over `include-cold`).
    if changes.get("only_hot"):
        changes["include_cold"] = False
    elif changes.get("include_cold"):
        changes["only_hot"] = False
    return settings.replace(source=where, **changes)


CONFIG_NAMES = (".synclint.toml", "synclint.toml", "pyproject.toml")


def _load_table(path: Path) -> dict:
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: configuration file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read configuration: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("synclint", {})
    else:
        table = data.get("tool", {}).get("synclint", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.synclint] must be a table")
    return table


def read_config_file(path: Path, _chain: tuple[Path, ...] = ()) -> Settings:
    """Read settings from a pyproject.toml (its [tool.synclint]) or a synclint.toml, after
    the file its `extend` key names (a path relative to this file's folder), if any."""
    where = str(path)
    table = dict(_load_table(path))
    base = None
    if "extend" in table:
        target = table.pop("extend")
        if not isinstance(target, str) or not target:
            raise ConfigError(f"{where}: `extend` must be the path of another configuration file, got {target!r}")
        parent = Path(os.path.abspath(path.parent / Path(target).expanduser()))
        here = Path(os.path.abspath(path))
        if parent in (*_chain, here):
            cycle = " -> ".join(str(p) for p in (*_chain, here, parent))
            raise ConfigError(f"{where}: `extend` makes a cycle: {cycle}")
        if not parent.is_file():
            raise ConfigError(f"{where}: `extend`: {parent} does not exist")
        base = read_config_file(parent, (*_chain, here))
    settings = settings_from_table(table, where, base)
    if base is not None:
        settings = settings.replace(extends=(base.source or "", *base.extends))
    return settings


def config_in(folder: Path) -> Path | None:
    """The configuration file of one folder, if it has one."""
    for name in CONFIG_NAMES:
        candidate = folder / name
        try:
            if not candidate.is_file():
                continue
        except OSError:  # inside an unreadable folder: no configuration found there
            continue
        if name != "pyproject.toml":
            return candidate
        try:
            text = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return candidate  # unreadable: let read_config_file report it
        if "synclint" not in text:
            continue
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return candidate  # let read_config_file report it
        if isinstance(tool, dict) and "synclint" in tool:
            return candidate
    return None


def find_config(start: Path) -> Path | None:
    """The nearest configuration file, from `start` (a folder, or a file's folder) upward."""
    start = Path(os.path.abspath(start))
    try:
        is_dir = start.is_dir()
    except OSError:  # an unreadable folder on the way: the run reports the path itself
        is_dir = False
    for folder in [start, *start.parents] if is_dir else list(start.parents):
        found = config_in(folder)
        if found is not None:
            return found
    return None


def load_settings(paths: list[Path], config: Path | None) -> Settings:
    """Settings for one path: the explicit --config file, else the nearest one from the
    first path (the CLI resolves every file on its own: `SettingsResolver`)."""
    if config is not None:
        return read_config_file(config)
    found = find_config(paths[0] if paths else Path.cwd())
    return read_config_file(found) if found else Settings()


def _no_change(settings: Settings) -> Settings:
    return settings


class SettingsResolver:
    """Which settings apply to a file: those of the nearest configuration file above it,
    with the command-line overrides applied. Each folder is resolved once and each
    configuration file read once; every file under one configuration shares one Settings
    object (so the engine's and the cache's per-settings work is done once per config)."""

    def __init__(self, config: Path | None = None, overrides: Callable[[Settings], Settings] = _no_change) -> None:
        self.config = config
        self.overrides = overrides
        self._by_folder: dict[str, Settings] = {}
        self._by_file: dict[str | None, Settings] = {}
        self._explicit = overrides(read_config_file(config)) if config is not None else None

    def settings_for_config(self, path: Path | None) -> Settings:
        key = None if path is None else os.path.abspath(path)
        if key not in self._by_file:
            self._by_file[key] = self.overrides(read_config_file(Path(key)) if key else Settings())
        return self._by_file[key]

    def for_folder(self, folder: Path | str) -> Settings:
        if self._explicit is not None:
            return self._explicit
        start = os.path.abspath(folder)
        pending = []
        key = start
        while key not in self._by_folder:
            found = config_in(Path(key))
            if found is not None:
                self._by_folder[key] = self.settings_for_config(found)
                break
            pending.append(key)
            parent = os.path.dirname(key)
            if parent == key:
                self._by_folder[key] = self.settings_for_config(None)
                break
            key = parent
        settings = self._by_folder[key]
        for folder_key in pending:
            self._by_folder[folder_key] = settings
        return settings

    def for_file(self, path: Path | str) -> Settings:
        return self.for_folder(os.path.dirname(os.path.abspath(path)))

    def for_path(self, path: Path) -> Settings:
        """A file's settings, or a folder's when `path` is a folder."""
        return self.for_folder(path) if os.path.isdir(path) else self.for_file(path)

    def all_settings(self) -> list[Settings]:
        seen: dict[int, Settings] = {}
        for settings in (*self._by_file.values(), *([self._explicit] if self._explicit else [])):
            seen.setdefault(id(settings), settings)
        return list(seen.values())

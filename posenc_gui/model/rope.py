"""Rotary position embedding (RoPE): frequencies under every Hugging Face scaling type, rotation, decay bound.

The frequencies follow Hugging Face transformers' ``modeling_rope_utils.py``
(``ROPE_INIT_FUNCTIONS``) as of transformers v5, which reads a config's
``rope_parameters`` and, for older configs, ``rope_scaling`` with a
top-level ``rope_theta``; each function below names the HF function it
mirrors, quirks included.

Precision
    HF computes ``inv_freq`` in float32 (torch's float32 ``pow`` and
    divisions). The functions here evaluate the same formulas in float64 and
    return float64: the exact value to within a few float64 ULP, which HF's
    float32 result matches within float32 rounding (a few float32 ULP), so
    ``inv_freq.astype(np.float32)`` is what a model holds up to those ULP.
    The float64 result is the reference a float32 computation is measured
    against. The discrete choices (YaRN's correction range, LongRoPE's
    short or long factors, dynamic NTK's length) are made on Python floats
    and integers in the same order of operations as HF, so they agree with it.

Config keys and where they are read (``source`` is whichever of
``rope_parameters`` and ``rope_scaling`` the config has)
    ``rope_type`` (or legacy ``type``) in ``source``, default ``"default"``;
    ``rope_theta``, ``partial_rotary_factor`` and
    ``original_max_position_embeddings`` at the top level or in ``source``
    (both places must agree when both are given); ``head_dim`` at the top
    level, else ``hidden_size // num_attention_heads``;
    ``max_position_embeddings`` at the top level; every scaling parameter in
    ``source``. Unknown keys are ignored, as HF ignores them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .core import limits

ROPE_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
ROPE_PAIRINGS = ("interleaved", "halves")
#: HF's ``default_theta``: the base when a config gives no ``rope_theta``.
DEFAULT_ROPE_THETA = 10_000.0
#: Range of every scaling factor: ``factor``, ``short_factor``/``long_factor`` values, ``beta_*``, ``attention_factor``.
MIN_FACTOR = 1e-6
MAX_FACTOR = 1e6
#: Largest inverse frequency a scaling type gives: the unscaled ones are ≤ 1, and a factor divides by ≥ MIN_FACTOR.
MAX_INV_FREQ = 1 / MIN_FACTOR
MAX_HIDDEN_SIZE = 2**20
MAX_CONTEXT = int(limits.MAX_POSITION)
#: Complex values the decay bound holds at once (4 MiB): long offset ranges are summed block by block.
_DECAY_BLOCK = 2**18


@dataclass(frozen=True)
class RopeConfig:
    """A config's RoPE settings, validated, with HF's defaults filled in.

    Attributes
    ----------
    rope_type : str
        One of :data:`ROPE_TYPES`.
    rope_theta : float
        The base.
    head_dim : int
        Channels of one query or key head.
    rotary_dim : int
        ``int(head_dim · partial_rotary_factor)``, HF's ``dim``: the
        frequencies are ``base^(−2i/rotary_dim)`` for the ceil(rotary_dim / 2)
        values of ``arange(0, dim, 2)``, each turning a pair of the first
        ``2 · ceil(rotary_dim / 2)`` channels (one more than ``dim`` when odd).
    max_position_embeddings : int or None
        The context the config declares (the extended one, for YaRN, llama3 and LongRoPE).
    original_max_position_embeddings : int or None
        The pretraining context L₀ that yarn, llama3 and longrope scale from
        (``max_position_embeddings`` when not given); None for other types.
    scaling : Mapping[str, object]
        The type's parameters under HF's names, defaults filled in: ``factor``
        (linear, ntk, dynamic, yarn, llama3, longrope); ``beta_fast``,
        ``beta_slow``, ``truncate``, ``mscale``, ``mscale_all_dim`` (yarn);
        ``low_freq_factor``, ``high_freq_factor`` (llama3); ``short_factor``,
        ``long_factor`` as tuples (longrope).
    attention_factor : float
        HF's ``attention_scaling``, multiplying cos and sin (1 except for yarn and longrope).
    warnings : tuple of str
        What Hugging Face accepts but warns about (or computes unlike the
        usual case) in this config, one sentence each; computed as HF computes it.
    """

    rope_type: str
    rope_theta: float
    head_dim: int
    rotary_dim: int
    max_position_embeddings: int | None
    original_max_position_embeddings: int | None
    scaling: Mapping[str, object]
    attention_factor: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RopeBands:
    """How a scaling type treats each rotary pair (one entry per inverse frequency).

    Attributes
    ----------
    band : ndarray of str
        yarn: ``"extrapolated"`` (ramp 0: frequency kept), ``"ramped"`` or
        ``"interpolated"`` (ramp 1: divided by ``factor``); llama3:
        ``"high"`` (wavelength < L₀/high_freq_factor: kept), ``"medium"``
        (smoothed) or ``"low"`` (wavelength > L₀/low_freq_factor: divided);
        default ``"unscaled"``; linear ``"interpolated"``; ntk and dynamic
        ``"rebased"``; longrope ``"rescaled"``.
    interpolation : ndarray of float
        ``w`` with scaled = unscaled · ((1 − w) + w / factor): YaRN's ramp,
        llama3's 1 − smooth factor, 1 for linear, 0 for default; NaN for the
        types whose scaling is not of that form (ntk, dynamic, longrope).
    """

    band: np.ndarray
    interpolation: np.ndarray


# -- reading a config ---------------------------------------------------------------------------------------


def _rope_section(config: Mapping) -> tuple[str, Mapping]:
    """The mapping of RoPE parameters and its key: ``rope_parameters`` (newer) or ``rope_scaling`` (older)."""
    sections = {}
    for key in ("rope_parameters", "rope_scaling"):
        value = config.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{key} must be a mapping (a JSON object) or null, got {limits.shown(value)}")
        if value:
            sections[key] = value
    if len(sections) == 2 and dict(sections["rope_parameters"]) != dict(sections["rope_scaling"]):
        raise ValueError("rope_parameters and rope_scaling must not both be given with different contents; give one")
    source, section = next(iter(sections.items()), ("rope_scaling", {}))
    nested = [key for key, value in section.items() if isinstance(value, Mapping)]
    if nested:
        raise ValueError(
            f"{source} holds one mapping per layer type ({limits.shown(nested)}); "
            f"pass a config whose {source} is one of them"
        )
    return source, section


def _rope_type(source: str, section: Mapping, warnings: list[str]) -> str:
    names = []
    for key in ("rope_type", "type"):
        name = section.get(key)
        if name is not None and (not isinstance(name, str) or name not in (*ROPE_TYPES, "su")):
            raise ValueError(f"{source}.{key} must be one of {', '.join(ROPE_TYPES)}; got {limits.shown(name)}")
        if name == "su":  # HF's Phi3Config._rope_scaling_adjustment: Phi-3's first name of LongRoPE
            warnings.append(f"{source}.{key} \"su\" is LongRoPE's legacy name (Hugging Face's Phi-3 config "
                            "renames it longrope)")
        if name is not None:
            names.append("longrope" if name == "su" else name)
    if len(set(names)) > 1:
        raise ValueError(f"{source}.rope_type ({names[0]!r}) and its legacy name type ({names[1]!r}) must agree")
    return names[0] if names else "default"


def _shared(config: Mapping, source: str, section: Mapping, key: str, check: Callable[[str, object], float]):
    """A key that may sit at the top level or in ``source``: its value (None if absent); both places must agree."""
    top = None if config.get(key) is None else check(key, config[key])
    inner = None if section.get(key) is None else check(f"{source}.{key}", section[key])
    if top is not None and inner is not None and top != inner:
        raise ValueError(f"{key} is {top:g} at the top level but {inner:g} in {source}; they must agree")
    return inner if inner is not None else top


def _check_theta(name: str, value: object) -> float:
    return limits.check_real(name, value, 1.0, limits.MAX_BASE, low_open=True)


def _check_fraction(name: str, value: object) -> float:
    return limits.check_real(name, value, 0.0, 1.0, low_open=True)


def _check_context(name: str, value: object) -> int:
    return limits.check_int(name, value, 1, MAX_CONTEXT)


def _check_factor(name: str, value: object) -> float:
    return limits.check_real(name, value, MIN_FACTOR, MAX_FACTOR)


def _head_dim(config: Mapping) -> int:
    """``head_dim`` if the config gives one, else ``hidden_size // num_attention_heads`` (HF's precedence)."""
    if config.get("head_dim") is not None:
        return limits.check_int("head_dim", config["head_dim"], limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    if config.get("hidden_size") is None or config.get("num_attention_heads") is None:
        raise ValueError("head_dim, or hidden_size and num_attention_heads, must be given")
    hidden_size = limits.check_int("hidden_size", config["hidden_size"], 1, MAX_HIDDEN_SIZE)
    heads = limits.check_int("num_attention_heads", config["num_attention_heads"], 1, hidden_size)
    return limits.check_int("hidden_size // num_attention_heads", hidden_size // heads, 2, limits.MAX_D_MODEL)


def _required(source: str, section: Mapping, key: str, rope_type: str) -> object:
    if section.get(key) is None:
        raise ValueError(f"{source}.{key} is required for rope_type {rope_type!r}")
    return section[key]


def _optional_factor(source: str, section: Mapping, key: str) -> float | None:
    return None if section.get(key) is None else _check_factor(f"{source}.{key}", section[key])


def _per_pair_factors(source: str, section: Mapping, key: str, rope_type: str, pairs: int) -> tuple[float, ...]:
    """LongRoPE's ``short_factor`` or ``long_factor``: ``pairs`` numbers in MIN_FACTOR…MAX_FACTOR."""
    name = f"{source}.{key}"
    values = _required(source, section, key, rope_type)
    if not isinstance(values, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of {pairs} numbers (one per rotary pair), got {limits.shown(values)}")
    array = limits.check_numbers(name, values, MIN_FACTOR, MAX_FACTOR, pairs, "numbers", " (rotary_dim / 2)")
    if array.size != pairs:
        raise ValueError(f"{name} must hold {pairs} numbers (rotary_dim / 2), got {array.size:,}")
    return tuple(float(value) for value in array)


def _needs(value: int | None, key: str, rope_type: str) -> int:
    if value is None:
        raise ValueError(f"{key} is required for rope_type {rope_type!r}")
    return value


def _get_mscale(scale: float, mscale: float = 1.0) -> float:
    # HF ``_compute_yarn_parameters.get_mscale``
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def rope_config(config: Mapping[str, object]) -> RopeConfig:
    """Validate a Hugging Face config's RoPE settings and fill in HF's defaults.

    Parameters
    ----------
    config : Mapping
        Hugging Face config keys (a parsed ``config.json``, untrusted): see
        the module docstring for which keys are read from where. Missing
        ``rope_theta`` means :data:`DEFAULT_ROPE_THETA`; missing
        ``partial_rotary_factor`` means 1.

    Returns
    -------
    RopeConfig
        With ``warnings`` for what HF accepts with a warning and computes:
        ``beta_fast < beta_slow``, ``high_freq_factor ≤ low_freq_factor``, an
        odd rotary dimension, the type ``"su"`` (LongRoPE's legacy name).

    Raises
    ------
    ValueError
        Naming the key (``rope_scaling.factor``, ``head_dim``…) and its
        allowed values: an unknown ``rope_type`` (listing the known ones),
        a missing required key, a wrong type, NaN or infinity, a number out
        of range, ``short_factor``/``long_factor`` not of one value per
        frequency, a value given in two places that disagree; what HF fails
        on: rotated channels beyond ``head_dim``, YaRN with an odd rotary
        dimension.
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping of Hugging Face config keys, got {limits.shown(config)}")
    source, section = _rope_section(config)
    warnings: list[str] = []
    rope_type = _rope_type(source, section, warnings)
    theta = _shared(config, source, section, "rope_theta", _check_theta)
    partial_rotary_factor = _shared(config, source, section, "partial_rotary_factor", _check_fraction)
    partial_rotary_factor = 1.0 if partial_rotary_factor is None else partial_rotary_factor
    head_dim = _head_dim(config)
    rotary_dim = int(head_dim * partial_rotary_factor)  # HF's truncation
    pairs = (rotary_dim + 1) // 2  # HF's arange(0, dim, 2): one frequency more than dim // 2 for an odd dim
    rotary = f"rotary dimension int(head_dim × partial_rotary_factor) = int({head_dim} × {partial_rotary_factor:g})"
    if rotary_dim < 1 or 2 * pairs > head_dim:
        raise ValueError(f"{rotary} = {rotary_dim} must be ≥ 1, and 2·ceil({rotary_dim}/2) = {2 * pairs} channels "
                         f"(a pair per frequency) must fit in head_dim {head_dim}")
    if rotary_dim % 2:
        if rope_type == "yarn":
            raise ValueError(f"{rotary} = {rotary_dim} is odd: Hugging Face's YaRN ramp has rotary_dim // 2 = "
                             f"{rotary_dim // 2} values for its {pairs} frequencies, and fails")
        warnings.append(f"the {rotary} = {rotary_dim} is odd: its {pairs} frequencies base^(−2i/{rotary_dim}) "
                        f"turn {2 * pairs} channels")
    if rope_type in ("ntk", "dynamic") and rotary_dim < 3:
        raise ValueError(
            f"rope_type {rope_type!r} raises the base to rotary_dim / (rotary_dim − 2): rotary_dim must be ≥ 3"
        )
    max_position = None
    if config.get("max_position_embeddings") is not None:
        max_position = _check_context("max_position_embeddings", config["max_position_embeddings"])
    original = _shared(config, source, section, "original_max_position_embeddings", _check_context)
    if rope_type in ("yarn", "llama3", "longrope"):
        if original is None:  # HF ``standardize_rope_params``: L₀ defaults to max_position_embeddings
            original = _needs(max_position, "max_position_embeddings (or original_max_position_embeddings)", rope_type)
    else:
        original = None
    if rope_type == "dynamic":
        _needs(max_position, "max_position_embeddings", rope_type)
    scaling, attention_factor = _scaling(rope_type, source, section, rotary_dim, max_position, original, warnings)
    return RopeConfig(
        rope_type=rope_type,
        rope_theta=DEFAULT_ROPE_THETA if theta is None else theta,
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        max_position_embeddings=max_position,
        original_max_position_embeddings=original,
        scaling=MappingProxyType(scaling),
        attention_factor=attention_factor,
        warnings=tuple(warnings),
    )


def _scaling(rope_type: str, source: str, section: Mapping, rotary_dim: int, max_position: int | None,
             original: int | None, warnings: list[str]) -> tuple[dict[str, object], float]:
    """The type's scaling parameters, defaults filled in, and its attention factor; HF's warnings appended."""
    if rope_type == "default":
        return {}, 1.0
    if rope_type in ("linear", "ntk", "dynamic", "llama3"):
        scaling = {"factor": _check_factor(f"{source}.factor", _required(source, section, "factor", rope_type))}
        if rope_type == "llama3":
            scaling.update(_llama3_parameters(source, section, warnings))
        return scaling, 1.0
    factor = _optional_factor(source, section, "factor")
    if factor is None:  # HF (yarn, longrope): the ratio of the extended context to the original
        factor = _needs(max_position, "max_position_embeddings (or factor)", rope_type) / original
    attention_factor = _optional_factor(source, section, "attention_factor")
    if rope_type == "yarn":
        scaling = {"factor": factor, **_yarn_parameters(source, section, warnings)}
        if attention_factor is None:
            attention_factor = _yarn_attention_factor(factor, scaling["mscale"], scaling["mscale_all_dim"])
        return scaling, attention_factor
    scaling = {"factor": factor}
    for key in ("short_factor", "long_factor"):  # one per frequency, else HF's division fails
        scaling[key] = _per_pair_factors(source, section, key, rope_type, (rotary_dim + 1) // 2)
        if rotary_dim % 2:
            warnings.append(f"Hugging Face warns that {source}.{key} must have length rotary_dim // 2 = "
                            f"{rotary_dim // 2}, but computes with its {(rotary_dim + 1) // 2} (one per frequency)")
    if attention_factor is None:
        # HF ``_compute_longrope_parameters``: 1 for factor ≤ 1, else sqrt(1 + ln(factor) / ln(L₀))
        attention_factor = 1.0 if factor <= 1.0 else _longrope_attention_factor(factor, original)
    return scaling, attention_factor


def _longrope_attention_factor(factor: float, original: int) -> float:
    if original < 2:
        raise ValueError(
            "original_max_position_embeddings must be ≥ 2 for LongRoPE's default attention_factor "
            "sqrt(1 + ln(factor) / ln(original_max_position_embeddings))"
        )
    return math.sqrt(1 + math.log(factor) / math.log(original))


def _llama3_parameters(source: str, section: Mapping, warnings: list[str]) -> dict[str, float]:
    """Llama 3.1's ``low_freq_factor`` and ``high_freq_factor`` (required; HF warns unless high > low)."""
    low, high = (
        _check_factor(f"{source}.{key}", _required(source, section, key, "llama3"))
        for key in ("low_freq_factor", "high_freq_factor")
    )
    if high <= low:  # HF's _validate_llama3_rope_parameters warns and computes: no pair is smoothed
        warnings.append(f"Hugging Face warns that {source}.high_freq_factor ({high:g}) must be greater than "
                        f"low_freq_factor ({low:g}); pairs of wavelength over L₀/low_freq_factor are then "
                        "divided by the factor, the others kept")
    return {"low_freq_factor": low, "high_freq_factor": high}


def _unset(value: object) -> bool:
    """HF's ``get(key) or default``, for numbers: None and 0 both mean the default."""
    return value is None or (limits.is_real(value) and value == 0)


def _yarn_parameters(source: str, section: Mapping, warnings: list[str]) -> dict[str, object]:
    """YaRN's ``beta_fast`` (32), ``beta_slow`` (1), ``truncate`` (true), ``mscale``, ``mscale_all_dim`` (None)."""
    # HF reads ``rope_parameters.get("beta_fast") or 32``: a 0 means the default too
    beta_fast, beta_slow = (
        default if _unset(section.get(key)) else _check_factor(f"{source}.{key}", section[key])
        for key, default in (("beta_fast", 32.0), ("beta_slow", 1.0))
    )
    if beta_fast < beta_slow:  # HF's _validate_yarn_rope_parameters warns and computes the reversed ramp
        warnings.append(f"Hugging Face warns that {source}.beta_fast ({beta_fast:g}) must be greater than beta_slow "
                        f"({beta_slow:g}); the ramp then runs backwards (low correction dim above high)")
    truncate = section.get("truncate", True)
    if not isinstance(truncate, (bool, np.bool_)):
        raise ValueError(f"{source}.truncate must be true or false, got {limits.shown(truncate)}")
    mscales = {}
    for key in ("mscale", "mscale_all_dim"):
        value = section.get(key)
        mscales[key] = None if value is None else limits.check_real(f"{source}.{key}", value, 0.0, MAX_FACTOR)
    return {"beta_fast": beta_fast, "beta_slow": beta_slow, "truncate": bool(truncate), **mscales}


def _yarn_attention_factor(factor: float, mscale: float | None, mscale_all_dim: float | None) -> float:
    # HF ``_compute_yarn_parameters``: the mscale ratio when both are set (truthy, so 0 counts as unset)
    if mscale and mscale_all_dim:
        return _get_mscale(factor, mscale) / _get_mscale(factor, mscale_all_dim)
    return _get_mscale(factor)


# -- frequencies --------------------------------------------------------------------------------------------


def _unscaled_inv_freq(theta: float, rotary_dim: int) -> np.ndarray:
    # HF ``_compute_default_rope_parameters``: 1 / base^(arange(0, d, 2) / d)
    return 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)


def _rebased_theta(rope: RopeConfig, seq_len: int | None) -> float:
    """The raised base of NTK-aware scaling: static (ntk) or at the sequence length (dynamic)."""
    d, factor = rope.rotary_dim, rope.scaling["factor"]
    if rope.rope_type == "ntk":
        # HF ``_compute_ntk_parameters`` (transformers 4.4x; later removed)
        return rope.rope_theta * factor ** (d / (d - 2))
    # HF ``_compute_dynamic_ntk_parameters``: seq_len defaults to, and never goes below, max_position_embeddings
    max_position = rope.max_position_embeddings
    length = max_position if seq_len is None else max(seq_len, max_position)
    return rope.rope_theta * ((factor * length / max_position) - (factor - 1)) ** (d / (d - 2))


def _yarn_ramp(rope: RopeConfig) -> np.ndarray:
    """YaRN's ramp per pair: 0 keeps the frequency (extrapolation), 1 divides it by factor (interpolation)."""
    # HF ``_compute_yarn_parameters``: find_correction_dim / find_correction_range / linear_ramp_factor
    d, theta, original = rope.rotary_dim, rope.rope_theta, rope.original_max_position_embeddings

    def correction_dim(rotations: float) -> float:
        return (d * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(rope.scaling["beta_fast"]), correction_dim(rope.scaling["beta_slow"])
    if rope.scaling["truncate"]:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)  # clamped to d − 1, not d/2 − 1, as in HF
    if low == high:
        high += 0.001  # HF: "Prevent singularity"
    return np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _llama3_bands(rope: RopeConfig, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Llama 3.1's band per pair (high / medium / low frequency) and its interpolation weight."""
    # HF ``_compute_llama3_parameters``: wavelength against L₀/low_freq_factor and L₀/high_freq_factor
    original = rope.original_max_position_embeddings
    low_freq_factor, high_freq_factor = rope.scaling["low_freq_factor"], rope.scaling["high_freq_factor"]
    wavelength = 2 * math.pi / inv_freq
    is_low = wavelength > original / low_freq_factor
    is_high = wavelength < original / high_freq_factor
    if high_freq_factor == low_freq_factor and np.any(~is_low & ~is_high):
        raise ValueError("llama3 with high_freq_factor = low_freq_factor: a pair's wavelength is exactly "
                         "L₀/low_freq_factor, where Hugging Face divides by their difference 0 (NaN)")
    with np.errstate(divide="ignore", invalid="ignore"):  # equal factors: no pair is smoothed
        smooth = (original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    band = np.where(is_low, "low", np.where(is_high, "high", "medium"))
    return band, np.where(is_low, 1.0, np.where(is_high, 0.0, 1.0 - smooth))


def _interpolated(inv_freq: np.ndarray, weight: np.ndarray, factor: float) -> np.ndarray:
    """``inv_freq`` moved a fraction ``weight`` of the way to ``inv_freq / factor``."""
    return inv_freq * (1.0 - weight) + (inv_freq / factor) * weight


def _check_seq_len(seq_len: object) -> int | None:
    return None if seq_len is None else limits.check_int("seq_len", seq_len, 1, MAX_CONTEXT)


def rope_frequencies(config: Mapping[str, object], seq_len: int | None = None) -> tuple[np.ndarray, float]:
    """The inverse frequencies and attention factor of ``ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)``.

    Parameters
    ----------
    config : Mapping
        Hugging Face config keys; see :func:`rope_config`.
    seq_len : int, optional
        The sequence length, 1 … 10¹²: dynamic NTK scales for
        ``max(seq_len, max_position_embeddings)`` (``seq_len`` None means
        ``max_position_embeddings``); LongRoPE uses ``long_factor`` when
        ``seq_len > original_max_position_embeddings``, else (and when
        None) ``short_factor``. Other types ignore it.

    Returns
    -------
    inv_freq : ndarray, shape (ceil(rotary_dim / 2),), float64
        θ_i for the pairs i = 0, 1, …, equal to HF's float32
        values within float32 rounding (see the module docstring).
    attention_factor : float
        What HF multiplies cos and sin by (logits scale by its square).

    Raises
    ------
    ValueError
        As :func:`rope_config`, for ``seq_len`` out of range, and for llama3's equal factors at a pair they
        would smooth (HF divides by 0 there).
    """
    seq_len = _check_seq_len(seq_len)
    rope = rope_config(config)
    unscaled = _unscaled_inv_freq(rope.rope_theta, rope.rotary_dim)
    if rope.rope_type in ("ntk", "dynamic"):
        inv_freq = _unscaled_inv_freq(_rebased_theta(rope, seq_len), rope.rotary_dim)
    elif rope.rope_type == "longrope":
        # HF ``_compute_longrope_parameters``: 1 / (ext_factors · base^(2i/d))
        long = seq_len is not None and seq_len > rope.original_max_position_embeddings
        inv_freq = unscaled / np.array(rope.scaling["long_factor" if long else "short_factor"], dtype=np.float64)
    elif rope.rope_type == "default":
        inv_freq = unscaled
    else:  # linear, yarn, llama3: HF ``_compute_linear_scaling_rope_parameters``, yarn's and llama3's blend
        inv_freq = _interpolated(unscaled, _bands(rope, unscaled).interpolation, rope.scaling["factor"])
    return inv_freq, rope.attention_factor


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    pairs = unscaled.size
    if rope.rope_type == "yarn":
        ramp = _yarn_ramp(rope)
        band = np.where(ramp == 0.0, "extrapolated", np.where(ramp == 1.0, "interpolated", "ramped"))
        return RopeBands(band, ramp)
    if rope.rope_type == "llama3":
        return RopeBands(*_llama3_bands(rope, unscaled))
    single = {
        "default": ("unscaled", 0.0),
        "linear": ("interpolated", 1.0),
        "ntk": ("rebased", math.nan),
        "dynamic": ("rebased", math.nan),
        "longrope": ("rescaled", math.nan),
    }
    name, weight = single[rope.rope_type]
    return RopeBands(np.full(pairs, name), np.full(pairs, weight))


def rope_bands(config: Mapping[str, object]) -> RopeBands:
    """Which band each rotary pair falls in under the config's scaling type, and how far it is interpolated.

    Parameters
    ----------
    config : Mapping
        Hugging Face config keys; see :func:`rope_config`.

    Returns
    -------
    RopeBands
        One entry per inverse frequency of :func:`rope_frequencies`.
    """
    rope = rope_config(config)
    return _bands(rope, _unscaled_inv_freq(rope.rope_theta, rope.rotary_dim))


# -- rotation -----------------------------------------------------------------------------------------------


def _check_inv_freq(inv_freq: object) -> np.ndarray:
    inv_freq = limits.check_numbers(
        "inv_freq", inv_freq, 0.0, MAX_INV_FREQ, limits.MAX_D_MODEL // 2, "frequencies", " (one per rotary pair)"
    )
    if inv_freq.size == 0:
        raise ValueError("inv_freq must hold at least one frequency")
    return inv_freq


def _check_pairing(pairing: object) -> str:
    if not isinstance(pairing, str) or pairing not in ROPE_PAIRINGS:
        raise ValueError(f"pairing must be one of {', '.join(ROPE_PAIRINGS)}; got {limits.shown(pairing)}")
    return pairing


def rope_pairs(rotary_dim: int, pairing: str = "halves") -> tuple[np.ndarray, np.ndarray]:
    """The channels of each rotary pair: pair i rotates channels ``(first[i], second[i])`` by position · θ_i.

    Parameters
    ----------
    rotary_dim : int
        Even, 2 … ``limits.MAX_D_MODEL``.
    pairing : {"halves", "interleaved"}
        ``"interleaved"``: (2i, 2i + 1), as RoFormer, GPT-J (``rotate_every_two``)
        and Meta's Llama code. ``"halves"``: (i, i + rotary_dim/2), as
        GPT-NeoX and Hugging Face (``rotate_half``). The two are one model
        with the channels permuted.

    Returns
    -------
    first, second : ndarray of int, shape (rotary_dim // 2,)
    """
    rotary_dim = limits.check_int("rotary_dim", rotary_dim, 2, limits.MAX_D_MODEL)
    if rotary_dim % 2:
        raise ValueError(f"rotary_dim must be even, got {rotary_dim}")
    pairs = np.arange(rotary_dim // 2)
    if _check_pairing(pairing) == "interleaved":
        return 2 * pairs, 2 * pairs + 1
    return pairs, pairs + rotary_dim // 2


def rope_angles(positions: object, inv_freq: object) -> np.ndarray:
    """The rotation angle position · θ_i of every position and pair.

    Parameters
    ----------
    positions : array_like, 1-D
        Real numbers in 0 … ``limits.MAX_POSITION``.
    inv_freq : array_like, 1-D
        θ_i, real numbers in 0 … :data:`MAX_INV_FREQ`, at most ``MAX_D_MODEL / 2``.

    Returns
    -------
    ndarray, shape (len(positions), len(inv_freq)), float64
        At most ``limits.MAX_ENCODE_ELEMENTS`` values.
    """
    inv_freq = _check_inv_freq(inv_freq)
    positions = limits.check_positions(positions, limit=limits.MAX_ENCODE_ELEMENTS // inv_freq.size)
    return np.multiply.outer(positions, inv_freq)


def rope_rotate(
    x: object, positions: object, inv_freq: object, pairing: str = "halves", *, attention_factor: float = 1.0
) -> np.ndarray:
    """Rotate each row of ``x`` by its position, as a model rotates queries and keys.

    Pair i, channels (a, b) from :func:`rope_pairs`, at position p becomes
    ``(x_a·cos pθ_i − x_b·sin pθ_i, x_a·sin pθ_i + x_b·cos pθ_i) · attention_factor``;
    the channels from ``2·len(inv_freq)`` on pass through unchanged and
    unscaled (partial rotary), as in HF's ``apply_rotary_pos_emb``.

    Parameters
    ----------
    x : array_like, shape (n, head_dim)
        One row per position, finite; ``head_dim ≥ 2·len(inv_freq)``; at
        most ``limits.MAX_ENCODE_ELEMENTS`` values.
    positions : array_like, shape (n,)
        Real numbers in 0 … ``limits.MAX_POSITION``.
    inv_freq : array_like, 1-D
        θ_i, as from :func:`rope_frequencies`.
    pairing : {"halves", "interleaved"}
        See :func:`rope_pairs`.
    attention_factor : float, keyword-only
        Multiplies cos and sin, as HF's ``attention_scaling`` (so a query–key
        logit scales by its square): the second value of
        :func:`rope_frequencies`. In MIN_FACTOR … MAX_FACTOR.

    Returns
    -------
    ndarray, shape (n, head_dim), float64

    Raises
    ------
    ValueError
        Naming the argument and its allowed values.
    """
    pairing = _check_pairing(pairing)
    inv_freq = _check_inv_freq(inv_freq)
    attention_factor = _check_factor("attention_factor", attention_factor)
    x = limits.check_matrix("x", x, limits.MAX_ENCODE_ELEMENTS)
    rows, width = x.shape
    rotary_dim = 2 * inv_freq.size
    if width < rotary_dim:
        raise ValueError(f"x must have at least 2·len(inv_freq) = {rotary_dim} columns, got {width}")
    positions = limits.check_positions(positions, limit=limits.MAX_POSITIONS)
    if positions.size != rows:
        raise ValueError(f"positions must hold one position per row of x ({rows:,}), got {positions.size:,}")
    angles = np.multiply.outer(positions, inv_freq)
    cos, sin = np.cos(angles) * attention_factor, np.sin(angles) * attention_factor
    first, second = rope_pairs(rotary_dim, pairing)
    rotated = x.copy()
    rotated[:, first] = x[:, first] * cos - x[:, second] * sin
    rotated[:, second] = x[:, first] * sin + x[:, second] * cos
    return rotated


def rope_decay_bound(offsets: object, inv_freq: object) -> np.ndarray:
    """RoFormer's long-term decay bound (§3.4.3, eq. 37) at each relative offset r.

    ``B(r) = (1 / (d/2)) · Σ_{j=1}^{d/2} |S_j|`` with ``S_j = Σ_{k<j} e^{i·r·θ_k}``
    (``d/2 = len(inv_freq)``): a query–key logit is at most
    ``max_i |h_{i+1} − h_i| · (d/2) · B(r)``. ``B(0) = (d/2 + 1) / 2``;
    ``B(−r) = B(r)``; it decays with ``|r|`` but not monotonically.

    Parameters
    ----------
    offsets : array_like, 1-D
        Real numbers in −``limits.MAX_POSITION`` … ``limits.MAX_POSITION``,
        at most ``limits.MAX_POSITIONS``.
    inv_freq : array_like, 1-D
        θ_k, as from :func:`rope_frequencies`.

    Returns
    -------
    ndarray, shape (len(offsets),), float64
    """
    inv_freq = _check_inv_freq(inv_freq)
    offsets = limits.check_numbers(
        "offsets", offsets, -limits.MAX_POSITION, limits.MAX_POSITION, limits.MAX_POSITIONS, "offsets"
    )
    bound = np.empty(offsets.size)
    rows = max(1, _DECAY_BLOCK // inv_freq.size)
    for start in range(0, offsets.size, rows):
        angles = np.multiply.outer(offsets[start : start + rows], inv_freq)
        partial_sums = np.cumsum(np.cos(angles) + 1j * np.sin(angles), axis=1)  # column j − 1 holds S_j
        bound[start : start + rows] = np.abs(partial_sums).mean(axis=1)
    return bound

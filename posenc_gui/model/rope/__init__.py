"""Rotary position embedding (RoPE): frequencies under every Hugging Face scaling type, rotation, decay bound.

The frequencies follow Hugging Face transformers' ``modeling_rope_utils.py``
(``ROPE_INIT_FUNCTIONS``) as of transformers v5, which reads a config's
``rope_parameters`` and, for older configs, ``rope_scaling`` with a
top-level ``rope_theta``; each scaling type is a module of
:mod:`posenc_gui.model.rope.types` (its registry mirrors
``ROPE_INIT_FUNCTIONS``) naming the HF function it mirrors, quirks included.

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

from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np

from ..core import limits
from .config import (DEFAULT_ROPE_THETA, MAX_CONTEXT, MAX_FACTOR, MAX_HIDDEN_SIZE, MAX_INV_FREQ, MIN_FACTOR,
                     RopeBands, RopeConfig, ScalingSection, check_context, check_factor, check_fraction, check_theta,
                     needs, unscaled_inv_freq)
from .types import ROPE_TYPES, RopeType, rope_type

__all__ = ["DEFAULT_ROPE_THETA", "MAX_CONTEXT", "MAX_FACTOR", "MAX_HIDDEN_SIZE", "MAX_INV_FREQ", "MIN_FACTOR",
           "ROPE_PAIRINGS", "ROPE_TYPES", "RopeBands", "RopeConfig", "RopeType", "rope_angles", "rope_bands",
           "rope_config", "rope_decay_bound", "rope_frequencies", "rope_pairs", "rope_rotate", "rope_type"]

ROPE_PAIRINGS = ("interleaved", "halves")
#: Complex values the decay bound holds at once (4 MiB): long offset ranges are summed block by block.
_DECAY_BLOCK = 2**18


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


def _head_dim(config: Mapping) -> int:
    """``head_dim`` if the config gives one, else ``hidden_size // num_attention_heads`` (HF's precedence)."""
    if config.get("head_dim") is not None:
        return limits.check_int("head_dim", config["head_dim"], limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    if config.get("hidden_size") is None or config.get("num_attention_heads") is None:
        raise ValueError("head_dim, or hidden_size and num_attention_heads, must be given")
    hidden_size = limits.check_int("hidden_size", config["hidden_size"], 1, MAX_HIDDEN_SIZE)
    heads = limits.check_int("num_attention_heads", config["num_attention_heads"], 1, hidden_size)
    return limits.check_int("hidden_size // num_attention_heads", hidden_size // heads, 2, limits.MAX_D_MODEL)


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
    name = _rope_type(source, section, warnings)
    theta = _shared(config, source, section, "rope_theta", check_theta)
    partial_rotary_factor = _shared(config, source, section, "partial_rotary_factor", check_fraction)
    partial_rotary_factor = 1.0 if partial_rotary_factor is None else partial_rotary_factor
    head_dim = _head_dim(config)
    rotary_dim = int(head_dim * partial_rotary_factor)  # HF's truncation
    pairs = (rotary_dim + 1) // 2  # HF's arange(0, dim, 2): one frequency more than dim // 2 for an odd dim
    rotary = f"rotary dimension int(head_dim × partial_rotary_factor) = int({head_dim} × {partial_rotary_factor:g})"
    if rotary_dim < 1 or 2 * pairs > head_dim:
        raise ValueError(f"{rotary} = {rotary_dim} must be ≥ 1, and 2·ceil({rotary_dim}/2) = {2 * pairs} channels "
                         f"(a pair per frequency) must fit in head_dim {head_dim}")
    kind = rope_type(name)
    if kind.check_rotary is not None:
        kind.check_rotary(rotary, rotary_dim)
    if rotary_dim % 2:
        warnings.append(f"the {rotary} = {rotary_dim} is odd: its {pairs} frequencies base^(−2i/{rotary_dim}) "
                        f"turn {2 * pairs} channels")
    max_position = None
    if config.get("max_position_embeddings") is not None:
        max_position = check_context("max_position_embeddings", config["max_position_embeddings"])
    original = _shared(config, source, section, "original_max_position_embeddings", check_context)
    if kind.context == "original":
        if original is None:  # HF ``standardize_rope_params``: L₀ defaults to max_position_embeddings
            original = needs(max_position, "max_position_embeddings (or original_max_position_embeddings)", name)
    else:
        original = None
    if kind.context == "max_position":
        needs(max_position, "max_position_embeddings", name)
    scaling, attention_factor = kind.read(ScalingSection(source, section, name, rotary_dim, max_position, original,
                                                         warnings))
    return RopeConfig(
        rope_type=name,
        rope_theta=DEFAULT_ROPE_THETA if theta is None else theta,
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        max_position_embeddings=max_position,
        original_max_position_embeddings=original,
        scaling=MappingProxyType(scaling),
        attention_factor=attention_factor,
        warnings=tuple(warnings),
    )


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
    unscaled = unscaled_inv_freq(rope.rope_theta, rope.rotary_dim)
    inv_freq = rope_type(rope.rope_type).inv_freq(rope, unscaled, seq_len)
    return inv_freq, rope.attention_factor


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
    return rope_type(rope.rope_type).bands(rope, unscaled_inv_freq(rope.rope_theta, rope.rotary_dim))


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
    attention_factor = check_factor("attention_factor", attention_factor)
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

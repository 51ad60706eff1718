"""What every RoPE scaling type shares: the validated config, the bands, the checks of a config's values.

The scaling types themselves (:mod:`posenc_gui.model.rope.types`, one
module each, as Hugging Face's ``ROPE_INIT_FUNCTIONS``) read their
parameters through a :class:`ScalingSection` and compute from a
:class:`RopeConfig`; :func:`~posenc_gui.model.rope.rope_config` builds it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..core import limits

#: HF's ``default_theta``: the base when a config gives no ``rope_theta``.
DEFAULT_ROPE_THETA = 10_000.0
#: Range of every scaling factor: ``factor``, ``short_factor``/``long_factor`` values, ``beta_*``, ``attention_factor``.
MIN_FACTOR = 1e-6
MAX_FACTOR = 1e6
#: Largest inverse frequency a scaling type gives: the unscaled ones are ≤ 1, and a factor divides by ≥ MIN_FACTOR.
MAX_INV_FREQ = 1 / MIN_FACTOR
MAX_HIDDEN_SIZE = 2**20
MAX_CONTEXT = int(limits.MAX_POSITION)


@dataclass(frozen=True)
class RopeConfig:
    """A config's RoPE settings, validated, with HF's defaults filled in.

    Attributes
    ----------
    rope_type : str
        A name of :data:`~posenc_gui.model.rope.types.ROPE_TYPES`.
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


# -- checks of a config's values ----------------------------------------------------------------------------


def check_theta(name: str, value: object) -> float:
    return limits.check_real(name, value, 1.0, limits.MAX_BASE, low_open=True)


def check_fraction(name: str, value: object) -> float:
    return limits.check_real(name, value, 0.0, 1.0, low_open=True)


def check_context(name: str, value: object) -> int:
    return limits.check_int(name, value, 1, MAX_CONTEXT)


def check_factor(name: str, value: object) -> float:
    return limits.check_real(name, value, MIN_FACTOR, MAX_FACTOR)


def needs(value: int | None, key: str, rope_type: str) -> int:
    """``value``, or ValueError saying ``key`` is required for ``rope_type`` when it is None."""
    if value is None:
        raise ValueError(f"{key} is required for rope_type {rope_type!r}")
    return value


def unset(value: object) -> bool:
    """HF's ``get(key) or default``, for numbers: None and 0 both mean the default."""
    return value is None or (limits.is_real(value) and value == 0)


@dataclass
class ScalingSection:
    """The ``rope_parameters`` or ``rope_scaling`` mapping a scaling type reads its parameters from.

    Attributes
    ----------
    source : str
        Its key in the config (messages name ``{source}.{key}``).
    section : Mapping
        Its contents, untrusted.
    rope_type : str
        The type being read.
    rotary_dim : int
        HF's ``dim`` (see :class:`RopeConfig`).
    max_position : int or None
        The config's ``max_position_embeddings``.
    original : int or None
        L₀ as the type's :attr:`~posenc_gui.model.rope.types.RopeType.context` reads it.
    warnings : list of str
        What Hugging Face warns about; a type appends its own.
    """

    source: str
    section: Mapping
    rope_type: str
    rotary_dim: int
    max_position: int | None
    original: int | None
    warnings: list[str]

    def required(self, key: str) -> object:
        """The value of ``key``; ValueError naming it when it is missing."""
        if self.section.get(key) is None:
            raise ValueError(f"{self.source}.{key} is required for rope_type {self.rope_type!r}")
        return self.section[key]

    def factor(self, key: str) -> float:
        """The required factor ``key``, in MIN_FACTOR … MAX_FACTOR."""
        return check_factor(f"{self.source}.{key}", self.required(key))

    def optional_factor(self, key: str) -> float | None:
        """The factor ``key``, or None when it is not given."""
        return None if self.section.get(key) is None else check_factor(f"{self.source}.{key}", self.section[key])

    def factor_or_ratio(self) -> float:
        """``factor``, else (HF's yarn and longrope) the extended context over the original one."""
        factor = self.optional_factor("factor")
        if factor is None:
            factor = needs(self.max_position, "max_position_embeddings (or factor)", self.rope_type) / self.original
        return factor

    def per_pair_factors(self, key: str, pairs: int) -> tuple[float, ...]:
        """``pairs`` numbers in MIN_FACTOR…MAX_FACTOR (LongRoPE's ``short_factor`` or ``long_factor``)."""
        name = f"{self.source}.{key}"
        values = self.required(key)
        if not isinstance(values, (list, tuple, np.ndarray)):
            raise ValueError(f"{name} must be a list of {pairs} numbers (one per rotary pair), got "
                             f"{limits.shown(values)}")
        array = limits.check_numbers(name, values, MIN_FACTOR, MAX_FACTOR, pairs, "numbers", " (rotary_dim / 2)")
        if array.size != pairs:
            raise ValueError(f"{name} must hold {pairs} numbers (rotary_dim / 2), got {array.size:,}")
        return tuple(float(value) for value in array)


# -- frequencies every type starts from ---------------------------------------------------------------------


def unscaled_inv_freq(theta: float, rotary_dim: int) -> np.ndarray:
    """HF ``_compute_default_rope_parameters``: ``1 / base^(arange(0, d, 2) / d)``, float64."""
    return 1.0 / theta ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)


def interpolated(inv_freq: np.ndarray, weight: np.ndarray, factor: float) -> np.ndarray:
    """``inv_freq`` moved a fraction ``weight`` of the way to ``inv_freq / factor``."""
    return inv_freq * (1.0 - weight) + (inv_freq / factor) * weight


def uniform_bands(pairs: int, band: str, weight: float) -> RopeBands:
    """Every one of ``pairs`` in ``band`` with the interpolation ``weight``."""
    return RopeBands(np.full(pairs, band), np.full(pairs, weight))


def float32_powers(theta: float, rotary_dim: int) -> np.ndarray:
    """HF ``base ** (arange(0, d, 2).float() / d)`` in float32.

    The exponent 2i/d is one float32 division; ``pow`` is evaluated in
    float64 on the float32 operands and rounded once (correctly rounded,
    where torch's float32 pow, Sleef on CPU or CUDA's powf, is within one
    float32 ULP of that). torch rounds a Python base to float32 too (the
    scalar takes the tensor's dtype).
    """
    exponents = np.arange(0, rotary_dim, 2, dtype=np.int64).astype(np.float32) / np.float32(rotary_dim)
    return (np.float64(np.float32(theta)) ** exponents.astype(np.float64)).astype(np.float32)


def float32_unscaled(theta: float, rotary_dim: int) -> np.ndarray:
    """HF ``1.0 / (base ** (arange(0, d, 2).float() / d))``: the reciprocal is one float32 division."""
    return np.float32(1.0) / float32_powers(theta, rotary_dim)


def get_mscale(scale: float, mscale: float = 1.0) -> float:
    """HF ``_compute_yarn_parameters.get_mscale``."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

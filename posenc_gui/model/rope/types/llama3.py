"""Llama 3.1's scaling: HF's ``_compute_llama3_parameters``.

Pairs with wavelength above L₀/low_freq_factor are divided by the factor,
those below L₀/high_freq_factor kept, and those between smoothed.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.specs import ParamSpec
from ..config import (MAX_FACTOR, MIN_FACTOR, RopeBands, RopeConfig, ScalingSection, float32_unscaled,
                      interpolated)
from . import RopeType
from ._titles import unless

_SHOWN = ("rope_type", ("llama3",))
PARAMS = (
    ParamSpec("low_freq_factor", "real", 1.0, "low_freq_factor",
              "llama3: pairs with wavelength above L₀ / low_freq_factor are divided by the factor.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(1.0, "low_freq_factor")),
    ParamSpec("high_freq_factor", "real", 4.0, "high_freq_factor",
              "llama3: pairs with wavelength below L₀ / high_freq_factor keep their frequency.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(4.0, "high_freq_factor")),
)


def _read(section: ScalingSection) -> tuple[dict[str, object], float]:
    """``factor``, ``low_freq_factor`` and ``high_freq_factor`` (required; HF warns unless high > low)."""
    scaling = {"factor": section.factor("factor")}
    low, high = (section.factor(key) for key in ("low_freq_factor", "high_freq_factor"))
    if high <= low:  # HF's _validate_llama3_rope_parameters warns and computes: no pair is smoothed
        section.warnings.append(
            f"Hugging Face warns that {section.source}.high_freq_factor ({high:g}) must be greater than "
            f"low_freq_factor ({low:g}); pairs of wavelength over L₀/low_freq_factor are then divided by the "
            "factor, the others kept")
    return {**scaling, "low_freq_factor": low, "high_freq_factor": high}, 1.0


def _bands(rope: RopeConfig, inv_freq: np.ndarray) -> RopeBands:
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
    return RopeBands(band, np.where(is_low, 1.0, np.where(is_high, 0.0, 1.0 - smooth)))


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return interpolated(unscaled, _bands(rope, unscaled).interpolation, rope.scaling["factor"])


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    # HF ``_compute_llama3_parameters``, its float32 tensor operations in order
    inv_freq = float32_unscaled(rope.rope_theta, rope.rotary_dim)
    factor = np.float32(rope.scaling["factor"])
    low_freq_factor, high_freq_factor = rope.scaling["low_freq_factor"], rope.scaling["high_freq_factor"]
    original = rope.original_max_position_embeddings
    low_freq_wavelen = np.float32(original / low_freq_factor)
    high_freq_wavelen = np.float32(original / high_freq_factor)
    wavelen = np.float32(2 * math.pi) / inv_freq
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    with np.errstate(divide="ignore", invalid="ignore"):  # equal factors (HF warns): no pair is smoothed
        smooth_factor = ((np.float32(original) / wavelen - np.float32(low_freq_factor))
                         / np.float32(high_freq_factor - low_freq_factor))
        smoothed = (np.float32(1.0) - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, inv_freq_llama).astype(np.float32)


ROPE_TYPE = RopeType(name="llama3", summary="Llama 3.1's llama3", order=50, read=_read, inv_freq=_inv_freq,
                     bands=_bands, float32_inv_freq=_float32, params=PARAMS, context="original",
                     divisor_ulps_per_factor=2.0)

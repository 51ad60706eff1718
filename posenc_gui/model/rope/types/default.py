"""No scaling: HF's ``_compute_default_rope_parameters``, θ_i = base^(−2i/d), attention factor 1."""

from __future__ import annotations

import numpy as np

from ..config import RopeBands, RopeConfig, float32_unscaled, uniform_bands
from . import RopeType


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return unscaled


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    return uniform_bands(unscaled.size, "unscaled", 0.0)


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    return float32_unscaled(rope.rope_theta, rope.rotary_dim)


ROPE_TYPE = RopeType(name="default", summary="none (default)", order=0, inv_freq=_inv_freq, bands=_bands,
                     float32_inv_freq=_float32, uses_factor=False)

"""Position interpolation (Chen et al. 2023): HF's ``_compute_linear_scaling_rope_parameters``, θ_i / factor."""

from __future__ import annotations

import numpy as np

from ..config import RopeBands, RopeConfig, ScalingSection, float32_unscaled, interpolated, uniform_bands
from . import RopeType


def _read(section: ScalingSection) -> tuple[dict[str, object], float]:
    return {"factor": section.factor("factor")}, 1.0


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    return uniform_bands(unscaled.size, "interpolated", 1.0)


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return interpolated(unscaled, _bands(rope, unscaled).interpolation, rope.scaling["factor"])


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    return float32_unscaled(rope.rope_theta, rope.rotary_dim) / np.float32(rope.scaling["factor"])


ROPE_TYPE = RopeType(name="linear", summary="position interpolation (linear)", order=10, read=_read, inv_freq=_inv_freq,
                     bands=_bands, float32_inv_freq=_float32, gguf_name="linear")

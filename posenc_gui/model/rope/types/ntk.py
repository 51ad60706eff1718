"""Static NTK-aware scaling: HF's ``_compute_ntk_parameters`` (transformers 4.4x; later removed).

The base is raised once: base' = base · factor^(d/(d − 2)).
"""

from __future__ import annotations

import numpy as np

from ..config import (RopeBands, RopeConfig, ScalingSection, float32_unscaled, uniform_bands,
                      unscaled_inv_freq)
from . import RopeType


def read_factor(section: ScalingSection) -> tuple[dict[str, object], float]:
    """The required ``factor``; attention factor 1 (ntk and dynamic)."""
    return {"factor": section.factor("factor")}, 1.0


def check_rebased_rotary(description: str, rotary_dim: int, name: str) -> None:
    """ValueError for a rotary dimension below 3: the base is raised to rotary_dim / (rotary_dim − 2)."""
    if rotary_dim < 3:
        raise ValueError(
            f"rope_type {name!r} raises the base to rotary_dim / (rotary_dim − 2): rotary_dim must be ≥ 3"
        )


def rebased_bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    """Every pair rebased: no interpolation weight."""
    return uniform_bands(unscaled.size, "rebased", np.nan)


def _rebased_theta(rope: RopeConfig, seq_len: int | None) -> float:
    d, factor = rope.rotary_dim, rope.scaling["factor"]
    return rope.rope_theta * factor ** (d / (d - 2))


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return unscaled_inv_freq(_rebased_theta(rope, seq_len), rope.rotary_dim)


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    return float32_unscaled(_rebased_theta(rope, seq_len), rope.rotary_dim)


ROPE_TYPE = RopeType(name="ntk", summary="NTK-aware (ntk)", order=20, read=read_factor, inv_freq=_inv_freq,
                     bands=rebased_bands, float32_inv_freq=_float32,
                     check_rotary=lambda description, rotary_dim: check_rebased_rotary(description, rotary_dim, "ntk"),
                     divisor_ulps_per_factor=2.0)

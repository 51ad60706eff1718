"""Dynamic NTK scaling: HF's ``_compute_dynamic_ntk_parameters``, the base raised for the sequence length.

L = max(seq_len, max_position_embeddings) (seq_len defaults to
max_position_embeddings); base' = base·((factor·L/max_pos) − (factor − 1))^(d/(d−2)).
"""

from __future__ import annotations

import numpy as np

from ..config import RopeConfig, float32_unscaled, unscaled_inv_freq
from . import RopeType
from .ntk import check_rebased_rotary, read_factor, rebased_bands


def _rebased_theta(rope: RopeConfig, seq_len: int | None) -> float:
    d, factor = rope.rotary_dim, rope.scaling["factor"]
    max_position = rope.max_position_embeddings
    length = max_position if seq_len is None else max(seq_len, max_position)
    return rope.rope_theta * ((factor * length / max_position) - (factor - 1)) ** (d / (d - 2))


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return unscaled_inv_freq(_rebased_theta(rope, seq_len), rope.rotary_dim)


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    return float32_unscaled(_rebased_theta(rope, seq_len), rope.rotary_dim)


ROPE_TYPE = RopeType(name="dynamic", summary="dynamic NTK", order=30, read=read_factor, inv_freq=_inv_freq,
                     bands=rebased_bands, float32_inv_freq=_float32, context="max_position",
                     uses_sequence_length=True,
                     check_rotary=lambda description, rotary_dim: check_rebased_rotary(description, rotary_dim,
                                                                                       "dynamic"),
                     divisor_ulps_per_factor=2.0)

"""A rotation scheme declared in this one module, as a contributor would add one to ``model/schemes/``.

p-RoPE (Barbero et al. 2024, "Round and round we go"): RoPE whose slowest
pairs do not turn. The fastest ``p_keep`` share of the d_model/2 pairs keep
θ_i = rope_theta^(−2i/d); the others get θ_i = 0. Pairs are interleaved
(2i, 2i + 1), no attention factor.
"""

from __future__ import annotations

import numpy as np

from posenc_gui.model.schemes import Columns, Rotation, Scheme
from posenc_gui.model.schemes.rope import ROPE_THETA
from posenc_gui.model.core.specs import ParamSpec

P_KEEP = ParamSpec("p_keep", "real", 0.75, "share of pairs turning",
                   "The fastest share of the rotary pairs that turn; the others keep θ_i = 0.", low=0.0, high=1.0,
                   title=lambda value: f"p {value:g}")


def inv_freq(d_model: int, rope_theta: float, p_keep: float) -> np.ndarray:
    """θ_i of the d_model/2 pairs: RoPE's for the first round(p_keep · d_model/2), 0 for the rest."""
    theta = rope_theta ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    theta[int(round(p_keep * theta.size)):] = 0.0
    return theta


def _check_together(d_model: int, **options) -> None:
    if d_model % 2:
        raise ValueError(f"d_model must be even for p-RoPE: its channels turn in pairs; got {d_model}")


def _columns(dims: np.ndarray, d_model: int, rope_theta: float, p_keep: float) -> Columns:
    _check_together(d_model)
    theta = inv_freq(d_model, rope_theta, p_keep)[dims // 2]
    with np.errstate(divide="ignore"):
        divisor = np.where(theta > 0, 1.0 / theta, np.inf)  # a pair that does not turn: the angle 0
    kinds = np.where(dims % 2 == 1, "sin", "cos")
    return Columns(kinds, divisor, lambda j: f"{kinds[j]}(pos · {theta[j]:.6g})")


def _rotation(d_model: int, seq_len: int, *, rope_theta: float, p_keep: float) -> Rotation:
    _check_together(d_model)
    return Rotation(inv_freq(d_model, rope_theta, p_keep), 1.0, "interleaved")


SCHEME = Scheme(key="prope", label="p-RoPE (test rotation)", order=115, family="rotation",
                summary="RoPE whose slowest pairs do not turn.", formula="θ_i = 0 for the slowest pairs",
                params=(ROPE_THETA, P_KEEP), check_together=_check_together, columns=_columns, rotation=_rotation)

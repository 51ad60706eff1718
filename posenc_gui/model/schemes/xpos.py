"""xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer"), as torchscale's ``XPOS`` computes it.

RoPE's rotation with pairs interleaved (channels 2i and 2i + 1,
``rotate_every_two``), θ_i = rope_theta^(−2i/d) (torchscale: 10000), and on
top of it a scale per pair: ``ζ_i = (2i/d + γ)/(1 + γ)`` (γ = 0.4 in
torchscale), the query at position m multiplied by ``ζ_i^(m/scale_base)``
and the key at n by ``ζ_i^(−n/scale_base)`` (``downscale``), so pair i of
the logit is multiplied by ``ζ_i^((m − n)/scale_base)``: it decays with the
distance back to the key, fast pairs (small ζ) soonest. torchscale scales
at positions centred on the block (:func:`~posenc_gui.model.bias.xpos_centered_positions`)
and rotates at the token's own index; queries and keys share the centre,
so it cancels in every logit. The app's d_model is the head dimension.

The columns (heatmap, waveforms) are the rotation's cos and sin only, as
RoPE's: the scale is not in them (it is a factor on q and on k whose
product depends on the distance; the Positional-logits panel shows it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import limits
from ..bias.xpos import MAX_GAMMA, xpos_farthest, xpos_zeta
from ..rope import rope_frequencies
from ..core.specs import ParamSpec
from ._core import Columns, Preset, Rotation, Scheme
from .rope import ROPE_THETA  # RoPE's own spec: the base means the same here (pair i turns by position · θ^(−2i/d))

#: torchscale's γ (fixed in ``XPOS``: ``arange(0, d, 2) + 0.4·d) / (1.4·d)``) and its ``xpos_scale_base`` default.
DEFAULT_GAMMA = 0.4
DEFAULT_SCALE_BASE = 512.0

GAMMA = ParamSpec(
    "gamma", "real", DEFAULT_GAMMA, "γ (xPos)",
    "xPos's ζ_i = (2i/d + γ)/(1 + γ): pair 0 decays by γ/(1 + γ) every scale_base positions, the last pair "
    "barely. torchscale fixes γ at 0.4; a larger γ decays less. Must be > 0.",
    low=0.0, high=MAX_GAMMA, low_open=True, log=True, slider=(0.01, 100.0), title=lambda value: f"γ {value:g}",
)
SCALE_BASE = ParamSpec(
    "scale_base", "real", DEFAULT_SCALE_BASE, "scale_base",
    "xPos's scale is ζ_i^(distance / scale_base): the distance over which pair i decays by ζ_i (torchscale's "
    "xpos_scale_base, 512). Must be > 0.",
    low=0.0, high=limits.MAX_POSITION, low_open=True, log=True, slider=(8.0, 1e6),
    title=lambda value: f"scale_base {value:g}",
)
PARAMS = (ROPE_THETA, GAMMA, SCALE_BASE)


def rotation_frequencies(d_model: int, rope_theta: float) -> np.ndarray:
    """θ_i = rope_theta^(−2i/d_model) of the d_model/2 pairs: torchscale's ``fixed_pos_embedding``
    (``1 / 10000^(arange(0, d/2)/(d/2))``, the same exponents), RoPE's default frequencies."""
    inv_freq, _ = rope_frequencies({"rope_theta": rope_theta, "head_dim": d_model})
    return inv_freq


def _columns(dims: np.ndarray, d_model: int, rope_theta: float, gamma: float, scale_base: float) -> Columns:
    """The rotation as a table, as RoPE's: channel 2i holds cos(p·θ_i), channel 2i + 1 sin(p·θ_i).

    The scale ζ_i^(±p/scale_base) is left out: it multiplies q and k, not
    the rotation, and only its product over a query and a key (a function of
    their distance) reaches the logit.
    """
    _check_together(d_model)  # encode() does not check the options together: an odd d_model is named as such
    inv_freq = rotation_frequencies(d_model, rope_theta)
    zeta = xpos_zeta(d_model, gamma)
    pair = dims // 2
    kinds = np.where(dims % 2 == 1, "sin", "cos")
    divisor = 1.0 / inv_freq[pair]

    def label(j: int) -> str:
        i = pair[j]
        return (f"{kinds[j]}(pos · θ_{i}), θ_{i} = {inv_freq[i]:.6g} (the scale ζ_{i} = {zeta[i]:.6g} "
                f"per {scale_base:g} positions is not in this value)")

    # The divisor 1/θ_i beyond one pow: the reciprocal and rope_frequencies' own division, as RoPE's default.
    return Columns(kinds, divisor, label, divisor_extra_ulps=2.0)


def _rotation(d_model: int, seq_len: int, *, rope_theta: float, gamma: float, scale_base: float) -> Rotation:
    """torchscale's: interleaved pairs (rotate_every_two), no attention factor, the scale ζ_i per pair."""
    _check_together(d_model)
    return Rotation(rotation_frequencies(d_model, rope_theta), 1.0, "interleaved", xpos_zeta(d_model, gamma),
                    scale_base, xpos_farthest(d_model, gamma, scale_base))


def _check_together(d_model: int, **options: Any) -> None:
    if d_model % 2:
        raise ValueError(f"d_model must be even for xPos: its channels rotate in pairs (2i, 2i + 1); got {d_model}")


SCHEME = Scheme(
    key="xpos", label="xPos (Sun et al., torchscale)", order=120, family="rotation",
    summary="RoPE's rotation (pairs 2i, 2i + 1 interleaved, as torchscale's rotate_every_two) with a scale per "
    "pair: the query at m is multiplied by ζ_i^(m/scale_base) and the key at n by ζ_i^(−n/scale_base), "
    "ζ_i = (2i/d + γ)/(1 + γ), so pair i of the logit decays as ζ_i^((m − n)/scale_base) with the distance back "
    "to the key, the fast pairs soonest. No attention factor. d_model is the head dimension. The heatmap and "
    "waveforms show the rotation's cos and sin only: the scale is not in those columns (Positional logits shows "
    "its decay).",
    formula="q·k → Σ_i ζ_i^((m − n)/scale_base)·[pair i of q·R((n − m)·θ)·k],  ζ_i = (2i/d + γ)/(1 + γ),  "
    "θ_i = rope_theta^(−2i/d)",
    params=PARAMS, check_together=_check_together, columns=_columns, rotation=_rotation,
    presets=(
        Preset("xPos, torchscale defaults (γ 0.4, scale_base 512, head 64, 1,024 positions)", 1024, 64,
               {"rope_theta": 10000.0, "gamma": DEFAULT_GAMMA, "scale_base": DEFAULT_SCALE_BASE},
               "torchscale component/xpos_relative_position.py: XPOS(head_dim, scale_base=512), scale buffer "
               "(arange(0, d, 2) + 0.4·d)/(1.4·d), rotation base 10000 (fixed_pos_embedding); "
               "architecture/config.py DecoderConfig: xpos_scale_base 512, decoder_embed_dim 768 / 12 heads, "
               "max_target_positions 1024"),
    ),
)

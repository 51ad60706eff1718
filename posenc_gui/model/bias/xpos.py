"""xPos (Sun et al. 2022): torchscale's ``XPOS`` scale (``xpos_relative_position.py``), ζ_i^(±n/scale_base) per pair.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import limits
from ._common import BLOCK_ELEMENTS, check_flag

#: Largest xPos γ accepted (the paper's is 0.4; a larger γ decays less).
MAX_GAMMA = 1000.0
#: |ln| of the largest and smallest xPos scale allowed: float64 holds e^±709, the rest is a margin for pow.
XPOS_LOG_LIMIT = 700.0


def _check_rotary_dim(rotary_dim: object) -> int:
    dim = limits.check_int("rotary_dim", rotary_dim, 2, limits.MAX_D_MODEL)
    if dim % 2:
        raise ValueError(f"rotary_dim must be an even integer in 2…{limits.MAX_D_MODEL}, got {dim}")
    return dim


def _check_scale_base(scale_base: object) -> float:
    return limits.check_real("scale_base", scale_base, 0.0, limits.MAX_POSITION, low_open=True)


def xpos_zeta(rotary_dim: int, gamma: float = 0.4) -> np.ndarray:
    """xPos's ζ_i = (2i/d + γ)/(1 + γ) of each rotary pair i = 0 … d/2 − 1 (Sun et al. 2022).

    torchscale's ``XPOS`` buffer ``scale``: ``(arange(0, d, 2) + 0.4·d) / (1.4·d)``,
    γ fixed at 0.4 there. ζ rises from γ/(1 + γ) (pair 0, the fastest
    rotation, decays most) towards 1 (the slowest pairs barely decay).

    Parameters
    ----------
    rotary_dim : int
        d, even, ``2 … limits.MAX_D_MODEL``.
    gamma : float
        γ, > 0 and ≤ :data:`MAX_GAMMA`.

    Returns
    -------
    ndarray, shape (rotary_dim // 2,), float64
        Each within 3 ULP of its exact value (a division of integers, an
        addition and a division; 0.4 itself is rounded).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    dim = _check_rotary_dim(rotary_dim)
    g = limits.check_real("gamma", gamma, 0.0, MAX_GAMMA, low_open=True)
    return (2.0 * np.arange(dim // 2) / dim + g) / (1.0 + g)


def xpos_farthest(rotary_dim: int, gamma: float = 0.4, scale_base: float = 512) -> float:
    """The largest |exponent · scale_base| of an xPos scale ζ^(exponent): ``700·scale_base / |ln ζ_0|``.

    ζ_0 = γ/(1 + γ) is the smallest ζ, so every ζ_i^(±x/scale_base) with
    |x| up to this lies in e^±700, inside float64 (about 286,000 for the
    defaults), capped at ``limits.MAX_POSITION``. It bounds the positions
    of :func:`xpos_scale` and the distances of xPos's positional logits.
    """
    zeta = xpos_zeta(rotary_dim, gamma)
    base = _check_scale_base(scale_base)
    return min(limits.MAX_POSITION, XPOS_LOG_LIMIT * base / abs(math.log(zeta[0])))


def xpos_scale(
    positions, rotary_dim: int, gamma: float = 0.4, scale_base: float = 512, downscale: bool = False
) -> np.ndarray:
    """xPos's scale of each rotary channel at each position, applied on top of the rotation (Sun et al. 2022).

    ``ζ_i = (2i/d + γ)/(1 + γ)`` for the pair i = 0 … d/2 − 1; a query at
    position n is scaled by ``ζ_i^(n/scale_base)``, a key by
    ``ζ_i^(−n/scale_base)`` (``downscale``), so their product decays as
    ``ζ_i^((m − n)/scale_base)`` with the offset. As torchscale's
    ``XPOS``: one scale per pair, on both of its channels, pairs
    interleaved (channels 2i and 2i + 1, ``duplicate_interleave`` and
    ``rotate_every_two``).

    torchscale does not scale at the token's index but at an index
    centred on the block (:func:`xpos_centered_positions`); the centre
    cancels in every query-key product.

    Parameters
    ----------
    positions : array_like
        1-D positions, signed; |position| at most ``700 · scale_base /
        |ln(γ/(1+γ))|`` (about 286,000 for the defaults) and
        ``limits.MAX_POSITION``, so that every scale lies in e^±700.
        At most ``limits.MAX_ENCODE_ELEMENTS / rotary_dim`` of them.
    rotary_dim : int
        The rotated dimensions d, even, ``2 … limits.MAX_D_MODEL``.
    gamma : float
        γ, > 0 and ≤ :data:`MAX_GAMMA` (torchscale fixes it at 0.4).
    scale_base : float
        > 0 and ≤ ``limits.MAX_POSITION`` (torchscale's default 512).
    downscale : bool
        True for keys: ``ζ^(−n/scale_base)``.

    Returns
    -------
    ndarray, shape (len(positions), rotary_dim)
        float64 (torchscale computes in float32).

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    dim = _check_rotary_dim(rotary_dim)
    zeta = xpos_zeta(dim, gamma)
    base = _check_scale_base(scale_base)
    downscale = check_flag("downscale", downscale)
    farthest = xpos_farthest(dim, gamma, base)
    most = limits.MAX_ENCODE_ELEMENTS // dim
    positions = limits.check_numbers(
        "positions", positions, -farthest, farthest, most, "positions",
        f" (positions × rotary_dim ≤ {limits.MAX_ENCODE_ELEMENTS:,})",
    )
    exponent = (-positions if downscale else positions) / base
    scale = np.empty((positions.size, dim))
    rows = max(1, BLOCK_ELEMENTS // dim)
    for start in range(0, positions.size, rows):
        block = slice(start, start + rows)
        per_pair = np.power(zeta[:, None], exponent[None, block]).T  # positions innermost: pow's fast loop
        scale[block, 0::2] = per_pair  # torchscale's duplicate_interleave: each pair's scale on both channels
        scale[block, 1::2] = per_pair
    return scale


def xpos_centered_positions(length: int, offset: int = 0) -> np.ndarray:
    """The positions torchscale's ``XPOS.forward(x, offset)`` scales a block of ``length`` tokens at.

    The last ``length`` of ``arange(min_pos, max_pos)``, ``min_pos =
    −(length + offset) // 2`` (floor division), ``max_pos = length + offset
    + min_pos``: token t of ``length + offset`` is at ``t − ⌈(length + offset)/2⌉``.
    torchscale scales the keys with ``offset=0`` and the queries with
    ``offset`` = the cached length, so in every step a query and a key of
    the same token share a position.

    Parameters
    ----------
    length : int
        1 … ``limits.MAX_SEQ_LEN``.
    offset : int
        Tokens before the block, ``0 … limits.MAX_SEQ_LEN − length``.

    Returns
    -------
    ndarray of float64, shape (length,)
    """
    length = limits.check_int("length", length, 1, limits.MAX_SEQ_LEN)
    offset = limits.check_int("offset", offset, 0, limits.MAX_SEQ_LEN - length)
    total = length + offset
    return np.arange(offset, total, dtype=np.float64) + (-total // 2)

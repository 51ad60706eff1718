"""Learned absolute tables drawn as a model starts training (the untrained baseline): SplitMix64 counters, so a
view evaluates only the positions and dimensions it shows.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import limits
from ._common import BLOCK_ELEMENTS, check_seed, check_sigma

#: Hugging Face's ``initializer_range`` for BERT's and GPT-2's position embeddings.
DEFAULT_LEARNED_SIGMA = 0.02
_LEARNED_STREAM = 0x1EA2


_MASK64 = (1 << 64) - 1
#: SplitMix64 (Steele, Lea and Flood 2014; Vigna's ``splitmix64.c``): the state steps by this odd constant …
_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
#: … and each output is the state mixed by two multiply–xorshift rounds with these multipliers.
_SPLITMIX_MULTIPLIERS = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
#: Bits of a learned table's column index in its counter: ``limits.MAX_D_MODEL`` columns fit.
_COLUMN_BITS = 13
assert limits.MAX_D_MODEL <= 1 << _COLUMN_BITS


def splitmix64_mix(state: int) -> int:
    """SplitMix64's output function of one 64-bit state (a Python int), as in Vigna's ``splitmix64.c``.

    ``z = (z ^ (z >> 30))·0xBF58476D1CE4E5B9``, ``z = (z ^ (z >> 27))·0x94D049BB133111EB``,
    ``z ^ (z >> 31)``, all modulo 2⁶⁴. The k-th output (k = 1, 2, …) of the
    generator seeded with s is ``splitmix64_mix(s + k·0x9E3779B97F4A7C15)``.
    """
    z = state & _MASK64
    z = ((z ^ (z >> 30)) * _SPLITMIX_MULTIPLIERS[0]) & _MASK64
    z = ((z ^ (z >> 27)) * _SPLITMIX_MULTIPLIERS[1]) & _MASK64
    return z ^ (z >> 31)


def _mix_in_place(z: np.ndarray, scratch: np.ndarray) -> None:
    """:func:`splitmix64_mix` of every element of the uint64 array ``z``, in place (uint64 products wrap)."""
    for shift, multiplier in ((30, _SPLITMIX_MULTIPLIERS[0]), (27, _SPLITMIX_MULTIPLIERS[1])):
        np.right_shift(z, np.uint64(shift), out=scratch)
        z ^= scratch
        z *= np.uint64(multiplier)
    np.right_shift(z, np.uint64(31), out=scratch)
    z ^= scratch


def _open_unit(z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The top 52 bits of each uint64 as a float64 in (0, 1): ``((z >> 12) + ½)·2⁻⁵²``, exact; ``z`` is spent."""
    z >>= np.uint64(12)
    out[...] = z  # below 2⁵²: exact
    out += 0.5
    out *= 2.0**-52
    return out


def learned_key(seed: int) -> int:
    """The SplitMix64 seed of a learned table drawn with ``seed``: ``splitmix64_mix(seed·2¹⁶ + 0x1EA2)``."""
    return splitmix64_mix((check_seed(seed) << 16) | _LEARNED_STREAM)


def learned_values(positions, dims, sigma: float = DEFAULT_LEARNED_SIGMA, seed: int = 0) -> np.ndarray:
    """Entries of a seeded untrained learned table at any positions and columns, each drawn on its own.

    Entry (p, j) — row ⌊p⌋, column j — is ``sigma·√(−2 ln u₁)·cos(2π u₂)``
    (Box–Muller), with u₁ and u₂ SplitMix64 outputs number 2c + 1 and 2c + 2
    of the generator seeded with ``learned_key(seed)``, for the counter
    ``c = ⌊p⌋·2¹³ + j``, each turned into ``((output >> 12) + ½)·2⁻⁵²`` in
    (0, 1). So an entry depends on ``seed``, its row and its column only:
    not on which other positions or columns are asked for, their order or
    their number, nor on d_model. A view can sample one position in a
    thousand of a million-row table without drawing the others.

    Parameters
    ----------
    positions : array_like
        1-D positions in ``0 … limits.MAX_POSITION``; a position that is not an
        integer has the entries of its row ⌊p⌋ (the table is constant between rows).
    dims : array_like of int
        1-D column indices in ``0 … limits.MAX_D_MODEL − 1``.
        positions × dims at most ``limits.MAX_ENCODE_ELEMENTS``.
    sigma : float
        The standard deviation, > 0 and ≤ :data:`MAX_SIGMA`.
    seed : int
        0 … :data:`MAX_SEED`.

    Returns
    -------
    ndarray, shape (len(positions), len(dims)), float64
        The integer arithmetic is exact on every CPU; ``log`` and ``cos``
        may differ by an ULP or two between CPUs (SIMD or libm), never between
        two calls on one machine.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    rows = np.floor(limits.check_positions(positions)).astype(np.uint64)
    columns = limits.check_integers("dims", dims, 0, limits.MAX_D_MODEL - 1, limits.MAX_DIMS, "dimensions")
    limits.check_size("positions × dims", rows.size, columns.size, limits.MAX_ENCODE_ELEMENTS)
    scale = check_sigma(sigma)
    key = np.uint64(learned_key(seed))
    gamma = np.uint64(_SPLITMIX_GAMMA)
    row_counters = rows << np.uint64(_COLUMN_BITS)
    column_counters = columns.astype(np.uint64)
    out = np.empty((rows.size, columns.size))
    if out.size == 0:
        return out
    step = max(1, BLOCK_ELEMENTS // columns.size)
    for start in range(0, rows.size, step):
        block = slice(start, start + step)
        counter = row_counters[block, None] | column_counters[None, :]
        first = counter << np.uint64(1)  # output 2c + 1: state key + (2c + 1)·γ
        first += np.uint64(1)
        first *= gamma
        first += key
        second = first + gamma  # output 2c + 2
        scratch = np.empty_like(first)
        radius, angle = np.empty(first.shape), np.empty(first.shape)
        _mix_in_place(first, scratch)
        _mix_in_place(second, scratch)
        np.log(_open_unit(first, radius), out=radius)
        radius *= -2.0
        np.sqrt(radius, out=radius)
        _open_unit(second, angle)
        angle *= 2.0 * math.pi
        np.cos(angle, out=angle)
        np.multiply(radius, angle, out=out[block])
    out *= scale
    return out


def learned_table(n_positions: int, d_model: int, sigma: float = DEFAULT_LEARNED_SIGMA, seed: int = 0) -> np.ndarray:
    """A learned absolute position table as training starts: N(0, sigma²), seeded.

    Row p is position p's vector (BERT's ``position_embeddings``, GPT-2's
    ``wpe``); positions from ``n_positions`` on have none. Entry (p, j) is
    :func:`learned_values`' (it depends on the seed, p and j only), so a
    longer table extends a shorter one and a wider one a narrower one.

    Parameters
    ----------
    n_positions : int
        ``1 … limits.MAX_SEQ_LEN``.
    d_model : int
        ``limits.MIN_D_MODEL … limits.MAX_D_MODEL``; ``n_positions × d_model``
        at most ``limits.MAX_ENCODE_ELEMENTS``.
    sigma : float
        > 0 and ≤ :data:`MAX_SIGMA` (default :data:`DEFAULT_LEARNED_SIGMA`).
    seed : int
        0 … :data:`MAX_SEED`.

    Returns
    -------
    ndarray, shape (n_positions, d_model)

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    rows = limits.check_int("n_positions", n_positions, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    columns = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    limits.check_size("n_positions × d_model", rows, columns, limits.MAX_ENCODE_ELEMENTS)
    return learned_values(np.arange(rows, dtype=np.float64), np.arange(columns), check_sigma(sigma), check_seed(seed))

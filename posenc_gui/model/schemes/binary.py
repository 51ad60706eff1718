"""The bits of the position: dimension k holds bit k of ⌊pos⌋, least significant first.

Shown as ±1 by default (2·bit − 1), so that a dot product of two positions
is d_model − 2 × their Hamming distance and every dimension is centred like
a sine; ``bit_values="unsigned"`` gives the bits themselves (0/1). Bit k is
a square wave of period 2^(k+1) positions. Positions are below 2^40
(``limits.MAX_POSITION``), so bits 40 and up are 0 everywhere.
"""

import numpy as np

from ..core.specs import ParamSpec
from ._core import Scheme

BIT_VALUES = ParamSpec(
    "bit_values", "choice", "signed", "bit values",
    "signed: each bit as −1 or +1 (2·bit − 1); unsigned: the bit itself, 0 or 1.",
    choices=(("signed", "signed — −1 / +1 (2·bit − 1)"), ("unsigned", "unsigned — 0 / 1")),
    title=lambda value: "bits as ±1" if value == "signed" else "bits as 0/1", slug=lambda value: "" if value == "signed" else "01",
)
#: Positions are below 2**40, so a shift by 63 gives bit 63 = 0, as any higher bit.
_TOP_BIT = 63


def _bits(positions: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Bit ``dims[j]`` of ⌊positions[i]⌋, as 0.0 or 1.0."""
    whole = np.floor(positions).astype(np.uint64)
    shifts = np.minimum(dims, _TOP_BIT).astype(np.uint64)
    return ((whole[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.float64)


def _shown(bits: np.ndarray, bit_values: str) -> np.ndarray:
    return 2.0 * bits - 1.0 if bit_values == "signed" else bits


def _table(positions: np.ndarray, dims: np.ndarray, d_model: int, bit_values: str) -> np.ndarray:
    return _shown(_bits(positions, dims), bit_values)


def _extremes(low: np.ndarray, high: np.ndarray, dims: np.ndarray, d_model: int,
              bit_values: str) -> tuple[np.ndarray, np.ndarray]:
    """Bit k is constant over ⌊low⌋ … ⌊high⌋ when both are in one block of 2^k integers, else takes both values."""
    shifts = np.minimum(dims, _TOP_BIT).astype(np.uint64)
    first, last = np.floor(low).astype(np.uint64), np.floor(high).astype(np.uint64)
    constant = (first[:, None] >> shifts[None, :]) == (last[:, None] >> shifts[None, :])
    bits = _bits(low, dims)
    return _shown(np.where(constant, bits, 0.0), bit_values), _shown(np.where(constant, bits, 1.0), bit_values)


def _periods(dims: np.ndarray, d_model: int, bit_values: str) -> np.ndarray:
    exponent = dims + 1
    # 2^1024 and up are no float64: such a bit's period is infinite here (positions are below 2^40 anyway)
    return np.where(exponent < 1024, np.ldexp(1.0, np.minimum(exponent, 1023).astype(np.int32)), np.inf)


def _term(dim: int, d_model: int, bit_values: str) -> str:
    return f"2·bit{dim}(⌊pos⌋) − 1" if bit_values == "signed" else f"bit{dim}(⌊pos⌋)"


SCHEME = Scheme(
    key="binary", label="Binary (bits of the position)", order=90,
    summary="Dimension k is bit k of the position (least significant first): a square wave of period 2^(k+1). "
    "Unique for every position below 2^d, but each step flips bits of very different weight, so nearby "
    "positions need not be similar (7 and 8 differ in four bits).",
    formula="PE(pos, k) = 2·((⌊pos⌋ >> k) & 1) − 1   (or the bit itself, 0/1)",
    params=(BIT_VALUES,), table=_table, periods=_periods, term=_term, exact=True, extremes=_extremes,
)

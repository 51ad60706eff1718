"""ALiBi (Press et al. 2022): the slopes of the authors' fairseq code (``get_slopes``), the paper's bias −m·(i − j).
"""

from __future__ import annotations

import numpy as np

from ..core import limits
from ._common import MAX_HEADS, check_flag, query_key_positions

#: Largest ALiBi slope accepted; every slope of the rule lies in (0, 1).
MAX_SLOPE = 1.0


def _exp2_exact(exponents: np.ndarray) -> np.ndarray:
    """``2**exponents``, exact where an exponent is an integer (``np.exp2`` is only within a few ULP)."""
    whole = np.floor(exponents)
    fraction = exponents - whole  # exact
    mantissa = np.where(fraction == 0.0, 1.0, np.exp2(fraction))
    return np.ldexp(mantissa, whole.astype(np.int64))


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope of every head, as in the authors' fairseq code (Press et al. 2022).

    For a power of two n the slopes are ``2^(−8k/n)``, k = 1 … n (n = 8:
    1/2 … 1/256). Otherwise, with c the largest power of two below n, the
    slopes of c heads are followed by every other slope of 2c heads, from
    the first: ``slopes(c) + slopes(2c)[0::2][:n − c]``. So for a head count
    that is not a power of two the largest slope is not head 0's (n = 3:
    1/16, 1/256, 1/4).

    Parameters
    ----------
    n_heads : int
        1 … :data:`MAX_HEADS`.

    Returns
    -------
    ndarray, shape (n_heads,)
        float64. Every exponent −8k/n is exact (n is a power of two), so a
        slope that is a power of two is exact and the others are within
        ``np.exp2``'s accuracy. fairseq computes ``start·start**i`` in Python
        floats and keeps float32 (``torch.Tensor``); Hugging Face's BLOOM
        (``build_alibi_tensor``) raises a float32 base to integer powers:
        both agree with these to float32 precision.

    Raises
    ------
    ValueError
        Naming ``n_heads`` and its allowed range.
    """
    n = limits.check_int("n_heads", n_heads, 1, MAX_HEADS)
    closest = 1 << (n.bit_length() - 1)  # 2**floor(log2 n)
    exponents = -8.0 * np.arange(1, closest + 1) / closest
    if closest != n:
        doubled = -8.0 * np.arange(1, 2 * closest + 1) / (2 * closest)
        exponents = np.concatenate([exponents, doubled[0::2][: n - closest]])
    return _exp2_exact(exponents)


def alibi_bias(query_positions, key_positions, slope: float, causal: bool = True) -> np.ndarray:
    """ALiBi's bias added to the logit of a query at position i and a key at position j.

    Causal (the paper's decoder): ``−m·(i − j)`` for keys j ≤ i and ``−inf``
    (masked) for j > i. Not causal (bidirectional use): ``−m·|i − j|``. The
    fairseq code adds ``m·j`` instead, which differs by ``−m·i`` in each
    query's row and so gives the same softmax.

    Parameters
    ----------
    query_positions, key_positions : array_like
        1-D positions in ``0 … limits.MAX_POSITION`` (any real numbers);
        queries × keys at most ``limits.MAX_SIMILARITY_ELEMENTS``, checked
        before the matrix is allocated.
    slope : float
        The head's slope m, ``0 … MAX_SLOPE`` (see :func:`alibi_slopes`).
    causal : bool

    Returns
    -------
    ndarray, shape (len(query_positions), len(key_positions))

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    queries, keys = query_key_positions(query_positions, key_positions)
    m = limits.check_real("slope", slope, 0.0, MAX_SLOPE)
    causal = check_flag("causal", causal)
    bias = keys[None, :] - queries[:, None]  # j − i, then the bias in place
    if not causal:
        np.abs(bias, out=bias)
        bias *= -m
        bias += 0.0  # +0 on the diagonal, not −0
        return bias
    future = bias > 0
    bias *= m
    np.copyto(bias, -np.inf, where=future)
    return bias

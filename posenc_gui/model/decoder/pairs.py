"""Which RoPE frequency pairs a head uses: each rotary pair's share of its query–key logits (Barbero et al. 2024).

After RoPE, the logit of query i and key j of a head splits exactly into one
term per rotary pair p (channels a = p, b = p + r/2) and the channels RoPE
leaves alone::

    q_i·k_j / √d = Σ_p (q_ia k_ja + q_ib k_jb) / √d + Σ_{c ≥ r} q_ic k_jc / √d

Each pair's term depends on i − j only through the rotation by (i − j)·θ_p,
scaled by the pair's norms |q_i,p| |k_j,p| (a rotation keeps a pair's norm),
so the norms per pair show which frequencies a head can use, and the mean
|term| over the causal (i, j ≤ i) logits which it does use ("Round and round
we go! What makes Rotary Positional Encodings useful?", Barbero et al. 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import limits
from .trace import DecoderTrace

#: Pair terms formed at once (pairs × query rows × keys): bounds the memory whatever T is.
TERM_VALUES = 2**22


@dataclass(frozen=True, eq=False)
class PairContributions:
    """One head's logits split by rotary pair (see the module docstring). P = rotary_dim / 2, T tokens.

    Attributes
    ----------
    layer, head, query : int
        ``query`` is the token whose logits ``logits`` splits.
    inv_freq : ndarray (P,)
        θ_p of each pair (wavelength 2π/θ_p).
    first, second : ndarray of int (P,)
        The channels of each pair: (p, p + rotary_dim/2).
    query_norms, key_norms : ndarray (T, P)
        |(q_a, q_b)| and |(k_a, k_b)| of every token and pair, after RoPE.
    logits : ndarray (P, query + 1)
        Each pair's term of the scaled logit of ``query`` against keys 0…query.
    rest : ndarray (query + 1,)
        The term of the channels RoPE does not rotate (0 with full rotary);
        ``logits.sum(0) + rest`` is the logit the softmax sees.
    share : ndarray (P,)
        Mean |term| of each pair over every causal logit (i ≥ j), divided by
        the sum of those means over the pairs and ``rest_share``'s channels: sums to 1 with it.
    rest_share : float
    """

    layer: int
    head: int
    query: int
    inv_freq: np.ndarray
    first: np.ndarray
    second: np.ndarray
    query_norms: np.ndarray
    key_norms: np.ndarray
    logits: np.ndarray
    rest: np.ndarray
    share: np.ndarray
    rest_share: float


def pair_contributions(trace: DecoderTrace, layer: int, head: int, query: int | None = None) -> PairContributions:
    """Split head ``head`` of ``layer`` in ``trace`` by rotary pair (see :class:`PairContributions`).

    Parameters
    ----------
    trace : DecoderTrace
    layer : int
        A layer the trace kept.
    head : int
        A query head, 0 … num_heads − 1.
    query : int or None
        The token whose logits are split, 0 … T − 1 (None: the last).

    Raises
    ------
    ValueError
        Naming the argument and its range.
    """
    queries = trace.queries(layer)
    head = limits.check_int("head", head, 0, trace.num_heads - 1)
    count = queries.shape[1]
    query = count - 1 if query is None else limits.check_int("query", query, 0, count - 1)
    q = queries[head].astype(np.float64)
    k = trace.keys(layer)[head].astype(np.float64)
    pairs = trace.inv_freq.size
    first = np.arange(pairs)
    second = first + pairs
    scale = 1.0 / np.sqrt(trace.head_dim)
    mean_abs, rest_mean = _mean_abs_terms(q, k, pairs, scale)
    total = mean_abs.sum() + rest_mean
    share = mean_abs / total if total > 0 else np.zeros(pairs)
    keys = slice(0, query + 1)
    logits = (q[query, first][:, None] * k[keys, first].T + q[query, second][:, None] * k[keys, second].T) * scale
    return PairContributions(
        layer=int(layer), head=head, query=query, inv_freq=trace.inv_freq, first=first, second=second,
        query_norms=np.hypot(q[:, first], q[:, second]), key_norms=np.hypot(k[:, first], k[:, second]),
        logits=logits, rest=(q[query, 2 * pairs:] @ k[keys, 2 * pairs:].T) * scale, share=share,
        rest_share=rest_mean / total if total > 0 else 0.0)


def _mean_abs_terms(q: np.ndarray, k: np.ndarray, pairs: int, scale: float) -> tuple[np.ndarray, float]:
    """Mean |term| of each pair, and of the channels past the rotary ones, over the causal logits (i ≥ j);
    the terms are formed :data:`TERM_VALUES` at a time, a block of query rows against the keys they see."""
    count = q.shape[0]
    sums, rest_sum = np.zeros(pairs), 0.0
    rows = max(1, TERM_VALUES // (pairs * count))
    qa, qb, ka, kb = q[:, :pairs], q[:, pairs:2 * pairs], k[:, :pairs], k[:, pairs:2 * pairs]
    for start in range(0, count, rows):
        stop = min(count, start + rows)
        causal = np.arange(start, stop)[:, None] >= np.arange(stop)[None, :]
        terms = (qa[start:stop].T[:, :, None] * ka[:stop].T[:, None, :]
                 + qb[start:stop].T[:, :, None] * kb[:stop].T[:, None, :])  # (pairs, rows, keys)
        sums += np.abs(terms * causal).sum(axis=(1, 2))
        if q.shape[1] > 2 * pairs:
            rest_sum += float(np.abs((q[start:stop, 2 * pairs:] @ k[:stop, 2 * pairs:].T) * causal).sum())
    logits = count * (count + 1) / 2
    return sums * scale / logits, rest_sum * scale / logits

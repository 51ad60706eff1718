"""T5's relative position buckets: Hugging Face's ``T5Attention._relative_position_bucket`` (float32
logarithm, truncation toward zero), relative position = key − query, and the bias tables drawn as training starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from ..core import limits
from ._common import (BLOCK_ELEMENTS, MAX_HEADS, check_flag, check_seed, check_sigma, normal_table,
                      query_key_positions)

#: Most T5 buckets.
MAX_BUCKETS = 4096
#: Hugging Face's T5 initialisation of ``relative_attention_bias``: ``d_model**-0.5`` (t5-small, d_model 512).
DEFAULT_T5_SIGMA = 512**-0.5
_T5_STREAM = 0x75


def _check_t5_settings(bidirectional: object, num_buckets: object, max_distance: object) -> tuple[bool, int, int]:
    """The bucket settings, validated: T5's formula needs at least one exact and one logarithmic bucket."""
    bidirectional = check_flag("bidirectional", bidirectional)
    buckets = limits.check_int("num_buckets", num_buckets, 4 if bidirectional else 2, MAX_BUCKETS)
    max_exact = (buckets // 2 if bidirectional else buckets) // 2
    distance = limits.check_int("max_distance", max_distance, max_exact + 1, int(limits.MAX_POSITION))
    return bidirectional, buckets, distance


def _integers(name: str, values: object, low: float, high: float, limit: int) -> np.ndarray:
    """``values`` as float64 integers in ``[low, high]``: an ndarray keeps its shape, anything else is 1-D."""
    if isinstance(values, np.ndarray):
        limits.check_count(name, values.size, limit, "values")
        flat = limits.check_numbers(name, values.reshape(-1), low, high, limit)
        shape = values.shape
    else:
        flat = limits.check_numbers(name, values, low, high, limit)
        shape = flat.shape
    fractional = flat[flat != np.floor(flat)]
    if fractional.size:
        raise ValueError(f"{name} must be integers in {low:g}…{high:g}, got {limits.shown(fractional[0])}")
    return flat.reshape(shape)


def _buckets(relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
    """Hugging Face's ``_relative_position_bucket`` on int64 relative positions (settings already checked)."""
    buckets = np.zeros(relative.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0) * num_buckets
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    # float32 as in the reference: distance.float() / max_exact, a float32 log (here correctly rounded, through
    # float64, so that no CPU's log changes a bucket), divided by math.log(...) and multiplied in float32.
    # Distances below max_exact are replaced by max_exact before the log: their bucket is the distance itself.
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    scaled = log_ratio / np.float32(math.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact)
    if_large = np.minimum(max_exact + scaled.astype(np.int64), num_buckets - 1)  # astype truncates toward zero
    return buckets + np.where(is_small, distance, if_large)


def t5_relative_bucket(
    relative_position, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """T5's bucket for each relative position (key position − query position), as Hugging Face computes it.

    Bidirectional (encoder): half the buckets for keys after the query
    (offset by ``num_buckets // 2``), half for the others, by distance
    ``|relative|``; causal (decoder): distance ``−min(relative, 0)``, so
    every key after the query falls in bucket 0. Of each half, distances
    below ``max_exact`` (half of it) have a bucket each; larger distances
    share logarithmically wider buckets, ``max_exact + trunc(ln(n /
    max_exact) / ln(max_distance / max_exact) · (half − max_exact))`` in
    float32, up to the half's last bucket, which holds every distance
    from about ``max_distance`` on.

    Parameters
    ----------
    relative_position : array_like of int
        Integers in ``−limits.MAX_POSITION … limits.MAX_POSITION``, at most
        ``limits.MAX_SIMILARITY_ELEMENTS`` of them. An ndarray may have any
        shape (a query × key matrix); anything else is read as 1-D (one
        number gives one bucket).
    bidirectional : bool
    num_buckets : int
        4 … :data:`MAX_BUCKETS` when bidirectional, 2 … when causal.
    max_distance : int
        Greater than ``max_exact`` (8 for the defaults), at most ``limits.MAX_POSITION``.

    Returns
    -------
    ndarray of int64, the shape of ``relative_position``
        Buckets in ``0 … num_buckets − 1``.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    bidirectional, num_buckets, max_distance = _check_t5_settings(bidirectional, num_buckets, max_distance)
    relative = _integers(
        "relative_position", relative_position, -limits.MAX_POSITION, limits.MAX_POSITION,
        limits.MAX_SIMILARITY_ELEMENTS,
    )
    flat = relative.reshape(-1)
    buckets = np.empty(flat.shape, dtype=np.int64)
    for start in range(0, flat.size, BLOCK_ELEMENTS):
        block = slice(start, start + BLOCK_ELEMENTS)
        buckets[block] = _buckets(flat[block].astype(np.int64), bidirectional, num_buckets, max_distance)
    return buckets.reshape(relative.shape)


def t5_random_table(num_buckets: int, n_heads: int, seed: int = 0, sigma: float = DEFAULT_T5_SIGMA) -> np.ndarray:
    """A T5 bias table (bucket × head) drawn as training starts: N(0, sigma²), seeded.

    Parameters
    ----------
    num_buckets : int
        2 … :data:`MAX_BUCKETS`.
    n_heads : int
        1 … :data:`MAX_HEADS`.
    seed : int
        0 … :data:`MAX_SEED`; the same seed, ``num_buckets`` and ``n_heads`` give the same table.
    sigma : float
        The standard deviation, > 0 and ≤ :data:`MAX_SIGMA` (default
        :data:`DEFAULT_T5_SIGMA`, Hugging Face's initialisation for t5-small).

    Returns
    -------
    ndarray, shape (num_buckets, n_heads)
    """
    buckets = limits.check_int("num_buckets", num_buckets, 2, MAX_BUCKETS)
    heads = limits.check_int("n_heads", n_heads, 1, MAX_HEADS)
    return normal_table((buckets, heads), check_sigma(sigma), [check_seed(seed), _T5_STREAM, buckets, heads])


def t5_bias(
    query_positions,
    key_positions,
    table,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    head: int | None = None,
) -> np.ndarray:
    """T5's relative position bias: ``table[bucket(key − query), head]`` for every query and key.

    As Hugging Face's ``T5Attention.compute_bias``; when causal (the
    decoder), keys after the query are masked with ``−inf``, as the
    decoder's causal mask does (their bucket, 0, is never used).

    Parameters
    ----------
    query_positions, key_positions : array_like
        1-D integer positions in ``0 … limits.MAX_POSITION``; queries × keys
        (× heads, when ``head`` is None) at most ``limits.MAX_SIMILARITY_ELEMENTS``,
        checked before anything is allocated.
    table : array_like, shape (num_buckets, n_heads)
        Finite biases, one per bucket and head (:func:`t5_random_table`, or
        a model's ``relative_attention_bias.weight``); 1 … :data:`MAX_HEADS` heads.
    bidirectional, num_buckets, max_distance
        As for :func:`t5_relative_bucket`.
    head : int or None
        One head, ``0 … n_heads − 1``; None for all of them.

    Returns
    -------
    ndarray
        Shape (len(query_positions), len(key_positions)) for one head;
        (n_heads, len(query_positions), len(key_positions)) for all, as
        ``compute_bias`` without its batch axis.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed values.
    """
    bidirectional, num_buckets, max_distance = _check_t5_settings(bidirectional, num_buckets, max_distance)
    queries, keys = query_key_positions(query_positions, key_positions)
    for name, positions in (("query_positions", queries), ("key_positions", keys)):
        if not np.all(positions == np.floor(positions)):
            raise ValueError(f"{name} must be integers in 0…{limits.MAX_POSITION:g}")
    table = limits.check_matrix("table", table, MAX_BUCKETS * MAX_HEADS)
    if table.shape[0] != num_buckets:
        raise ValueError(f"table must have num_buckets ({num_buckets}) rows, one per bucket; got {table.shape[0]}")
    n_heads = table.shape[1]
    if not 1 <= n_heads <= MAX_HEADS:
        raise ValueError(f"table must have 1…{MAX_HEADS} columns (heads), got {n_heads}")
    if head is None:
        limits.check_size("heads × query_positions", n_heads * queries.size, keys.size, limits.MAX_SIMILARITY_ELEMENTS)
    else:
        head = limits.check_int("head", head, 0, n_heads - 1)
    heads_table = table.T if head is None else table[:, head]  # (heads, buckets) or (buckets,)
    queries, keys = queries.astype(np.int64), keys.astype(np.int64)
    bias = np.empty(heads_table.shape[:-1] + (queries.size, keys.size))
    rows = max(1, BLOCK_ELEMENTS // keys.size)
    for start in range(0, queries.size, rows):
        block = slice(start, start + rows)
        relative = keys[None, :] - queries[block, None]  # key − query
        values = heads_table[..., _buckets(relative, bidirectional, num_buckets, max_distance)]
        if not bidirectional:
            np.copyto(values, -np.inf, where=relative > 0)
        bias[..., block, :] = values
    return bias


@dataclass(frozen=True)
class BucketMap:
    """T5's bucket of every relative position key − query in −(N − 1) … N − 1, as runs of one bucket.

    Attributes
    ----------
    starts : ndarray of int64
        The first relative position of each run, ascending from −(N − 1); a
        run lasts up to the next one's start (the last one up to N − 1).
        Neighbouring runs have different buckets.
    buckets : ndarray of int64
        The bucket of each run (:func:`t5_relative_bucket`).
    bidirectional : bool
    num_buckets, max_distance : int
    """

    starts: np.ndarray
    buckets: np.ndarray
    bidirectional: bool
    num_buckets: int
    max_distance: int

    @property
    def side_buckets(self) -> int:
        """The buckets of one side of the query: half of them when bidirectional, all when causal."""
        return self.num_buckets // 2 if self.bidirectional else self.num_buckets

    @property
    def max_exact(self) -> int:
        """The distances below this one have a bucket each; from it on the buckets are log-spaced."""
        return self.side_buckets // 2

    @property
    def farthest(self) -> int:
        """The largest |relative position| at which a bucket changes: every position farther away shares its
        side's last bucket (0 when there is a single run)."""
        changes = self.starts[1:]
        # before the query the farther run is the earlier one, which ends at the next run's start − 1
        outward = np.where(changes <= 0, 1 - changes, changes)
        return int(outward.max(initial=0))


def _bucket_of_distance(distances: np.ndarray, options) -> np.ndarray:
    """The bucket of the key ``distances`` before the query (relative position −distance)."""
    return t5_relative_bucket(-distances, options["bidirectional"], options["num_buckets"], options["max_distance"])


def _distance_runs(seq_len: int, options) -> np.ndarray:
    """The first distance of each run of one bucket among the keys 0 … seq_len − 1 before the query.

    A side's bucket never decreases with the distance, so the first distance
    reaching each bucket is found by bisection, for every bucket at once.
    """
    side = options["num_buckets"] // 2 if options["bidirectional"] else options["num_buckets"]
    targets = np.arange(1, side, dtype=np.int64)
    low = np.zeros(targets.size, dtype=np.int64)
    high = np.full(targets.size, seq_len, dtype=np.int64)  # seq_len: no distance reaches the bucket
    while np.any(low < high):
        searching = low < high
        middle = (low + high) // 2  # < high ≤ seq_len where searching
        reached = _bucket_of_distance(np.minimum(middle, seq_len - 1), options) >= targets
        high = np.where(searching & reached, middle, high)
        low = np.where(searching & ~reached, middle + 1, low)
    return np.unique(np.concatenate([[0], low[low < seq_len]]))


def t5_bucket_map(length: int, bidirectional: bool, num_buckets: int, max_distance: int) -> BucketMap:
    """The bucket of every relative position −(length − 1) … length − 1, as runs of one bucket.

    ``length`` is the number of positions N (1 … ``limits.MAX_SEQ_LEN``); the
    settings are :func:`t5_relative_bucket`'s (ValueError as there).
    """
    length = limits.check_int("seq_len", length, 1, limits.MAX_SEQ_LEN)
    bidirectional, num_buckets, max_distance = _check_t5_settings(bidirectional, num_buckets, max_distance)
    options = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    firsts = _distance_runs(length, options)
    # keys before the query: a run of distances d_i … d_(i+1) − 1 starts at relative position −(d_(i+1) − 1)
    before = -(np.append(firsts[1:], length) - 1)[::-1]
    after = np.unique(np.maximum(firsts, 1))
    starts = np.concatenate([before, after[after < length]])
    buckets = t5_relative_bucket(starts, options["bidirectional"], options["num_buckets"], options["max_distance"])
    new = np.concatenate([[True], buckets[1:] != buckets[:-1]])  # causal: the keys after share bucket 0 with 0
    return BucketMap(starts[new].astype(np.int64), buckets[new], options["bidirectional"], options["num_buckets"],
                     options["max_distance"])

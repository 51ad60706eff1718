"""What the Attention-bias panel shows: a bias scheme's matrix for one head, ALiBi's slopes and T5's bucket map.

Every value is exact at the positions evaluated: a bias depends on the
query and key positions alone, so a sampled matrix holds the bias of each
sampled pair. T5's bucket of every relative position is exact too, kept as
the runs of relative positions that share a bucket (a few dozen runs,
whatever the number of positions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import limits
from .bias import alibi_slopes, t5_relative_bucket
from .attention.logits import positional_logits
from .core.params import EncodingParams, check_params
from .core.sampling import AxisSample
from .schemes.t5 import random_table, table_sigma


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
        The bucket of each run (:func:`~posenc_gui.model.bias.t5_relative_bucket`).
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


@dataclass(frozen=True)
class AttentionBiasData:
    """The bias of the chosen head over query × key positions, and the structure behind it.

    Attributes
    ----------
    params : EncodingParams
    rows, cols : AxisSample
        The query positions (rows) and key positions (columns) of the matrix.
    matrix : ndarray, shape (rows.count, cols.count)
        The bias added to the logit of each query and key, ``−inf`` where the key is masked.
    masked : int
        Cells of the matrix that are masked.
    slopes : ndarray or None
        ALiBi: every head's slope m (:func:`~posenc_gui.model.bias.alibi_slopes`); None for another scheme.
    table : ndarray or None
        T5: the bias of every bucket (row) and head (column), an untrained seeded draw; None for another scheme.
    table_sigma : float or None
        T5: the standard deviation of the draw, d_model^−0.5 (Hugging Face's initialisation).
    buckets : BucketMap or None
        T5: the bucket of every relative position; None for another scheme.
    """

    params: EncodingParams
    rows: AxisSample
    cols: AxisSample
    matrix: np.ndarray
    masked: int
    slopes: np.ndarray | None
    table: np.ndarray | None
    table_sigma: float | None
    buckets: BucketMap | None

    @property
    def head(self) -> int:
        """The head shown."""
        return int(self.params.options["head"])

    @property
    def slope(self) -> float | None:
        """ALiBi: the shown head's slope."""
        return None if self.slopes is None else float(self.slopes[self.head])

    @property
    def power_of_two_heads(self) -> int:
        """ALiBi's c, the largest power of two up to n_heads: heads 0 … c − 1 have c heads' slopes, the others
        every other slope of 2c heads'."""
        return 1 << (int(self.params.options["n_heads"]).bit_length() - 1)


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


def bucket_map(params: EncodingParams) -> BucketMap:
    """The bucket of every relative position of ``params`` (a t5 scheme's), as runs of one bucket.

    Raises
    ------
    ValueError
        For parameters of another scheme.
    """
    params = check_params(params)
    if params.scheme != "t5":
        raise ValueError(f"params must be of the t5 scheme, got {params.scheme!r}")
    options, length = params.options, params.seq_len
    firsts = _distance_runs(length, options)
    # keys before the query: a run of distances d_i … d_(i+1) − 1 starts at relative position −(d_(i+1) − 1)
    before = -(np.append(firsts[1:], length) - 1)[::-1]
    after = np.unique(np.maximum(firsts, 1))
    starts = np.concatenate([before, after[after < length]])
    buckets = t5_relative_bucket(starts, options["bidirectional"], options["num_buckets"], options["max_distance"])
    new = np.concatenate([[True], buckets[1:] != buckets[:-1]])  # causal: the keys after share bucket 0 with 0
    return BucketMap(starts[new].astype(np.int64), buckets[new], options["bidirectional"], options["num_buckets"],
                     options["max_distance"])


def _check_sample(name: str, sample: object, seq_len: int) -> AxisSample:
    if not isinstance(sample, AxisSample):
        raise ValueError(f"{name} must be an AxisSample, got {limits.shown(sample)}")
    if sample.count < 1 or sample.start < 0 or sample.start + sample.stride * (sample.count - 1) >= seq_len:
        raise ValueError(f"{name} must sample positions in 0…{seq_len - 1}, got {sample}")
    return sample


def attention_bias_data(params: EncodingParams, rows: AxisSample, cols: AxisSample) -> AttentionBiasData:
    """The Attention-bias panel's data for ``params`` (a bias scheme's) at the sampled positions.

    Parameters
    ----------
    params : EncodingParams
        A bias scheme's parameters.
    rows, cols : AxisSample
        Query positions (rows) and key positions (columns) within ``0 … seq_len − 1``;
        rows × cols at most ``limits.MAX_SIMILARITY_ELEMENTS``.

    Returns
    -------
    AttentionBiasData

    Raises
    ------
    ValueError
        For a scheme that is no bias, samples outside the positions, too large a matrix.
    """
    params = check_params(params)
    if params.info.family != "bias":
        raise ValueError(f"scheme {params.scheme!r} adds no bias to the logits ({params.info.family} scheme)")
    rows = _check_sample("rows", rows, params.seq_len)
    cols = _check_sample("cols", cols, params.seq_len)
    matrix = positional_logits(params.scheme, rows.indices(), cols.indices(), d_model=params.d_model,
                               seq_len=params.seq_len, **params.options)
    options = params.options
    slopes = alibi_slopes(options["n_heads"]) if params.scheme == "alibi" else None
    t5 = params.scheme == "t5"
    table = random_table(params.d_model, options["num_buckets"], options["n_heads"], options["seed"]) if t5 else None
    return AttentionBiasData(params, rows, cols, matrix, int(np.count_nonzero(np.isneginf(matrix))), slopes, table,
                             table_sigma(params.d_model) if t5 else None, bucket_map(params) if t5 else None)


def bias_at(params: EncodingParams, query: int, key: int) -> tuple[float, int | None]:
    """The bias of the query at ``query`` and the key at ``key`` (``−inf``: masked), and its T5 bucket.

    Returns
    -------
    bias : float
    bucket : int or None
        T5: the bucket of key − query; None for another scheme.

    Raises
    ------
    ValueError
        For a scheme that is no bias, positions outside ``0 … seq_len − 1``.
    """
    params = check_params(params)
    if params.info.family != "bias":
        raise ValueError(f"scheme {params.scheme!r} adds no bias to the logits ({params.info.family} scheme)")
    query = limits.check_int("query", query, 0, params.seq_len - 1)
    key = limits.check_int("key", key, 0, params.seq_len - 1)
    value = positional_logits(params.scheme, [query], [key], d_model=params.d_model, seq_len=params.seq_len,
                              **params.options)[0, 0]
    if params.scheme != "t5":
        return float(value), None
    options = params.options
    bucket = t5_relative_bucket(key - query, options["bidirectional"], options["num_buckets"], options["max_distance"])
    return float(value), int(bucket[0])

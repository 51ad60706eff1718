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

from ..core import limits
from ..attention.logits import positional_logits
from ..core.params import EncodingParams, check_params
from ..core.sampling import AxisSample
from ..schemes import Buckets
from .t5 import BucketMap


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
    def head(self) -> int | None:
        """The head shown, or None for a scheme with one bias for every head (no ``head`` option)."""
        head = self.params.options.get("head")
        return None if head is None else int(head)

    @property
    def subject(self) -> str:
        """What the matrix is the bias of: ``"bias of head 3"``, or ``"bias"`` without heads."""
        return "bias" if self.head is None else f"bias of head {self.head}"

    @property
    def slope(self) -> float | None:
        """ALiBi: the shown head's slope."""
        return None if self.slopes is None else float(self.slopes[self.head])

    @property
    def power_of_two_heads(self) -> int:
        """ALiBi's c, the largest power of two up to n_heads: heads 0 … c − 1 have c heads' slopes, the others
        every other slope of 2c heads'."""
        return 1 << (int(self.params.options["n_heads"]).bit_length() - 1)


def _buckets(params: EncodingParams) -> Buckets:
    return params.info.buckets(params.d_model, **params.options)


def bucket_map(params: EncodingParams) -> BucketMap:
    """The bucket of every relative position of ``params`` (a scheme's with :attr:`~.schemes.Scheme.buckets`: t5),
    as runs of one bucket.

    Raises
    ------
    ValueError
        For parameters of a scheme without buckets.
    """
    params = check_params(params)
    if params.info.buckets is None:
        raise ValueError(f"params must be of a scheme with buckets of the relative position (t5), got "
                         f"{params.scheme!r}")
    return _buckets(params).bucket_map(params.seq_len)


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
    info = params.info
    slopes = None if info.slopes is None else info.slopes(params.d_model, **params.options)
    buckets = None if info.buckets is None else _buckets(params)
    return AttentionBiasData(params, rows, cols, matrix, int(np.count_nonzero(np.isneginf(matrix))), slopes,
                             None if buckets is None else buckets.table, None if buckets is None else buckets.table_sigma,
                             None if buckets is None else buckets.bucket_map(params.seq_len))


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
    if params.info.buckets is None:
        return float(value), None
    return float(value), int(_buckets(params).bucket(np.array([key - query]))[0])

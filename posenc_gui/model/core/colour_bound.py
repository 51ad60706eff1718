"""Robust colour scales for the matrices of a table read from a file: its bulk, not one outlier, sets the colours.

A learned table can hold a few entries far larger than the rest (MiniLM's position table has one of 1.87 where
99 % are under 0.065; its PE(0)·PE(0) is 5.58 where the 99.9th percentile of the dot products is 0.23). Coloured to
its largest |value|, every other cell of its heatmap, similarity or positional-logit matrix is white. Such a matrix
is coloured to the :data:`BOUND_PERCENTILE`-th percentile of its |values| instead, and the figure says so.
"""

from __future__ import annotations

import numpy as np

from .params import EncodingParams

#: A matrix whose largest |value| is more than this many times the :data:`BOUND_PERCENTILE`-th percentile of its
#: |values| is coloured to that percentile.
OUTLIER_RATIO = 4.0
BOUND_PERCENTILE = 99.9
#: Fewer shown values than this keep the whole range (a percentile of a few values says little).
MIN_BOUND_VALUES = 1000


def outlier_bound(values: np.ndarray) -> tuple[float, int, float] | None:
    """``(bound, beyond, largest)`` when a few |values| dwarf the rest, else None.

    ``bound`` is the :data:`BOUND_PERCENTILE`-th percentile of the finite
    |values| (when the largest exceeds it :data:`OUTLIER_RATIO`-fold),
    ``beyond`` how many values exceed it, ``largest`` the largest |value|.
    """
    magnitudes = np.abs(values[np.isfinite(values)])
    if magnitudes.size < MIN_BOUND_VALUES:
        return None
    bound, largest = float(np.percentile(magnitudes, BOUND_PERCENTILE)), float(magnitudes.max())
    if bound <= 0 or largest <= OUTLIER_RATIO * bound:
        return None
    return bound, int(np.count_nonzero(magnitudes > bound)), largest


def file_colour_bound(params: EncodingParams, values: np.ndarray) -> tuple[float, int, float] | None:
    """:func:`outlier_bound` of a matrix of ``params``' values when they come from a table read from a file (a
    scheme with :attr:`~.schemes.Scheme.sizes`), else None: learned weights have outliers, formulas do not."""
    return outlier_bound(values) if params.info.sizes is not None else None

"""Similarity between positional encodings: matrices and offset profiles."""

from __future__ import annotations

import math

import numpy as np

from ..core import limits
from ..schemes import encode

METRICS = ("dot", "cosine", "distance")
METRIC_LABELS = {"dot": "dot product", "cosine": "cosine similarity", "distance": "Euclidean distance"}


def _check_metric(metric: str) -> None:
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {limits.shown(metric)}")


def _rows(values: object) -> int | None:
    """How many rows ``values`` has, known without converting it (``None`` when it is not)."""
    if isinstance(values, np.ndarray):
        return values.shape[0] if values.ndim else None
    return len(values) if isinstance(values, (list, tuple)) else None


def pairwise(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """Similarity of every row of ``a`` with every row of ``b``.

    Parameters
    ----------
    a, b : ndarray, shape (n, d) and (m, d)
        Finite real numbers, each at most ``limits.MAX_ENCODE_ELEMENTS``
        of them; ``n × m`` at most ``limits.MAX_SIMILARITY_ELEMENTS``.
    metric : {"dot", "cosine", "distance"}
        Cosine with a zero vector is NaN (undefined). Distances are exact
        even for nearly equal rows: where the fast Gram-matrix formula
        would cancel catastrophically, they are recomputed from differences.

    Returns
    -------
    ndarray, shape (n, m)

    Raises
    ------
    ValueError
        Naming ``a``, ``b`` or ``metric`` and the allowed values; sizes are
        checked before anything is converted or allocated.
    """
    _check_metric(metric)
    rows_a, rows_b = _rows(a), _rows(b)
    if rows_a is not None and rows_b is not None:
        _check_pairs(rows_a, rows_b)
    a = limits.check_matrix("a", a, limits.MAX_ENCODE_ELEMENTS)
    b = limits.check_matrix("b", b, limits.MAX_ENCODE_ELEMENTS)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"b must have as many columns as a ({a.shape[1]:,}), got {b.shape[1]:,}")
    _check_pairs(a.shape[0], b.shape[0])
    gram = a @ b.T
    if metric == "dot":
        return gram
    sq_a = np.einsum("ij,ij->i", a, a)
    sq_b = np.einsum("ij,ij->i", b, b)
    if metric == "cosine":
        norms = np.sqrt(np.multiply.outer(sq_a, sq_b))
        with np.errstate(invalid="ignore", divide="ignore"):
            cosine = np.where(norms > 0, gram / np.where(norms > 0, norms, 1.0), np.nan)
        return np.clip(cosine, -1.0, 1.0)
    squared = np.add.outer(sq_a, sq_b) - 2.0 * gram
    scale = np.add.outer(sq_a, sq_b)
    # Relative cancellation error of the Gram formula is ~ eps * scale / result.
    suspect = squared <= 1e-6 * scale
    distance = np.sqrt(np.maximum(squared, 0.0))
    rows, cols = np.nonzero(suspect)
    if rows.size:
        distance[rows, cols] = np.linalg.norm(a[rows] - b[cols], axis=1)
    return distance


def _check_pairs(rows_a: int, rows_b: int) -> None:
    if rows_a * rows_b > limits.MAX_SIMILARITY_ELEMENTS:
        raise ValueError(
            f"a, b: {rows_a:,} × {rows_b:,} rows would make a similarity matrix of {rows_a * rows_b:,} values, "
            f"past the limit of {limits.MAX_SIMILARITY_ELEMENTS:,}; compare fewer rows (sample them)"
        )


def similarity_matrix(scheme: str, positions, d_model: int, metric: str = "dot", **params) -> np.ndarray:
    """Position × position similarity of ``encode(scheme, positions, d_model)``.

    At most ``√limits.MAX_SIMILARITY_ELEMENTS`` positions (counted before
    they are converted); the other parameters are those of ``encode``.
    """
    _check_metric(metric)
    most = math.isqrt(limits.MAX_SIMILARITY_ELEMENTS)
    positions = limits.check_positions(
        positions, limit=most, why=f" (the similarity matrix holds at most {limits.MAX_SIMILARITY_ELEMENTS:,} values)"
    )
    pe = encode(scheme, positions, d_model, **params)
    return pairwise(pe, pe, metric)


def offset_profile(
    scheme: str, reference: float, offsets, d_model: int, metric: str = "dot", **params
) -> np.ndarray:
    """Similarity of PE(reference) with PE(reference + k) for each offset k.

    Parameters
    ----------
    reference : float
        A position, ``0 … limits.MAX_POSITION``.
    offsets : array_like
        1-D offsets k with ``0 ≤ reference + k ≤ limits.MAX_POSITION`` (so
        ``k ≥ −reference``), at most ``limits.MAX_SIMILARITY_ELEMENTS`` of
        them (and as many as ``encode`` takes at ``d_model``).
    scheme, d_model, metric, **params
        As for :func:`similarity_matrix`.
    """
    _check_metric(metric)
    reference = limits.check_real("reference", reference, 0.0, limits.MAX_POSITION)
    offsets = limits.check_numbers(
        "offsets", offsets, -limits.MAX_POSITION, limits.MAX_POSITION, limits.MAX_SIMILARITY_ELEMENTS, "offsets"
    )
    targets = reference + offsets
    if offsets.size and (targets.min() < 0 or targets.max() > limits.MAX_POSITION):
        raise ValueError(
            f"offsets must be in {-reference:g}…{limits.MAX_POSITION - reference:g} (reference + k in "
            f"0…{limits.MAX_POSITION:g}), got {offsets.min():g}…{offsets.max():g}"
        )
    ref = encode(scheme, [reference], d_model, **params)
    others = encode(scheme, targets, d_model, **params)
    return pairwise(ref, others, metric)[0]

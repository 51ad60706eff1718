"""Similarity between positional encodings: matrices and offset profiles."""

from __future__ import annotations

import numpy as np

from . import limits
from .schemes import encode

METRICS = ("dot", "cosine", "distance")
METRIC_LABELS = {"dot": "dot product", "cosine": "cosine similarity", "distance": "Euclidean distance"}


def _check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")


def pairwise(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """Similarity of every row of ``a`` with every row of ``b``.

    Parameters
    ----------
    a, b : ndarray, shape (n, d) and (m, d)
    metric : {"dot", "cosine", "distance"}
        Cosine with a zero vector is NaN (undefined). Distances are exact
        even for nearly equal rows: where the fast Gram-matrix formula
        would cancel catastrophically, they are recomputed from differences.

    Returns
    -------
    ndarray, shape (n, m)
    """
    _check_metric(metric)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must be 2-D with the same number of columns, got {a.shape} and {b.shape}")
    limits.check_size("similarity", a.shape[0], b.shape[0], limits.MAX_SIMILARITY_ELEMENTS)
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


def similarity_matrix(scheme: str, positions, d_model: int, metric: str = "dot", **params) -> np.ndarray:
    """Position × position similarity of ``encode(scheme, positions, d_model)``."""
    _check_metric(metric)
    pe = encode(scheme, positions, d_model, **params)
    return pairwise(pe, pe, metric)


def offset_profile(
    scheme: str, reference: float, offsets, d_model: int, metric: str = "dot", **params
) -> np.ndarray:
    """Similarity of PE(reference) with PE(reference + k) for each offset k.

    Offsets that would give a negative position are an error; pass only
    ``k ≥ −reference``.
    """
    _check_metric(metric)
    offsets = np.asarray(offsets, dtype=np.float64)
    ref = encode(scheme, [reference], d_model, **params)
    others = encode(scheme, reference + offsets, d_model, **params)
    return pairwise(ref, others, metric)[0]

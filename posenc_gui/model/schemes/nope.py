"""No positional encoding (NoPE): the table is all zeros.

Without it, self-attention is blind to order: permuting the tokens permutes
the outputs the same way (the permutation demo shows it). A causal mask
breaks that symmetry again (Kazemnejad et al. 2023).
"""

import numpy as np

from ._core import Scheme


def _table(positions: np.ndarray, dims: np.ndarray, d_model: int) -> np.ndarray:
    return np.zeros((positions.size, dims.size))


def _extremes(low: np.ndarray, high: np.ndarray, dims: np.ndarray, d_model: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((low.size, dims.size)), np.zeros((low.size, dims.size))


SCHEME = Scheme(
    key="nope", label="None (NoPE)", order=100,
    summary="No position is added: every position's vector is zero, so without a causal mask attention cannot "
    "tell the order of the tokens.",
    formula="PE(pos, j) = 0",
    table=_table, term=lambda dim, d_model: "0", exact=True, extremes=_extremes,
)

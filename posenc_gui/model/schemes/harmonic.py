"""Harmonic frequencies 1/k, k = 1 … ⌈d/2⌉, as (sin, cos) pairs."""

import numpy as np

from ._core import Columns, Scheme


def _columns(dims: np.ndarray, d_model: int) -> Columns:
    k = dims // 2 + 1
    kinds = np.where(dims % 2 == 0, "sin", "cos")

    def label(j: int) -> str:
        return f"{kinds[j]}(pos / {k[j]})" if k[j] > 1 else f"{kinds[j]}(pos)"

    return Columns(kinds, k.astype(np.float64), label)


SCHEME = Scheme(
    key="harmonic", label="Harmonic multi-frequency", order=60,
    summary="[sin(i/k), cos(i/k)] for k = 1 … ⌈d/2⌉ (at odd d the last sine has no cosine): many frequencies, "
    "the combination is quasi-periodic.",
    formula="PE(pos, 2(k−1)) = sin(pos/k), PE(pos, 2(k−1)+1) = cos(pos/k)",
    columns=_columns,
)

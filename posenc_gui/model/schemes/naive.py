"""Naive integer positions: the position itself in every dimension."""

import numpy as np

from ._core import Columns, Preset, Scheme


def _columns(dims: np.ndarray, d_model: int) -> Columns:
    return Columns(np.full(dims.size, "linear"), np.ones(dims.size), lambda j: "pos")


SCHEME = Scheme(
    key="naive", label="Naive integer", order=10,
    summary="p_i = i in every dimension: unbounded in 0…N−1 and past N; it swamps the embedding as i grows.",
    formula="PE(pos, j) = pos",
    columns=_columns,
    presets=(Preset("Naive integer positions", 128, 64),),
)

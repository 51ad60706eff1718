"""One sine of the position in every dimension."""

import numpy as np

from ._core import Columns, Preset, Scheme


def _columns(dims: np.ndarray, d_model: int) -> Columns:
    return Columns(np.full(dims.size, "sin"), np.ones(dims.size), lambda j: "sin(pos)")


SCHEME = Scheme(
    key="sine", label="Single sine", order=30,
    summary="sin(i) in every dimension: bounded in 0…N−1 and past N, but periodic, so sin(x) = sin(y) collides.",
    formula="PE(pos, j) = sin(pos)",
    columns=_columns,
    presets=(Preset("Single sine (collisions)", 128, 64),),
)

"""Positions scaled into [0, 1] by the number of positions N."""

import numpy as np

from ..core import limits
from ..core.specs import ParamSpec
from ._core import Columns, Scheme, number_text

LENGTH = ParamSpec(
    "length", "int", 128, "normalization length",
    "N in pos / (N − 1); the app uses the number of positions.",
    low=1, high=limits.MAX_SEQ_LEN, tied_to="seq_len", title=lambda value: f"N = {value:,}",
)


def _columns(dims: np.ndarray, d_model: int, length: int) -> Columns:
    denominator = float(max(length - 1, 1))
    label = f"pos / (N − 1) = pos / {number_text(denominator)}"
    return Columns(np.full(dims.size, "linear"), np.full(dims.size, denominator), lambda j: label)


SCHEME = Scheme(
    key="normalized", label="Normalized", order=20,
    summary="p_i = i / (N − 1): bounded in 0…N−1, unbounded past N (in [0, 1] up to N − 1 only); "
    "the step between neighbours depends on N.",
    formula="PE(pos, j) = pos / (N − 1)",
    params=(LENGTH,), columns=_columns,
)

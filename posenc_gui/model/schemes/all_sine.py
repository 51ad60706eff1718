"""Sines only, one wavelength per dimension: the sinusoidal wavelengths without their cosines."""

import numpy as np

from ._core import Columns, Scheme, number_text
from .sinusoidal import BASE


def _columns(dims: np.ndarray, d_model: int, base: float) -> Columns:
    divisor = np.power(base, dims / d_model)

    def label(j: int) -> str:
        return f"sin(pos / {number_text(base)}^({dims[j]}/{d_model}))"

    return Columns(np.full(dims.size, "sin"), divisor, label)


SCHEME = Scheme(
    key="all_sine", label="All sine", order=80,
    summary="sin(pos / base^(j/d)) in every dimension: wavelengths from 2π to 2π·base^((d−1)/d), no cosines, "
    "so no exact T_k.",
    formula="PE(pos, j) = sin(pos / base^(j/d))",
    params=(BASE,), columns=_columns,
)

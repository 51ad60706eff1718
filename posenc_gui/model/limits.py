"""Allowed ranges of every model parameter, and the validators that enforce them.

Each validator raises ``ValueError`` whose message starts with the parameter's
name and states its allowed range, so the window can show it verbatim next to
the control the user is editing.
"""

from __future__ import annotations

import math

import numpy as np

MIN_SEQ_LEN = 1
MAX_SEQ_LEN = 1_048_576
MIN_D_MODEL = 2
MAX_D_MODEL = 8192
MIN_BASE_EXCLUSIVE = 1.0
MAX_BASE = 1e12
MAX_POSITION = 1e12
#: Largest array ``encode`` will allocate (rows x columns). 2**25 float64 values
#: are 256 MiB; views that show more than this sample positions and dimensions.
MAX_ENCODE_ELEMENTS = 2**25
#: Largest position x position matrix the similarity functions will allocate.
MAX_SIMILARITY_ELEMENTS = 2**24


def check_int(name: str, value: object, low: int, high: int) -> int:
    """Return ``value`` as an int if it is an integer in ``[low, high]``.

    Raises
    ------
    ValueError
        Naming ``name`` and the allowed range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer in {low}…{high}, got {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}…{high}, got {value}")
    return value


def check_base(value: object) -> float:
    """Validate the wavelength base of the sinusoidal schemes: finite, > 1."""
    try:
        base = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"base must be a number > 1 and ≤ {MAX_BASE:g}, got {value!r}") from None
    if not math.isfinite(base) or base <= MIN_BASE_EXCLUSIVE or base > MAX_BASE:
        raise ValueError(f"base must be > 1 and ≤ {MAX_BASE:g}, got {value!r}")
    return base


def check_positions(positions: object) -> np.ndarray:
    """Return ``positions`` as a 1-D float64 array of finite values in [0, MAX_POSITION]."""
    try:
        array = np.asarray(positions, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("positions must be a 1-D array of numbers ≥ 0") from None
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"positions must be a 1-D array, got shape {array.shape}")
    if array.size and not np.all(np.isfinite(array)):
        raise ValueError("positions must be finite numbers in 0…1e12; got NaN or infinity")
    if array.size and (array.min() < 0 or array.max() > MAX_POSITION):
        raise ValueError(
            f"positions must be in 0…{MAX_POSITION:g}, got values from {array.min():g} to {array.max():g}"
        )
    return array


def check_dims(dims: object, d_model: int) -> np.ndarray:
    """Return ``dims`` as a 1-D int array of column indices in ``[0, d_model)``."""
    array = np.asarray(dims)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"dims must be a 1-D array of integers in 0…{d_model - 1}")
    array = array.astype(np.int64, copy=False)
    if array.size and (array.min() < 0 or array.max() >= d_model):
        raise ValueError(f"dims must be in 0…{d_model - 1}, got {array.min()}…{array.max()}")
    return array


def check_size(name: str, rows: int, columns: int, limit: int) -> None:
    """Refuse to allocate a ``rows x columns`` array larger than ``limit`` values."""
    if rows * columns > limit:
        raise ValueError(
            f"{name}: {rows:,} × {columns:,} values exceed the limit of {limit:,}; "
            "evaluate fewer positions or dimensions (sample them)"
        )

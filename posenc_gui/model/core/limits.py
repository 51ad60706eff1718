"""Allowed ranges of every model parameter, and the validators that enforce them.

Each validator raises ``ValueError`` whose message starts with the parameter's
name and states its allowed range, so the window can show it verbatim next to
the control the user is editing.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable, Sized
from itertools import islice

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
#: Most positions (or offsets) a model function takes: one ``encode`` row holds at least MIN_D_MODEL values.
MAX_POSITIONS = MAX_ENCODE_ELEMENTS // MIN_D_MODEL
#: Most dimension indices ``encode`` takes (one position in each).
MAX_DIMS = MAX_ENCODE_ELEMENTS
#: Allowed demo model dimension of the attention demos: small, so every number can be read.
MIN_DEMO_D_MODEL = 2
MAX_DEMO_D_MODEL = 64
DEFAULT_DEMO_D_MODEL = 8
#: Largest scale of the addition sweep and of :func:`~posenc_gui.model.analyses.analysis.embedding_norm`.
MAX_ADDITION_SCALE = 1e6
MAX_EMBEDDING_SCALE = 1e6


def shown(value: object) -> str:
    """``repr(value)`` cut to a few dozen characters, for messages."""
    return reprlib.repr(value)


def is_real(value: object) -> bool:
    """Whether ``value`` is one real number: an int, a float or a NumPy real scalar (not a bool or a str)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: object, low: int, high: int) -> int:
    """Return ``value`` as an int if it is an integer in ``[low, high]``.

    An integral float (``4.0``) counts as an integer; a bool does not.

    Raises
    ------
    ValueError
        Naming ``name`` and the allowed range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer in {low}…{high}, got {shown(value)}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}…{high}, got {value}")
    return value


def _interval(low: float, high: float, low_open: bool) -> str:
    """``"finite"``, ``"in low…high"`` or ``"> low and ≤ high"``."""
    if math.isinf(low) and math.isinf(high):
        return "finite"
    return f"> {low:g} and ≤ {high:g}" if low_open else f"in {low:g}…{high:g}"


def check_real(
    name: str, value: object, low: float = -math.inf, high: float = math.inf, *, low_open: bool = False
) -> float:
    """Return ``value`` as a float if it is a finite real number in ``[low, high]`` (``(low, high]`` if ``low_open``).

    Raises
    ------
    ValueError
        Naming ``name`` and the allowed range, for NaN, infinity, a bool, a
        str, a complex number, an array or any other non-number.
    """
    allowed = _interval(low, high, low_open)
    if not is_real(value):
        kind = "a finite real number" if allowed == "finite" else f"a real number {allowed}"
        raise ValueError(f"{name} must be {kind}, got {shown(value)}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or not low <= number <= high or (low_open and number == low):
        raise ValueError(f"{name} must be {allowed}, got {shown(value)}")
    return number


def check_count(name: str, count: int, limit: int, noun: str, why: str = "") -> None:
    """Refuse more than ``limit`` items (``why`` says where the limit comes from)."""
    if count > limit:
        raise ValueError(f"{name}: at most {limit:,} {noun}{why}, got {count:,}")


def _bounded(name: str, values: object, limit: int, noun: str, why: str, integers: bool) -> object:
    """``values``, ready for ``np.asarray``, once its length is known to be within ``limit``.

    An array gives its size and a sequence (a range, a list) its length, so
    nothing is converted before the check; any other iterable is read into
    an array at most ``limit + 1`` items far. A 1-D input cannot hold
    sequences: a nested list is refused before it is converted.
    """
    if isinstance(values, np.ndarray):
        check_count(name, values.size, limit, noun, why)
        return values
    if isinstance(values, (str, bytes, bytearray)) or not isinstance(values, Iterable):
        return values  # one number, or something the type check refuses
    if isinstance(values, Sized):
        check_count(name, len(values), limit, noun, why)
        first = values[0] if isinstance(values, (list, tuple)) and values else None
        if isinstance(first, (list, tuple)) or (isinstance(first, np.ndarray) and first.ndim > 0):
            raise ValueError(f"{name} must be a 1-D array, got a sequence of {type(first).__name__}s")
        return values
    kind = "an integer" if integers else "a real number"
    valid = (lambda v: isinstance(v, numbers.Integral) and is_real(v)) if integers else is_real

    def checked(items: Iterable) -> Iterable:
        for item in items:
            if not valid(item):
                raise ValueError(f"{name} must hold only numbers; {shown(item)} is not {kind}")
            yield item

    try:
        array = np.fromiter(checked(islice(values, limit + 1)), dtype=np.int64 if integers else np.float64)
    except OverflowError:
        raise ValueError(f"{name} must hold numbers within 64-bit integers") from None
    check_count(name, array.size, limit, noun, why)
    return array


_KINDS = {"b": "true/false values", "c": "complex numbers", "U": "text", "S": "bytes", "O": "objects"}


def _as_array(name: str, values: object, allowed: str, kinds: str) -> np.ndarray:
    """``np.asarray(values)`` if its dtype kind is one of ``kinds`` (``"iuf"``: real numbers)."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be {allowed}, got {shown(values)}") from None
    if array.dtype.kind not in kinds:
        raise ValueError(f"{name} must be {allowed}, got {_KINDS.get(array.dtype.kind, f'{array.dtype} values')}")
    return array


def _one_d_array(name: str, values: object, allowed: str, kinds: str, single: bool = True) -> np.ndarray:
    """``values`` as a 1-D array whose dtype kind is one of ``kinds`` (a ``single`` number becomes length 1)."""
    array = _as_array(name, values, allowed, kinds)
    if array.ndim == 0 and single:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be {allowed}, got shape {array.shape}")
    return array


def check_numbers(
    name: str, values: object, low: float, high: float, limit: int, noun: str = "values", why: str = ""
) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array of real numbers in ``[low, high]``, NaN never.

    ``values`` may be an array, a sequence, a range, any iterable, or one
    number. At most ``limit`` of them: the count is checked before anything
    is converted (``why`` says where the limit comes from). Infinity passes
    only where ``low`` or ``high`` is infinite.

    Raises
    ------
    ValueError
        Starting with ``name``, stating the allowed values and count.
    """
    allowed = f"a 1-D array of real numbers in {low:g}…{high:g}"
    array = _one_d_array(name, _bounded(name, values, limit, noun, why, integers=False), allowed, "iuf")
    array = array.astype(np.float64, copy=False)
    bounded = math.isfinite(low) and math.isfinite(high)
    if array.size and not np.all(np.isfinite(array) if bounded else ~np.isnan(array)):
        raise ValueError(f"{name} must be real numbers in {low:g}…{high:g}; got NaN or infinity")
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(f"{name} must be in {low:g}…{high:g}, got values from {array.min():g} to {array.max():g}")
    return array


def check_positions(
    positions: object, name: str = "positions", limit: int = MAX_POSITIONS, why: str = ""
) -> np.ndarray:
    """Return ``positions`` as a 1-D float64 array of finite values in [0, MAX_POSITION].

    At most ``limit`` positions, counted before they are converted.
    """
    return check_numbers(name, positions, 0.0, MAX_POSITION, limit, "positions", why)


def check_integers(name: str, values: object, low: int, high: int, limit: int, noun: str = "values") -> np.ndarray:
    """Return ``values`` as a 1-D int64 array of integers in ``[low, high]``, at most ``limit`` of them.

    As :func:`check_numbers`, the count is checked before anything is
    converted; a single number is refused (an array is expected).
    """
    allowed = f"a 1-D array of integers in {low}…{high}"
    array = _one_d_array(name, _bounded(name, values, limit, noun, "", integers=True), allowed, "iu", single=False)
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(f"{name} must be in {low}…{high}, got {array.min()}…{array.max()}")
    return array.astype(np.int64, copy=False)


def check_dims(dims: object, d_model: int) -> np.ndarray:
    """Return ``dims`` as a 1-D int array of column indices in ``[0, d_model)``, at most MAX_DIMS of them."""
    return check_integers("dims", dims, 0, d_model - 1, MAX_DIMS, "dimensions")


def check_matrix(name: str, values: object, limit: int) -> np.ndarray:
    """Return ``values`` as a 2-D float64 array of finite real numbers, at most ``limit`` of them.

    The count (an array's size, or rows × the first row's length) is checked
    before anything is converted.
    """
    allowed = f"a 2-D array (rows × columns) of at most {limit:,} finite real numbers"
    if isinstance(values, np.ndarray):
        count = values.size
    elif isinstance(values, (list, tuple)):
        first = values[0] if values else ()
        count = len(values) * (len(first) if isinstance(first, Sized) else 1)
    else:
        raise ValueError(f"{name} must be {allowed}, got {shown(values)}")
    check_count(name, count, limit, "values")
    array = _as_array(name, values, allowed, "iuf")
    if array.ndim != 2:
        raise ValueError(f"{name} must be {allowed}, got shape {array.shape}")
    array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be {allowed}; got NaN or infinity")
    return array


def check_size(name: str, rows: int, columns: int, limit: int) -> None:
    """Refuse to allocate a ``rows x columns`` array larger than ``limit`` values."""
    if rows * columns > limit:
        raise ValueError(
            f"{name}: {rows:,} × {columns:,} values exceed the limit of {limit:,}; "
            "evaluate fewer positions or dimensions (sample them)"
        )

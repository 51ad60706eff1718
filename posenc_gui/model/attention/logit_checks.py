"""The measurements behind the positional logit's verdicts (:mod:`.logit_properties` defines them).

Matrices over at most :data:`MATRIX_POSITIONS` positions per axis, the
closed forms that prove a verdict for every position, and the rows of
neighbouring queries; each function returns the numbers and, where a
verdict fails, the cells that show it (its witness).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import limits
from .logit_scan import ProfileScan, cosine_sum
from .logits import _rotation, _rotation_logits, positional_logits
from ..core.params import EncodingParams

#: Positions per axis of the matrices measured.
MATRIX_POSITIONS = 256
#: Query positions whose row is compared with the next position's (where the scan does not decide it).
NEIGHBOUR_ROWS = 16
#: Positions N … 2N − 1 evaluated per axis for "defined past N".
PAST_POSITIONS = MATRIX_POSITIONS
#: Relative spread along a diagonal (and asymmetry) still counted as none: far above rounding (module docstring).
OFFSET_TOL = 1e-6
#: Growth of the largest |logit| over a 16× longer range still counted as bounded.
GROWTH_TOL = 1.5
#: How far the longer range of the bounded check reaches, in lengths N.
LONGER = 16
#: The closest pair of neighbour rows must differ by at least this fraction of the median neighbour difference.
UNIQUE_TOL = 0.1


def steps_needed(length: int) -> tuple[int, int, int]:
    """(smallest, two middle) of max(m, N − 2 − m) over m = 0 … N − 2: the windows' ends (:func:`ratio_from_steps`)."""
    last = length - 2
    count = length - 1
    ends = np.sort(np.maximum(np.arange(count), last - np.arange(count)))
    return int(ends[0]), int(ends[(count - 1) // 2]), int(ends[count // 2])


def ratio_from_steps(scan: ProfileScan) -> float:
    """Smallest over median neighbour-row difference of a symmetric logit of the offset alone.

    Rows m and m + 1 differ at key n by p(m − n) − p(m + 1 − n); over the keys 0 … N − 1 their largest
    difference is max |p(r) − p(r + 1)| over r ≤ max(m, N − 2 − m) (p even): the scan's running maxima.
    """
    if scan.length < 2:
        return math.inf
    smallest, middle_low, middle_high = scan.steps_max
    median = (middle_low + middle_high) / 2
    if median == 0:
        return 0.0
    return smallest / median


def causal_rotation(params: EncodingParams) -> bool:
    """Whether ``params``' scheme is a rotation whose models are causal (:attr:`~.schemes.Rotation.causal`: a scale
    per pair, as xPos's decoders): its keys after the query are masked."""
    return params.info.rotation is not None and _rotation(params).causal


def logits(params: EncodingParams, queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The measured logit: :func:`~.logits.positional_logits`, with a causal rotation's keys after the query masked."""
    if causal_rotation(params):
        values = _rotation_logits(params, queries, keys, None, None, causal=True)
        return np.where(np.isnan(values), -np.inf, values)
    return positional_logits(params.scheme, queries, keys, d_model=params.d_model, seq_len=params.seq_len,
                             **params.options)


def largest(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def cell(values: np.ndarray, row: int, column: int, positions: np.ndarray) -> str:
    value = values[row, column]
    shown = "masked" if np.isneginf(value) else f"{value:.6g}"
    return f"L({positions[row]:,.0f}, {positions[column]:,.0f}) = {shown}"


def spread(matrix: np.ndarray, scale: float, positions: np.ndarray) -> tuple[float, str]:
    """Largest spread of the finite logits along a diagonal over ``scale`` (inf for a partly masked one), and the
    two cells that differ most."""
    worst, witness = 0.0, ""
    size = matrix.shape[0]
    rows = np.arange(size)
    for offset in range(-(size - 1), size):
        line = np.diagonal(matrix, offset)
        first = rows[:line.size] + max(0, -offset)
        finite = np.isfinite(line)
        if not finite.any():
            continue
        if not finite.all():
            a, b = int(np.flatnonzero(finite)[0]), int(np.flatnonzero(~finite)[0])
            return math.inf, (f"{cell(matrix, first[a], first[a] + offset, positions)} but "
                              f"{cell(matrix, first[b], first[b] + offset, positions)}")
        low, high = int(np.argmin(line)), int(np.argmax(line))
        if line[high] - line[low] > worst:
            worst = float(line[high] - line[low])
            witness = (f"{cell(matrix, first[high], first[high] + offset, positions)} ≠ "
                       f"{cell(matrix, first[low], first[low] + offset, positions)}")
    if scale <= 0:
        return 0.0, ""
    return worst / scale, witness if worst / scale > OFFSET_TOL else ""


def asymmetry(matrix: np.ndarray, scale: float, positions: np.ndarray) -> tuple[float, str]:
    finite = np.isfinite(matrix)
    if not np.array_equal(finite, finite.T):
        m, n = (int(i) for i in np.argwhere(finite != finite.T)[0])
        return math.inf, f"{cell(matrix, m, n, positions)} but {cell(matrix, n, m, positions)}"
    if not finite.any():
        return 0.0, ""
    difference = np.where(finite, np.abs(matrix - np.where(finite, matrix, 0).T), 0.0)
    m, n = np.unravel_index(int(np.argmax(difference)), difference.shape)
    ratio = float(difference[m, n]) / scale if scale > 0 else 0.0
    witness = f"{cell(matrix, m, n, positions)} ≠ {cell(matrix, n, m, positions)}" if ratio > OFFSET_TOL else ""
    return ratio, witness


def spaced(length: int, count: int = MATRIX_POSITIONS) -> tuple[np.ndarray, int]:
    stride = max(1, math.ceil(length / count))
    return np.arange(0, length, stride, dtype=np.float64), stride


def value_limit(params: EncodingParams, length: int) -> float:
    """A proved bound on |L(m, n)| for m, n in 0 … length − 1, or nan where the values have none known.

    A rotation (q = k = 1): |L| ≤ Σ|z_i| + |c₀| = L(0) (every key before the query, for xPos's decaying scale
    too). A table: Cauchy–Schwarz, |PE(m)·PE(n)| ≤ max_p ‖PE(p)‖², with a (sin, cos) pair of one frequency
    adding exactly 1, a lone sine or cosine at most 1, a linear column p/c at most ((length − 1)/c)², a table
    with exact extremes its largest square per dimension.
    """
    from ..schemes import columns as scheme_columns

    info = params.info
    if info.family == "rotation":
        summed = cosine_sum(params)
        return (summed.bound + abs(summed.constant)) * math.sqrt(params.d_model)
    if info.family != "table":
        return math.nan
    last = float(max(length - 1, 0))
    if info.columns is not None:
        cols = scheme_columns(params.scheme, params.d_model, **params.scheme_kwargs())
        linear = cols.kind == "linear"
        total = float(np.sum((last / cols.divisor[linear]) ** 2))
        divisors = cols.divisor[~linear]
        for divisor in np.unique(divisors):
            same = cols.kind[~linear][divisors == divisor]
            sines, cosines = int(np.sum(same == "sin")), int(np.sum(same == "cos"))
            total += min(sines, cosines) + abs(sines - cosines)
        return total
    if info.extremes is not None:
        low, high = info.extremes(np.zeros(1), np.array([last]), np.arange(params.d_model), params.d_model,
                                  **params.scheme_kwargs())
        return float(np.sum(np.maximum(low ** 2, high ** 2)))
    return math.nan


def bounded(params: EncodingParams) -> tuple[float, float, tuple[int, int], float, float]:
    """Largest |logit| over N positions and over 16 N (where 16 N is past the longest sequence or past the
    last row of a table read from a file, over N / 16 and N instead), and the proved bounds of both ranges."""
    from ..schemes import last_position

    n = params.seq_len
    longest = min(limits.MAX_SEQ_LEN, int(last_position(params.scheme, **params.options)) + 1)
    low, high = (n, LONGER * n) if LONGER * n <= longest else (max(1, n // LONGER), n)
    shorter, _ = spaced(low)
    longer, _ = spaced(high)
    return (largest(logits(params, shorter, shorter)), largest(logits(params, longer, longer)), (low, high),
            value_limit(params, low), value_limit(params, high))


def past(params: EncodingParams) -> str:
    n = params.seq_len
    positions = n + spaced(n, PAST_POSITIONS)[0]
    try:
        values = logits(params, positions, positions)
    except ValueError as error:
        return str(error)
    if np.isnan(values).any():
        bad = np.argwhere(np.isnan(values))[0]
        return f"NaN logits (L({positions[bad[0]]:,.0f}, {positions[bad[1]]:,.0f}))"
    return ""


def rows(params: EncodingParams, keys: np.ndarray) -> tuple[float, bool]:
    """Sampled: smallest over median difference of neighbour rows, and whether some differ only by their mask."""
    n = params.seq_len
    if n < 2:
        return math.inf, False
    queries = np.unique(np.linspace(0, n - 2, min(NEIGHBOUR_ROWS, n - 1)).round())
    near = np.clip(queries[:, None] + np.arange(-1.0, 3.0), 0, n - 1).ravel()
    rows = logits(params, np.concatenate([queries, queries + 1]), np.union1d(keys, near))
    return row_ratio(rows[:queries.size], rows[queries.size:])


def row_ratio(first: np.ndarray, second: np.ndarray) -> tuple[float, bool]:
    """Rows m (``first``) against rows m + 1: smallest over median difference, and differing only by the mask."""
    if first.shape[0] == 0:
        return math.inf, False
    seen_first, seen_second = np.isfinite(first), np.isfinite(second)
    mask_differs = np.any(seen_first != seen_second, axis=1)
    both = seen_first & seen_second  # the keys both queries see: their logits compared
    step = np.where(both, first, 0.0) - np.where(both, second, 0.0)
    values = np.max(np.abs(step), axis=1)
    median = float(np.median(values))
    if median == 0:  # the logits never tell neighbours apart; only a different mask can
        return (math.inf, True) if mask_differs.all() else (0.0, False)
    return float(np.where(mask_differs, math.inf, values).min()) / median, False


def closed_forms(params: EncodingParams) -> tuple[bool, bool, bool]:
    """(offset only, symmetric, defined everywhere) by a closed form (module docstring)."""
    from ..schemes import columns as scheme_columns

    info = params.info
    if info.family == "rotation":
        return True, not causal_rotation(params), True
    if info.family != "table":
        return False, False, False
    if info.columns is None:  # exact extremes are finite values at every position
        return False, True, info.extremes is not None and info.sizes is None
    cols = scheme_columns(params.scheme, params.d_model, **params.scheme_kwargs())
    paired = not np.any(cols.kind == "linear")
    for divisor in np.unique(cols.divisor):
        same = cols.kind[cols.divisor == divisor]
        paired = paired and int(np.sum(same == "sin")) == int(np.sum(same == "cos"))
    return paired, True, info.sizes is None

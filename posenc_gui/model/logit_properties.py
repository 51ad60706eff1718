"""What a scheme's positional logit does, measured the same way for every family (issue #27's "one footing").

Every verdict comes from evaluating :func:`~.logits.positional_logits` — the
p·p term of an added table, q·R(n − m)·k of a rotation (q = k = 1), a bias —
at positions of ``0 … N − 1`` spaced by a whole stride (so equal offsets lie
on one diagonal of the matrix) and nothing is read from a formula:

depends only on the offset
    Along every diagonal of the matrix L(m, n) over those positions, the
    spread of the finite logits (and one mask state) is at most
    :data:`OFFSET_TOL` of the matrix's largest finite |L|. Rounding stays far
    below it: each term carries a few ULPs of an angle of at most N·θ, a
    relative error under 1e-9 at N = 2²⁰; a table that does not depend on
    the offset alone (the normalized one, a learned one) differs by O(1).
symmetric
    L(m, n) = L(n, m) within the same tolerance, with the same mask.
decay
    The profile p(r) = L(N − 1, N − 1 − r) (a key r positions before the
    last query) at every distance below 256 and 256 log-spaced ones beyond
    (:data:`DECAY_DENSE`, :data:`DECAY_LOG`): the first distance
    from which every sampled p(r′), r′ ≥ r, is at least ln 100 below p(0) —
    from there on the positional term alone gives a key under 1 % of the
    softmax weight of a key at distance 0 — or None when it never does; and
    the mean drop p(0) − p(r) over the farther half of the distances.
bounded
    The largest finite |L| over positions ``0 … 16N − 1`` against that over
    ``0 … N − 1`` (the scheme set up for N; ``N/16`` against ``N`` where 16N
    would pass the largest length): bounded when it grows at most
    :data:`GROWTH_TOL` times (ALiBi grows with the distance, ×16).
defined past N
    Positions ``N … 2N − 1`` of the scheme set up for N give a value (or a
    mask) for every pair: no error, no NaN.
tells positions apart
    Each sampled query m and its neighbour m + 1 have different logit rows
    against every fourth measured key and the keys next to m (a different mask
    counts): the smallest difference is at least :data:`UNIQUE_TOL` of the
    median one. Without position the rows are equal; with a causal mask they
    differ by the mask alone, which is the order a causal decoder sees
    without any encoding (Kazemnejad et al. 2023).

Sizes stay bounded whatever N: at most :data:`MATRIX_POSITIONS` positions
per axis, the profile's distances, and :data:`NEIGHBOUR_ROWS` neighbour pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import limits
from .logits import positional_logits, profile_distances
from .params import EncodingParams, check_params

#: Positions per axis of the matrices measured.
MATRIX_POSITIONS = 256
#: Query positions whose row is compared with the next position's.
NEIGHBOUR_ROWS = 16
#: The decay is read at every distance up to DECAY_DENSE, then at DECAY_LOG log-spaced ones up to N − 1
#: (a RoPE head of 8192 channels or a table of 8192 dimensions costs a few hundred ms at 512 distances).
DECAY_DENSE, DECAY_LOG = 256, 256
#: Relative spread along a diagonal (and asymmetry) still counted as none: far above rounding (module docstring).
OFFSET_TOL = 1e-6
#: Growth of the largest |logit| over a 16× longer range still counted as bounded.
GROWTH_TOL = 1.5
#: How far the longer range of the bounded check reaches, in lengths N.
LONGER = 16
#: ln 100: a logit this much lower gets 1 % of the softmax weight.
ONE_PERCENT_DROP = math.log(100.0)
#: The closest pair of neighbour rows must differ by at least this fraction of the median neighbour difference.
UNIQUE_TOL = 0.1


@dataclass(frozen=True)
class LogitProperties:
    """The measured properties of one setup's positional logit (module docstring for each definition).

    Attributes
    ----------
    params : EncodingParams
    stride : int
        Spacing of the measured positions (1 when N ≤ :data:`MATRIX_POSITIONS`).
    scale : float
        Largest finite |L| over the measured matrix (0 for an all-zero one).
    offset_spread : float
        Largest spread along a diagonal over ``scale`` (inf where a diagonal is partly masked).
    asymmetry : float
        Largest |L(m, n) − L(n, m)| over ``scale`` (inf where the masks differ).
    masked : bool
        Some logits are −inf (a causal mask).
    decay_distance : int or None
        From this distance on every sampled key is ≥ ln 100 below distance 0; None: never within N.
    far_drop : float
        Mean of p(0) − p(r) over the farther half of the profile's distances (nan when all are masked).
    max_within, max_longer : float
        Largest finite |L| over the two ranges of the bounded check.
    bound_lengths : tuple of int
        Those ranges' lengths.
    past_error : str
        Empty when positions N … 2N − 1 give values; else what went wrong.
    row_difference : float
        Smallest neighbour-row difference over the median one, on the keys both see (a pair whose masks
        differ counts as told apart: inf).
    rows_by_mask : bool
        The logits are the same on the keys both neighbours see, and every pair differs in its mask only.
    """

    params: EncodingParams
    stride: int
    scale: float
    offset_spread: float
    asymmetry: float
    masked: bool
    decay_distance: int | None
    far_drop: float
    max_within: float
    max_longer: float
    bound_lengths: tuple[int, int]
    past_error: str
    row_difference: float
    rows_by_mask: bool

    @property
    def offset_only(self) -> bool:
        return self.offset_spread <= OFFSET_TOL

    @property
    def symmetric(self) -> bool:
        return self.asymmetry <= OFFSET_TOL

    @property
    def decays(self) -> bool:
        return self.decay_distance is not None

    @property
    def bounded(self) -> bool:
        return self.max_longer <= GROWTH_TOL * self.max_within

    @property
    def growth(self) -> float:
        """max_longer / max_within (1 for two all-zero ranges)."""
        if self.max_within == 0:
            return 1.0 if self.max_longer == 0 else math.inf
        return self.max_longer / self.max_within

    @property
    def defined_past(self) -> bool:
        return not self.past_error

    @property
    def tells_apart(self) -> bool:
        return self.row_difference >= UNIQUE_TOL

    def passes(self) -> dict[str, bool]:
        """Whether each property holds, by name (:data:`PROPERTY_NAMES`)."""
        return {"offset only": self.offset_only, "decays": self.decays, "symmetric": self.symmetric,
                "bounded": self.bounded, "defined past N": self.defined_past, "tells positions apart": self.tells_apart}

    def verdicts(self) -> dict[str, str]:
        """One short cell per property, with its number, as the panel's table and the Scorecard show them."""
        if self.offset_only:
            offset = "yes"
        elif math.isinf(self.offset_spread):
            offset = "no (mask varies)"
        else:
            offset = f"no (spread {self.offset_spread:.2g})"
        if self.symmetric:
            symmetric = "yes"
        elif math.isinf(self.asymmetry):
            symmetric = "no (causal mask)" if self.masked else "no (masks differ)"
        else:
            symmetric = f"no ({self.asymmetry:.2g})"
        if self.decays:
            decay = f"to 1 % from r = {self.decay_distance:,}"
        elif math.isnan(self.far_drop):
            decay = "no (all masked)"
        else:
            decay = f"no (far drop {self.far_drop:.3g})"
        bounded = (f"yes (≤ {self.max_longer:.4g})" if self.bounded
                   else f"no (×{self.growth:.3g} over ×{self.bound_lengths[1] // self.bound_lengths[0]} range)")
        past = "yes" if self.defined_past else "no"
        if not self.tells_apart:
            apart = "no"
        elif self.rows_by_mask:
            apart = "by the mask alone"
        else:
            apart = "yes"
        return {"offset only": offset, "decays": decay, "symmetric": symmetric, "bounded": bounded,
                "defined past N": past, "tells positions apart": apart}


#: The properties' names, in the order the panel and the Scorecard show them.
PROPERTY_NAMES = ("offset only", "decays", "symmetric", "bounded", "defined past N", "tells positions apart")
#: What each property means, in a sentence (the tables' tooltips).
PROPERTY_HELP = {
    "offset only": "Along every diagonal of the logit matrix (one offset m − n) the logits agree within 1e-6 of "
                   "the largest |logit|, masked entries included.",
    "decays": "From which distance r every key at r or farther gets under 1 % of the softmax weight of a key at "
              "distance 0 (its logit ≥ ln 100 lower), the positional term alone, q = k = 1 for a rotation.",
    "symmetric": "L(m, n) = L(n, m) within 1e-6 of the largest |logit|, with the same mask.",
    "bounded": "The largest |logit| over positions 0 … 16N − 1 is at most 1.5 × that over 0 … N − 1 "
               "(N/16 against N at the longest N).",
    "defined past N": "Positions N … 2N − 1 of the setup made for N give a logit (or a mask) for every pair.",
    "tells positions apart": "A query at m and one at m + 1 have different logits against the keys (a different "
                             "mask counts): the smallest difference is at least 0.1 of the median one.",
}


def _logits(params: EncodingParams, queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    return positional_logits(params.scheme, queries, keys, d_model=params.d_model, seq_len=params.seq_len,
                             **params.options)


def _largest(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def _spread(matrix: np.ndarray, scale: float) -> float:
    """Largest spread of the finite logits along a diagonal over ``scale``; inf for a partly masked one."""
    worst = 0.0
    size = matrix.shape[0]
    for offset in range(-(size - 1), size):
        line = np.diagonal(matrix, offset)
        finite = np.isfinite(line)
        if not finite.any():
            continue
        if not finite.all():
            return math.inf
        worst = max(worst, float(line.max() - line.min()))
    return worst / scale if scale > 0 else 0.0


def _asymmetry(matrix: np.ndarray, scale: float) -> float:
    finite = np.isfinite(matrix)
    if not np.array_equal(finite, finite.T):
        return math.inf
    if not finite.any():
        return 0.0
    difference = float(np.abs(matrix - matrix.T)[finite].max())
    return difference / scale if scale > 0 else 0.0


def decay_profile(params: EncodingParams) -> tuple[np.ndarray, np.ndarray]:
    """The profile p(r) = L(N − 1, N − 1 − r) at :func:`~.logits.profile_distances`: (distances, logits)."""
    params = check_params(params)
    distances, _ = profile_distances(params.seq_len)
    last = params.seq_len - 1
    return distances, _logits(params, np.array([float(last)]), (last - distances).astype(np.float64))[0]


def _decay_distances(seq_len: int) -> np.ndarray:
    """Every distance below :data:`DECAY_DENSE`, then :data:`DECAY_LOG` log-spaced ones to N − 1 (included)."""
    dense = np.arange(min(seq_len, DECAY_DENSE), dtype=np.int64)
    if seq_len <= DECAY_DENSE:
        return dense
    spaced = np.unique(np.round(np.geomspace(DECAY_DENSE, seq_len - 1, DECAY_LOG)).astype(np.int64))
    return np.union1d(dense, spaced)


def _decay(params: EncodingParams) -> tuple[int | None, float]:
    distances = _decay_distances(params.seq_len)
    last = params.seq_len - 1
    profile = _logits(params, np.array([float(last)]), (last - distances).astype(np.float64))[0]
    if not np.isfinite(profile[0]):
        return None, math.nan
    # the largest logit at any distance from here on: a key under 1 % of distance 0's weight from r on
    later_max = np.maximum.accumulate(np.where(np.isfinite(profile), profile, -np.inf)[::-1])[::-1]
    below = np.flatnonzero(later_max <= profile[0] - ONE_PERCENT_DROP)
    far = profile[distances >= distances[-1] / 2]
    far = far[np.isfinite(far)]
    drop = float(profile[0] - far.mean()) if far.size else math.nan
    return (int(distances[below[0]]) if below.size else None), drop


def _spaced(length: int, count: int = MATRIX_POSITIONS) -> tuple[np.ndarray, int]:
    stride = max(1, math.ceil(length / count))
    return np.arange(0, length, stride, dtype=np.float64), stride


def _bounded(params: EncodingParams) -> tuple[float, float, tuple[int, int]]:
    """Largest |logit| over N positions and over 16 N; where 16 N is past the longest sequence or past the
    last row of a table read from a file, over N / 16 and N instead (the growth over the same ×16)."""
    from .schemes import last_position

    n = params.seq_len
    longest = min(limits.MAX_SEQ_LEN, int(last_position(params.scheme, **params.options)) + 1)
    low, high = (n, LONGER * n) if LONGER * n <= longest else (max(1, n // LONGER), n)
    shorter, _ = _spaced(low)
    longer, _ = _spaced(high)
    return _largest(_logits(params, shorter, shorter)), _largest(_logits(params, longer, longer)), (low, high)


def _past(params: EncodingParams) -> str:
    n = params.seq_len
    positions = n + _spaced(n, MATRIX_POSITIONS // 4)[0]
    try:
        values = _logits(params, positions, positions)
    except ValueError as error:
        return str(error)
    if np.isnan(values).any():
        return "NaN logits"
    return ""


def _rows(params: EncodingParams, keys: np.ndarray) -> tuple[float, bool]:
    """Smallest over median difference of neighbour rows, and whether some differ only by their mask."""
    n = params.seq_len
    if n < 2:
        return math.inf, False
    queries = np.unique(np.linspace(0, n - 2, min(NEIGHBOUR_ROWS, n - 1)).round())
    near = np.clip(queries[:, None] + np.arange(-1.0, 3.0), 0, n - 1).ravel()
    rows = _logits(params, np.concatenate([queries, queries + 1]), np.union1d(keys, near))
    first, second = rows[:queries.size], rows[queries.size:]
    seen_first, seen_second = np.isfinite(first), np.isfinite(second)
    mask_differs = np.any(seen_first != seen_second, axis=1)
    both = seen_first & seen_second  # the keys both queries see: their logits compared
    step = np.where(both, first, 0.0) - np.where(both, second, 0.0)
    values = np.max(np.abs(step), axis=1)  # the largest difference: no overflow for xPos's large logits
    median = float(np.median(values))
    if median == 0:  # the logits never tell neighbours apart; only a different mask can
        return (math.inf, True) if mask_differs.all() else (0.0, False)
    return float(np.where(mask_differs, math.inf, values).min()) / median, False


def logit_properties(params: EncodingParams) -> LogitProperties:
    """The measured properties of the positional logit of ``params`` (q = k = 1 for a rotation).

    Parameters
    ----------
    params : EncodingParams
        Any scheme whose positional logit :func:`~.logits.positional_logits` computes.

    Returns
    -------
    LogitProperties

    Raises
    ------
    ValueError
        When ``positional_logits`` does not compute this scheme's logit (naming why).
    """
    params = check_params(params)
    positions, stride = _spaced(params.seq_len)
    matrix = _logits(params, positions, positions)
    scale = _largest(matrix)
    decay_distance, far_drop = _decay(params)
    max_within, max_longer, lengths = _bounded(params)
    # a quarter of the measured keys, and each query's neighbours: the rows' costs stay a few hundred ms
    row_difference, by_mask = _rows(params, positions[::4])
    return LogitProperties(params, stride, scale, _spread(matrix, scale), _asymmetry(matrix, scale),
                           bool(np.isneginf(matrix).any()), decay_distance, far_drop, max_within, max_longer,
                           lengths, _past(params), row_difference, by_mask)


#: Setups compared with the panel's own, at most.
MAX_COMPARED = 3


@dataclass(frozen=True)
class ComparedSetup:
    """One scheme compared with the panel's setup: the same N and d_model, its own options at their defaults.

    ``distances`` and ``profile`` are :func:`decay_profile`'s. ``params``, ``distances`` and ``profile``
    are None, and ``error`` says why, when the scheme does not take these sizes or its logit is not computed.
    """

    key: str
    params: EncodingParams | None
    distances: np.ndarray | None
    profile: np.ndarray | None
    error: str = ""


def _check_compared(schemes: object) -> tuple[str, ...]:
    from .schemes import SCHEMES

    if isinstance(schemes, str) or not isinstance(schemes, (tuple, list)):
        raise ValueError(f"compare must be a list of scheme names, got {limits.shown(schemes)}")
    if len(schemes) > MAX_COMPARED:
        raise ValueError(f"compare takes at most {MAX_COMPARED} schemes, got {len(schemes)}")
    for key in schemes:
        if key not in SCHEMES:
            raise ValueError(f"compare: unknown scheme {limits.shown(key)} (known: {', '.join(SCHEMES)})")
    return tuple(dict.fromkeys(schemes))


def compared_setup(params: EncodingParams, key: str) -> EncodingParams:
    """``params`` with scheme ``key``: options of the same name carried over, the others at their defaults."""
    return check_params(params).replaced(scheme=key)


def compared_profiles(params: EncodingParams, schemes: tuple[str, ...]) -> tuple[ComparedSetup, ...]:
    """The :func:`decay_profile` of each scheme in ``schemes`` (at most :data:`MAX_COMPARED`) beside ``params``.

    Raises
    ------
    ValueError
        For ``schemes`` that are not a list of at most :data:`MAX_COMPARED` known scheme names.
    """
    params = check_params(params)
    results = []
    for key in _check_compared(schemes):
        try:
            setup = compared_setup(params, key)
            results.append(ComparedSetup(key, setup, *decay_profile(setup)))
        except ValueError as error:
            results.append(ComparedSetup(key, None, None, None, str(error)))
    return tuple(results)


def pinned_comparison(pinned: EncodingParams) -> tuple[ComparedSetup, LogitProperties | str]:
    """Setup A of an A/B comparison, for the plot and table of setup B: its own decay profile and properties.

    Unlike a compared scheme, A keeps all of its own parameters (its sizes
    too). The setup's ``key`` is ``"A"``; when its logit is not computed,
    the profile is None and ``error`` (and the second value) says why.
    """
    pinned = check_params(pinned)
    try:
        setup = ComparedSetup("A", pinned, *decay_profile(pinned))
    except ValueError as error:
        setup = ComparedSetup("A", None, None, None, str(error))
    try:
        measured: LogitProperties | str = logit_properties(pinned)
    except ValueError as error:
        measured = str(error)
    return setup, measured


def properties_table(params: EncodingParams, schemes: tuple[str, ...] = ()
                     ) -> tuple[tuple[str, LogitProperties | str], ...]:
    """:func:`logit_properties` of ``params`` and of each compared scheme (or why it has none), in that order."""
    params = check_params(params)
    setups: list[tuple[str, EncodingParams | str]] = [(params.scheme, params)]
    for key in _check_compared(schemes):
        try:
            setups.append((key, compared_setup(params, key)))
        except ValueError as error:
            setups.append((key, str(error)))
    results = []
    for key, setup in setups:
        if isinstance(setup, str):
            results.append((key, setup))
            continue
        try:
            results.append((key, logit_properties(setup)))
        except ValueError as error:
            results.append((key, str(error)))
    return tuple(results)

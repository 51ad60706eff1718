"""The notes' wish list for p_i — unique, bounded, deterministic, generalizes —
measured for every scheme at the current ``seq_len``, ``d_model`` and ``base``.

Nothing here is asserted from the formulas; every verdict comes from
evaluating :func:`~posenc_gui.model.encode` (directly or through the
analyses of :mod:`posenc_gui.model.analysis`):

bounded
    ``max ‖p‖`` over positions ``0 … L−1`` for ``L = N, 10N, 100N``. Bounded
    if the maximum over ``100N`` positions is at most :data:`GROWTH_TOL`
    (1.5) times the maximum over ``10N``: a linear scheme grows ×10 per
    decade, a periodic one does not grow.
unique at this length
    The closest pair of distinct positions in ``0 … N−1``
    (:func:`~posenc_gui.model.analysis.uniqueness`) compared with a typical
    step, the median ``‖p_{i+1} − p_i‖``: unique if the closest pair is at
    least :data:`UNIQUE_TOL` (0.1) of a step apart. A near-repeat closer
    than a tenth of a step (sin(11) vs sin(55), the pair's 0 vs 44) fails.
deterministic
    Encoding the positions twice, and once in reverse order, gives the same
    bits.
unseen lengths
    Positions ``N … 10N−1``: every value finite and ``max ‖p‖`` there at most
    :data:`GROWTH_TOL` times ``max ‖p‖`` over ``0 … N−1`` (the encoding stays
    in the range the model saw).
exact relative T_k
    :func:`~posenc_gui.model.analysis.linear_relation` for ``k = 1``: exact if
    the relative residual ``‖PE(P+k) − PE(P)·T_kᵀ‖ / ‖PE(P+k)‖`` is below
    :data:`TK_TOL` (1e-9), measured on more positions than dimensions so a
    least-squares fit cannot simply interpolate.

Cost stays bounded for large ``seq_len`` and ``d_model``: each check
evaluates at most a budgeted number of positions (sampled evenly, ends
included, or a prefix for uniqueness) and, for a least-squares T_k at large
d, a smaller ``d_model``; every result says what it used in ``notes``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import islice

import numpy as np

from . import limits
from .analysis import linear_relation, pe_norms, uniqueness, uniqueness_max_positions
from .params import EncodingParams, check_params
from .schemes import SCHEMES, columns, encode

#: Growth of max ‖p‖ (100N vs 10N; unseen vs seen) tolerated as "bounded".
GROWTH_TOL = 1.5
#: Closest pair must be at least this fraction of the median neighbour step.
UNIQUE_TOL = 0.1
#: Relative residual below which T_k counts as exact.
TK_TOL = 1e-9
#: Offset k of the T_k check.
TK_OFFSET = 1.0
#: Budget of values evaluated per norm/determinism check (positions × d).
NORM_WORK = 2**17
#: Budget of n²·max(d, 64) for the uniqueness check (all pairs of n positions).
UNIQUE_WORK = 2**26
#: Budget of n·d² for a least-squares T_k.
LSTSQ_WORK = 2**26
#: Budget of n·d for an exact (rotation) T_k.
ROTATION_WORK = 2**21
#: Largest d_model at which the dense d × d T_k is built.
TK_MAX_D_MODEL = 1024


@dataclass(frozen=True)
class SchemeScore:
    """The measured verdicts for one scheme.

    Attributes
    ----------
    scheme, label : str
    max_norm : tuple of 3 floats
        ``max ‖p‖`` over ``0 … L−1`` for ``L = N, 10N, 100N``.
    bounded : bool
    min_distance : float
        Closest pair's distance; ``nan`` with fewer than 2 positions.
    closest_pair : tuple of 2 floats or None
    neighbour_step : float
        Median ``‖p_{i+1} − p_i‖`` over the checked positions.
    unique_ratio : float
        ``min_distance / neighbour_step``.
    unique : bool
    unique_positions : int
        Positions compared (a prefix ``0 … M−1`` of ``0 … N−1``).
    deterministic : bool
    unseen_finite : bool
    unseen_ratio : float
        ``max ‖p‖`` over ``N … 10N−1`` divided by ``max ‖p‖`` over ``0 … N−1``
        (``inf`` when the latter is 0 and the former is not).
    generalizes : bool
        ``unseen_finite`` and ``unseen_ratio ≤ GROWTH_TOL``.
    tk_residual : float
        Relative residual of T_k.
    tk_exact : bool
    tk_method : str
        ``"rotation"`` or ``"least-squares"`` (from ``linear_relation``).
    tk_d_model, tk_positions : int
        The d_model and number of positions the T_k check used.
    notes : tuple of str
        What was sampled or reduced, in words.
    """

    scheme: str
    label: str
    max_norm: tuple[float, float, float]
    bounded: bool
    min_distance: float
    closest_pair: tuple[float, float] | None
    neighbour_step: float
    unique_ratio: float
    unique: bool
    unique_positions: int
    deterministic: bool
    unseen_finite: bool
    unseen_ratio: float
    generalizes: bool
    tk_residual: float
    tk_exact: bool
    tk_method: str
    tk_d_model: int
    tk_positions: int
    notes: tuple[str, ...]

    def verdicts(self) -> dict[str, bool]:
        """The five verdicts keyed by :data:`CRITERIA`."""
        return {
            "bounded": self.bounded,
            "unique": self.unique,
            "deterministic": self.deterministic,
            "generalizes": self.generalizes,
            "exact_tk": self.tk_exact,
        }


#: The criteria, in the order of the table's columns, with their headers.
CRITERIA = {
    "bounded": "bounded",
    "unique": "unique at N",
    "deterministic": "deterministic",
    "generalizes": "unseen lengths",
    "exact_tk": "exact relative T_k",
}


@dataclass(frozen=True)
class Scorecard:
    """Every scheme's :class:`SchemeScore` at one ``(seq_len, d_model, base, layout)``."""

    params: EncodingParams
    scores: tuple[SchemeScore, ...]

    def score(self, scheme: str) -> SchemeScore:
        """The row of ``scheme``."""
        for s in self.scores:
            if s.scheme == scheme:
                return s
        raise ValueError(f"scheme must be one of {', '.join(s.scheme for s in self.scores)}; got {scheme!r}")

    def table(self) -> list[dict]:
        """JSON-able rows: scheme, verdicts and the numbers behind them."""
        rows = []
        for s in self.scores:
            rows.append({
                "scheme": s.scheme,
                **s.verdicts(),
                "max_norm_N": s.max_norm[0], "max_norm_10N": s.max_norm[1], "max_norm_100N": s.max_norm[2],
                "min_distance": s.min_distance, "neighbour_step": s.neighbour_step,
                "unique_ratio": s.unique_ratio, "unique_positions": s.unique_positions,
                "unseen_ratio": s.unseen_ratio, "tk_residual": s.tk_residual, "tk_method": s.tk_method,
                "tk_d_model": s.tk_d_model, "tk_positions": s.tk_positions, "notes": list(s.notes),
            })
        return rows


def sample_range(start: int, stop: int, count: int) -> np.ndarray:
    """Integers ``start … stop−1``: all if at most ``count``, else ``count`` evenly spaced (ends included).

    ``0 ≤ start ≤ stop ≤ limits.MAX_POSITION``; ``count`` in ``1 … limits.MAX_POSITIONS``.
    """
    start = limits.check_int("start", start, 0, int(limits.MAX_POSITION))
    stop = limits.check_int("stop", stop, start, int(limits.MAX_POSITION))
    count = limits.check_int("count", count, 1, limits.MAX_POSITIONS)
    if stop - start <= count:
        return np.arange(start, stop, dtype=np.float64)
    return np.unique(np.round(np.linspace(start, stop - 1, count)))


def _norm_budget(d_model: int) -> int:
    return max(64, NORM_WORK // d_model)


def _all_paired(params: EncodingParams) -> bool:
    """True if every column is a sine or cosine with a partner of the same frequency."""
    cols = columns(params.scheme, params.d_model, **params.scheme_kwargs())
    if np.any(cols.kind == "linear"):
        return False
    _, group = np.unique(cols.divisor, return_inverse=True)
    sines = np.bincount(group, weights=(cols.kind == "sin").astype(np.float64))
    cosines = np.bincount(group, weights=(cols.kind == "cos").astype(np.float64))
    return bool(np.array_equal(sines, cosines))


def _max_norm(params: EncodingParams, start: int, stop: int, count: int) -> tuple[float, bool, int]:
    pos = sample_range(start, stop, count)
    pos = pos[pos <= limits.MAX_POSITION]
    norms = pe_norms(params.scheme, pos, params.d_model, **params.scheme_kwargs())
    finite = bool(np.all(np.isfinite(norms)))
    return (float(np.max(norms)) if norms.size else 0.0), finite, int(pos.size)


def _ratio(a: float, b: float) -> float:
    if b > 0:
        return a / b
    return 1.0 if a == 0 else math.inf


def score_scheme(params: EncodingParams, unique_work: int = UNIQUE_WORK) -> SchemeScore:
    """Measure the five criteria for ``params.scheme`` (see the module docstring).

    Parameters
    ----------
    params : EncodingParams
    unique_work : int
        Budget n²·max(d, 64) of the uniqueness check, 2¹⁶ … 2³³; a caller
        scoring a single scheme can afford more than :data:`UNIQUE_WORK`.
    """
    params = check_params(params)
    unique_work = limits.check_int("unique_work", unique_work, 2**16, 2**33)
    n, d, kwargs = params.seq_len, params.d_model, params.scheme_kwargs()
    notes: list[str] = []
    budget = _norm_budget(d)
    if 100 * n > budget:
        notes.append(f"max ‖p‖ over ≤ {budget:,} evenly spaced positions per length (ends included)")
    # bounded: N, 10N, 100N
    maxima = []
    for factor in (1, 10, 100):
        value, _, _ = _max_norm(params, 0, min(factor * n, int(limits.MAX_POSITION) + 1), budget)
        maxima.append(value)
    bounded = maxima[2] <= GROWTH_TOL * maxima[1]
    # unseen lengths: N … 10N−1 against 0 … N−1
    unseen_max, unseen_finite, _ = _max_norm(params, n, 10 * n, budget)
    unseen_ratio = _ratio(unseen_max, maxima[0])
    generalizes = unseen_finite and unseen_ratio <= GROWTH_TOL
    # deterministic: same bits twice, and in reverse order
    det_pos = sample_range(0, 10 * n, max(16, budget // 4))
    first = encode(params.scheme, det_pos, d, **kwargs)
    second = encode(params.scheme, det_pos, d, **kwargs)
    backwards = encode(params.scheme, det_pos[::-1], d, **kwargs)[::-1]
    deterministic = bool(np.array_equal(first.view(np.uint64), second.view(np.uint64))
                         and np.array_equal(first.view(np.uint64), backwards.view(np.uint64)))
    # unique at this length
    most = min(uniqueness_max_positions(d), max(2, math.isqrt(unique_work // max(d, 64))))
    m = min(n, most)
    if m < 2:
        min_distance, pair, step, ratio, unique = math.nan, None, math.nan, math.nan, True
        notes.append("only one position: nothing to confuse it with")
    else:
        if m < n:
            notes.append(f"uniqueness checked on positions 0…{m - 1:,} of {n:,} (budget: all pairs of ≤ {most:,} positions)")
        positions = np.arange(m, dtype=np.float64)
        result = uniqueness(params.scheme, positions, d, top=1, **kwargs)
        p, q, min_distance = result.closest_pair
        pair = (p, q)
        pe = encode(params.scheme, positions, d, **kwargs)
        step = float(np.median(np.linalg.norm(np.diff(pe, axis=0), axis=1)))
        ratio = _ratio(min_distance, step)
        unique = ratio >= UNIQUE_TOL
    # exact relative T_k
    tk_params, tk_note = _tk_params(params)
    if tk_note:
        notes.append(tk_note)
    dt = tk_params.d_model
    if _all_paired(tk_params):
        count = max(2, min(max(n, 2), ROTATION_WORK // dt))
    else:
        count = max(2, min(dt + dt // 4 + 8, LSTSQ_WORK // (dt * dt)))
    if count < n:
        notes.append(f"T_k over {count:,} evenly spaced positions of 0…{n - 1:,}")
        tk_pos = sample_range(0, n, count)
    else:
        if count > n:
            notes.append(f"T_k over positions 0…{count - 1:,} (more positions than dimensions)")
        tk_pos = np.arange(count, dtype=np.float64)
    relation = linear_relation(tk_params.scheme, tk_pos, dt, TK_OFFSET, **tk_params.scheme_kwargs())
    tk_residual = relation.relative_residual
    info = SCHEMES[params.scheme]
    return SchemeScore(
        scheme=params.scheme, label=info.label, max_norm=(maxima[0], maxima[1], maxima[2]), bounded=bool(bounded),
        min_distance=float(min_distance), closest_pair=pair, neighbour_step=float(step), unique_ratio=float(ratio),
        unique=bool(unique), unique_positions=int(m), deterministic=deterministic,
        unseen_finite=unseen_finite, unseen_ratio=float(unseen_ratio), generalizes=bool(generalizes),
        tk_residual=float(tk_residual), tk_exact=bool(tk_residual < TK_TOL), tk_method=relation.method,
        tk_d_model=int(dt), tk_positions=int(relation.n_positions), notes=tuple(notes),
    )


def _tk_params(params: EncodingParams) -> tuple[EncodingParams, str]:
    """``params`` with d_model reduced (if needed) so the T_k check fits its budget."""
    d = params.d_model
    if _all_paired(params):
        if d <= TK_MAX_D_MODEL:
            return params, ""
        reduced = TK_MAX_D_MODEL
    else:
        reduced = d
        while reduced > 2 and (reduced + reduced // 4 + 8) * reduced * reduced > LSTSQ_WORK:
            reduced //= 2
        if reduced == d:
            return params, ""
    reduced -= reduced % 2
    return (replace(params, d_model=reduced),
            f"T_k measured at d_model = {reduced:,} (a {'dense' if _all_paired(params) else 'least-squares'} "
            f"T_k at d_model = {d:,} exceeds the budget)")


def scorecard(params: EncodingParams, schemes=None) -> Scorecard:
    """Score every scheme (or ``schemes``) at ``params``' ``seq_len``, ``d_model``, ``base`` and ``layout``.

    Parameters
    ----------
    params : EncodingParams
        Its ``scheme`` is ignored; each scheme is measured in turn.
    schemes : iterable of str, optional
        Keys of :data:`~posenc_gui.model.SCHEMES`; all by default.

    Returns
    -------
    Scorecard
    """
    params = check_params(params)
    if schemes is not None and (isinstance(schemes, str) or not isinstance(schemes, Iterable)):
        raise ValueError(f"schemes must be a list of keys of {', '.join(SCHEMES)}; got {limits.shown(schemes)}")
    keys = list(SCHEMES) if schemes is None else list(islice(schemes, len(SCHEMES) + 1))
    if len(keys) > len(SCHEMES):
        raise ValueError(f"schemes must name at most the {len(SCHEMES)} schemes, each once")
    for key in keys:
        if not isinstance(key, str) or key not in SCHEMES:
            raise ValueError(f"schemes must be keys of {', '.join(SCHEMES)}; got {limits.shown(key)}")
    scores = tuple(score_scheme(replace(params, scheme=key)) for key in keys)
    return Scorecard(params, scores)

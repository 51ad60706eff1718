"""The notes' wish list for p_i — unique, bounded, deterministic, generalizes —
measured for every scheme at the current ``seq_len``, ``d_model`` and ``base``.

Nothing here is asserted from the formulas; every verdict comes from
evaluating :func:`~posenc_gui.model.encode` (directly or through the
analyses), except that a T_k is only called exact where one exists (below).
"Bounded" has one definition, in two parts, used by the scheme summaries,
the walkthrough and the Scorecard alike (:data:`BOUNDED_WORDS`):

bounded in 0…N−1 (within the trained length)
    ``max ‖p‖`` over the trained positions ``0 … L−1`` of the encoding made
    for length ``L``, for three lengths a decade apart (``N, 10N, 100N``, or
    ``N/100, N/10, N`` where ``100N`` is past ``limits.MAX_SEQ_LEN``).
    Bounded if the longest length's maximum is at most :data:`GROWTH_TOL`
    (1.5) times the middle one's: a linear scheme grows ×10 per decade, a
    periodic one and the normalized ``i/(N−1)`` do not.
bounded past N (beyond the trained length)
    ``max ‖p‖`` over ``0 … L−1`` for ``L = N, 10N, 100N`` of the encoding
    made for length ``N``, with the same test: normalized ``i/(N−1)`` grows
    past ``N``.
unique in 0…N−1
    The closest pair of distinct positions of ``0 … N−1``
    (:func:`~posenc_gui.model.analyses.closest.range_uniqueness`: every pair, every
    offset for schemes whose distances follow from the offset, binary's
    closed form, or an exact search of the pairs close along one
    coordinate), compared with a typical step, the median
    ``‖p_{i+1} − p_i‖``: unique if the closest pair is at least
    :data:`UNIQUE_TOL` (0.1) of a step apart. A ✓ is proved over all of
    ``0 … N−1`` (:attr:`SchemeScore.unique_verdict`); where no search of the
    whole range fits the budget, the answer is that of the leading positions
    ``0 … M−1``, which settles a ✗ (a pair found is a pair of ``0 … N−1``,
    if the step is the whole range's or the pair collides) but not a ✓.
deterministic
    Encoding the positions twice, and once in reverse order, gives the same
    bits.
unseen lengths
    Positions ``N … 10N−1``: every value finite and ``max ‖p‖`` there at most
    :data:`GROWTH_TOL` times ``max ‖p‖`` over ``0 … N−1`` (the encoding stays
    in the range the model saw).
exact relative T_k
    For ``k = 1``. Where every dimension is a sine or cosine whose frequency
    has both a sine and a cosine column, T_k is made of 2×2 rotations; its relative
    residual ``‖PE(P+k) − T_k·PE(P)‖ / ‖PE(P+k)‖`` over positions spread over
    ``0 … N−1`` must stay below :data:`TK_TOL` (1e-9, far above rounding).
    A dimension whose frequency lacks a sine or a cosine (the last sine of
    the sinusoidal scheme at odd d, all-sine, single sine) or a linear one
    has no exact row, so T_k is not exact; the residual shown is a
    least-squares fit's on those rows, fitted on ``2d + 8``
    positions between the integers of ``0 … N−1`` and measured on the
    integers it was not fitted on, where the fit is affordable
    (:data:`TK_FIT_WORK`).

Cost stays bounded for large ``seq_len`` and ``d_model``: the norm checks
evaluate at most a budgeted number of positions (sampled evenly, ends
included) and say so in ``notes``; a scan of every offset can be done in
steps (``scan_work``, :func:`continue_score`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

import numpy as np

from ..core import limits
from .analysis import pe_norms
from .closest import RangeUniqueness, continue_uniqueness, range_uniqueness
from ..core.coverage import Coverage, Verdict
from .linear_relation import positions_between
from ..core.params import EncodingParams, check_params
from ..schemes import SCHEMES, encode

#: Growth of max ‖p‖ (a decade longer; unseen vs seen) tolerated as "bounded".
GROWTH_TOL = 1.5
#: Closest pair must be at least this fraction of the median neighbour step.
UNIQUE_TOL = 0.1
#: Relative residual below which a rotation T_k counts as exact.
TK_TOL = 1e-9
#: Offset k of the T_k check.
TK_OFFSET = 1.0
#: Budget of values evaluated per norm/determinism check (positions × d).
NORM_WORK = 2**17
#: Budget of n²·max(d, 64) for comparing all pairs of n positions.
UNIQUE_WORK = 2**26
#: Budget of n·d² for a least-squares T_k (n = 2d + 8 positions).
TK_FIT_WORK = 2**27
#: Budget of n·d for the positions a T_k residual is measured on.
ROTATION_WORK = 2**20

#: The words every summary, walkthrough step and cell uses for (bounded in 0…N−1, bounded past N).
BOUNDED_WORDS = {
    (True, True): "bounded in 0…N−1 and past N",
    (True, False): "bounded in 0…N−1, unbounded past N",
    (False, False): "unbounded in 0…N−1 and past N",
    (False, True): "unbounded in 0…N−1, bounded past N",
}


@dataclass(frozen=True)
class SchemeScore:
    """The measured verdicts for one scheme.

    Attributes
    ----------
    scheme, label : str
    trained_lengths : tuple of 3 int
        The lengths L of the "bounded in 0…N−1" check.
    trained_max_norm : tuple of 3 floats
        ``max ‖p‖`` over ``0 … L−1`` of the encoding made for each length L.
    bounded_within : bool
    max_norm : tuple of 3 floats
        ``max ‖p‖`` over ``0 … L−1`` for ``L = N, 10N, 100N``, the encoding made for N.
    bounded_past : bool
    uniqueness : RangeUniqueness or None
        None with a single position (nothing to confuse it with).
    deterministic : bool
    unseen_finite : bool
    unseen_ratio : float
        ``max ‖p‖`` over ``N … 10N−1`` divided by ``max ‖p‖`` over ``0 … N−1``
        (``inf`` when the latter is 0 and the former is not).
    generalizes : bool
        ``unseen_finite`` and ``unseen_ratio ≤ GROWTH_TOL``.
    tk_unpaired : int
        Dimensions whose frequency lacks a sine or a cosine column (every
        linear column too): their rows of T_k cannot be exact.
    tk_residual : float
        Relative residual of the rotation, or of the least-squares fit on the
        rows without a partner (held out); ``nan`` where no fit was affordable.
    tk_exact : bool
        No unpaired dimension, and the rotation's residual below :data:`TK_TOL`.
    tk_method : str
        ``"rotation"``, ``"least-squares"``, ``"none"`` (no residual computed) or
        ``"any"`` (every encoding is 0: every matrix is a T_k, none relates positions).
    tk_positions, tk_fit_positions : int
        Positions the residual was measured on, and fitted on (0 for a rotation).
    notes : tuple of str
        What was sampled, in words.
    table_rows : int or None
        The positions of a finite table (read from a file: :attr:`Scheme.sizes`), None for a scheme
        that encodes every position. Past its last row nothing is measured: a length that reaches
        past it has NaN as its ``max_norm`` and fails ``bounded_past`` and ``generalizes``.
    """

    scheme: str
    label: str
    trained_lengths: tuple[int, int, int]
    trained_max_norm: tuple[float, float, float]
    bounded_within: bool
    max_norm: tuple[float, float, float]
    bounded_past: bool
    uniqueness: RangeUniqueness | None
    deterministic: bool
    unseen_finite: bool
    unseen_ratio: float
    generalizes: bool
    tk_unpaired: int
    tk_residual: float
    tk_exact: bool
    tk_method: str
    tk_positions: int
    tk_fit_positions: int
    notes: tuple[str, ...]
    table_rows: int | None = None

    @property
    def closest_pair(self) -> tuple[float, float] | None:
        """The closest pair (p, q) found; None with a single position."""
        return None if self.uniqueness is None else self.uniqueness.closest_pair[:2]

    @property
    def min_distance(self) -> float:
        """The closest pair's distance; ``nan`` with a single position."""
        return math.nan if self.uniqueness is None else self.uniqueness.closest_pair[2]

    @property
    def neighbour_step(self) -> float:
        """The median ``‖p_{i+1} − p_i‖`` over the range the closest pair covers."""
        return math.nan if self.uniqueness is None else self.uniqueness.neighbour_step

    @property
    def unique_ratio(self) -> float:
        """``min_distance / neighbour_step``."""
        return math.nan if self.uniqueness is None else self.uniqueness.step_ratio

    @property
    def unique(self) -> bool:
        """The closest pair is at least :data:`UNIQUE_TOL` of a step apart (over :attr:`unique_positions`)."""
        return self.uniqueness is None or self.unique_ratio >= UNIQUE_TOL

    @property
    def unique_verdict(self) -> Verdict:
        """"Unique in 0…N−1" with what it is proved over: a ✓ only when the closest pair is that of all of
        0…N−1; a ✗ when the pair found collides, or is under :data:`UNIQUE_TOL` of the whole range's step."""
        found = self.uniqueness
        if found is None:  # a single position: nothing to confuse it with
            return Verdict(True, Coverage("pairs of positions", 0, 0), (0, 0))
        p, q, distance = found.closest_pair
        witness = None
        if not self.unique:
            if distance == 0:
                witness = f"PE({p:,.0f}) = PE({q:,.0f})"
            elif found.step_whole_range:
                witness = f"< {UNIQUE_TOL:g} step"
        return Verdict(self.unique, found.pair_coverage(), (0, found.length - 1), witness)

    @property
    def unique_positions(self) -> int:
        """The closest pair is the closest of the pairs of ``0 … unique_positions − 1`` (N: the whole range)."""
        return 1 if self.uniqueness is None else self.uniqueness.pairs_range

    @property
    def unique_whole_range(self) -> bool:
        return self.uniqueness is None or self.uniqueness.whole_range

    @property
    def pending(self) -> bool:
        """True while the scan of every offset is still running (see :func:`continue_score`)."""
        return self.uniqueness is not None and self.uniqueness.pending

    @property
    def bounded_words(self) -> str:
        """The :data:`BOUNDED_WORDS` of this row's two bounded verdicts."""
        return BOUNDED_WORDS[(self.bounded_within, self.bounded_past)]

    def verdicts(self) -> dict[str, bool | None]:
        """The verdicts keyed by :data:`CRITERIA`; "unique" is None where it is not settled over 0…N−1."""
        unique = self.unique_verdict
        return {
            "bounded_within": self.bounded_within,
            "bounded_past": self.bounded_past,
            "unique": unique.holds if unique.settled else None,
            "deterministic": self.deterministic,
            "generalizes": self.generalizes,
            "exact_tk": self.tk_exact,
        }


#: The criteria, in the order of the table's columns, with their names.
CRITERIA = {
    "bounded_within": "bounded in 0…N−1",
    "bounded_past": "bounded past N",
    "unique": "unique in 0…N−1",
    "deterministic": "deterministic",
    "generalizes": "unseen lengths",
    "exact_tk": "exact relative T_k",
}


@dataclass(frozen=True)
class Scorecard:
    """Every scheme's :class:`SchemeScore` at one ``seq_len`` and ``d_model``, each with its options.

    ``setups[i]`` are the parameters ``scores[i]`` was measured at.
    """

    params: EncodingParams
    scores: tuple[SchemeScore, ...]
    setups: tuple[EncodingParams, ...]
    #: ``(scheme, why)`` of each scheme not measured because it does not take these sizes.
    left_out: tuple[tuple[str, str], ...] = ()
    #: Every scheme's positional-logit properties (:func:`~.logit_properties.logit_properties`), or why it has
    #: none, in registry order: the rows of the schemes that give no table (a bias) come from here.
    logits: tuple[tuple[str, Any], ...] = ()

    @property
    def rows(self) -> tuple[str, ...]:
        """Every scheme with a row: those scored, and those with logit properties, in registry order."""
        keys = {s.scheme for s in self.scores} | {key for key, _ in self.logits}
        return tuple(key for key in SCHEMES if key in keys)

    def logit_properties(self, scheme: str):
        """The :class:`~.logit_properties.LogitProperties` of ``scheme``, the reason it has none, or None."""
        return dict(self.logits).get(scheme)

    def setup(self, scheme: str) -> EncodingParams:
        """The parameters the row of ``scheme`` was measured at."""
        return self.setups[self.scores.index(self.score(scheme))]

    @property
    def key(self) -> tuple:
        """What the scores depend on (see :func:`scorecard_key`)."""
        return self.setups

    def score(self, scheme: str) -> SchemeScore:
        """The row of ``scheme``."""
        for s in self.scores:
            if s.scheme == scheme:
                return s
        raise ValueError(f"scheme must be one of {', '.join(s.scheme for s in self.scores)}; got {scheme!r}")

    def with_score(self, score: SchemeScore) -> "Scorecard":
        """This scorecard with the row of ``score.scheme`` replaced by ``score``."""
        self.score(score.scheme)
        return replace(self, scores=tuple(score if s.scheme == score.scheme else s for s in self.scores))

    def logit_table(self) -> dict[str, Any]:
        """JSON-able: each scheme's logit verdicts (see :data:`~.logit_properties.PROPERTY_NAMES`), each with its
        coverage (:meth:`~.logit_properties.LogitProperties.as_dict`), or why none."""
        return {key: measured if isinstance(measured, str) else measured.as_dict() for key, measured in self.logits}

    @property
    def logits_pending(self) -> tuple[str, ...]:
        """The schemes whose logit scan over every offset is still running (see :func:`continue_logits`)."""
        return tuple(key for key, measured in self.logits if getattr(measured, "pending", False))

    @property
    def pending(self) -> tuple[str, ...]:
        """The schemes whose uniqueness scan is still running."""
        return tuple(s.scheme for s in self.scores if s.pending)

    def table(self) -> list[dict]:
        """JSON-able rows: scheme, verdicts and the numbers behind them."""
        rows = []
        for s in self.scores:
            rows.append({
                "scheme": s.scheme,
                **s.verdicts(),
                "trained_lengths": list(s.trained_lengths),
                "trained_max_norm": list(s.trained_max_norm),
                "max_norm_N": s.max_norm[0], "max_norm_10N": s.max_norm[1], "max_norm_100N": s.max_norm[2],
                "closest_pair": None if s.closest_pair is None else list(s.closest_pair),
                "min_distance": s.min_distance, "neighbour_step": s.neighbour_step,
                "unique_ratio": s.unique_ratio, "unique_positions": s.unique_positions,
                "unique_whole_range": s.unique_whole_range,
                "unique_method": None if s.uniqueness is None else s.uniqueness.method,
                "unique_verdict": s.unique_verdict.as_dict(),
                "unique_coverage": None if s.uniqueness is None else s.uniqueness.coverage(),
                "unseen_ratio": s.unseen_ratio, "tk_residual": s.tk_residual, "tk_method": s.tk_method,
                "tk_unpaired": s.tk_unpaired, "tk_positions": s.tk_positions,
                "tk_fit_positions": s.tk_fit_positions, "notes": list(s.notes), "table_rows": s.table_rows,
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


def trained_lengths(seq_len: int, positions: int | None = None) -> tuple[int, int, int]:
    """The lengths of the "bounded in 0…N−1" check: ``N, 10N, 100N``, or ``N/100, N/10, N`` past the limit.

    ``positions``: the rows of a finite table (:attr:`Scheme.sizes`); past them, the lengths are
    ``⌊N/100⌋, ⌊N/10⌋, N`` (each at least 1), which the table has.
    """
    if positions is not None and 100 * seq_len > min(positions, limits.MAX_SEQ_LEN):
        return max(1, seq_len // 100), max(1, seq_len // 10), seq_len
    first = seq_len if 100 * seq_len <= limits.MAX_SEQ_LEN else seq_len // 100
    return first, 10 * first, 100 * first


def _norm_budget(d_model: int) -> int:
    return max(64, NORM_WORK // d_model)


def _max_norm(params: EncodingParams, start: int, stop: int, count: int) -> tuple[float, bool]:
    pos = sample_range(start, stop, count)
    pos = pos[pos <= limits.MAX_POSITION]
    norms = pe_norms(params.scheme, pos, params.d_model, **params.scheme_kwargs())
    finite = bool(np.all(np.isfinite(norms)))
    return (float(np.max(norms)) if norms.size else 0.0), finite


def _ratio(a: float, b: float) -> float:
    if b > 0:
        return a / b
    return 1.0 if a == 0 else math.inf


def _partners(params: EncodingParams) -> tuple[np.ndarray, np.ndarray]:
    """For each dimension, a sine and a cosine column of its frequency (−1 where the scheme has none: a table)."""
    if params.info.columns is None:
        none = np.full(params.d_model, -1, dtype=np.int64)
        return none, none.copy()
    cols = params.columns()
    periodic = cols.kind != "linear"
    partners = []
    for kind in ("sin", "cos"):
        mine = np.flatnonzero(cols.kind == kind)
        partner = np.full(cols.kind.size, -1, dtype=np.int64)
        if mine.size:
            divisors, first = np.unique(cols.divisor[mine], return_index=True)
            where = np.minimum(np.searchsorted(divisors, cols.divisor), divisors.size - 1)
            found = periodic & (divisors[where] == cols.divisor)
            partner[found] = mine[first[where[found]]]
        partners.append(partner)
    # A cosine of the angle 0 (RoPE's unrotated channel, an infinite divisor) is the constant 1: its row of
    # T_k is the identity, and the sine it would pair with is 0, so the column is its own partner.
    constant = np.flatnonzero((cols.kind == "cos") & np.isinf(cols.divisor))
    partners[0][constant] = constant
    return partners[0], partners[1]


def _tk_check(params: EncodingParams) -> tuple[float, bool, str, int, int, int, str]:
    """``(residual, exact, method, without partner, positions, fit positions, note)`` of T_k for ``k = TK_OFFSET``.

    sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and cos((p+k)ω) =
    −sin(kω)·sin(pω) + cos(kω)·cos(pω): a row of T_k is exact when its
    frequency has both a sine and a cosine column. A linear column (p+k)/c
    is not a linear function of PE(p) (it is affine).
    """
    n, d = params.seq_len, params.d_model
    if params.info.sizes is not None:  # a finite table: p + k must be one of its rows
        n = min(n, params.info.sizes(**params.options)[0] - int(TK_OFFSET))
        if n < 2:
            return (math.nan, False, "none", d, 0, 0, f"{params.scheme}: no T_k residual: the table has too few "
                    "rows for positions p and p + k")
    sines, cosines = _partners(params)
    alone = np.flatnonzero((sines < 0) | (cosines < 0))
    tested = sample_range(0, n, max(2, ROTATION_WORK // d))
    if alone.size == 0:
        x, y = params.encode(tested), params.encode(tested + TK_OFFSET)
        cols = params.columns()
        angle = TK_OFFSET / cols.divisor
        c, s = np.cos(angle), np.sin(angle)
        sin_part, cos_part = x[:, sines], x[:, cosines]
        predicted = np.where(cols.kind == "sin", sin_part * c + cos_part * s, cos_part * c - sin_part * s)
        residual = _ratio(float(np.linalg.norm(y - predicted)), float(np.linalg.norm(y)))
        return residual, residual < TK_TOL, "rotation", 0, int(tested.size), 0, ""
    fitted = 2 * d + 8
    if fitted * d * d > TK_FIT_WORK:
        return (math.nan, False, "none", int(alone.size), 0, 0,
                f"no least-squares T_k residual at d_model = {d:,} (a fit over 2·d + 8 positions costs "
                f"n·d² > {TK_FIT_WORK:,})")
    fit_positions = positions_between(0.0, n - 1, fitted)
    design = params.encode(fit_positions)
    solution, *_ = np.linalg.lstsq(design, params.encode(fit_positions + TK_OFFSET, dims=alone), rcond=None)
    target = params.encode(tested + TK_OFFSET, dims=alone)
    if not (np.any(design) or np.any(target) or np.any(params.encode(tested))):
        return (0.0, False, "any", int(alone.size), int(tested.size), int(fit_positions.size),
                f"{params.scheme}: every encoding is 0, so PE(p+k) = T·PE(p) holds for every matrix T: T_k is not "
                "determined and relates no positions")
    residual = _ratio(float(np.linalg.norm(target - params.encode(tested) @ solution)), float(np.linalg.norm(target)))
    return (residual, False, "least-squares", int(alone.size), int(tested.size), int(fit_positions.size),
            f"least-squares rows of T_k fitted on {fit_positions.size:,} positions between the integers, their "
            f"residual measured on {tested.size:,} integers of 0…{n - 1:,}")


def score_scheme(params: EncodingParams, unique_work: int = UNIQUE_WORK, scan_work: int | None = None) -> SchemeScore:
    """Measure the criteria for ``params.scheme`` (see the module docstring).

    Parameters
    ----------
    params : EncodingParams
    unique_work : int
        Budget n²·max(d, 64) of comparing all pairs, 2¹⁶ … 2³³; a caller
        scoring a single scheme can afford more than :data:`UNIQUE_WORK`.
    scan_work : int, optional
        Offsets × frequencies of the uniqueness scan done in this call (the
        score is then :attr:`SchemeScore.pending` until
        :func:`continue_score` has done the rest); all by default.
    """
    params = check_params(params)
    unique_work = limits.check_int("unique_work", unique_work, 2**16, 2**33)
    if scan_work is not None:
        scan_work = limits.check_int("scan_work", scan_work, 1, 2**62)
    n, d, kwargs = params.seq_len, params.d_model, params.scheme_kwargs()
    notes: list[str] = []
    budget = _norm_budget(d)
    if 100 * n > budget:
        notes.append(f"max ‖p‖ over ≤ {budget:,} evenly spaced positions per length (ends included)")
    # a table read from a file has rows for 0 … rows − 1 only: nothing past them is measured
    rows = params.info.sizes(**params.options)[0] if params.info.sizes is not None else None
    end = int(limits.MAX_POSITION) + 1 if rows is None else rows
    # bounded in 0…N−1: the encoding made for each length, over its own positions
    lengths = trained_lengths(n, rows)
    trained = tuple(_max_norm(replace(params, seq_len=length), 0, length, budget)[0] for length in lengths)
    bounded_within = trained[2] <= GROWTH_TOL * trained[1]
    # bounded past N: the encoding made for N, out to 100N
    maxima = tuple(_max_norm(params, 0, factor * n, budget)[0] if factor * n <= end else math.nan
                   for factor in (1, 10, 100))
    bounded_past = bool(maxima[2] <= GROWTH_TOL * maxima[1])  # False where the table ends before 100N (NaN)
    # unseen lengths: N … 10N−1 against 0 … N−1
    if 10 * n <= end:
        unseen_max, unseen_finite = _max_norm(params, n, 10 * n, budget)
        unseen_ratio = _ratio(unseen_max, maxima[0])
    else:
        unseen_finite, unseen_ratio = False, math.nan
    generalizes = unseen_finite and unseen_ratio <= GROWTH_TOL
    if rows is not None and 100 * n > rows:
        notes.append(f"{params.scheme}: the table has rows for positions 0…{rows - 1:,} only; past them there is "
                     "no encoding, so it is neither bounded past N"
                     + ("" if 10 * n <= rows else " nor defined at unseen lengths N…10N−1"))
    # deterministic: same bits twice, and in reverse order
    det_pos = sample_range(0, min(10 * n, end), max(16, budget // 4))
    first = encode(params.scheme, det_pos, d, **kwargs)
    second = encode(params.scheme, det_pos, d, **kwargs)
    backwards = encode(params.scheme, det_pos[::-1], d, **kwargs)[::-1]
    deterministic = bool(np.array_equal(first.view(np.uint64), second.view(np.uint64))
                         and np.array_equal(first.view(np.uint64), backwards.view(np.uint64)))
    # unique in 0…N−1
    found = None
    if n >= 2:
        pair_work = max(1, unique_work // max(d, 64) * d)
        found = range_uniqueness(params.scheme, n, d, top=1, pair_work=pair_work, scan_work=scan_work, **kwargs)
        notes.extend(found.notes)
    # exact relative T_k
    tk_residual, tk_exact, tk_method, tk_unpaired, tk_positions, tk_fitted, tk_note = _tk_check(params)
    if tk_note:
        notes.append(tk_note)
    return SchemeScore(
        scheme=params.scheme, label=SCHEMES[params.scheme].label, trained_lengths=lengths,
        trained_max_norm=trained, bounded_within=bool(bounded_within), max_norm=maxima,
        bounded_past=bool(bounded_past), uniqueness=found, deterministic=deterministic,
        unseen_finite=unseen_finite, unseen_ratio=float(unseen_ratio), generalizes=bool(generalizes),
        tk_unpaired=tk_unpaired, tk_residual=float(tk_residual), tk_exact=bool(tk_exact), tk_method=tk_method,
        tk_positions=tk_positions, tk_fit_positions=tk_fitted, notes=tuple(notes), table_rows=rows,
    )


def continue_score(score: SchemeScore, params: EncodingParams, scan_work: int | None = None) -> SchemeScore:
    """``score`` with its uniqueness scan advanced by ``scan_work`` (all of it by default).

    ``params`` are those the score was measured at (:meth:`Scorecard.setup`).
    """
    if not score.pending:
        return score
    params = check_params(params)
    if params.scheme != score.scheme:
        raise ValueError(f"params must be the {score.scheme} setup the score was measured at, got {params.scheme}")
    found = continue_uniqueness(score.uniqueness, params.scheme, params.d_model, scan_work,
                                **params.scheme_kwargs())
    return replace(score, uniqueness=found)


def scorecard_setups(params: EncodingParams, schemes=None, options: Mapping[str, Any] | None = None
                     ) -> tuple[EncodingParams, ...]:
    """The parameters each scheme is measured at: ``params``' sizes, and for each option ``options``' value
    of that name where the scheme takes it and accepts the value (``params``' own options first), else its default.
    """
    return _setups(params, schemes, options)[0]


def _absent(params: EncodingParams, options: Mapping[str, Any] | None) -> list[str]:
    """The schemes whose table does not exist with the options they would be measured with (``learned_file``
    while no model file is open): they have no row."""
    absent = []
    for key, info in SCHEMES.items():
        if info.sizes is not None:
            try:
                info.sizes(**info.check(params.carried_options(key, options), info.options))
            except ValueError:
                absent.append(key)
    return absent


def scoreable_schemes() -> list[str]:
    """The schemes the scorecard measures: those that give a table, or a rotation's cos and sin (RoPE's
    R(p·θ_i) applied to (1, 0) in every pair, whose T_k is the rotation RoPE applies to q and k)."""
    return [key for key, info in SCHEMES.items() if info.provides & {"table", "angles"}]


def _setups(params: EncodingParams, schemes, options: Mapping[str, Any] | None
            ) -> tuple[tuple[EncodingParams, ...], tuple[tuple[str, str], ...]]:
    """:func:`scorecard_setups`, and ``(scheme, why)`` of each scheme left out of the default list because it
    does not take these sizes (RoPE at an odd d_model); a scheme asked for by name raises instead. The
    default list has no scheme whose table does not exist (:func:`_absent`: no model file open)."""
    params = check_params(params)
    if schemes is not None and (isinstance(schemes, str) or not isinstance(schemes, Iterable)):
        raise ValueError(f"schemes must be a list of keys of {', '.join(SCHEMES)}; got {limits.shown(schemes)}")
    tables = scoreable_schemes()
    absent = _absent(params, options) if schemes is None else []
    keys = [key for key in tables if key not in absent] if schemes is None else list(islice(schemes, len(SCHEMES) + 1))
    if len(keys) > len(SCHEMES):
        raise ValueError(f"schemes must name at most the {len(SCHEMES)} schemes, each once")
    for key in keys:
        if not isinstance(key, str) or key not in tables:
            raise ValueError(f"schemes must be keys of table schemes ({', '.join(tables)}); got {limits.shown(key)}")
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"options must be a mapping of parameter names to values, got {limits.shown(options)}")
    setups, left_out = [], []
    for key in keys:
        try:
            setups.append(params.replaced(options, scheme=key))
        except ValueError as error:
            if schemes is not None:
                raise
            left_out.append((key, str(error)))
    return tuple(setups), tuple(left_out)


def scorecard_key(params: EncodingParams, schemes=None, options: Mapping[str, Any] | None = None) -> tuple:
    """What :func:`scorecard` with these arguments depends on (every scheme's sizes and options): a cache key."""
    return scorecard_setups(params, schemes, options)


def scorecard(params: EncodingParams, schemes=None, scan_work: int | None = None,
              options: Mapping[str, Any] | None = None) -> Scorecard:
    """Score every scheme (or ``schemes``) at ``params``' ``seq_len`` and ``d_model``.

    Parameters
    ----------
    params : EncodingParams
        Its ``scheme`` is ignored; each scheme is measured in turn.
    schemes : iterable of str, optional
        Keys of :data:`~posenc_gui.model.SCHEMES` whose scheme gives a table; all of those by default.
    scan_work : int, optional
        As for :func:`score_scheme`, per scheme.
    options : mapping, optional
        Option values to measure with where a scheme takes them (see :func:`scorecard_setups`).

    Returns
    -------
    Scorecard
    """
    setups, left_out = _setups(params, schemes, options)
    scores = tuple(score_scheme(setup, scan_work=scan_work) for setup in setups)
    absent = _absent(check_params(params), options)
    keys = [setup.scheme for setup in setups] if schemes is not None else [key for key in SCHEMES if key not in absent]
    return Scorecard(check_params(params), scores, setups, left_out, logit_rows(params, keys, options, scan_work))


def logit_rows(params: EncodingParams, schemes: Iterable[str], options: Mapping[str, Any] | None = None,
               scan_work: int | None = None) -> tuple[tuple[str, Any], ...]:
    """Each scheme's positional-logit properties at ``params``' sizes (its options as :func:`scorecard_setups`
    chooses them), or the reason they cannot be measured (it does not take these sizes, or its logit is not computed).

    ``scan_work``: of each scan over every offset, in this call (:func:`continue_logits` does the rest).
    """
    from ..attention.logit_properties import logit_properties

    params = check_params(params)
    rows = []
    for key in schemes:
        try:
            rows.append((key, logit_properties(params.replaced(options, scheme=key), scan_work)))
        except ValueError as error:
            rows.append((key, str(error)))
    return tuple(rows)


def continue_logits(data: Scorecard, scan_work: int | None = None) -> Scorecard:
    """``data`` with the first pending logit scan advanced by ``scan_work`` (all of every scan with None)."""
    from ..attention.logit_properties import continue_table, finish_table

    logits = finish_table(data.logits) if scan_work is None else continue_table(data.logits, scan_work)
    return replace(data, logits=logits)

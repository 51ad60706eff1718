"""Uniqueness over the whole range 0 … N−1, without comparing every pair of positions.

Comparing every pair of N positions costs N²·d/2; at a million positions no
budget allows it. For most schemes it is not needed: a (sin, cos) pair with
divisor c contributes (sin(q/c) − sin(p/c))² + (cos(q/c) − cos(p/c))² =
4 sin²(k / 2c) to ‖PE(p) − PE(q)‖², which depends only on the offset
k = q − p, and a linear column pos / c contributes (k / c)². So

    ‖PE(p) − PE(p + k)‖² = P(k) + U(p, k),
    P(k) = Σ_pairs 4 sin²(k / 2c) + k²·Σ_linear 1/c²,

where U(p, k) ≥ 0 collects the sine or cosine columns without a partner of
the same divisor (the last sine at odd d_model), and U = 0 for schemes made
of pairs and linear columns only (*offset-only* schemes). The closest pair
of 0 … N−1 then follows from P over the N − 1 offsets: N·F work for F
distinct divisors (:mod:`.offset_scan` evaluates P for every offset).

Unpaired columns
    At the candidate offsets, in increasing order of P(k), U(p, k) is
    evaluated at every p; once P(k) reaches the best distance found, no
    later offset can come closer (U ≥ 0).
Other schemes
    All-sine, a single sine, binary and tables without columns are left to
    :mod:`~posenc_gui.model.analyses.closest_general`: binary in closed form, the
    others by an exact search that compares only the pairs close along one
    coordinate, where that fits the budget; past it, the leading positions.
Progress
    A scan is a value (:class:`OffsetScan`) that :func:`continue_uniqueness`
    advances by a given amount of work, so the app computes it in steps in
    its worker and a newer request stops it between steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from .analysis import (
    MAX_TOP,
    MAX_UNIQUENESS_WORK,
    Uniqueness,
    _row_distances,
    uniqueness,
    uniqueness_max_positions,
)
from .closest_general import (
    SWEEP_WORK,
    clear_caches as clear_sweep_table,
    PairSweep,
    RangeSteps,
    SweepToStart,
    _pairs_with_distances,
    advance_sweep,
    binary_closest,
    pass_fits,
    start_sweep,
)
from ..core.coverage import Coverage, span
from ..schemes import encode
from ..schemes import scheme as scheme_of
from .offset_scan import MIN_CANDIDATES, OffsetForm, OffsetScan, advance_scan, offset_form, start_scan

#: Largest (offsets × positions) evaluated for the unpaired columns at the candidate offsets.
MAX_UNPAIRED_WORK = 2**28
#: The per-position curve of an offset-only scheme is drawn at this many positions (and where it changes).
CURVE_POINTS = 2048
#: How a :class:`RangeUniqueness` was found.
METHODS = ("all pairs", "offsets", "offsets and unpaired columns", "closed form", "sweep", "leading positions")

# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class RangeUniqueness:
    """How distinguishable the positions 0 … N − 1 are, and which part of that range each answer covers.

    Attributes
    ----------
    length : int
        N.
    method : str
        One of :data:`METHODS`: ``"all pairs"`` of 0 … N − 1; ``"offsets"``
        (offset-only schemes: P over every offset); ``"offsets and unpaired
        columns"``; ``"closed form"`` (binary); ``"sweep"`` (every pair
        close enough along one coordinate, see
        :mod:`~posenc_gui.model.analyses.closest_general`); ``"leading positions"``
        (all pairs of 0 … M − 1 only).
    closest_pair : tuple (p, q, distance)
        The closest pair of distinct positions among 0 … ``pairs_range`` − 1;
        the distance is computed from the difference of the two encodings.
    near_repeats : tuple of (p, q, distance)
        The ``top`` closest pairs (one per offset with ``distinct_offsets``),
        closest first, over the same range.
    pairs_range : int
        N when the answer covers the whole range, else M.
    neighbour_step : float
        Median of ‖PE(i + 1) − PE(i)‖ over i in 0 … step_range − 2 (every
        step is the same for an offset-only scheme).
    curve : Uniqueness
        Each drawn position's nearest other position and its distance:
        searched over 0 … N − 1 when ``curve_whole_range``, else among the
        curve's own positions 0 … M − 1.
    curve_whole_range : bool
    top, distinct_offsets
        What was asked (a continued scan lists the same).
    scan : OffsetScan, SweepToStart, PairSweep or None
        A search still running (continue it with :func:`continue_uniqueness`);
        meanwhile every other field is the answer for 0 … M − 1.
    notes : tuple of str
        What the numbers cannot say on their own, in words (every position
        encoded alike; a range too long to search whole).
    step_range : int or None
        The neighbour step is the median over 0 … step_range − 1; None: over
        0 … pairs_range − 1.
    """

    length: int
    method: str
    closest_pair: tuple[float, float, float]
    near_repeats: tuple[tuple[float, float, float], ...]
    pairs_range: int
    neighbour_step: float
    curve: Uniqueness
    curve_whole_range: bool
    top: int
    distinct_offsets: bool
    scan: OffsetScan | SweepToStart | PairSweep | None = None
    notes: tuple[str, ...] = ()
    step_range: int | None = None

    @property
    def whole_range(self) -> bool:
        """True when the closest pair and near-repeats are those of all of 0 … N − 1."""
        return self.pairs_range == self.length

    @property
    def pending(self) -> bool:
        """True while a search of the whole range (offsets, or pairs along a coordinate) is still running."""
        return self.scan is not None

    @property
    def step_whole_range(self) -> bool:
        """True when the neighbour step is the median over all of 0 … N − 1."""
        return (self.pairs_range if self.step_range is None else self.step_range) == self.length

    def pair_coverage(self) -> Coverage:
        """The pairs the closest pair and near-repeats are proved over: every pair of 0 … pairs_range − 1."""
        return Coverage("pairs of positions", 0, self.pairs_range - 1, "exact")

    @property
    def step_ratio(self) -> float:
        """The closest pair's distance in neighbour steps: 0 for a pair that collides, whatever the step
        (``inf`` for a step of 0 and a distance that is not)."""
        distance, step = self.closest_pair[2], self.neighbour_step
        if distance == 0:
            return 0.0
        return distance / step if step > 0 else math.inf

    def offset_turns(self) -> np.ndarray:
        """|q − p| / 2π for each near-repeat (see :meth:`Uniqueness.offset_turns`)."""
        offsets = np.array([abs(q - p) for p, q, _ in self.near_repeats], dtype=np.float64)
        return offsets / (2.0 * math.pi)

    def coverage(self) -> str:
        """In words, the pairs the closest pair is proved over and how, e.g.
        ``"proved over pairs of positions 0…127 (every pair compared)"``, or
        ``"proved over pairs of positions 0…1,023 only, of 0…9,999"``."""
        words = self.pair_coverage().phrase()
        if not self.whole_range:
            return f"{words} only, of {span(0, self.length - 1)}"
        last = f"{self.length - 1:,}"
        return words + {
            "all pairs": " (every pair compared)",
            "offsets": f" (every offset 1…{last})",
            "offsets and unpaired columns": f" (every offset 1…{last}, every position at the closest ones)",
            "closed form": " (closed form: bit k has period 2^(k+1))",
            "sweep": " (every pair closer along one coordinate than the closest found)",
        }[self.method]


def _offset_pairs(candidates: np.ndarray, length: int, top: int,
                  distinct_offsets: bool) -> tuple[np.ndarray, np.ndarray]:
    """The pairs an offset-only scheme lists: (0, k) per offset, or every (p, p + k) of the closest offsets first."""
    if distinct_offsets:
        k = candidates[:top]
        return np.zeros(k.size, dtype=np.int64), k
    firsts, seconds, total = [], [], 0
    for k in candidates:
        count = min(length - int(k), top - total)
        p = np.arange(count, dtype=np.int64)
        firsts.append(p)
        seconds.append(p + k)
        total += count
        if total >= top:
            break
    return np.concatenate(firsts), np.concatenate(seconds)


def _refined(form: OffsetForm, scan: OffsetScan) -> tuple[np.ndarray, np.ndarray]:
    """The candidates in order of P in the stable form (then offset), with those values."""
    value = form.squared(scan.candidates)
    order = np.lexsort((scan.candidates, value))
    return scan.candidates[order], value[order]


def _offset_curve(form: OffsetForm, scan: OffsetScan, d_model: int, repeats) -> Uniqueness:
    """Nearest other position of sampled positions over all of 0 … N − 1, from the records of P.

    q ranges over 0 … N − 1, so the offsets open to p are 1 … max(p, N − 1 − p);
    the nearest is the record of P at or below that, towards the earlier q.
    """
    n = scan.length
    record = scan.record_offsets
    value = np.sqrt(np.minimum.accumulate(form.squared(record)))
    breaks = np.concatenate([record, record - 1, n - 1 - record, n - record])
    sample = np.round(np.linspace(0, n - 1, min(n, CURVE_POINTS)))
    positions = np.unique(np.clip(np.concatenate([sample, breaks]), 0, n - 1)).astype(np.float64)
    reach = np.maximum(positions, n - 1 - positions)
    index = np.searchsorted(record, reach, side="right") - 1
    k = record[index].astype(np.float64)
    nearest = np.where(k <= positions, positions - k, positions + k)
    return Uniqueness(
        positions=positions, nearest_position=nearest, nearest_distance=value[index],
        closest_pair=repeats[0], near_repeats=repeats, d_model=d_model,
        norms=np.sqrt(form.pairs + form.linear * positions * positions),
    )


def _offset_result(form: OffsetForm, scan: OffsetScan, top: int, distinct_offsets: bool, scheme: str,
                   d_model: int, params: dict) -> RangeUniqueness:
    n = scan.length
    candidates, _ = _refined(form, scan)
    p, q = _offset_pairs(candidates, n, top, distinct_offsets)
    repeats = _pairs_with_distances(scheme, d_model, params, p, q, top)
    step = _pairs_with_distances(scheme, d_model, params, np.array([0]), np.array([1]), 1)[0][2]
    return RangeUniqueness(n, "offsets", repeats[0], repeats, n, step, _offset_curve(form, scan, d_model, repeats),
                           True, top, distinct_offsets)


def _unpaired_result(form: OffsetForm, scan: OffsetScan, result: RangeUniqueness, scheme: str, d_model: int,
                     params: dict) -> RangeUniqueness | None:
    """The closest pairs with unpaired columns: U(p, k) at every p of the candidate offsets, closest P first.

    None when the candidates run out (or the work would exceed
    :data:`MAX_UNPAIRED_WORK`) before the closest pairs are certain.
    """
    n, top = scan.length, result.top
    per_offset = 1 if result.distinct_offsets else top
    values = encode(scheme, np.arange(n, dtype=np.float64), d_model, dims=form.unpaired, **params)
    kept_d2, kept_p, kept_q = np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    work, certain = 0, False
    for k, pk in zip(*_refined(form, scan)):
        k = int(k)
        if kept_d2.size >= top and pk >= kept_d2[top - 1]:
            certain = True  # U ≥ 0: no pair at this or a later offset is closer
            break
        work += n - k
        if work > MAX_UNPAIRED_WORK:
            return None
        diff = values[k:] - values[:n - k]
        d2 = pk + np.einsum("ij,ij->i", diff, diff)
        if d2.size > per_offset:
            part = np.argpartition(d2, per_offset - 1)[:per_offset]
        else:
            part = np.arange(d2.size)
        kept_d2 = np.concatenate([kept_d2, d2[part]])
        kept_p = np.concatenate([kept_p, part.astype(np.int64)])
        kept_q = np.concatenate([kept_q, part.astype(np.int64) + k])
        order = np.lexsort((kept_q, kept_p, kept_d2))[:top]
        kept_d2, kept_p, kept_q = kept_d2[order], kept_p[order], kept_q[order]
    if not certain:
        floor = scan.unseen_floor()  # every offset not evaluated has P (so D²) at least this
        certain = math.isinf(floor) or (kept_d2.size >= top and kept_d2[top - 1] <= floor)
    if not certain:
        return None
    repeats = _pairs_with_distances(scheme, d_model, params, kept_p, kept_q, top)
    steps = np.sqrt(form.squared([1.0])[0] + np.sum((values[1:] - values[:-1]) ** 2, axis=1))
    return replace(result, method="offsets and unpaired columns", closest_pair=repeats[0], near_repeats=repeats,
                   pairs_range=n, neighbour_step=float(np.median(steps)), scan=None)


def _sweep_result(result: RangeUniqueness, sweep: PairSweep, scheme: str, d_model: int,
                  params: dict) -> RangeUniqueness:
    _, p, q, _ = sweep.best
    repeats = _pairs_with_distances(scheme, d_model, params, p, q, result.top, sweep.tol)
    return replace(result, method="sweep", closest_pair=repeats[0], near_repeats=repeats, pairs_range=sweep.length,
                   neighbour_step=sweep.steps.median_step, step_range=sweep.length, scan=None)


def _leading_only(result: RangeUniqueness, scheme: str, steps: RangeSteps | None) -> RangeUniqueness:
    """The leading positions' answer, saying so; with the whole range's neighbour step where it was measured."""
    m, n = result.pairs_range, result.length
    p, q, distance = result.closest_pair
    if distance == 0:  # nothing comes closer than a collision
        note = (f"{scheme}: positions {p:,.0f} and {q:,.0f} have the same encoding, so no pair of {span(0, n - 1)} "
                f"is closer; the pairs listed are those of {span(0, m - 1)} (a search of all {n:,} positions does "
                "not fit the budget here).")
    else:
        note = (f"{scheme}: an exact search of all {n:,} positions ({span(0, n - 1)}) does not fit the budget here, so "
                f"the closest pairs are those of {span(0, m - 1)}; whether positions {span(m, n - 1)} come closer "
                "is not established.")
    found = replace(result, notes=(*result.notes, note))
    if steps is None:
        return found
    return replace(found, neighbour_step=steps.median_step, step_range=n)


def _general(result: RangeUniqueness, scheme: str, d_model: int, params: dict, sweep_work: int,
             scan_work: int | None) -> RangeUniqueness:
    """The whole range of a scheme without the offsets' shortcut: closed form (binary), a sweep, or the
    leading positions."""
    n = result.length
    if scheme == "binary":
        pairs, step = binary_closest(n, d_model, params.get("bit_values", "signed"), result.top,
                                     result.distinct_offsets)
        return replace(result, method="closed form", closest_pair=pairs[0], near_repeats=pairs, pairs_range=n,
                       neighbour_step=step, step_range=n)
    if not pass_fits(n, d_model, sweep_work):
        return _leading_only(result, scheme, None)
    if scan_work is not None:  # in steps: the leading positions' answer first, the search from the next step
        return replace(result, scan=SweepToStart(n, sweep_work))
    return _start(result, scheme, d_model, params, sweep_work, None)


def _start(result: RangeUniqueness, scheme: str, d_model: int, params: dict, sweep_work: int,
           scan_work: int | None) -> RangeUniqueness:
    sweep, steps = start_sweep(scheme, d_model, result.length, params, result.near_repeats, result.top,
                               result.distinct_offsets, sweep_work)
    if sweep is None:
        clear_sweep_table()  # the rows held for the whole range's steps
        return _leading_only(replace(result, scan=None), scheme, steps)
    return _advance(replace(result, scan=sweep), scheme, d_model, params, scan_work)


def _advance(result: RangeUniqueness, scheme: str, d_model: int, params: dict, work: int | None) -> RangeUniqueness:
    if isinstance(result.scan, SweepToStart):  # a step of its own: counting the work and the first shifts
        return _start(result, scheme, d_model, params, result.scan.sweep_work, 0)
    if isinstance(result.scan, PairSweep):
        sweep = advance_sweep(result.scan, scheme, params, work)
        if not sweep.complete:
            return replace(result, scan=sweep)
        clear_sweep_table()
        return _sweep_result(result, sweep, scheme, d_model, params)
    form = offset_form(scheme, d_model, **params)
    scan = advance_scan(form, result.scan, work)
    if not scan.complete:
        return replace(result, scan=scan)
    if form.offset_only:
        return _offset_result(form, scan, result.top, result.distinct_offsets, scheme, d_model, params)
    final = _unpaired_result(form, scan, result, scheme, d_model, params)
    return _leading_only(replace(result, scan=None), scheme, None) if final is None else final


def range_uniqueness(scheme: str, n_positions: int, d_model: int, *, top: int = 10, distinct_offsets: bool = False,
                     pair_work: int = MAX_UNIQUENESS_WORK, scan_work: int | None = None,
                     encoded: np.ndarray | None = None, sweep_work: int = SWEEP_WORK, **params) -> RangeUniqueness:
    """The closest pairs of positions 0 … ``n_positions`` − 1, over the whole range wherever possible.

    All pairs are compared when that fits ``pair_work`` (n²·d); otherwise
    all pairs of the leading M positions that fit, and then, for a scheme
    whose distances follow from the offsets (see the module docstring), a
    scan of every offset 1 … N − 1, for binary its closed form, and for any
    other table the exact search of :mod:`~posenc_gui.model.analyses.closest_general`
    where it fits ``sweep_work``; that answer replaces the leading one.

    Parameters
    ----------
    scheme : str
    n_positions : int
        N, 2 … ``limits.MAX_SEQ_LEN``.
    d_model : int
    top : int
        Near-repeats to list, 1 … :data:`~posenc_gui.model.analyses.analysis.MAX_TOP`.
    distinct_offsets : bool
        At most one pair per offset (as for :func:`~posenc_gui.model.analyses.analysis.uniqueness`).
    pair_work : int
        Budget n²·d of comparing all pairs, 1 … ``MAX_UNIQUENESS_WORK`` (at least 2 positions are).
    sweep_work : int
        Budget (pairs × d, with a pass over every position) of the exact search
        for schemes without the offsets' shortcut, 1 … 2⁴⁰.
    scan_work : int, optional
        Offsets × divisors to scan in this call, at least one block; the
        result is then ``pending`` until :func:`continue_uniqueness` has
        scanned the rest. All of them by default.
    encoded : ndarray, optional
        ``encode`` of positions 0 … M − 1 (M as :attr:`RangeUniqueness.pairs_range`
        of the leading-positions answer), if the caller has it.
    **params
        The scheme's parameters.

    Returns
    -------
    RangeUniqueness

    Raises
    ------
    ValueError
        A parameter out of its range (the message names it).
    """
    length = limits.check_int("n_positions", n_positions, 2, limits.MAX_SEQ_LEN)
    top = limits.check_int("top", top, 1, MAX_TOP)
    pair_work = limits.check_int("pair_work", pair_work, 1, MAX_UNIQUENESS_WORK)
    if scan_work is not None:
        scan_work = limits.check_int("scan_work", scan_work, 1, 2**62)
    sweep_work = limits.check_int("sweep_work", sweep_work, 1, 2**40)
    m = min(length, uniqueness_max_positions(d_model, pair_work))
    analytic = scheme_of(scheme).columns is not None
    form = offset_form(scheme, d_model, **params) if m < length and analytic else None
    keep = max(MIN_CANDIDATES, 4 * top)
    scan = None
    if form is not None and form.offset_only:  # the scan decides; leading positions only to show meanwhile
        scan = advance_scan(form, start_scan(form, length, keep), scan_work)
        if scan.complete:
            return _offset_result(form, scan, top, bool(distinct_offsets), scheme, d_model, params)
    positions = np.arange(m, dtype=np.float64)
    rows = encode(scheme, positions, d_model, **params) if encoded is None else encoded
    leading = uniqueness(scheme, positions, d_model, top=top, distinct_offsets=distinct_offsets, encoded=rows,
                         **params)
    step = float(np.median(_row_distances(rows[1:], rows[:-1])))
    notes = []
    if np.array_equal(rows, np.broadcast_to(rows[0], rows.shape)):
        notes.append(f"Every position compared has the same encoding under {scheme}: no position can be told "
                     "from another.")
    result = RangeUniqueness(length, "all pairs" if m == length else "leading positions", leading.closest_pair,
                             leading.near_repeats, m, step, leading, m == length, top, bool(distinct_offsets),
                             notes=tuple(notes))
    if m == length:
        return result
    if form is None or not form.scannable:
        return _general(result, scheme, d_model, params, sweep_work, scan_work)
    if scan is not None:
        return replace(result, scan=scan)
    return _advance(replace(result, scan=start_scan(form, length, keep)), scheme, d_model, params, scan_work)


def continue_uniqueness(result: RangeUniqueness, scheme: str, d_model: int, scan_work: int | None = None,
                        **params) -> RangeUniqueness:
    """Advance ``result``'s scan by ``scan_work`` (all of it by default); ``result`` itself when none runs.

    ``scheme``, ``d_model`` and ``params`` must be those ``result`` was computed for.
    """
    if result.scan is None:
        return result
    if scan_work is not None:
        scan_work = limits.check_int("scan_work", scan_work, 1, 2**62)
    return _advance(result, scheme, d_model, params, scan_work)

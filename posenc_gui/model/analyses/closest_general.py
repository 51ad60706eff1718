"""Closest pairs of 0 … N−1 for tables whose distances do not follow from the offset.

:mod:`~posenc_gui.model.analyses.closest` finds the closest pairs of every position
from the offsets where a scheme's columns allow it. For the others (all-sine,
a single sine, binary, learned and zero tables) this module finds them over
the whole range too, wherever that fits the budget:

Sweep along one coordinate
    For any pair, |x_p − x_q| ≤ ‖PE(p) − PE(q)‖ for each coordinate x of
    the encoding. With the positions sorted by one coordinate, a pair can
    only be closer than a distance δ if the two are less than δ apart in
    that order's keys; so once δ is the ``top``-th distance among pairs
    already known (the leading positions' closest pairs), only the pairs
    within δ of each other along the coordinate need comparing, and δ
    shrinks as closer pairs are found (three further coordinates bound a
    pair's distance from below before its rows are compared). The
    coordinate is the one of a few evenly spaced ones that leaves the fewest
    pairs. They are compared shift by shift (the pairs i, i + s of the
    sorted order), in steps, so the app runs the search in its worker, shows
    its progress and stops it for a newer request. After a few shifts (which
    find close pairs cheaply) the pairs left within δ along the coordinate
    are counted exactly — δ only shrinks, so no more are ever compared — and
    the share passing the lower bound is estimated from a seeded sample; a
    search whose work would exceed the budget is not started, and the answer
    covers the leading positions only (and says so). Whether it runs or not
    decides only the time it takes: what it reports is exact. Equal rows are
    the worst case: every pair is within δ = 0 of every other.
Binary in closed form
    Bit k of the position is a square wave of period 2^(k+1), so PE(p) =
    PE(q) exactly when p ≡ q (mod 2^d), and otherwise their distance is the
    value of one bit (2 signed, 1 unsigned) times the square root of the
    number of bits in which p and q differ mod 2^d (at least one).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace

import numpy as np

from .analysis import _merge_top, _order_pairs, _pair_distances, _row_distances, _rows_per_block
from ..schemes import Columns, columns, encode

#: Largest number of pairs × d_model a sweep compares (with its pass over every position).
SWEEP_WORK = 2**30
#: A table of at most this many values (positions × d_model) is held while sweeping; past it rows are encoded again.
HELD_ELEMENTS = 2**24
#: Work of a pair whose two rows are encoded again rather than read from a held table, per dimension.
ENCODE_COST = 8
#: Work of comparing one pair besides its d_model multiply-adds (gathering, ordering the closest).
PAIR_OVERHEAD = 64
#: Shifts compared before the work of the rest is counted (they find close pairs cheaply, shrinking the
#: bound), where that costs at most an eighth of the budget.
WARM_UP_SHIFTS = 8
#: Coordinates tried as the sweep's direction (the one leaving the fewest pairs to compare wins).
DIRECTIONS = 8
#: Positions (evenly strided) the direction is chosen on.
DIRECTION_SAMPLE = 2**16
#: Further coordinates whose differences bound a pair's distance from below before it is computed.
FILTER_COORDINATES = 3
#: Work of that lower bound per pair.
FILTER_COST = 16
#: Pairs sampled to estimate the share that passes the lower bound.
FILTER_SAMPLE = 4096

_EPS = float(np.finfo(np.float64).eps)


def _key(scheme: str, d_model: int, length: int, params: dict) -> tuple:
    return scheme, d_model, length, repr(sorted(params.items()))


_HELD: dict[tuple, np.ndarray] = {}
_HELD_LOCK = threading.Lock()


def _held_table(scheme: str, d_model: int, length: int, params: dict) -> np.ndarray | None:
    """Every row of 0 … length − 1 when it fits :data:`HELD_ELEMENTS` (the last one built is kept), else None."""
    if length * d_model > HELD_ELEMENTS:
        return None
    key = _key(scheme, d_model, length, params)
    with _HELD_LOCK:
        if key in _HELD:
            return _HELD[key]
    table = encode(scheme, np.arange(length, dtype=np.float64), d_model, **params)
    with _HELD_LOCK:
        _HELD.clear()
        _HELD[key] = table
    return table


def clear_caches() -> None:
    """Forget the table of the last sweep."""
    with _HELD_LOCK:
        _HELD.clear()


def _distances(scheme: str, d_model: int, params: dict, table: np.ndarray | None, p: np.ndarray,
               q: np.ndarray) -> np.ndarray:
    """‖PE(p_r) − PE(q_r)‖ from differences, from the held table or encoded in bounded blocks."""
    if table is not None:
        return _pair_distances(table, table, p, q)
    out = np.empty(p.size)
    rows = _rows_per_block(d_model)
    for start in range(0, p.size, rows):
        stop = start + rows
        a = encode(scheme, p[start:stop].astype(np.float64), d_model, **params)
        b = encode(scheme, q[start:stop].astype(np.float64), d_model, **params)
        out[start:stop] = np.linalg.norm(a - b, axis=1)
    return out


@dataclass(frozen=True)
class RangeSteps:
    """The median ‖PE(i + 1) − PE(i)‖ over 0 … length − 2; the largest ‖PE(i)‖ over 0 … length − 1."""

    median_step: float
    max_norm: float


def range_steps(scheme: str, d_model: int, length: int, params: dict) -> RangeSteps:
    """:class:`RangeSteps` over the whole range, encoding it in bounded blocks (or from the held table)."""
    table = _held_table(scheme, d_model, length, params)
    if table is not None:
        steps = _pair_distances(table, table, np.arange(1, length), np.arange(length - 1))
        return RangeSteps(float(np.median(steps)), float(np.sqrt(np.max(np.einsum("ij,ij->i", table, table)))))
    steps, largest = np.empty(length - 1), 0.0
    rows = _rows_per_block(d_model)
    for start in range(0, length, rows):
        stop = min(start + rows + 1, length)  # one row of overlap: the step into the next block
        block = encode(scheme, np.arange(start, stop, dtype=np.float64), d_model, **params)
        steps[start:stop - 1] = np.linalg.norm(block[1:] - block[:-1], axis=1)
        largest = max(largest, float(np.sqrt(np.max(np.einsum("ij,ij->i", block, block)))))
    return RangeSteps(float(np.median(steps)), largest)


def distance_tolerance(cols: Columns, largest_position: float) -> float:
    """Two distances ‖PE(p) − PE(q)‖, each from the difference of two rows, closer than this are equal up to rounding.

    For positions ≤ ``largest_position``. A value sin(p/c) carries the
    rounding of its angle (half an ulp of p/c) and of the sine (an ulp): at
    most ε·(p/c + 1); a linear value p/c at most ε·p/c. A difference of two
    doubles that, and the norm of d components is at most √d times the
    largest: 4·√d·ε·(p/c_min + 1), with a factor 2 to spare.
    """
    largest = largest_position / float(cols.divisor.min()) if cols.divisor.size else 0.0
    return 4.0 * math.sqrt(cols.kind.size) * _EPS * (largest + 1.0)


def _pairs_with_distances(scheme: str, d_model: int, params: dict, p: np.ndarray, q: np.ndarray,
                          top: int, tol: float | None = None) -> tuple[tuple[float, float, float], ...]:
    """``(p, q, ‖PE(p) − PE(q)‖)`` for the pairs, the distance from the difference, closest first, ``top`` of them.

    Distances equal up to rounding (within ``tol``; by default
    :func:`distance_tolerance` of the scheme's columns) count as equal: the
    earlier pair goes first.
    """
    distinct, where = np.unique(np.concatenate([p, q]).astype(np.float64), return_inverse=True)
    rows = encode(scheme, distinct, d_model, **params)
    distance = _row_distances(rows[where[:p.size]], rows[where[p.size:]])
    if tol is None:
        tol = distance_tolerance(columns(scheme, d_model, **params), float(distinct[-1]))
    order, _ = _order_pairs(distance, p, q, tol)
    return tuple((float(p[m]), float(q[m]), float(distance[m])) for m in order[:top])


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class SweepToStart:
    """A sweep of 0 … length − 1 that its next step starts (within ``sweep_work``), so that the first answer
    (the leading positions') comes without waiting for it."""

    length: int
    sweep_work: int

    complete = False

    def progress(self) -> tuple[int, int]:
        """``(0, 1)``: nothing compared yet."""
        return 0, 1

    def describe(self) -> str:
        """Progress in words."""
        return f"preparing an exact search of every pair of 0…{self.length - 1:,}"


@dataclass(frozen=True, eq=False)
class PairSweep:
    """Progress of comparing the pairs of 0 … length − 1 that are close along one coordinate.

    Attributes
    ----------
    length, d_model : int
    order : ndarray of int
        The positions, sorted by the coordinate.
    keys : ndarray
        The coordinate's values in that order.
    others : ndarray, shape (length, k)
        Further coordinates in that order: a pair whose differences in
        ``keys`` and these exceed the bound is not compared.
    margin : float
        Rounding allowance: a pair is compared when its keys are within
        ``bound + margin``.
    tol : float
        Distances closer than this are equal up to rounding (the earlier pair first).
    shift : int
        The next shift s: the pairs (order[i], order[i + s]).
    active : ndarray of int
        The i whose pair at this or a larger shift may still be within the bound.
    best : tuple of 4 ndarrays
        ``(distance, p, q, q − p)`` of the closest pairs found (``top`` at most).
    top : int
    distinct_offsets : bool
        At most one pair per offset q − p.
    pairs_total : int
        Pairs within the starting bound along the coordinate: every pair the sweep can compare.
    pairs_done : int
    steps : RangeSteps
        Over the whole range.
    """

    length: int
    d_model: int
    order: np.ndarray
    keys: np.ndarray
    others: np.ndarray
    margin: float
    tol: float
    shift: int
    active: np.ndarray
    best: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    top: int
    distinct_offsets: bool
    pairs_total: int
    pairs_done: int
    steps: RangeSteps

    @property
    def complete(self) -> bool:
        return self.active.size == 0

    @property
    def bound(self) -> float:
        """The largest distance kept once ``top`` pairs are: no other pair listed can be farther."""
        return float(self.best[0].max()) if self.best[0].size >= self.top else math.inf

    def progress(self) -> tuple[int, int]:
        """``(done, total)``: pairs compared and the most there are."""
        return self.pairs_done, max(self.pairs_total, self.pairs_done, 1)

    def describe(self) -> str:
        """Progress in words."""
        done, total = self.progress()
        return (f"comparing the {total:,} pairs of 0…{self.length - 1:,} that may be closer than the closest "
                f"found: {done:,} done ({100 * done / total:.0f} %)")


def _pairs_within(keys: np.ndarray, bound: float, past: int = 0) -> int:
    """How many pairs i < j of sorted ``keys`` have keys[j] − keys[i] ≤ bound and j − i > ``past``."""
    if not math.isfinite(bound):
        shifts = max(keys.size - 1 - past, 0)
        return shifts * (shifts + 1) // 2
    reach = np.searchsorted(keys, keys + bound, side="right")
    return int(np.sum(np.maximum(reach - np.arange(1, keys.size + 1) - past, 0)))


def _row_cost(length: int, d_model: int) -> int:
    """Work of reading one row: d_model from a held table, more where it is encoded again."""
    return d_model * (1 if length * d_model <= HELD_ELEMENTS else ENCODE_COST)


def pass_fits(length: int, d_model: int, work: int) -> bool:
    """Whether one pass over every position (the least a sweep does) fits ``work``."""
    return length * _row_cost(length, d_model) <= work


def start_sweep(scheme: str, d_model: int, length: int, params: dict, leading: tuple, top: int,
                distinct_offsets: bool, work: int) -> tuple[PairSweep | None, RangeSteps | None]:
    """A sweep of 0 … ``length`` − 1 that has compared nothing yet, if its work fits ``work``.

    ``leading``: the closest pairs known, ``(p, q, distance)`` each (the
    leading positions'). Returns the sweep (None where it does not fit) and
    the whole range's :class:`RangeSteps` (None where even that pass does not fit).
    """
    cost = _row_cost(length, d_model)
    if not pass_fits(length, d_model, work):
        return None, None
    steps = range_steps(scheme, d_model, length, params)
    tol = 1e-9 * steps.max_norm  # as :func:`~posenc_gui.model.analyses.analysis.uniqueness` ties distances
    p = np.array([a for a, _, _ in leading], dtype=np.int64)
    q = np.array([b for _, b, _ in leading], dtype=np.int64)
    dist = np.array([c for _, _, c in leading], dtype=np.float64)
    best = _merge_top((np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)),
                      (dist, p, q, q - p), top, distinct_offsets, tol)
    bound = float(best[0].max()) if best[0].size >= top else math.inf
    # Keys from encode one column at a time may differ from the table's by a few ulps: tol covers that.
    margin = tol + 8.0 * _EPS * steps.max_norm
    dims = np.unique(np.round(np.linspace(0, d_model - 1, min(d_model, DIRECTIONS))).astype(np.int64))
    # the direction from every k-th position (the pairs within the bound scale as the square of the share)
    stride = max(1, length // DIRECTION_SAMPLE)
    sample = encode(scheme, np.arange(0, length, stride, dtype=np.float64), d_model, dims=dims, **params)
    counts = [_pairs_within(np.sort(sample[:, c]), bound + margin) * stride * stride for c in range(dims.size)]
    ranked = np.argsort(counts, kind="stable")
    if counts[ranked[0]] * (FILTER_COST + cost + PAIR_OVERHEAD) > 4 * work:  # far past the budget: no try
        return None, steps
    values = encode(scheme, np.arange(length, dtype=np.float64), d_model, dims=dims, **params)
    order = np.argsort(values[:, ranked[0]], kind="stable").astype(np.int64)
    sorted_values = values[order]
    keys, others = sorted_values[:, ranked[0]].copy(), sorted_values[:, ranked[1:1 + FILTER_COORDINATES]].copy()
    del values, sorted_values
    warm_up = min(WARM_UP_SHIFTS, length - 1)
    if warm_up * length * (cost + PAIR_OVERHEAD) > work // 8:  # at most an eighth of the budget on a try
        warm_up = 0
        if _pairs_within(keys, bound + margin) * (FILTER_COST + cost + PAIR_OVERHEAD) + length * cost > work:
            return None, steps
    sweep = PairSweep(length, d_model, order, keys, others, margin, tol, 1, np.arange(length - 1, dtype=np.int64),
                      best, top, bool(distinct_offsets), 0, 0, steps)
    if warm_up:
        sweep = advance_sweep(sweep, scheme, params, None, shifts=warm_up)
    rest = _pairs_within(keys, sweep.bound + margin, past=warm_up)
    passing = _passing_share(sweep, warm_up)
    if sweep.pairs_done * (cost + PAIR_OVERHEAD) + rest * (FILTER_COST + passing * (cost + PAIR_OVERHEAD)) \
            + length * cost > work:
        return None, steps
    return replace(sweep, pairs_total=sweep.pairs_done + rest), steps


def _passing_share(sweep: PairSweep, past: int) -> float:
    """Upper estimate of the share of the pairs left (within the bound along the keys) that pass the lower
    bound of the other coordinates: from a seeded sample of them, with one sample's worth to spare."""
    keys, limit = sweep.keys, sweep.bound + sweep.margin
    if sweep.others.shape[1] == 0 or not math.isfinite(limit):
        return 1.0
    reach = np.searchsorted(keys, keys + limit, side="right") - np.arange(1, keys.size + 1) - past
    starts = np.flatnonzero(reach > 0)
    if starts.size == 0:
        return 0.0
    rng = np.random.default_rng(0)
    weights = reach[starts] / reach[starts].sum()
    i = rng.choice(starts, size=FILTER_SAMPLE, p=weights)
    j = i + past + 1 + (rng.random(FILTER_SAMPLE) * reach[i]).astype(np.int64)
    lower = (keys[j] - keys[i]) ** 2 + np.sum((sweep.others[j] - sweep.others[i]) ** 2, axis=1)
    return min(1.0, (np.count_nonzero(lower <= limit * limit) + 1) / FILTER_SAMPLE * 2.0)


def _nearest(dist: np.ndarray, p: np.ndarray, q: np.ndarray, bound: float, top: int, distinct_offsets: bool,
             tol: float, length: int) -> np.ndarray:
    """Indices of the pairs that may still be listed: within ``bound``, and without one pair per offset, the
    ``top`` closest (those tied within ``tol`` with the ``top``-th: the ``top`` earliest of them), in O(pairs)."""
    near = np.flatnonzero(dist <= bound)
    if distinct_offsets or near.size <= top:
        return near
    kth = np.partition(dist[near], top - 1)[top - 1]
    ahead, tied = near[dist[near] < kth - tol], near[np.abs(dist[near] - kth) <= tol]
    if tied.size > top:  # equal rows: the earliest pairs
        tied = tied[np.argpartition(p[tied] * length + q[tied], top - 1)[:top]]
    return np.concatenate([ahead, tied])


def advance_sweep(sweep: PairSweep, scheme: str, params: dict, work: int | None,
                  shifts: int | None = None) -> PairSweep:
    """Compare further pairs of ``sweep``: about ``work`` pairs × d_model (at least one shift), or all;
    at most ``shifts`` shifts if given."""
    n, d = sweep.length, sweep.d_model
    table = _held_table(scheme, d, n, params)
    budget = math.inf if work is None else max(int(work), 1)
    spent = 0
    shift, active, best, done = sweep.shift, sweep.active, sweep.best, sweep.pairs_done
    bound = sweep.bound
    last = math.inf if shifts is None else sweep.shift + shifts
    while active.size and spent < budget and shift < last:
        active = active[:np.searchsorted(active, n - shift)]
        limit = bound + sweep.margin
        gap = sweep.keys[active + shift] - sweep.keys[active]
        within = gap <= limit
        active, gap = active[within], gap[within]
        if active.size:
            lower = gap * gap + np.sum((sweep.others[active + shift] - sweep.others[active]) ** 2, axis=1)
            compared = active[lower <= limit * limit] if math.isfinite(limit) else active
            a, b = sweep.order[compared], sweep.order[compared + shift]
            p, q = np.minimum(a, b), np.maximum(a, b)
            dist = _distances(scheme, d, params, table, p, q)
            near = _nearest(dist, p, q, bound + sweep.tol, sweep.top, sweep.distinct_offsets, sweep.tol, n)
            best = _merge_top(best, (dist[near], p[near], q[near], q[near] - p[near]), sweep.top,
                              sweep.distinct_offsets, sweep.tol)
            bound = float(best[0].max()) if best[0].size >= sweep.top else math.inf
            per_pair = d * (1 if table is not None else ENCODE_COST) + PAIR_OVERHEAD
            spent += active.size * FILTER_COST + p.size * per_pair
            done += active.size
        shift += 1
    return replace(sweep, shift=shift, active=active, best=best, pairs_done=done)


# --------------------------------------------------------------------------- binary


def _binary_step_median(length: int, bits: int) -> float:
    """Median over i in 0 … length − 2 of √(bits in which i and i + 1 differ mod 2^bits)."""
    i = np.arange(length - 1, dtype=np.uint64)
    flipped = (i ^ (i + np.uint64(1))) & np.uint64((1 << bits) - 1)
    return float(np.median(np.sqrt(np.bitwise_count(flipped).astype(np.float64))))


def binary_closest(length: int, d_model: int, bit_values: str, top: int, distinct_offsets: bool
                   ) -> tuple[tuple[tuple[float, float, float], ...], float]:
    """The pairs of 0 … ``length`` − 1 at binary's smallest distance, in listing order, and the median step.

    Exact, from the closed form in the module docstring: with period
    P = 2^d, the pairs (p, p + m·P) at distance 0 when length > P, else the
    pairs one bit apart, (p, p + 2^k) with bit k of p clear, at the value of
    one bit. Listed like every other closest-pairs list: the earlier pair
    first, and with ``distinct_offsets`` one pair per offset (the earliest).
    At most ``top``; fewer when fewer pairs are that close.
    """
    unit = 2.0 if bit_values == "signed" else 1.0
    bits = min(d_model, 62)  # positions are below 2^21 here: higher bits are 0 for every position
    period = 1 << bits
    pairs: list[tuple[float, float, float]] = []
    if length > period:  # PE(p) = PE(p + m·P)
        if distinct_offsets:
            pairs = [(0.0, float(m * period), 0.0) for m in range(1, min(top, (length - 1) // period) + 1)]
        else:
            for p in range(length - period):
                pairs += [(float(p), float(q), 0.0) for q in range(p + period, length, period)][:top - len(pairs)]
                if len(pairs) >= top:
                    break
    elif distinct_offsets:  # offsets 2^k: the earliest pair is (0, 2^k)
        pairs = [(0.0, float(1 << k), unit) for k in range(bits) if (1 << k) < length][:top]
    else:
        for p in range(length - 1):
            pairs += [(float(p), float(p + (1 << k)), unit) for k in range(bits)
                      if not (p >> k) & 1 and p + (1 << k) < length][:top - len(pairs)]
            if len(pairs) >= top:
                break
    return tuple(pairs), unit * _binary_step_median(length, bits)


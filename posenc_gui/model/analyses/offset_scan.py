"""The offset scan: P(k) = ‖PE(p) − PE(p + k)‖² of an offset-only part for every offset 1 … N−1, in steps.

A scheme's (sin, cos) pairs and linear columns give a distance that depends
on the offset k only (:class:`OffsetForm`); :mod:`.closest` turns the scan's
smallest offsets into the closest pair of the whole range.

How P is evaluated for every offset
    As P(k) = 2W − 2·Σ_f w_f cos(k / c_f) + k²·Σ 1/c² (w_f pairs share
    divisor c_f, W = Σ w_f), in blocks of offsets k = B + j: with
    cos((B + j)/c) = cos(B/c)·cos(j/c) − sin(B/c)·sin(j/c) a block is one
    matrix product of a cached table of cos(j/c), sin(j/c) with the phases
    of the block's bases B. That form cancels where P is small; its error
    is bounded by :func:`product_error_bound`, and the offsets kept as
    candidates (the smallest values found) are evaluated again in the
    stable form 4 sin²(k / 2c) before anything is reported.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from ..schemes import columns
from .analysis import BLOCK_ELEMENTS, MAX_TOP, _rotation_pairs

#: Largest table of cos(j/c) (and as many sin) one scan keeps: offsets j × divisors.
TABLE_ELEMENTS = 2**21
#: Smallest number of offsets kept as candidates while scanning (4 per near-repeat listed, if more).
MIN_CANDIDATES = 64
#: Schemes with at most this many unpaired sine/cosine columns (and at least one pair) are scanned too.
MAX_UNPAIRED = 4

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class OffsetForm:
    """A scheme's ‖PE(p) − PE(p + k)‖² = P(k) + U(p, k), as its columns give it.

    Attributes
    ----------
    divisors : ndarray, shape (F,)
        The distinct divisors c of the (sin, cos) pairs.
    weights : ndarray, shape (F,)
        How many pairs share each divisor.
    linear : float
        Σ 1/c² over the linear columns pos / c.
    unpaired : ndarray of int
        The sine and cosine columns without a partner of the same divisor.
    """

    divisors: np.ndarray
    weights: np.ndarray
    linear: float
    unpaired: np.ndarray

    @property
    def pairs(self) -> float:
        """W: the number of (sin, cos) pairs."""
        return float(self.weights.sum())

    @property
    def offset_only(self) -> bool:
        """True when the distance depends on the offset only (U = 0)."""
        return self.unpaired.size == 0

    @property
    def scannable(self) -> bool:
        """True when the offsets decide the closest pair: offset-only, or a few unpaired columns beside pairs."""
        return self.offset_only or (self.divisors.size > 0 and self.unpaired.size <= MAX_UNPAIRED)

    def squared(self, offsets) -> np.ndarray:
        """P(k) at ``offsets``, in the stable form Σ 4 sin²(k / 2c) + k²·Σ 1/c²."""
        k = np.asarray(offsets, dtype=np.float64).reshape(-1)
        out = self.linear * k * k
        rows = max(1, BLOCK_ELEMENTS // max(self.divisors.size, 1))
        for start in range(0, k.size if self.divisors.size else 0, rows):
            half = 0.5 * (k[start:start + rows, None] / self.divisors[None, :])
            out[start:start + rows] += (4.0 * np.sin(half) ** 2) @ self.weights
        return out


def offset_form(scheme: str, d_model: int, **params) -> OffsetForm:
    """The :class:`OffsetForm` of ``scheme`` at ``d_model`` (parameters as for ``encode``)."""
    cols = columns(scheme, d_model, **params)
    sin_cols, _, unpaired = _rotation_pairs(cols.kind, cols.divisor)
    linear_cols = unpaired[cols.kind[unpaired] == "linear"]
    divisors, weights = np.unique(cols.divisor[sin_cols], return_counts=True)
    return OffsetForm(
        divisors=divisors, weights=weights.astype(np.float64),
        linear=float(np.sum(1.0 / cols.divisor[linear_cols] ** 2)),
        unpaired=unpaired[cols.kind[unpaired] != "linear"],
    )


# --------------------------------------------------------------------------- the scan


@dataclass(frozen=True, eq=False)
class OffsetScan:
    """Progress of evaluating P(k) for the offsets 1 … length − 1.

    Attributes
    ----------
    length : int
        N: the positions are 0 … N − 1.
    next_offset : int
        Offsets 1 … next_offset − 1 are done.
    keep : int
        How many candidates are kept.
    candidates, values : ndarray
        The offsets with the smallest P found so far and their P in the
        product form, ascending by value (then offset).
    record_offsets, record_values : ndarray
        The offsets at which the running minimum of P (product form) falls,
        and the minimum there: min over k ≤ K of P(k) is the value of the
        last record at or below K.
    error : float
        Bound on |product form − P| for every offset of the scan.
    """

    length: int
    next_offset: int
    keep: int
    candidates: np.ndarray
    values: np.ndarray
    record_offsets: np.ndarray
    record_values: np.ndarray
    error: float

    @property
    def complete(self) -> bool:
        return self.next_offset >= self.length

    @property
    def offsets_done(self) -> int:
        """How many of the N − 1 offsets are done."""
        return self.next_offset - 1

    def progress(self) -> tuple[int, int]:
        """``(done, total)``: offsets scanned, of the N − 1."""
        return self.offsets_done, max(self.length - 1, 1)

    def describe(self) -> str:
        """Progress in words."""
        done, total = self.progress()
        return f"checking every offset 1…{self.length - 1:,}: {done:,} done ({100 * done / total:.0f} %)"

    def unseen_floor(self) -> float:
        """A lower bound of P at every offset that is not a candidate (``inf`` when every offset is one)."""
        if self.candidates.size < self.keep:
            return math.inf
        return float(self.values[-1]) - self.error


def _table_rows(form: OffsetForm, length: int) -> int:
    """Offsets per table: about √N (so the table and the bases cost alike), a power of two."""
    wanted = 1 << max(4, math.ceil(math.log2(max(math.sqrt(length), 1.0))))
    return max(16, min(wanted, TABLE_ELEMENTS // max(form.divisors.size, 1)))


def _block_bases(form: OffsetForm) -> int:
    """Bases per block, so that the complex phases (divisors × bases) fit a block."""
    return max(1, (BLOCK_ELEMENTS // 2) // max(form.divisors.size, 1))


def product_error_bound(form: OffsetForm, length: int) -> float:
    """Bound on |P(k) in the product form − P(k)| for offsets k < ``length``.

    Each term w·cos(k/c) is assembled from phases whose angles are rounded
    (B/c, j/c and the step of the bases, each within ε·k/c) and from one
    complex product per base step; the matrix product sums F terms of size
    ≤ w. With a factor 2 to spare: 8ε·(W·(k/c_min + F + bases + 5) + k²·Σ 1/c²).
    """
    k_max = float(max(length - 1, 1))
    linear = 4.0 * _EPS * form.linear * k_max * k_max
    if form.divisors.size == 0:
        return linear
    spread = k_max / float(form.divisors.min()) + form.divisors.size + _block_bases(form) + 5
    return 8.0 * _EPS * form.pairs * spread + linear


_TABLES: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()
_TABLES_LOCK = threading.Lock()
#: Tables kept (the scorecard scans two schemes in turn).
MAX_TABLES = 2


def _table(form: OffsetForm, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cos(j/c), sin(j/c) for j < rows (rows × F) and the step exp(i·rows/c) between bases; cached."""
    key = (form.divisors.tobytes(), rows)
    with _TABLES_LOCK:
        if key in _TABLES:
            _TABLES.move_to_end(key)
            return _TABLES[key]
    angle = np.arange(rows, dtype=np.float64)[:, None] / form.divisors[None, :]
    table = (np.cos(angle), np.sin(angle), np.exp(1j * (rows / form.divisors)))
    with _TABLES_LOCK:
        _TABLES[key] = table
        while len(_TABLES) > MAX_TABLES:
            _TABLES.popitem(last=False)
    return table


def clear_caches() -> None:
    """Forget the cos/sin tables of earlier scans."""
    with _TABLES_LOCK:
        _TABLES.clear()


def _product_values(form: OffsetForm, table, start: int, count: int) -> np.ndarray:
    """P(k) in the product form for k = start … start + count − 1 (count ≤ rows × bases of a block)."""
    k = start + np.arange(count, dtype=np.float64)
    out = form.linear * k * k
    if form.divisors.size == 0:
        return out
    cos_table, sin_table, step = table
    rows = cos_table.shape[0]
    bases = -(-count // rows)
    phase = np.exp(1j * (start / form.divisors)) * form.weights
    powers = np.ones((form.divisors.size, bases), dtype=np.complex128)
    if bases > 1:
        powers[:, 1:] = np.cumprod(np.broadcast_to(step[:, None], (step.size, bases - 1)), axis=1)
    phases = phase[:, None] * powers
    cosines = cos_table @ phases.real - sin_table @ phases.imag  # (rows, bases): offset start + b·rows + j
    out += 2.0 * form.pairs - 2.0 * cosines.T.reshape(-1)[:count]
    return out


def start_scan(form: OffsetForm, length: int, keep: int = MIN_CANDIDATES) -> OffsetScan:
    """A scan of the offsets 1 … length − 1 that has done nothing yet."""
    length = limits.check_int("length", length, 2, limits.MAX_SEQ_LEN)
    keep = limits.check_int("keep", keep, 1, 4 * MAX_TOP)
    empty = np.empty(0)
    return OffsetScan(length, 1, keep, empty.astype(np.int64), empty, empty.astype(np.int64), empty,
                      product_error_bound(form, length))


def advance_scan(form: OffsetForm, scan: OffsetScan, work: int | None = None) -> OffsetScan:
    """Evaluate further offsets of ``scan``: about ``work`` offsets × divisors (at least one block), or all."""
    if scan.complete:
        return scan
    rows = _table_rows(form, scan.length)
    table = _table(form, rows) if form.divisors.size else None
    block = rows * _block_bases(form)
    budget = math.inf if work is None else max(int(work), 1)
    width = max(form.divisors.size, 1)  # work per offset
    start, spent = scan.next_offset, 0
    candidates, values = scan.candidates, scan.values
    record_offsets, record_values = [scan.record_offsets], [scan.record_values]
    running = float(scan.record_values[-1]) if scan.record_values.size else math.inf
    while start < scan.length and spent < budget:
        count = min(block, scan.length - start, max(rows, int(min(budget - spent, block * width)) // width))
        value = _product_values(form, table, start, count)
        offset = start + np.arange(count, dtype=np.int64)
        # records: where the running minimum falls
        before = np.minimum(np.concatenate(([math.inf], np.minimum.accumulate(value)[:-1])), running)
        falls = value < before
        record_offsets.append(offset[falls])
        record_values.append(value[falls])
        running = min(running, float(value.min()))
        # candidates: the smallest values, ties to the smaller offset
        if value.size > scan.keep:
            part = np.argpartition(value, scan.keep - 1)[:scan.keep]
            offset, value = offset[part], value[part]
        candidates, values = np.concatenate([candidates, offset]), np.concatenate([values, value])
        order = np.lexsort((candidates, values))[:scan.keep]
        candidates, values = candidates[order], values[order]
        start += count
        spent += count * width
    return replace(scan, next_offset=start, candidates=candidates, values=values,
                   record_offsets=np.concatenate(record_offsets), record_values=np.concatenate(record_values))

"""A small shared cache of encoded rows, so views that sample the same grid encode it once.

At the default size the heatmap, the similarity matrix and the offset
profile all need PE at positions 0…127 in every dimension; evaluating it
once instead of three times is a third of an update's model time. Entries
are keyed by the (frozen, hashable) parameters and samples, so a stale
entry can never be returned for new parameters; the cache only bounds its
memory. ``functools.lru_cache`` does not fit: it cannot bound by bytes, and
a large grid must not pin hundreds of MiB after the view has moved on.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from . import limits
from .params import EncodingParams, check_params
from .sampling import AxisSample

#: Upper bound of the memory held by cached arrays.
MAX_CACHE_BYTES = 64 * 2**20
#: Upper bound of the number of cached arrays. Why: each step of a slider keeps a new array; while the
#: cache only grows, each one is memory never touched before, and at the default size its 138 page faults
#: cost the heatmap's job, which the window waits for, 0.3–0.4 ms of its ~0.9 (three runs of 60 steps
#: each way). Evicting the oldest array frees memory that the next step's array reuses. Eight entries
#: still cover every grid one step's panels share, and a few steps back.
MAX_CACHE_ENTRIES = 8
#: Arrays larger than this are computed but not kept (one would evict everything else).
MAX_ENTRY_BYTES = 16 * 2**20

_lock = threading.Lock()
_entries: OrderedDict[tuple, np.ndarray] = OrderedDict()
#: Keys being computed now, with the event their computing thread sets when done.
_in_flight: dict[tuple, threading.Event] = {}
_bytes = 0


def _dims_key(params: EncodingParams, dims: AxisSample | None) -> AxisSample | None:
    if dims is None or (dims.start == 0 and dims.stride == 1 and dims.count == params.d_model):
        return None
    return dims


def encode_sampled(params: EncodingParams, positions: AxisSample, dims: AxisSample | None = None) -> np.ndarray:
    """``params.encode`` at the sampled positions (and dimensions), shared between callers.

    Parameters
    ----------
    params : EncodingParams
    positions : AxisSample
        Rows to evaluate.
    dims : AxisSample, optional
        Columns to evaluate; all by default (a sample covering every
        dimension is the same entry as ``None``).

    Returns
    -------
    numpy.ndarray
        Read-only float64 array of shape ``(positions.count, dims.count)``,
        equal element for element to ``params.encode(...)``. Safe to call
        from several threads.

    Raises
    ------
    ValueError
        For bad parameters, or more than ``limits.MAX_ENCODE_ELEMENTS``
        values (checked before anything is allocated).
    """
    params = check_params(params)
    for name, sample in (("positions", positions), ("dims", dims)):
        if not isinstance(sample, AxisSample) and not (name == "dims" and sample is None):
            raise ValueError(f"{name} must be an AxisSample (from sample_axis()), got {limits.shown(sample)}")
    width = params.d_model if dims is None else dims.count
    limits.check_size("positions", positions.count, width, limits.MAX_ENCODE_ELEMENTS)
    dims = _dims_key(params, dims)
    key = (params, positions, dims)
    while True:
        with _lock:
            cached = _entries.get(key)
            if cached is not None:
                _entries.move_to_end(key)
                return cached
            running = _in_flight.get(key)
            if running is None:  # this thread computes it; others asking meanwhile wait
                running = _in_flight[key] = threading.Event()
                break
        # Two views often ask for the same rows at once from two workers (the
        # similarity matrix and its profile); computing them twice would
        # double the time of both. If the other thread's result was not kept
        # (too large, or it failed), the next round computes it here.
        running.wait()
    try:
        values = params.encode(positions.indices().astype(np.float64),
                               dims=None if dims is None else dims.indices())
        values.setflags(write=False)
        if values.nbytes <= MAX_ENTRY_BYTES:
            _store(key, values)
    finally:
        with _lock:
            del _in_flight[key]
        running.set()
    return values


def _store(key: tuple, values: np.ndarray) -> None:
    global _bytes
    with _lock:
        if key not in _entries:
            _entries[key] = values
            _bytes += values.nbytes
            while _bytes > MAX_CACHE_BYTES or len(_entries) > MAX_CACHE_ENTRIES:
                _, evicted = _entries.popitem(last=False)
                _bytes -= evicted.nbytes


def clear() -> None:
    """Drop every cached array."""
    global _bytes
    with _lock:
        _entries.clear()
        _bytes = 0


def cached_bytes() -> int:
    """Memory held by the cache now."""
    with _lock:
        return _bytes


def rows_encoder(params: EncodingParams):
    """PE at any positions, taking positions 0 … seq_len − 1 from the shared rows.

    For an analysis that needs every position's row (and maybe a few past
    the end): the heatmap and similarity matrix have usually encoded those
    rows already at sizes where they show every position; otherwise they
    are encoded (and kept) on the first call. Each row of ``encode``
    depends on its position only, so the result equals
    ``params.encode(positions)`` element for element.

    Returns
    -------
    callable
        ``positions → ndarray (len(positions), params.d_model)``.
    """
    params = check_params(params)
    rows = encode_sampled(params, AxisSample(0, 1, params.seq_len))

    def encode_positions(positions) -> np.ndarray:
        positions = limits.check_positions(
            positions, limit=limits.MAX_ENCODE_ELEMENTS // params.d_model,
            why=f" × {params.d_model:,} dimensions (encode's limit is {limits.MAX_ENCODE_ELEMENTS:,} values)",
        )
        index = positions.astype(np.int64)
        inside = (positions == index) & (index < params.seq_len)
        if inside.all():
            return rows[index]
        out = np.empty((positions.size, params.d_model))
        out[inside] = rows[index[inside]]
        out[~inside] = params.encode(positions[~inside])
        return out

    return encode_positions

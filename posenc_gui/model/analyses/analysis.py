"""Analyses that answer the notes' questions with numbers.

Every function takes a scheme key, the positions to evaluate and ``d_model``
(plus the scheme's parameters, as for :func:`~posenc_gui.model.encode`) and
returns a frozen dataclass or an array. Memory stays bounded: work is done in
blocks of at most :data:`BLOCK_ELEMENTS` values, and analyses whose cost
grows like N² or d³ refuse sizes past their budget with a ``ValueError``
naming the parameter (views evaluate fewer positions instead).

- :func:`uniqueness` — nearest other position of each position, the closest
  pair, and the near-repeats ("0 vs 44 since 44 ≈ 7·2π").
- :func:`pe_norms` and :func:`embedding_norm` — ‖p_i‖ against a typical ‖e_i‖.
- :func:`linear_relation` — T_k with PE(p+k) = T_k·PE(p) (from
  :mod:`~posenc_gui.model.analyses.linear_relation`, re-exported here): exact 2×2
  rotations for (sin, cos) pairs, least squares otherwise, and its residual.
- :func:`offset_spread` and :func:`offset_profiles` — is PE(p)·PE(p+k)
  independent of p?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import limits
from .linear_relation import LinearRelation, linear_relation, unpaired_dimensions  # noqa: F401 (re-exported)
from .linear_relation import rotation_pairs as _rotation_pairs  # noqa: F401 (offset_scan.py's name)
from ..schemes import encode, last_position, wavelengths

#: Largest temporary block (values) any analysis allocates at once.
BLOCK_ELEMENTS = 2**20
#: Largest n²·d (multiply-adds) :func:`uniqueness` accepts: all pairs of n positions in d dims.
MAX_UNIQUENESS_WORK = 2**33
#: Largest number of offsets :func:`offset_spread` / :func:`offset_profiles` evaluate.
MAX_OFFSETS = 65_536
#: Largest embedding scale accepted by :func:`embedding_norm`.
MAX_EMBEDDING_SCALE = limits.MAX_EMBEDDING_SCALE
#: Largest ``top`` of :func:`uniqueness`.
MAX_TOP = 10_000


# ---------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class Uniqueness:
    """How distinguishable the positions are.

    Attributes
    ----------
    positions : ndarray, shape (n,)
        The positions compared.
    nearest_position : ndarray, shape (n,)
        For each position, the *other* position whose encoding is closest
        (Euclidean); ties go to the earlier one in ``positions``.
    nearest_distance : ndarray, shape (n,)
        ‖PE(p) − PE(nearest_position)‖, computed from the difference (exact).
    closest_pair : tuple (p, q, distance)
        The closest pair of distinct entries of ``positions`` (p listed first
        in ``positions``); ties go to the earliest pair.
    near_repeats : tuple of (p, q, distance)
        The ``top`` closest distinct pairs, sorted by distance (then by their
        order in ``positions``). With ``distinct_offsets=True``, at most one
        pair (the closest) per offset |q − p|.
    d_model : int
        Dimension of the encodings compared.
    norms : ndarray, shape (n,)
        ‖PE(p)‖ of each position, as :func:`pe_norms` gives them (the
        encodings are at hand; a view need not encode them again).
    """

    positions: np.ndarray
    nearest_position: np.ndarray
    nearest_distance: np.ndarray
    closest_pair: tuple[float, float, float]
    near_repeats: tuple[tuple[float, float, float], ...]
    d_model: int
    norms: np.ndarray

    def offset_turns(self) -> np.ndarray:
        """|q − p| / 2π for each near-repeat: how many turns of the fastest (period 2π) circle apart.

        A value close to an integer m means q − p ≈ m·2π (e.g. 44 ≈ 7·2π).
        """
        offsets = np.array([abs(q - p) for p, q, _ in self.near_repeats], dtype=np.float64)
        return offsets / (2.0 * math.pi)


@dataclass(frozen=True)
class OffsetSpread:
    """Spread across p of PE(p)·PE(p + k), for each offset k.

    Attributes
    ----------
    offsets : ndarray, shape (m,)
    minimum, maximum, mean : ndarray, shape (m,)
        Over the positions p with p + k ≥ 0; NaN where there is none.
    spread : ndarray, shape (m,)
        ``maximum − minimum``: 0 when the dot product depends on the offset
        only (relative), large when it depends on where you are (absolute).
    count : ndarray of int, shape (m,)
        Number of positions p used for each offset.
    """

    offsets: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    mean: np.ndarray
    spread: np.ndarray
    count: np.ndarray


# ---------------------------------------------------------------------------
# validation helpers


def _check_offsets(offsets: object) -> np.ndarray:
    array = limits.check_numbers(
        "offsets", offsets, -limits.MAX_POSITION, limits.MAX_POSITION, MAX_OFFSETS, "offsets"
    )
    if array.size == 0:
        raise ValueError(f"offsets must hold 1…{MAX_OFFSETS:,} offsets, got none")
    return array


def _check_encoded(encoded: object, rows: int, d_model: int) -> np.ndarray:
    pe = limits.check_matrix("encoded", encoded, rows * d_model)
    if pe.shape != (rows, d_model):
        raise ValueError(f"encoded must have shape ({rows}, {d_model}) (positions × d_model), got {pe.shape}")
    return pe


def _d_model(d_model: object) -> int:
    return limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)


def _check_scheme(scheme: str, d_model: int, params: dict) -> None:
    """Raise ValueError for an unknown scheme or a bad parameter, as ``encode`` would."""
    wavelengths(scheme, d_model, np.arange(1), **params)


def _check_offset_grid(scheme: str, positions: object, d_model: object, offsets: object, params: dict,
                       name: str) -> tuple[np.ndarray, int, np.ndarray]:
    """Check the positions (called ``name``), ``d_model``, the offsets and the scheme of a positions × offsets
    grid, and that the grid is at most ``limits.MAX_SIMILARITY_ELEMENTS`` pairs; return them checked."""
    pos = limits.check_positions(positions, name=name)
    d_model = _d_model(d_model)
    offs = _check_offsets(offsets)
    _check_scheme(scheme, d_model, params)
    if pos.size * offs.size > limits.MAX_SIMILARITY_ELEMENTS:
        raise ValueError(
            f"{name}: {pos.size:,} {name} × {offs.size:,} offsets exceed the limit of "
            f"{limits.MAX_SIMILARITY_ELEMENTS:,} pairs; sample fewer {name} or offsets"
        )
    return pos, d_model, offs


def _rows_per_block(width: int) -> int:
    return max(1, BLOCK_ELEMENTS // max(int(width), 1))


def _encode_blocks(scheme: str, positions: np.ndarray, d_model: int, params: dict):
    """Yield ``(start, stop, PE(positions[start:stop]))`` in blocks of bounded size."""
    rows = _rows_per_block(d_model)
    for start in range(0, positions.size, rows):
        stop = min(start + rows, positions.size)
        yield start, stop, encode(scheme, positions[start:stop], d_model, **params)


#: PE at a 1-D array of positions, in every dimension (see :func:`offset_spread`).
Encoder = Callable[[np.ndarray], np.ndarray]


def _encoder(scheme: str, d_model: int, params: dict) -> Encoder:
    """``encode`` with these arguments, as a function of the positions."""
    return lambda positions: encode(scheme, positions, d_model, **params)


def _check_encoder(encoder: object, scheme: str, d_model: int, params: dict) -> Encoder:
    if encoder is None:
        return _encoder(scheme, d_model, params)
    if not callable(encoder):
        raise ValueError(f"encoder must be a function from positions to their encodings, got {limits.shown(encoder)}")
    return encoder


def _row_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """‖a_r − b_r‖ for paired rows, computed from differences in bounded blocks."""
    out = np.empty(a.shape[0])
    rows = _rows_per_block(a.shape[1])
    for start in range(0, a.shape[0], rows):
        stop = start + rows
        out[start:stop] = np.linalg.norm(a[start:stop] - b[start:stop], axis=1)
    return out


def _pair_distances(a: np.ndarray, b: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """‖a[i_r] − b[j_r]‖ for index pairs, from differences, gathering a bounded number of rows at a time.

    Memory stays within :data:`BLOCK_ELEMENTS` values per gather however many
    pairs there are (every pair of a table of equal rows is one).
    """
    out = np.empty(i.size)
    rows = _rows_per_block(a.shape[1])
    for start in range(0, i.size, rows):
        stop = start + rows
        out[start:stop] = np.linalg.norm(a[i[start:stop]] - b[j[start:stop]], axis=1)
    return out


def _distance_block(a: np.ndarray, sq_a: np.ndarray, b: np.ndarray, sq_b: np.ndarray,
                    self_offset: int | None = None) -> np.ndarray:
    """Euclidean distances of rows of ``a`` to rows of ``b`` (as in ``pairwise``).

    The Gram formula is used where it is accurate; entries where it would
    cancel (distance² ≤ 1e-6 · (‖a‖² + ‖b‖²)) are recomputed from differences,
    a bounded number of rows at a time (all of them for a table of equal rows). With ``self_offset``, row r of ``a``
    is row ``r + self_offset`` of ``b``: those entries are 0 and need no
    recomputing (every one of them would cancel).
    """
    scale = sq_a[:, None] + sq_b[None, :]
    squared = scale - 2.0 * (a @ b.T)
    # Both rows 0 (every square underflows): their distance is below 1e-150, and 0 is what the formula gives.
    suspect = (squared <= 1e-6 * scale) & (scale > 0.0)
    if self_offset is not None:
        itself = np.arange(a.shape[0])
        suspect[itself, itself + self_offset] = False
        squared[itself, itself + self_offset] = 0.0
    distance = np.sqrt(np.maximum(squared, 0.0, out=squared), out=squared)
    rows, cols = np.nonzero(suspect)
    if rows.size:
        distance[rows, cols] = _pair_distances(a, b, rows, cols)
    return distance


# ---------------------------------------------------------------------------
# uniqueness


def uniqueness_max_positions(d_model: int, work: int = MAX_UNIQUENESS_WORK) -> int:
    """Largest number of positions :func:`uniqueness` compares at ``d_model`` within ``work``.

    Also bounded by ``limits.MAX_SIMILARITY_ELEMENTS`` (n² ≤ that) and by
    ``limits.MAX_ENCODE_ELEMENTS`` (n·d ≤ that).
    """
    d_model = _d_model(d_model)
    by_work = math.isqrt(max(int(work) // d_model, 1))
    by_pairs = math.isqrt(limits.MAX_SIMILARITY_ELEMENTS)
    by_encode = limits.MAX_ENCODE_ELEMENTS // d_model
    return max(2, min(by_work, by_pairs, by_encode, limits.MAX_SEQ_LEN))


def _tie_groups(dist: np.ndarray, tol: float) -> np.ndarray:
    """Group ids for sorted ``dist``: a new group starts where the gap to the previous value exceeds ``tol``."""
    if dist.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(([0], np.cumsum(np.diff(dist) > tol)))


def _order_pairs(dist: np.ndarray, i: np.ndarray, j: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Order by distance, distances within ``tol`` (rounding) counting as equal, then by (i, j).

    Returns the order and the tie-group id of each ordered entry.
    """
    order = np.lexsort((j, i, dist))
    group = _tie_groups(dist[order], tol)
    perm = np.lexsort((j[order], i[order], group))
    return order[perm], group[perm]


def _merge_top(
    best: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    new: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    top: int,
    by_offset: bool,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge candidate pairs ``(dist, i, j, offset)``; keep the ``top`` best (one per offset if asked).

    Best in the order of :func:`_order_pairs` (distances within ``tol`` tied,
    then the earlier pair): a pair left out here is behind ``top`` others
    and stays behind them whatever is merged later, so at most ``top`` pairs
    are ever kept, even when every distance ties (a table of equal rows).
    """
    dist, i, j, off = (np.concatenate(pair) for pair in zip(best, new))
    order, _ = _order_pairs(dist, i, j, tol)
    dist, i, j, off = dist[order], i[order], j[order], off[order]
    if by_offset:
        _, first = np.unique(off, return_index=True)
        first.sort()
        dist, i, j, off = dist[first], i[first], j[first], off[first]
    return dist[:top], i[:top], j[:top], off[:top]


def uniqueness(
    scheme: str, positions, d_model: int, *, top: int = 10, distinct_offsets: bool = False,
    encoded: np.ndarray | None = None, **params
) -> Uniqueness:
    """Nearest other position of each position, the closest pair and the near-repeats.

    Distances are Euclidean, ‖PE(p) − PE(q)‖, exact even for nearly equal
    encodings (reported values are recomputed from differences). Every pair
    is compared, in blocks of bounded memory.

    Parameters
    ----------
    scheme : str
        A key of :data:`~posenc_gui.model.SCHEMES`.
    positions : array_like
        At least 2 positions (as for ``encode``); at most
        :func:`uniqueness_max_positions` ``(d_model)`` of them.
    d_model : int
    top : int
        Number of near-repeats to list, 1 … :data:`MAX_TOP`.
    distinct_offsets : bool
        List at most one pair per offset |q − p| (the closest), so that a
        shift-invariant scheme (sin/cos pair) lists 0 vs 44, 0 vs 25, … rather
        than 0 vs 44, 1 vs 45, …
    encoded : ndarray, optional
        ``encode(scheme, positions, d_model, **params)``, if the caller has
        it already (the app's views share one encoding of the visible rows);
        it must have shape ``(len(positions), d_model)``.
    **params
        The scheme's parameters.

    Returns
    -------
    Uniqueness

    Raises
    ------
    ValueError
        Fewer than 2 positions, too many (n²·d past :data:`MAX_UNIQUENESS_WORK`
        or n² past ``limits.MAX_SIMILARITY_ELEMENTS``), or a bad parameter.
    """
    pos = limits.check_positions(positions)
    d_model = _d_model(d_model)
    top = limits.check_int("top", top, 1, MAX_TOP)
    n = pos.size
    if n < 2:
        raise ValueError(f"positions must hold at least 2 positions to compare, got {n}")
    most = uniqueness_max_positions(d_model)
    if n > most:
        raise ValueError(
            f"positions: uniqueness compares every pair; at most {most:,} positions at d_model = {d_model}, "
            f"got {n:,} (evaluate fewer positions)"
        )
    if encoded is None:
        pe = encode(scheme, pos, d_model, **params)
    else:
        _check_scheme(scheme, d_model, params)
        pe = _check_encoded(encoded, n, d_model)
    sq = np.einsum("ij,ij->i", pe, pe)
    nearest = np.empty(n, dtype=np.int64)
    # Distances this close are equal up to rounding: ties go to the earlier position.
    tol = 1e-9 * math.sqrt(float(sq.max())) if n else 0.0
    empty = (np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0))
    best = empty
    columns_index = np.arange(n)
    rows_per = _rows_per_block(n)
    for start in range(0, n, rows_per):
        stop = min(start + rows_per, n)
        rows_index = np.arange(start, stop)
        block = _distance_block(pe[start:stop], sq[start:stop], pe, sq, self_offset=start)
        block[rows_index - start, rows_index] = np.inf  # not itself
        row_min = block.min(axis=1)
        nearest[start:stop] = np.argmax(block <= (row_min + tol)[:, None], axis=1)
        # distinct pairs i < j only
        block[columns_index[None, :] <= rows_index[:, None]] = np.inf
        threshold = best[0][-1] + tol if best[0].size >= top else np.inf
        r, c = np.nonzero(block <= threshold) if np.isfinite(threshold) else np.nonzero(np.isfinite(block))
        if r.size == 0:
            continue
        dist = block[r, c]
        i, j = r + start, c
        if not distinct_offsets and dist.size > top:
            keep = np.argpartition(dist, top - 1)[:top]
            kth = dist[keep].max()
            keep = np.flatnonzero(dist <= kth + tol)  # keep ties so the earliest pair wins
            dist, i, j = dist[keep], i[keep], j[keep]
        best = _merge_top(best, (dist, i, j, np.abs(pos[j] - pos[i])), top, distinct_offsets, tol)
    nearest_distance = _pair_distances(pe, pe, np.arange(n), nearest)
    pair_distance = _pair_distances(pe, pe, best[1], best[2])
    order, _ = _order_pairs(pair_distance, best[1], best[2], tol)
    repeats = tuple(
        (float(pos[best[1][m]]), float(pos[best[2][m]]), float(pair_distance[m])) for m in order[:top]
    )
    return Uniqueness(
        positions=pos,
        nearest_position=pos[nearest],
        nearest_distance=nearest_distance,
        closest_pair=repeats[0],
        near_repeats=repeats,
        d_model=d_model,
        norms=np.linalg.norm(pe, axis=1),
    )


# ---------------------------------------------------------------------------
# magnitude


def pe_norms(scheme: str, positions, d_model: int, *, encoded: np.ndarray | None = None, **params) -> np.ndarray:
    """‖PE(p)‖ (Euclidean) for each position, computed in bounded blocks.

    For the sinusoidal scheme with even d this is √(d/2) at every position
    (sin² + cos² = 1 per pair); for the naive scheme it is p·√d.

    Parameters
    ----------
    scheme : str
    positions : array_like
    d_model : int
    encoded : ndarray, optional
        ``encode(scheme, positions, d_model, **params)``, if the caller has
        it already (the app's views share one encoding of the visible rows);
        it must have shape ``(len(positions), d_model)``. The norms are the
        same to the last bit: each row is reduced on its own either way.
    **params
        The scheme's parameters.

    Returns
    -------
    ndarray, shape (len(positions),)
    """
    pos = limits.check_positions(positions)
    d_model = _d_model(d_model)
    _check_scheme(scheme, d_model, params)  # even for no positions
    if encoded is not None:
        pe = _check_encoded(encoded, pos.size, d_model)
        return np.linalg.norm(pe, axis=1)
    out = np.empty(pos.size)
    for start, stop, pe in _encode_blocks(scheme, pos, d_model, params):
        out[start:stop] = np.linalg.norm(pe, axis=1)
    return out


def embedding_norm(d_model: int, scale: float) -> float:
    """Typical ‖e‖ of a d-dimensional embedding with i.i.d. N(0, scale²) entries.

    Uses the root-mean-square norm, √E‖e‖² = scale·√d. (The mean norm,
    scale·√2·Γ((d+1)/2)/Γ(d/2), is smaller by a factor ≈ 1 − 1/(4d): within
    13 % at d = 2 and 0.05 % at d = 512.)

    Parameters
    ----------
    d_model : int
    scale : float
        Standard deviation of each entry, in (0, :data:`MAX_EMBEDDING_SCALE`].
    """
    d_model = _d_model(d_model)
    scale = limits.check_real("scale", scale, 0.0, MAX_EMBEDDING_SCALE, low_open=True)
    return scale * math.sqrt(d_model)


# ---------------------------------------------------------------------------
# relative vs absolute


def _dots(p: np.ndarray, q: np.ndarray, d_model: int, enc: Encoder) -> np.ndarray:
    """PE(p_r) · PE(q_r) for paired positions, in bounded blocks."""
    out = np.empty(p.size)
    rows = _rows_per_block(2 * d_model)
    for start in range(0, p.size, rows):
        stop = min(start + rows, p.size)
        a = enc(p[start:stop])
        b = enc(q[start:stop])
        out[start:stop] = np.einsum("ij,ij->i", a, b)
    return out


def _offset_spread_shared(pos: np.ndarray, d_model: int, offs: np.ndarray, enc: Encoder,
                          last: float) -> OffsetSpread | None:
    """Fast path when the shifted positions p + k overlap a lot (contiguous p, k).

    Encodes each distinct position once and takes all dot products with one
    matrix product; returns None when the temporaries would exceed
    ``4 · BLOCK_ELEMENTS`` values (the caller then loops over offsets).
    """
    budget = 4 * BLOCK_ELEMENTS
    if pos.size * offs.size > budget:
        return None
    shifted = pos[:, None] + offs[None, :]
    valid = (shifted >= 0) & (shifted <= last)
    union = np.unique(shifted[valid])
    if union.size * d_model > budget or pos.size * union.size > budget or pos.size * d_model > budget:
        return None
    encoded = enc(union)
    # Each row of encode depends on its position only: the positions p that are among the
    # shifted ones (all of them when k = 0 is an offset) need no second evaluation.
    rows = np.searchsorted(union, pos) if union.size else np.zeros(0, dtype=np.intp)
    found = union.size > 0 and bool(np.all(union[np.minimum(rows, union.size - 1)] == pos))
    base = encoded[rows] if found else enc(pos)
    gram = base @ encoded.T
    index = np.searchsorted(union, np.where(valid, shifted, union[0] if union.size else 0.0))
    index = np.minimum(index, max(union.size - 1, 0))
    values = np.take_along_axis(gram, index, axis=1) if union.size else np.zeros(shifted.shape)
    count = valid.sum(axis=0)
    some = count > 0
    minimum = np.where(some, np.where(valid, values, np.inf).min(axis=0), np.nan)
    maximum = np.where(some, np.where(valid, values, -np.inf).max(axis=0), np.nan)
    total = np.where(valid, values, 0.0).sum(axis=0)
    mean = np.full(offs.size, np.nan)
    mean[some] = total[some] / count[some]
    return OffsetSpread(
        offsets=offs, minimum=minimum, maximum=maximum, mean=mean, spread=maximum - minimum,
        count=count.astype(np.int64),
    )


def offset_spread(scheme: str, positions, d_model: int, offsets, *, encoder: Encoder | None = None,
                  **params) -> OffsetSpread:
    """Min, max and spread over p of PE(p) · PE(p + k), for each offset k.

    For the sinusoidal scheme PE(p)·PE(p+k) = Σ_i cos(k·ω_i) does not depend
    on p, so the spread is 0 up to rounding; for the naive and all-sine
    schemes it depends on p.

    Parameters
    ----------
    scheme : str
    positions : array_like
        The positions p (p + k < 0, or past the last row of a table read
        from a file, is left out for that k).
    d_model : int
    offsets : array_like
        The offsets k, at most :data:`MAX_OFFSETS` of them.
    encoder : callable, optional
        PE at a 1-D array of positions, as ``encode(scheme, positions,
        d_model, **params)`` gives it; by default that call. The app passes
        one that takes the rows its views have encoded already.
    **params

    Returns
    -------
    OffsetSpread
    """
    pos, d_model, offs = _check_offset_grid(scheme, positions, d_model, offsets, params, "positions")
    m = offs.size
    minimum, maximum, mean = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
    count = np.zeros(m, dtype=np.int64)
    enc = _check_encoder(encoder, scheme, d_model, params)
    last = last_position(scheme, **params)
    fast = _offset_spread_shared(pos, d_model, offs, enc, last)
    if fast is not None:
        return fast
    base = np.empty((0, d_model))
    base_ok = pos.size * d_model <= BLOCK_ELEMENTS
    if base_ok:
        base = enc(pos)
    for index, k in enumerate(offs):
        shifted = pos + k
        keep = (shifted >= 0) & (shifted <= last)
        if not keep.any():
            continue
        if base_ok:
            values = np.einsum("ij,ij->i", base[keep], enc(shifted[keep]))
        else:
            values = _dots(pos[keep], shifted[keep], d_model, enc)
        minimum[index], maximum[index], mean[index] = values.min(), values.max(), values.mean()
        count[index] = values.size
    return OffsetSpread(
        offsets=offs, minimum=minimum, maximum=maximum, mean=mean, spread=maximum - minimum, count=count
    )


def offset_profiles(scheme: str, references, offsets, d_model: int, *, encoder: Encoder | None = None,
                    **params) -> np.ndarray:
    """PE(r) · PE(r + k) for each reference position r (rows) and offset k (columns).

    Entries with r + k < 0 (or past the last row of a table read from a file) are NaN. ``encoder`` as
    for :func:`offset_spread`.

    Returns
    -------
    ndarray, shape (len(references), len(offsets))
    """
    refs, d_model, offs = _check_offset_grid(scheme, references, d_model, offsets, params, "references")
    out = np.full((refs.size, offs.size), np.nan)
    rows = _rows_per_block(d_model)
    shifted = refs[:, None] + offs[None, :]
    valid = (shifted >= 0) & (shifted <= last_position(scheme, **params))
    union = np.unique(np.concatenate([refs, shifted[valid]]))
    # The references' rows overlap (r + k for nearby r): encode each position once when that
    # fits a block, and take the rows from there (each row depends on its position only).
    enc = _check_encoder(encoder, scheme, d_model, params)
    shared = enc(union) if union.size <= rows else None
    for row, r in enumerate(refs):
        keep = np.flatnonzero(valid[row])
        if shared is not None:
            reference = shared[np.searchsorted(union, r)]
            for start in range(0, keep.size, rows):
                part = keep[start:start + rows]
                out[row, part] = shared[np.searchsorted(union, shifted[row, part])] @ reference
            continue
        reference = enc(np.array([r]))[0]
        for start in range(0, keep.size, rows):
            part = keep[start:start + rows]
            out[row, part] = enc(shifted[row, part]) @ reference
    return out

"""The linear map T_k with PE(p + k) = T_k · PE(p), by its 2×2 blocks, never as a dense d × d matrix.

For a (sin, cos) pair of frequency ω,

    sin((p+k)ω) =  cos(kω)·sin(pω) + sin(kω)·cos(pω)
    cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω),

so T_k is one 2×2 rotation by k·ω per pair, at the pair's (sin, cos)
channels (2i, 2i+1) in the interleaved layout, (i, i + ⌈d/2⌉) in the halves
layout, and 0 elsewhere: :class:`LinearRelation` holds ``pairs × 2 × 2``
blocks and the channels of each pair, at any d_model. A dimension without a
partner of its frequency (the last sine at odd d; every dimension of the
naive, normalized, single-sine and all-sine schemes) has no exact row: its
row is a least-squares fit (:class:`FittedRows`), minimum norm with a
stated cut-off on the singular values (the fit is not unique where the
encodings' columns are nearly dependent, and without a cut-off the one
returned is rounding noise with entries near 10¹²). A fit is made on
positions between the integers and its residual measured on integers it
never saw, as the Scorecard does.

:meth:`LinearRelation.matrix` gives any window of T_k as a dense array, and
:meth:`LinearRelation.apply` gives T_k·PE(p) without one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core import limits
from ..core.digits import EPS, column_error, encoding_error
from ..schemes import columns, encode, last_position, wavelengths
from ..schemes import scheme as scheme_of

#: Candidate cut-offs of a least-squares fit: singular values below one of these × the largest are
#: dropped; the fit keeps the largest cut-off whose residual on the validation positions is within
#: :data:`VALIDATION_SLACK` of the best one's. Below 10⁻⁶ an all-sine fit's entries grow to 10⁴…10⁹
#: (cancelling each other) for a residual a few per cent smaller.
FIT_CUTOFFS = (1e-6, 1e-4, 1e-2)
#: A smaller cut-off (a larger, more amplifying fit) is taken only if it cuts the validation residual
#: by more than this factor: a fit of far larger entries for a few per cent is not the better one.
VALIDATION_SLACK = 1.1
#: Where in its interval each fit position lies (irrational: never an integer), as in the Scorecard.
FIT_PHASE = (math.sqrt(5.0) - 1.0) / 2.0
#: Where each validation position lies in its interval (between the fit positions, never an integer).
VALIDATION_PHASE = FIT_PHASE / 2.0
#: Extra fit positions beyond 2 per unknown (the Scorecard's 2·d + 8).
FIT_EXTRA_POSITIONS = 8
#: Largest (fit positions) × (columns per row)² × (separately fitted rows) :func:`linear_relation` accepts.
MAX_FIT_WORK = 2**32
#: Largest temporary array (values) of a fit or a residual.
BLOCK_ELEMENTS = 2**22
#: What a column holds, in words.
KIND_NAMES = {"sin": "sine", "cos": "cosine", "linear": "linear dimension"}
#: Largest window (rows × columns) :meth:`LinearRelation.matrix` builds.
MAX_MATRIX_ELEMENTS = limits.MAX_SIMILARITY_ELEMENTS


@dataclass(frozen=True)
class FittedRows:
    """The least-squares rows of T_k: dimensions of PE(p + k) without an exact rotation.

    Row ``dims[r]`` of T_k is ``coefficients[r]`` at the columns ``columns[r]``
    and 0 elsewhere.

    Attributes
    ----------
    dims : ndarray of int, shape (m,)
        The fitted rows (dimensions of PE(p + k)).
    columns : ndarray of int, shape (m, w)
        For each fitted row, the columns of PE(p) it combines, ascending:
        every column when ``w = d``, else the ``w`` columns nearest to it in
        frequency (a window of the columns sorted by divisor).
    coefficients : ndarray, shape (m, w)
    rank : ndarray of int, shape (m,)
        Singular values kept (of ``w``) in each row's fit.
    cutoff : float
        Singular values below it × the largest were dropped (the fit is the
        minimum-norm one of the rest), chosen among :data:`FIT_CUTOFFS` on
        the validation positions.
    error : ndarray, shape (m,)
        A first-order estimate of how far each row's coefficients can be from
        the exact minimum-norm solution at its cut-off (from the encodings'
        rounding error and the kept singular values); ``inf`` where a
        singular value lies within that error of the cut-off, so rounding
        could change the rank.
    positions : ndarray
        The positions p fitted on (``PE(p + k) ≈ T_k·PE(p)``).
    validation_positions : ndarray
        The positions the cut-off was chosen on (neither fitted nor checked).
    """

    dims: np.ndarray
    columns: np.ndarray
    coefficients: np.ndarray
    rank: np.ndarray
    cutoff: float
    error: np.ndarray
    positions: np.ndarray
    validation_positions: np.ndarray

    @property
    def width(self) -> int:
        """Columns each row combines (``w``)."""
        return int(self.columns.shape[1]) if self.columns.ndim == 2 else 0


@dataclass(frozen=True)
class LinearRelation:
    """T_k with PE(p + k) ≈ T_k · PE(p), by blocks, and how well it holds.

    Attributes
    ----------
    k : float
    d_model : int
    sin_channels, cos_channels : ndarray of int, shape (pairs,)
        The (sin, cos) channels of each pair, in the order of the later one.
    divisors : ndarray, shape (pairs,)
        Each pair's c = 1/ω (``sin(p/c)``, ``cos(p/c)``).
    angles : ndarray, shape (pairs,)
        The rotation angles k·ω_i = k / c_i (as computed, in radians, not reduced).
    blocks : ndarray, shape (pairs, 2, 2)
        ``[[cos kω, sin kω], [−sin kω, cos kω]]``: rows (sin, cos) of
        PE(p + k), columns (sin, cos) of PE(p).
    angle_error : ndarray, shape (pairs,)
        Bound on the error of each computed angle (as for an angle p/c at p = |k|).
    block_error : ndarray, shape (pairs,)
        Bound on the error of each block's entries (the angle's, passed on,
        plus cos's or sin's own rounding).
    fit : FittedRows
        The rows without an exact rotation (none: ``fit.dims`` empty).
    positions : ndarray
        The positions p the residual is measured on (p + k ≥ 0).
    max_residual : float
        max over ``positions`` and dimensions j of |PE(p+k)_j − (T_k·PE(p))_j|.
    worst_position, worst_dimension : float, int
        Where that maximum is.
    rms_residual : float
    relative_residual : float
        ‖residual‖_F / ‖PE(P + k)‖_F (0 when both are 0).
    rotation_residual : float
        The max residual over the rotated dimensions only (NaN without pairs).
    rounding_bound : float
        The largest float64 rounding bound of those residuals (each entry's
        residual is compared with its own bound): what a residual of an
        exact map can reach through rounding alone, at these positions.
    within_rounding : bool
        Every rotated dimension's residual is within its rounding bound.
    exact : bool
        Every dimension is rotated (no fitted row): T_k holds for all
        positions, seen or not, and the residual only measures rounding.
    method : str
        ``"rotation"``, ``"rotation + least squares"`` or ``"least-squares"``.
    note : str
        Caveats for the user (unpaired dimensions, a fit that can interpolate).
    """

    k: float
    d_model: int
    sin_channels: np.ndarray
    cos_channels: np.ndarray
    divisors: np.ndarray
    angles: np.ndarray
    blocks: np.ndarray
    angle_error: np.ndarray
    block_error: np.ndarray
    fit: FittedRows
    positions: np.ndarray
    max_residual: float
    worst_position: float
    worst_dimension: int
    rms_residual: float
    relative_residual: float
    rotation_residual: float
    rounding_bound: float
    within_rounding: bool
    exact: bool
    method: str
    note: str

    @property
    def pairs(self) -> int:
        """Number of 2×2 rotation blocks."""
        return int(self.sin_channels.size)

    @property
    def omegas(self) -> np.ndarray:
        """Each pair's angular frequency ω_i = 1 / c_i (radians per position)."""
        return 1.0 / self.divisors

    @property
    def n_positions(self) -> int:
        """Number of positions the residual is measured on."""
        return int(self.positions.size)

    def matrix(self, rows=None, cols=None) -> np.ndarray:
        """The entries T_k[rows][:, cols] as a dense array (all of T_k by default).

        Parameters
        ----------
        rows, cols : array_like of int, optional
            Distinct dimensions, ``0 … d_model − 1``; at most
            :data:`MAX_MATRIX_ELEMENTS` entries in all.
        """
        rows = self._dims("rows", rows)
        cols = self._dims("cols", cols)
        limits.check_size("T_k window", rows.size, cols.size, MAX_MATRIX_ELEMENTS)
        row_at = np.full(self.d_model, -1, dtype=np.int64)
        row_at[rows] = np.arange(rows.size)
        col_at = np.full(self.d_model, -1, dtype=np.int64)
        col_at[cols] = np.arange(cols.size)
        out = np.zeros((rows.size, cols.size))
        channels = (self.sin_channels, self.cos_channels)
        for a in range(2):
            for b in range(2):
                r, c = row_at[channels[a]], col_at[channels[b]]
                shown = (r >= 0) & (c >= 0)
                out[r[shown], c[shown]] = self.blocks[shown, a, b]
        fitted = row_at[self.fit.dims]
        for index in np.flatnonzero(fitted >= 0):
            c = col_at[self.fit.columns[index]]
            shown = c >= 0
            out[fitted[index], c[shown]] = self.fit.coefficients[index, shown]
        return out

    def entry(self, row: int, col: int) -> tuple[float, float]:
        """``(T_k[row, col], bound on its error)``: a block's entry within its angle's rounding, a fitted
        coefficient within the fit's error estimate, every other entry 0 exactly."""
        row = limits.check_int("row", row, 0, self.d_model - 1)
        col = limits.check_int("col", col, 0, self.d_model - 1)
        for a, channels in enumerate((self.sin_channels, self.cos_channels)):
            pair = np.flatnonzero(channels == row)
            if pair.size:
                partners = (self.sin_channels[pair[0]], self.cos_channels[pair[0]])
                if col in partners:
                    return float(self.blocks[pair[0], a, partners.index(col)]), float(self.block_error[pair[0]])
                return 0.0, 0.0
        fitted = np.flatnonzero(self.fit.dims == row)
        if fitted.size:
            at = np.flatnonzero(self.fit.columns[fitted[0]] == col)
            if at.size:
                return float(self.fit.coefficients[fitted[0], at[0]]), float(self.fit.error[fitted[0]])
        return 0.0, 0.0

    def apply(self, encodings: np.ndarray) -> np.ndarray:
        """T_k · PE(p) for each row PE(p) of ``encodings`` (shape (n, d_model)), from the blocks."""
        x = limits.check_matrix("encodings", encodings, limits.MAX_ENCODE_ELEMENTS)
        if x.shape[1] != self.d_model:
            raise ValueError(f"encodings must have {self.d_model} columns (d_model), got {x.shape[1]}")
        out = np.zeros_like(x)
        s, c = self.sin_channels, self.cos_channels
        out[:, s] = x[:, s] * self.blocks[:, 0, 0] + x[:, c] * self.blocks[:, 0, 1]
        out[:, c] = x[:, s] * self.blocks[:, 1, 0] + x[:, c] * self.blocks[:, 1, 1]
        if self.fit.dims.size:
            out[:, self.fit.dims] = _apply_fit(x, self.fit)
        return out

    def _dims(self, name: str, dims) -> np.ndarray:
        if dims is None:
            return np.arange(self.d_model)
        array = limits.check_integers(name, dims, 0, self.d_model - 1, limits.MAX_DIMS, "dimensions")
        if np.unique(array).size != array.size:
            raise ValueError(f"{name} must be distinct dimensions, got a repeated one")
        return array


# ---------------------------------------------------------------------------
# pairs


def rotation_pairs(kind: np.ndarray, divisor: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pair each sine column with a cosine column of the same frequency, in order.

    Of the columns with one divisor, the m-th sine pairs with the m-th
    cosine (the earliest still unpaired of each). Pairs are listed in the
    order of their later column.

    Returns ``(sin_cols, cos_cols, unpaired_cols)``.
    """
    index = np.arange(kind.size)
    periodic = index[(kind == "sin") | (kind == "cos")]
    _, group = np.unique(divisor[periodic], return_inverse=True)
    keys = []
    for wanted in ("sin", "cos"):
        mine = kind[periodic] == wanted
        columns_, groups = periodic[mine], group[mine]
        order = np.argsort(groups, kind="stable")  # by frequency, then by column
        first = np.searchsorted(groups[order], groups[order])  # where each one's frequency starts
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size) - first
        keys.append((columns_, groups * kind.size + rank))  # (frequency, m) as one number
    (sins, sin_keys), (coss, cos_keys) = keys
    _, at_sin, at_cos = np.intersect1d(sin_keys, cos_keys, assume_unique=True, return_indices=True)
    sin_cols, cos_cols = sins[at_sin], coss[at_cos]
    by_later = np.argsort(np.maximum(sin_cols, cos_cols), kind="stable")
    sin_cols, cos_cols = sin_cols[by_later], cos_cols[by_later]
    paired = np.zeros(kind.size, dtype=bool)
    paired[sin_cols] = paired[cos_cols] = True
    return sin_cols.astype(np.int64), cos_cols.astype(np.int64), index[~paired].astype(np.int64)


def unpaired_dimensions(scheme: str, d_model: int, **params) -> np.ndarray:
    """Dimensions without a (sin, cos) partner of the same frequency.

    :func:`linear_relation` builds exact rotations for every other dimension
    and fits these by least squares; all of them for naive, normalized,
    single sine and all-sine, the last sine for sinusoidal with odd d, none
    for sinusoidal with even d.
    """
    kind, divisor = _kinds(scheme, d_model, params)
    return rotation_pairs(kind, divisor)[2]


def _kinds(scheme: str, d_model: int, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each dimension's kind and the key that orders the dimensions by frequency.

    A scheme's columns give ``"sin"``, ``"cos"`` or ``"linear"`` and the
    divisor; a table's dimensions are all ``"table"`` (none pairs), ordered by
    their period (``inf``: none).
    """
    if scheme_of(scheme).columns is not None:
        cols = columns(scheme, d_model, **params)
        return cols.kind, cols.divisor
    return np.full(d_model, "table"), wavelengths(scheme, d_model, **params)


# ---------------------------------------------------------------------------
# least squares


def positions_between(first: float, last: float, count: int, phase: float = FIT_PHASE) -> np.ndarray:
    """``count`` positions spread over ``first … last``, each between two integers.

    Position i is ``first + (i + phase)·(last − first)/count`` (by default
    φ = (√5 − 1)/2, :data:`FIT_PHASE`); a span of 0 is widened to 1; any that
    falls on an integer is left out. A fit made on these and measured on the
    integers of the span is measured on positions it never saw.
    """
    first = limits.check_real("first", first, 0.0, limits.MAX_POSITION)
    last = limits.check_real("last", last, first, limits.MAX_POSITION)
    count = limits.check_int("count", count, 1, limits.MAX_POSITIONS)
    phase = limits.check_real("phase", phase, 0.0, 1.0)
    span = max(last - first, 1.0)
    spread = first + (np.arange(count) + phase) * (span / count)
    return spread[spread != np.round(spread)]


def fit_columns(divisor: np.ndarray, dims: np.ndarray, width: int) -> np.ndarray:
    """For each of ``dims``, the ``width`` columns nearest to it in frequency, ascending (shape (m, width)).

    Columns are ordered by divisor (stable: equal divisors by index); each
    dimension takes the window of ``width`` of that order centred on itself,
    moved inwards at the ends. ``width = d`` gives every column to every row.
    """
    d = divisor.size
    width = limits.check_int("width", width, 1, d)
    if width == d:
        return np.broadcast_to(np.arange(d), (dims.size, d)).copy()
    order = np.argsort(divisor, kind="stable")
    rank = np.empty(d, dtype=np.int64)
    rank[order] = np.arange(d)
    start = np.clip(rank[dims] - width // 2, 0, d - width)
    return np.sort(order[start[:, None] + np.arange(width)[None, :]], axis=1)


def _apply_fit(x: np.ndarray, fit: FittedRows) -> np.ndarray:
    """The fitted rows of T_k·PE for the rows of ``x``: (n, m), in blocks of bounded size."""
    n, m = x.shape[0], fit.dims.size
    out = np.empty((n, m))
    if fit.width == x.shape[1]:  # every row combines every column: one product
        return x @ fit.coefficients.T
    per_block = max(1, BLOCK_ELEMENTS // max(n * fit.width, 1))
    for start in range(0, m, per_block):
        part = slice(start, start + per_block)
        rows = np.moveaxis(x[:, fit.columns[part]], 1, 0)  # (rows, n, w)
        out[:, part] = (rows @ fit.coefficients[part, :, None])[:, :, 0].T
    return out


def _min_norm(design: np.ndarray, target: np.ndarray, valid_design: np.ndarray, valid_target: np.ndarray,
              design_error: np.ndarray, target_error: np.ndarray,
              cutoffs: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Minimum-norm least squares of stacked problems, at each of ``cutoffs``.

    ``design`` (s, n, w) and ``target`` (s, n, t) are fitted; singular values
    below the cut-off × the largest are dropped. Returns, with a leading axis
    over ``cutoffs``: ``(solution (C, s, w, t), rank (C, s), error (C, s, t),
    validation² (C,))``, the last the squared residual on ``valid_*``
    (s, n_v, ·) summed over every problem. ``error`` is the first-order
    estimate ``(η_A‖x‖ + η_b)/σ_r + η_A‖r‖/σ_r²`` with η from the inputs'
    error bounds plus the SVD's backward error, ``inf`` when a singular
    value is within η_A of the cut-off (rounding could change the rank).
    """
    u, sigma, vt = np.linalg.svd(design, full_matrices=False)
    v = np.swapaxes(vt, 1, 2)  # (s, w, q)
    largest = sigma[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(sigma[:, :, None] > 0, np.swapaxes(u, 1, 2) @ target / sigma[:, :, None], 0.0)  # (s, q, t)
    along = valid_design @ v  # (s, n_v, q): the validation rows in the singular directions
    n, w = design.shape[1:]
    backward = max(n, w) * EPS
    eta_a = (np.sqrt(np.einsum("snw,snw->s", design_error, design_error)) + backward * largest[:, 0])[:, None]
    eta_b = np.sqrt(np.einsum("snt,snt->st", target_error, target_error)) + backward * np.linalg.norm(target, axis=1)
    padded = np.concatenate([sigma, np.zeros((sigma.shape[0], 1))], axis=1)
    directions = np.arange(sigma.shape[1])
    solutions, ranks, errors, misses = [], [], [], []
    for cutoff in cutoffs:
        rank = (sigma > cutoff * largest).sum(axis=1)  # (s,)
        kept = (directions[None, :] < rank[:, None])[:, :, None]
        coefficients = np.where(kept, scaled, 0.0)
        solution = v @ coefficients
        misses.append(float(np.sum((valid_target - along @ coefficients) ** 2)))
        residual = np.linalg.norm(target - design @ solution, axis=1)
        smallest = np.where(rank > 0, padded[np.arange(rank.size), np.maximum(rank - 1, 0)], np.inf)[:, None]
        following = padded[np.arange(rank.size), rank][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            error = (eta_a * np.linalg.norm(solution, axis=1) + eta_b) / smallest + eta_a * residual / smallest**2
        line = cutoff * largest
        near = ((np.abs(smallest - line) <= eta_a) | (np.abs(following - line) <= eta_a)) & (rank[:, None] > 0)
        solutions.append(solution)
        ranks.append(rank)
        errors.append(np.where(near, np.inf, np.nan_to_num(error, nan=0.0)))
    return np.stack(solutions), np.stack(ranks), np.stack(errors), np.array(misses)


def _fit_rows(scheme: str, d_model: int, k: float, dims: np.ndarray, width: int, positions: np.ndarray,
              validation: np.ndarray, cutoffs: tuple[float, ...], params: dict) -> FittedRows:
    """Least-squares rows ``dims`` of T_k over ``positions`` (see :class:`FittedRows`).

    One cut-off serves every row: the largest of ``cutoffs`` whose
    validation residual (over all rows) is within :data:`VALIDATION_SLACK`
    of the smallest.
    """
    chosen = fit_columns(_kinds(scheme, d_model, params)[1], dims, width)
    needed = np.unique(chosen)
    x = encode(scheme, positions, d_model, dims=needed, **params)
    y = encode(scheme, positions + k, d_model, dims=dims, **params)
    x_valid = encode(scheme, validation, d_model, dims=needed, **params)
    y_valid = encode(scheme, validation + k, d_model, dims=dims, **params)
    x_error = encoding_error(scheme, positions, d_model, dims=needed, values=x, **params)
    y_error = encoding_error(scheme, positions + k, d_model, dims=dims, values=y, **params)
    order = tuple(sorted(cutoffs, reverse=True))
    if width == d_model:  # one design for every row
        solution, rank, error, misses = _min_norm(x[None], y[None], x_valid[None], y_valid[None], x_error[None],
                                                  y_error[None], order)
        coefficients = np.swapaxes(solution[:, 0], 1, 2)  # (C, rows, w)
        rank, error = np.repeat(rank, dims.size, axis=1), error[:, 0]
    else:
        coefficients = np.empty((len(order), dims.size, width))
        rank = np.empty((len(order), dims.size), dtype=np.int64)
        error = np.empty((len(order), dims.size))
        misses = np.zeros(len(order))
        at = np.searchsorted(needed, chosen)
        per_block = max(1, BLOCK_ELEMENTS // ((positions.size + validation.size) * width * len(order)))
        for start in range(0, dims.size, per_block):
            part = slice(start, start + per_block)

            def rows_of(values: np.ndarray) -> np.ndarray:
                return np.moveaxis(values[:, at[part]], 1, 0)  # (rows, n, w)

            solution, rank[:, part], part_error, part_misses = _min_norm(
                rows_of(x), y[:, part].T[:, :, None], rows_of(x_valid), y_valid[:, part].T[:, :, None],
                rows_of(x_error), y_error[:, part].T[:, :, None], order)
            coefficients[:, part], error[:, part] = solution[..., 0], part_error[..., 0]
            misses += part_misses
    residuals = np.sqrt(misses)
    best = int(np.argmax(residuals <= VALIDATION_SLACK * residuals.min()))  # the largest good-enough cut-off
    return FittedRows(dims=dims, columns=chosen, coefficients=coefficients[best], rank=rank[best].astype(np.int64),
                      cutoff=order[best], error=error[best], positions=positions, validation_positions=validation)


def _listed(dims: np.ndarray, most: int = 4) -> str:
    """``"7"``, ``"3, 5, 9"`` or ``"0, 1, 2, 3, …"`` (the first ``most``)."""
    shown = ", ".join(f"{int(j):,}" for j in dims[:most])
    return shown + (", …" if dims.size > most else "")


def fit_work(positions: int, width: int, rows: int, d_model: int) -> int:
    """The work (positions × width², × rows when each row has its own columns) of a fit."""
    return positions * width * width * (1 if width == d_model else rows)


# ---------------------------------------------------------------------------
# T_k


def _encode_both(scheme: str, p: np.ndarray, q: np.ndarray, d_model: int, **params) -> tuple[np.ndarray, np.ndarray]:
    """``encode`` at ``p`` and at ``q``, encoding each distinct position once.

    p and p + k mostly overlap (for k = 1, all but one position). Each row of
    ``encode`` is computed on its own, so the rows are the same, bit for bit,
    as separate calls give.
    """
    distinct, where = np.unique(np.concatenate([p, q]), return_inverse=True)
    rows = encode(scheme, distinct, d_model, **params)[where]
    return rows[:p.size], rows[p.size:]


def _rounding(x: np.ndarray, x_error: np.ndarray, y_error: np.ndarray, relation_parts) -> np.ndarray:
    """Bound, for the rotated dimensions, on |PE(p+k) − T_k·PE(p)| from rounding alone (first order)."""
    s, c, blocks, block_error = relation_parts
    out = np.empty((x.shape[0], 2 * s.size))
    for row in range(2):  # the sin row, then the cos row of each block
        ws, wc = blocks[:, row, 0], blocks[:, row, 1]
        products = np.abs(ws * x[:, s]) + np.abs(wc * x[:, c])
        out[:, row * s.size:(row + 1) * s.size] = (
            (y_error[:, s] if row == 0 else y_error[:, c])
            + np.abs(ws) * x_error[:, s] + np.abs(wc) * x_error[:, c]
            + (np.abs(x[:, s]) + np.abs(x[:, c])) * block_error + 1.5 * EPS * products)
    return out


def _fit_positions(name: str, given, p: np.ndarray, k: float, count: int, phase: float, last: float) -> np.ndarray:
    """``given`` checked (or ``count`` positions between the integers of p's span), those with p + k usable
    (in ``0 … last``)."""
    if given is None:
        at = positions_between(float(p.min()), float(p.max()), count, phase)
    else:
        at = limits.check_positions(given, name=name)
    at = at[(at + k >= 0) & (at + k <= last)]
    if at.size == 0:
        raise ValueError(f"{name}: no position p with p + k in 0…{last:,g} (k = {k:g})")
    return at


def _check_cutoffs(cutoffs: object) -> tuple[float, ...]:
    values = limits.check_numbers("cutoffs", cutoffs, 0.0, 1.0, 64, "cut-offs")
    if values.size == 0:
        raise ValueError("cutoffs must hold 1…64 cut-offs in 0…1, got none")
    return tuple(float(v) for v in values)


def _unpaired_note(kind: np.ndarray, paired: int, unpaired: np.ndarray) -> str:
    """"Exact on the 6 paired dimensions; the unpaired sine (dimension 6) has no exact T_k: …"."""
    one = unpaired.size == 1
    what = f"the unpaired {KIND_NAMES[str(kind[unpaired[0]])]}" if one else f"the {unpaired.size:,} unpaired dimensions"
    return (f"Exact on the {paired:,} paired dimensions; {what} (dimension{'' if one else 's'} {_listed(unpaired)}) "
            f"{'has' if one else 'have'} no exact T_k: {'its row is a' if one else 'their rows are'} "
            "least-squares fit.")


def linear_relation(scheme: str, positions, d_model: int, k: float, *, fit_positions=None,
                    validation_positions=None, fit_width: int | None = None, cutoffs=FIT_CUTOFFS,
                    **params) -> LinearRelation:
    """T_k with PE(p + k) = T_k · PE(p) by its blocks, and its residual over ``positions``.

    Where the scheme's dimensions come in (sin, cos) pairs of equal frequency
    (sinusoidal in either layout, sin/cos pair, four-vector, harmonic), each
    pair gets its exact rotation. The other dimensions (the last sine at odd
    d; all of naive, normalized, single sine and all-sine) get least-squares
    rows (:class:`FittedRows`): fitted on ``fit_positions``, their cut-off
    chosen on ``validation_positions``, and measured, with the rotations, on
    ``positions``.

    Parameters
    ----------
    scheme : str
    positions : array_like
        The positions p of the residual; those with p + k < 0 (or past
        ``limits.MAX_POSITION``, or the last row of a table read from a file)
        are left out.
    d_model : int
        Any (2 … ``limits.MAX_D_MODEL``): nothing of size d × d is built.
    k : float
        Offset, finite, |k| ≤ ``limits.MAX_POSITION``.
    fit_positions, validation_positions : array_like, optional
        Where the least-squares rows are fitted, and where their cut-off is
        chosen. By default ``2·w + 8`` positions each between the integers of
        the span of ``positions`` (:func:`positions_between` with
        :data:`FIT_PHASE` and :data:`VALIDATION_PHASE`), so the residual on
        integer positions is measured where neither looked.
    fit_width : int, optional
        Columns w each fitted row combines (1 … d_model, default all d):
        with fewer, the ``w`` nearest in frequency (:func:`fit_columns`).
    cutoffs : sequence of float
        Candidate cut-offs in [0, 1] (:data:`FIT_CUTOFFS`; one value fixes it).
    **params
        The scheme's parameters.

    Returns
    -------
    LinearRelation

    Raises
    ------
    ValueError
        Bad parameters, no usable position, or a fit past
        :data:`MAX_FIT_WORK` (positions × w², × rows when w < d).
    """
    pos = limits.check_positions(positions)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    k = limits.check_real("k", k, -limits.MAX_POSITION, limits.MAX_POSITION)
    cutoffs = _check_cutoffs(cutoffs)
    width = d_model if fit_width is None else limits.check_int("fit_width", fit_width, 1, d_model)
    kind, divisor = _kinds(scheme, d_model, params)
    shifted = pos + k
    last = last_position(scheme, **params)  # a table read from a file ends at its last row
    p = pos[(shifted >= 0) & (shifted <= last)]
    if p.size == 0:
        raise ValueError(f"positions: no position p with p + k in 0…{last:,g} (k = {k:g})")
    s, c, unpaired = rotation_pairs(kind, divisor)
    notes = []
    if unpaired.size:
        count = 2 * width + FIT_EXTRA_POSITIONS
        fitted_at = _fit_positions("fit_positions", fit_positions, p, k, count, FIT_PHASE, last)
        validated_at = _fit_positions("validation_positions", validation_positions, p, k, count, VALIDATION_PHASE,
                                      last)
        work = fit_work(fitted_at.size + validated_at.size, width, unpaired.size, d_model)
        if work > MAX_FIT_WORK:
            raise ValueError(
                f"fit_positions: a least-squares fit of {unpaired.size:,} row(s) over {width:,} columns and "
                f"{fitted_at.size + validated_at.size:,} positions exceeds the budget ({work:,} > {MAX_FIT_WORK:,}); "
                "use fewer positions or a smaller fit_width")
        fit = _fit_rows(scheme, d_model, k, unpaired, width, fitted_at, validated_at, cutoffs, params)
        if s.size:
            notes.append(_unpaired_note(kind, 2 * s.size, unpaired))
        elif scheme_of(scheme).columns is None:
            notes.append(f"{scheme} is a table without (sin, cos) pairs: every row of T_k is a least-squares fit, "
                         "and the residual shows how far the shift by k is from a linear map.")
        if fitted_at.size < 2 * width:
            notes.append(
                f"Only {fitted_at.size:,} fit positions for {width:,} unknowns per row: a least-squares fit can "
                "(nearly) pass through every position it was fitted on.")
    else:
        nothing = np.zeros(0)
        fit = FittedRows(dims=unpaired, columns=np.zeros((0, 0), dtype=np.int64), coefficients=np.zeros((0, 0)),
                         rank=np.zeros(0, dtype=np.int64), cutoff=math.nan, error=nothing, positions=nothing,
                         validation_positions=nothing)
    divisors = divisor[s]
    angles = k / divisors
    cos_k, sin_k = np.cos(angles), np.sin(angles)
    blocks = np.stack([np.stack([cos_k, sin_k], axis=-1), np.stack([-sin_k, cos_k], axis=-1)], axis=-2)
    angle_error = column_error("linear", divisors, angles, angles)
    block_error = np.maximum(column_error("sin", divisors, angles, sin_k), column_error("cos", divisors, angles, cos_k))
    relation = LinearRelation(
        k=k, d_model=d_model, sin_channels=s, cos_channels=c, divisors=divisors, angles=angles, blocks=blocks,
        angle_error=angle_error, block_error=block_error, fit=fit, positions=p, max_residual=0.0,
        worst_position=0.0, worst_dimension=0, rms_residual=0.0, relative_residual=0.0, rotation_residual=math.nan, rounding_bound=math.nan,
        within_rounding=True, exact=unpaired.size == 0,
        method="rotation" if unpaired.size == 0 else ("least-squares" if s.size == 0 else "rotation + least squares"),
        note=" ".join(notes))
    return _with_residual(relation, scheme, params)


def _with_residual(relation: LinearRelation, scheme: str, params: dict) -> LinearRelation:
    """``relation`` with its residual over ``relation.positions`` filled in."""
    p, k, d_model = relation.positions, relation.k, relation.d_model
    x, y = _encode_both(scheme, p, p + k, d_model, **params)
    residual = np.abs(y - relation.apply(x))
    worst = np.unravel_index(int(np.argmax(residual)), residual.shape)
    norm_y, norm_r = float(np.linalg.norm(y)), float(np.linalg.norm(residual))
    rotation_residual, bound, within = math.nan, math.nan, True
    s, c = relation.sin_channels, relation.cos_channels
    if s.size:
        x_error = encoding_error(scheme, p, d_model, values=x, **params)
        y_error = encoding_error(scheme, p + k, d_model, values=y, **params)
        bounds = _rounding(x, x_error, y_error, (s, c, relation.blocks, relation.block_error))
        rotated = residual[:, np.concatenate([s, c])]
        rotation_residual, bound = float(rotated.max()), float(bounds.max())
        within = bool(np.all(rotated <= bounds))
    note = relation.note
    if not (np.any(x) or np.any(y)):
        note = (f"Every encoding measured is 0 under {scheme}: PE(p + k) = T·PE(p) holds for every matrix T, "
                "so T_k is not determined (the fit returns 0) and relates no positions.")
    return replace(
        relation, note=note, max_residual=float(residual.max()), worst_position=float(p[worst[0]]),
        worst_dimension=int(worst[1]), rms_residual=float(math.sqrt(np.mean(residual * residual))),
        relative_residual=norm_r / norm_y if norm_y > 0 else (0.0 if norm_r == 0 else math.inf),
        rotation_residual=rotation_residual, rounding_bound=bound, within_rounding=within)

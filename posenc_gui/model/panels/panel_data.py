"""What the analysis panels show, computed from the model: one call per update.

(The default layout's panels, heatmap, waveforms and similarity, have theirs
in :mod:`.table_data`, which imports no analysis.) These run in a worker
thread or the worker process (see :mod:`posenc_gui.worker_process`), so they
live here, NumPy only, and not in the panels' modules, which load Qt. Each
takes plain values (parameters, samples, numbers) and returns a frozen
dataclass of arrays; both cross the process boundary by pickle. A panel
names the functions it calls in its ``model_functions`` (see
:mod:`posenc_gui.views.registry`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core import limits
from ..analyses.addition import (
    MAX_SCALE,
    MIN_SCALE,
    Orthogonality,
    ProjectionCost,
    ScaleSweep,
    orthogonality,
    projection_cost,
    scale_sweep,
)
from ..analyses.analysis import (
    OffsetSpread,
    Uniqueness,
    embedding_norm,
    offset_profiles,
    offset_spread,
    pe_norms,
    uniqueness_max_positions,
)
from ..attention import MAX_SEED
from ..core.cache import MAX_ENTRY_BYTES, encode_sampled, rows_encoder
from ..analyses.closest import RangeUniqueness, continue_uniqueness, range_uniqueness
from ..analyses.offset_scan import clear_caches as clear_scan_tables
from ..analyses.closest_general import clear_caches as clear_sweep_tables
from ..analyses.linear_relation import (
    FIT_EXTRA_POSITIONS,
    FIT_PHASE,
    VALIDATION_PHASE,
    LinearRelation,
    linear_relation,
    positions_between,
    unpaired_dimensions,
)
from ..core.params import EncodingParams, check_params
from ..core.sampling import AxisSample, sample_axis

# --------------------------------------------------------------------------- magnitude


#: The magnitude view evaluates at most this many positions (evenly strided, always including the last) ...
MAGNITUDE_MAX_POINTS = 2048
#: ... and at most this many positions × d_model values.
MAGNITUDE_VIEW_ELEMENTS = 2**22


@dataclass(frozen=True)
class MagnitudeData:
    """‖PE(p)‖ at sampled positions and the typical embedding norm for ``scale``."""

    params: EncodingParams
    sample: AxisSample
    positions: np.ndarray
    norms: np.ndarray
    scale: float
    embedding: float


def magnitude_points(params: EncodingParams) -> int:
    """How many positions (before the last is added) the magnitude view evaluates."""
    return min(MAGNITUDE_MAX_POINTS, max(256, MAGNITUDE_VIEW_ELEMENTS // params.d_model), params.seq_len)


def compute_magnitude(params: EncodingParams, scale: float) -> MagnitudeData:
    """‖PE(p)‖ at :func:`magnitude_points` strided positions and the last one, and σ·√d for σ = ``scale``.

    The sampled rows come from the shared cache of encoded rows when they
    are small enough to be kept there (at the default size, the rows the
    similarity matrix encodes anyway).
    """
    sample = sample_axis(0, params.seq_len - 1, params.seq_len, magnitude_points(params))
    positions = sample.indices().astype(np.float64)
    kwargs = params.scheme_kwargs()
    shared = sample.count * params.d_model * 8 <= MAX_ENTRY_BYTES  # larger rows are not kept: blocks
    norms = pe_norms(params.scheme, positions, params.d_model,
                     encoded=encode_sampled(params, sample) if shared else None, **kwargs)
    if positions[-1] != params.seq_len - 1:
        positions = np.append(positions, float(params.seq_len - 1))
        norms = np.append(norms, pe_norms(params.scheme, positions[-1:], params.d_model, **kwargs))
    return MagnitudeData(params, sample, positions, norms, scale, embedding_norm(params.d_model, scale))


# --------------------------------------------------------------------------- addition vs concatenation


@dataclass(frozen=True, eq=False)
class AdditionData:
    """Everything the Addition dock shows."""

    params: EncodingParams
    scale: float
    cost: ProjectionCost
    sweep: ScaleSweep
    current: ScaleSweep
    ortho: Orthogonality
    embedding_norm: float


@functools.lru_cache(maxsize=8)
def _addition_sweeps(params: EncodingParams, seed: int) -> tuple[ScaleSweep, Orthogonality, ProjectionCost]:
    """The parts that do not depend on σ: a change of σ alone reuses them."""
    return (scale_sweep(params, seed=seed), orthogonality(params, seed=seed),
            projection_cost(params.d_model, params.seq_len))


def addition_data(params: EncodingParams, scale: float, seed: int = 0) -> AdditionData:
    """The Addition dock's sweeps, orthogonality and costs, and the split at its σ ``scale``."""
    params = check_params(params)
    scale = limits.check_real("scale", scale, MIN_SCALE, MAX_SCALE)
    seed = limits.check_int("seed", seed, 0, MAX_SEED)
    sweep, ortho, cost = _addition_sweeps(params, seed)
    current = scale_sweep(params, [scale], seed=seed)
    return AdditionData(params, scale, cost, sweep, current, ortho, embedding_norm(params.d_model, scale))


# --------------------------------------------------------------------------- uniqueness


#: Work budget (n²·d multiply-adds) of comparing all pairs in one update; past it, the leading positions.
UNIQUENESS_VIEW_WORK = 2**29
#: Offsets × frequencies of one step of a scan of every offset (tens of milliseconds in the worker).
UNIQUENESS_SCAN_STEP = 2**28


@dataclass(frozen=True, eq=False)
class UniquenessData:
    """The analysis of positions ``0 … seq_len − 1`` (see
    :class:`~posenc_gui.model.analyses.closest.RangeUniqueness`)."""

    params: EncodingParams
    found: RangeUniqueness
    typical_norm: float

    @property
    def result(self) -> Uniqueness:
        """Each drawn position's nearest other position (the curves)."""
        return self.found.curve

    @property
    def count(self) -> int:
        """The closest pair is that of positions ``0 … count − 1``."""
        return self.found.pairs_range

    @property
    def truncated(self) -> bool:
        """True when the closest pair covers only the leading positions (or a scan is still running)."""
        return not self.found.whole_range


def view_positions(params: EncodingParams) -> int:
    """How many leading positions the view compares all pairs of (when it compares them)."""
    params = check_params(params)
    return min(params.seq_len, uniqueness_max_positions(params.d_model, UNIQUENESS_VIEW_WORK))


def uniqueness_data(params: EncodingParams, top: int, distinct_offsets: bool) -> UniquenessData:
    """Run the analysis for the view (off the GUI thread); a scan may still be ``pending``."""
    params = check_params(params)
    if params.seq_len < 2:
        raise ValueError("seq_len: uniqueness needs at least 2 positions")
    count = view_positions(params)
    # All pairs at most sizes: the heatmap and similarity matrix encode the same rows.
    encoded = encode_sampled(params, AxisSample(0, 1, count)) if count == params.seq_len else None
    found = range_uniqueness(params.scheme, params.seq_len, params.d_model, top=top,
                             distinct_offsets=distinct_offsets, pair_work=UNIQUENESS_VIEW_WORK,
                             scan_work=UNIQUENESS_SCAN_STEP, encoded=encoded, **params.scheme_kwargs())
    return UniquenessData(params, found, float(np.median(found.curve.norms)))


def continue_uniqueness_data(data: UniquenessData) -> UniquenessData:
    """``data`` with its scan advanced by one step (:data:`UNIQUENESS_SCAN_STEP`)."""
    params = data.params
    found = continue_uniqueness(data.found, params.scheme, params.d_model, UNIQUENESS_SCAN_STEP,
                                **params.scheme_kwargs())
    return UniquenessData(params, found, float(np.median(found.curve.norms)))


# --------------------------------------------------------------------------- relative vs absolute


#: At most this many offsets are evaluated (evenly strided over 0 … max k).
MAX_OFFSET_POINTS = 512
#: Work budget of one update: positions × offsets × d_model.
RELATIVE_VIEW_WORK = 2**23
#: At most this many positions p (evenly strided) enter the spread, however small d and the offsets are.
MAX_POSITIONS = 2**16
#: Most reference positions (profiles) the view draws.
MAX_REFERENCES = 64


@dataclass(frozen=True)
class RelativeData:
    """Spread across sampled positions p for each offset k, and profiles from reference positions."""

    params: EncodingParams
    positions: np.ndarray
    position_stride: int
    spread: OffsetSpread
    references: np.ndarray
    profiles: np.ndarray  # (len(references), len(offsets))


def reference_positions(seq_len: int, count: int) -> np.ndarray:
    """``count`` reference positions spread evenly over the first half of ``0 … seq_len−1`` (both ≥ 1)."""
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    count = limits.check_int("count", count, 1, MAX_REFERENCES)
    last = max((seq_len - 1) // 2, 0)
    return np.unique(np.round(np.linspace(0, last, count))).astype(np.float64)


def relative_data(params: EncodingParams, max_offset: int, n_references: int) -> RelativeData:
    """Spread and profiles for the view (in a worker): offsets ``0 … max_offset``, ``n_references`` profiles.

    ``max_offset`` in ``1 … limits.MAX_SEQ_LEN``, ``n_references`` in ``1 … MAX_REFERENCES``.
    """
    params = check_params(params)
    max_offset = limits.check_int("max_offset", max_offset, 1, limits.MAX_SEQ_LEN)
    n_references = limits.check_int("n_references", n_references, 1, MAX_REFERENCES)
    kwargs = params.scheme_kwargs()
    offsets = sample_axis(0, max_offset, max_offset + 1, MAX_OFFSET_POINTS).indices().astype(np.float64)
    if offsets[-1] != max_offset:
        offsets = np.append(offsets, float(max_offset))
    budget = max(16, min(RELATIVE_VIEW_WORK // (params.d_model * offsets.size), MAX_POSITIONS))
    sample = sample_axis(0, params.seq_len - 1, params.seq_len, min(budget, params.seq_len))
    positions = sample.indices().astype(np.float64)
    # Comparing every position: the rows 0 … N−1 the core panels encoded serve here too.
    encoder = rows_encoder(params) if sample.stride == 1 else None
    spread = offset_spread(params.scheme, positions, params.d_model, offsets, encoder=encoder, **kwargs)
    references = reference_positions(params.seq_len, n_references)
    profiles = offset_profiles(params.scheme, references, offsets, params.d_model, encoder=encoder, **kwargs)
    return RelativeData(params, positions, sample.stride, spread, references, profiles)


# --------------------------------------------------------------------------- linear relation T_k


#: Largest positions × d_model evaluated for the residual (a rotation holds at every position; the
#: residual at a sample of them shows the rounding).
VIEW_ELEMENTS = 2**19
#: The residual is evaluated at most at this many (strided) positions; at d = 2 the element budget
#: alone would allow every one of 1,048,576 positions.
MAX_EXACT_POSITIONS = 2**16
#: Up to this d_model a least-squares row combines every column of PE(p) (one SVD of (2d + 8) × d).
MAX_DENSE_FIT_D_MODEL = 512
#: Past it, rows × positions × w² of the fits of w columns each (one SVD per row).
VIEW_FIT_WORK = 2**26


@dataclass(frozen=True)
class LinearRelationData:
    """T_k (by blocks, and fitted rows) and its residual over ``positions`` (integers, every ``stride``-th)."""

    params: EncodingParams
    positions: np.ndarray
    stride: int
    relation: LinearRelation


def residual_positions(params: EncodingParams) -> tuple[np.ndarray, int]:
    """The integers of ``0 … seq_len−1`` the residual is measured on, and their stride.

    All of them when ``seq_len × d_model`` fits :data:`VIEW_ELEMENTS` (and at
    most :data:`MAX_EXACT_POSITIONS`), else evenly strided, and the last
    position too (rounding grows with the position: the last is the worst).
    """
    params = check_params(params)
    budget = max(2, min(VIEW_ELEMENTS // params.d_model, MAX_EXACT_POSITIONS))
    count = params.seq_len if params.seq_len <= budget else budget - 1  # room for the last one
    sample = sample_axis(0, params.seq_len - 1, params.seq_len, count)
    positions = sample.indices().astype(np.float64)
    if positions[-1] != params.seq_len - 1:
        positions = np.append(positions, float(params.seq_len - 1))
    return positions, sample.stride


def fit_width(d_model: int, rows: int) -> int:
    """Columns each least-squares row combines: all d up to :data:`MAX_DENSE_FIT_D_MODEL`, else the most
    within :data:`VIEW_FIT_WORK` (``rows · (2w + 8) · w²``, at least 2)."""
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    rows = limits.check_int("rows", rows, 1, d_model)
    if d_model <= MAX_DENSE_FIT_D_MODEL:
        return d_model
    width = 2
    while width < d_model and rows * (2 * (width + 1) + FIT_EXTRA_POSITIONS) * (width + 1) ** 2 <= VIEW_FIT_WORK:
        width += 1
    return width


def linear_relation_data(params: EncodingParams, k: int) -> LinearRelationData:
    """T_k for the view (in a worker): blocks at any d_model, least-squares rows where there is no rotation.

    The residual is measured on integers of ``0 … seq_len−1``
    (:func:`residual_positions`); least-squares rows are fitted on ``2w + 8``
    positions between those integers and their cut-off chosen on as many
    others (as the Scorecard fits), so the residual is measured where no fit
    looked.
    """
    params = check_params(params)
    kwargs = params.scheme_kwargs()
    positions, stride = residual_positions(params)
    unpaired = unpaired_dimensions(params.scheme, params.d_model, **kwargs).size
    fitting = {}
    if unpaired:
        width = fit_width(params.d_model, unpaired)
        count = 2 * width + FIT_EXTRA_POSITIONS
        last = float(params.seq_len - 1)
        fitting = {"fit_width": width, "fit_positions": positions_between(0.0, last, count, FIT_PHASE),
                   "validation_positions": positions_between(0.0, last, count, VALIDATION_PHASE)}
    relation = linear_relation(params.scheme, positions, params.d_model, k, **fitting, **kwargs)
    return LinearRelationData(params, positions, stride, relation)


def clear_caches() -> None:
    """Forget the Addition dock's sweeps kept per parameters and the uniqueness scans' tables."""
    _addition_sweeps.cache_clear()
    clear_scan_tables()
    clear_sweep_tables()

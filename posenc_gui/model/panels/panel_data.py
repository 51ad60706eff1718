"""What every panel shows, computed from the model: one call per update.

These run in a worker thread or the worker process (see
:mod:`posenc_gui.worker_process`), so they live here, NumPy only, and not in
the panels' modules, which load Qt. Each takes plain values (parameters,
samples, numbers) and returns a frozen dataclass of arrays; both cross the
process boundary by pickle. A panel names the functions it calls in its
``model_functions`` (see :mod:`posenc_gui.views.registry`).
"""

from __future__ import annotations

import functools
import re
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
from ..core.colour_bound import (  # noqa: F401 - re-exported
    BOUND_PERCENTILE,
    OUTLIER_RATIO,
    file_colour_bound,
    outlier_bound,
)
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
from ..core.sampling import AxisSample, aliased, curve_positions, sample_axis, value_bands
from ..schemes import formula_terms, wavelengths
from ..analyses.similarity import pairwise

# --------------------------------------------------------------------------- heatmap


@dataclass(frozen=True)
class HeatmapData:
    """What the heatmap shows: exact values at the sampled positions and dimensions."""

    params: EncodingParams
    positions: AxisSample
    dims: AxisSample
    values: np.ndarray
    wavelength: np.ndarray
    aliased: np.ndarray
    #: For a table read from a file with outliers (:func:`.colour_bound.outlier_bound`): ``(bound, beyond,
    #: largest)``, the |value| its colours span, how many shown values are beyond it and the largest; else None.
    colour_bound: tuple[float, int, float] | None = None

    @property
    def full(self) -> bool:
        """True when every position and dimension is shown (no sampling)."""
        p = self.params
        return (self.positions.stride == 1 and self.dims.stride == 1
                and self.positions.count == p.seq_len and self.dims.count == p.d_model)


def compute_heatmap(params: EncodingParams, positions: AxisSample, dims: AxisSample) -> HeatmapData:
    """The encoding at the sampled positions × dimensions, their wavelengths and which of them alias.

    For a table read from a file, also its colours' :func:`~.colour_bound.file_colour_bound`.
    """
    values = encode_sampled(params, positions, dims)
    wl = wavelengths(params.scheme, params.d_model, dims.indices(), **params.scheme_kwargs())
    bound = file_colour_bound(params, values)
    return HeatmapData(params, positions, dims, values, wl, aliased(wl, positions.stride), bound)


# --------------------------------------------------------------------------- waveforms


#: Most dimensions the waveforms panel draws at once.
MAX_DIMS = 12
#: Dots at integer positions are drawn only while they are at least this many pixels apart.
MIN_DOT_SPACING_PX = 4


def parse_dims(text: str, d_model: int) -> tuple[int, ...]:
    """Parse ``"0, 1, 6-9"`` into dimension indices in ``0 … d_model−1``.

    Raises
    ------
    ValueError
        Naming ``dims`` and the allowed range, for malformed text, an index
        out of range, or more than :data:`MAX_DIMS` dimensions.
    """
    dims: list[int] = []
    for part in filter(None, (p.strip() for p in re.split(r"[,\s]+", text))):
        match = re.fullmatch(r"(\d+)(?:\s*[-–]\s*(\d+))?", part)
        if not match:
            raise ValueError(f"dims must be integers or ranges like 4-7 in 0…{d_model - 1}; got {part!r}")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first or last >= d_model:
            raise ValueError(f"dims must be in 0…{d_model - 1}; got {part!r}")
        dims.extend(d for d in range(first, last + 1) if d not in dims)
        if len(dims) > MAX_DIMS:
            raise ValueError(f"dims: choose at most {MAX_DIMS} dimensions at once")
    if not dims:
        raise ValueError(f"dims: choose at least one dimension in 0…{d_model - 1}")
    return tuple(dims)


def default_dims(d_model: int) -> tuple[int, ...]:
    """A fast, a middle and a slow (sin, cos) pair that exist for ``d_model``."""
    middle = (d_model // 4) // 2 * 2
    slow = (d_model - 2) // 2 * 2
    picks = [0, 1, middle, middle + 1, slow]
    return tuple(sorted({d for d in picks if d < d_model}))


@dataclass(frozen=True)
class WaveformData:
    """Curves (real positions) and dots (integer positions) for each chosen dimension."""

    params: EncodingParams
    dims: tuple[int, ...]
    curve_x: np.ndarray
    curve_y: np.ndarray  # (len(curve_x), len(dims))
    dots: AxisSample | None
    dot_y: np.ndarray | None
    wavelength: np.ndarray
    labels: tuple[str, ...]
    aliased: np.ndarray  # (len(dims),) bool: wavelength < 2 × the curve's sample step
    band_low: np.ndarray  # (len(curve_x), len(dims)): exact range over each sample's
    band_high: np.ndarray  # pixel column, filled in for aliased dimensions only
    bands_known: bool = True  # False: the scheme does not bound its values between samples

    @property
    def curve_step(self) -> float:
        return float(self.curve_x[1] - self.curve_x[0]) if self.curve_x.size > 1 else 0.0


def compute_waveforms(params: EncodingParams, dims: tuple[int, ...], low: float, high: float,
                      pixels: int) -> WaveformData:
    """The curves of ``dims`` over positions ``low … high`` at one sample per pixel, and dots at integers.

    Dots come only while integer positions are :data:`MIN_DOT_SPACING_PX`
    pixels apart; a dimension sampled below its wavelength gets the exact
    range of its values over each sample's pixel column (``band_low``,
    ``band_high``) instead of a moiré curve.
    """
    dim_index = np.array(dims, dtype=np.int64)
    curve_x = curve_positions(low, high, params.seq_len, pixels)
    curve_y = params.encode(curve_x, dims=dim_index)
    integers = sample_axis(max(low, 0.0), high, params.seq_len, max(1, pixels // MIN_DOT_SPACING_PX))
    dots, dot_y = None, None
    if integers.stride == 1:
        dots = integers
        dot_y = params.encode(integers.indices().astype(np.float64), dims=dim_index)
    kwargs = params.scheme_kwargs()
    labels = formula_terms(params.scheme, params.d_model, dim_index, **kwargs)
    wl = wavelengths(params.scheme, params.d_model, dim_index, **kwargs)
    step = float(curve_x[1] - curve_x[0]) if curve_x.size > 1 else 0.0
    is_aliased = aliased(wl, step) if step > 0 else np.zeros(dim_index.size, dtype=bool)
    band_low = band_high = np.empty((curve_x.size, 0))
    bands = None
    if is_aliased.any():
        # Each sample stands for its pixel column, [x − step/2, x + step/2].
        edges_low = np.maximum(curve_x - step / 2, 0.0)
        edges_high = np.minimum(curve_x + step / 2, params.seq_len - 1.0)
        bands = value_bands(params.scheme, params.d_model, dim_index, edges_low, np.maximum(edges_high, edges_low),
                            **kwargs)
        if bands is not None:
            band_low, band_high = bands
    return WaveformData(params, dims, curve_x, curve_y, dots, dot_y, wl, labels, is_aliased, band_low, band_high,
                        bands_known=bands is not None or not is_aliased.any())


# --------------------------------------------------------------------------- similarity


#: Work budgets of one update, in multiply-adds (rows × columns × d_model for
#: the matrix; offsets × d_model for the profile, whose cost is mostly sin/cos).
#: Past them fewer positions are sampled (said on the plot); zooming in brings
#: back every position.
MAX_MATRIX_WORK = 2**27
MAX_PROFILE_WORK = 2**20


def samples_within_budget(pixels: int, d_model: int, work: int = MAX_MATRIX_WORK, square: bool = True) -> int:
    """Samples per axis (16 … ``pixels``) so that n² · d_model (n · d_model if not ``square``) fits ``work``."""
    n = (work / d_model) ** 0.5 if square else work / d_model
    return max(16, min(pixels, int(n)))


@dataclass(frozen=True)
class MatrixData:
    """Similarity over sampled rows × columns."""

    params: EncodingParams
    metric: str
    rows: AxisSample
    cols: AxisSample
    matrix: np.ndarray
    #: For a table read from a file with outliers: ``(bound, beyond, largest)`` (:func:`.colour_bound.outlier_bound`
    #: of the matrix), the |value| its colours span; None otherwise.
    colour_bound: tuple[float, int, float] | None = None


@dataclass(frozen=True)
class ProfileData:
    """Similarity of PE(reference) with PE(reference + k) for the sampled offsets k."""

    params: EncodingParams
    metric: str
    reference: int
    offsets: np.ndarray
    profile: np.ndarray
    #: The step between the sampled target positions (1: every position).
    stride: int = 1


def compute_matrix(params: EncodingParams, metric: str, rows: AxisSample, cols: AxisSample) -> MatrixData:
    """The similarity ``metric`` of the sampled rows' and columns' encodings (and, for a table read from a file,
    its colours' :func:`~.colour_bound.file_colour_bound`)."""
    row_pe = encode_sampled(params, rows)
    col_pe = encode_sampled(params, cols)
    matrix = pairwise(row_pe, col_pe, metric)
    return MatrixData(params, metric, rows, cols, matrix, file_colour_bound(params, matrix))


def compute_profile(params: EncodingParams, metric: str, reference: int, targets: AxisSample) -> ProfileData:
    """The similarity of PE(reference) with the sampled target positions' encodings, and with itself.

    The targets' rows come from the shared cache: at the default size they
    are the rows the matrix and the heatmap already encoded.
    """
    positions = targets.indices()
    target_pe = encode_sampled(params, targets)
    at = int(np.searchsorted(positions, reference))
    if at < positions.size and positions[at] == reference:
        reference_pe = target_pe[at:at + 1]
    else:
        reference_pe = params.encode(np.array([reference], dtype=np.float64))
        positions = np.insert(positions, at, reference)
        target_pe = np.insert(target_pe, at, reference_pe[0], axis=0)
    profile = pairwise(reference_pe, target_pe, metric)[0]
    return ProfileData(params, metric, reference, positions - reference, profile, targets.stride)


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

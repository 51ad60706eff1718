"""What the default layout's panels show: the heatmap, the waveforms and the similarity, one call per update.

Like :mod:`.panel_data` (the analysis panels' functions), these run in a
worker thread or the worker process, NumPy only, and return frozen
dataclasses of arrays. They are apart because the window's first paint
needs them and none of the analyses :mod:`.panel_data` imports (about
30 ms of imports at every start).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..analyses.similarity import pairwise
from ..core.cache import encode_sampled
from ..core.colour_bound import file_colour_bound
from ..core.params import EncodingParams
from ..core.sampling import AxisSample, aliased, curve_positions, sample_axis, value_bands
from ..schemes import formula_terms, wavelengths

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

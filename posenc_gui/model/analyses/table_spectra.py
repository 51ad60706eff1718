"""What a table of positions × dimensions holds: each dimension's spectrum, and its principal components.

Two questions a learned table raises (does it learn sinusoid-like structure?
how do its positions lie?), answered for every scheme that gives a table.

Periodogram (:func:`periodogram_data`, :func:`dimension_periodogram`)
---------------------------------------------------------------------
Each dimension's column over the first ``n`` positions
(:func:`periodogram_positions`: every position up to 65,536 of them, fewer
at a large d_model), its mean removed, is Fourier transformed; frequency bin
``k = 1 … ⌊n/2⌋`` is ``k/n`` cycles per position, a wavelength of ``n/k``
positions. The first ``n`` rather than every s-th position: a sample of
every s-th would fold every frequency above ``1/(2s)`` onto a lower one.

- **share** of bin k: ``c_k·|X_k|² / Σ_j c_j·|X_j|²`` (``c_k = 2``, 1 at the
  Nyquist bin ``n/2``): the part of the column's variance at that frequency;
  the shares of a column sum to 1.
- **peak**: the bin of the largest share; that share is Fisher's g. For
  Gaussian white noise (the untrained ``learned`` table) each interior bin's
  share is Beta(1, (n − 3)/2), so P(g > x) ≤ ⌊n/2⌋·(1 − x)^((n−3)/2) and g is
  typically about ln(n/2)/(n/2); a sinusoid on a bin has g = 1, one halfway
  between two bins 4/π² ≈ 0.41 (it leaks into its neighbours).
- **lobe share**: the share within ±2 bins of the peak in the Hann-windowed
  spectrum, its main lobe: at least 99.9 % for a sinusoid at any frequency,
  so it answers "is this column one sinusoid?" where g depends on where
  between two bins the frequency falls. The periodic Hann window
  ``½ − ½·cos(2πt/n)`` has three Fourier coefficients, so its spectrum is
  ``X_k/2 − (X_{k−1} + X_{k+1})/4``, from the same transform. A dimension
  has its power **in one frequency** when its lobe share is at least 90 %
  and its peak is at bin 3 or above: below, the lobe reaches the mean (bin
  0), and a trend (a ramp, a fraction of a slow wave) has its power there
  too; such a peak is **too slow** to tell (under 3 cycles in ``n`` positions).
- **known frequency**, for a scheme with analytic columns: a ``sin``/``cos``
  column of divisor ``c`` has ``1/(2π·c)`` cycles per position (wavelength
  ``2π·c``), as seen at integer positions (folded into ``0 … ½``). It is
  *resolved* when at least one cycle fits in the ``n`` positions (``f ≥ 1/n``),
  and the peak *agrees* when it is within one bin of it.

The image (dimensions × frequencies) is for display: log₁₀ of the Hann
shares (a sinusoid stays one bright cell instead of a row of leakage) on a
logarithmic frequency axis of :data:`IMAGE_COLUMNS` columns, each the
largest share of the bins whose frequency falls in it (the bin at its centre
where none does), and at most :data:`MAX_IMAGE_ROWS` rows, each the largest
of a run of consecutive dimensions. The numbers per dimension are exact
for every dimension.

Principal components (:func:`pca_data`)
---------------------------------------
The positions' coordinates on the table's first principal components: the
eigenvectors of the covariance of the centred table at up to 4,096 evenly
spaced positions (1,024 above d_model 1,024, so the eigenproblem stays at
most 1,024 wide), with the share of the variance each explains. Sign
convention: each component's loading of largest magnitude (the first such
within 1e-9) is positive, so the result does not depend on the eigensolver's
choice. Components of (numerically) no variance have coordinates 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import limits
from ..core.params import EncodingParams, check_params
from ..core.sampling import AxisSample, sample_axis
from ..schemes import formula_term

#: Most positions a periodogram analyses: the first this many.
MAX_PERIODOGRAM_POSITIONS = 65_536
#: Most positions × dimensions it encodes: a large d_model analyses fewer positions (a power of two).
PERIODOGRAM_WORK = 2**24
#: Positions × dimensions transformed at a time (memory: a few arrays of this many float64 values).
BLOCK_ELEMENTS = 2**20
#: Columns of the image: a logarithmic frequency axis from the first bin to the Nyquist frequency.
IMAGE_COLUMNS = 1024
#: Most rows of the image (more dimensions: each row is the largest of a run of consecutive dimensions).
MAX_IMAGE_ROWS = 512
#: Bins on either side of the peak counted as its frequency (the Hann window's main lobe).
LOBE_BINS = 2
#: A dimension has its power "in one frequency" when at least this share is in its peak's main lobe …
ONE_FREQUENCY_SHARE = 0.9
#: … and its peak is at this bin or above (a lower one's lobe reaches the mean, bin 0).
SLOWEST_TOLD_BIN = LOBE_BINS + 1
#: Shares below this are drawn as this (log₁₀ −12) rather than as −∞ (an exact 0 of a square wave's spectrum).
SHARE_FLOOR = 1e-12

#: Most positions :func:`pca_data` samples, and the most when d_model exceeds :data:`PCA_WIDE_MODEL`.
MAX_PCA_POSITIONS = 4_096
MAX_PCA_POSITIONS_WIDE = 1_024
PCA_WIDE_MODEL = 1_024
#: Most components :func:`pca_data` computes.
MAX_COMPONENTS = 8
#: A component explaining at most this share of the variance has none (rounding of the eigensolver).
NEGLIGIBLE_SHARE = 1e-10
#: Loadings within this relative distance of the largest magnitude tie; the first of them fixes the sign.
SIGN_TIE = 1e-9


# --------------------------------------------------------------------------- periodogram

def periodogram_positions(seq_len: int, d_model: int) -> int:
    """How many positions, from position 0, :func:`periodogram_data` analyses.

    ``min(seq_len, 65,536)``, and at most ``2^24 / d_model`` rounded down to
    a power of two: 65,536 up to d_model 256, 16,384 at 768, 2,048 at 8,192.
    """
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    by_work = 1 << ((PERIODOGRAM_WORK // d_model).bit_length() - 1)
    return min(seq_len, MAX_PERIODOGRAM_POSITIONS, by_work)


def _checked_periodogram_params(params: object) -> EncodingParams:
    params = check_params(params)
    if "table" not in params.info.provides:
        raise ValueError(f"params: the periodogram needs a table; {params.info.lacks(frozenset({'table'}))}")
    if params.seq_len < 2:
        raise ValueError(f"seq_len must be at least 2 for a periodogram (one position has no frequency), "
                         f"got {params.seq_len}")
    return params


@dataclass(frozen=True)
class _Spectra:
    """The spectra of a block of columns (bins ``1 … ⌊n/2⌋`` along axis 0, one column per dimension)."""

    share: np.ndarray  # variance share per bin (unwindowed periodogram), NaN for a constant column
    hann_share: np.ndarray  # the same with a Hann window (of the windowed column's energy)
    peak: np.ndarray  # int: the bin index (0-based, bin k = peak + 1) of the largest share
    peak_share: np.ndarray  # Fisher's g
    lobe_share: np.ndarray  # Hann share within ±LOBE_BINS of the peak
    constant: np.ndarray  # bool: no variance over the analysed positions


def _bin_weights(n: int, bins: int) -> np.ndarray:
    """``c_k`` for ``k = 0 … bins − 1`` of an ``rfft`` of length ``n``: 1 at 0 and at Nyquist, else 2."""
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return weights


def _spectra(columns: np.ndarray) -> _Spectra:
    """Periodogram statistics of each column of ``columns`` (positions × dimensions, at least 2 positions)."""
    n = columns.shape[0]
    centred = columns - columns.mean(axis=0)
    transform = np.fft.rfft(centred, axis=0)  # bins 0 … ⌊n/2⌋
    weights = _bin_weights(n, transform.shape[0])[:, None]
    power = weights * (transform.real**2 + transform.imag**2)
    total = power[1:].sum(axis=0)
    constant = ~(total > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = power[1:] / total
    # X_{-1} = conj(X_1); past the last bin, X_{⌊n/2⌋+1} = conj(X_{n/2−1}) (n even) or conj(X_{(n−1)/2}) (odd).
    before = np.concatenate([np.conj(transform[1:2]), transform[:-1]])
    after_last = np.conj(transform[-2:-1] if n % 2 == 0 else transform[-1:])
    after = np.concatenate([transform[1:], after_last])
    windowed = 0.5 * transform - 0.25 * (before + after)
    hann_power = weights * (windowed.real**2 + windowed.imag**2)
    hann_total = hann_power.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        hann_share = hann_power[1:] / hann_total
    share[:, constant] = np.nan
    hann_share[:, constant] = np.nan
    filled = np.where(constant, 0.0, share)
    peak = np.argmax(filled, axis=0)
    columns_index = np.arange(share.shape[1])
    peak_share = np.where(constant, np.nan, filled[peak, columns_index])
    cumulative = np.concatenate([np.zeros((1, share.shape[1])), np.cumsum(np.where(constant, 0.0, hann_share), axis=0)])
    low = np.maximum(peak - LOBE_BINS, 0)
    high = np.minimum(peak + LOBE_BINS + 1, share.shape[0])
    lobe_share = np.where(constant, np.nan, cumulative[high, columns_index] - cumulative[low, columns_index])
    return _Spectra(share, hann_share, peak, peak_share, lobe_share, constant)


def _known_frequencies(params: EncodingParams, dims: np.ndarray) -> np.ndarray | None:
    """Cycles per position of each of ``dims`` as seen at integer positions (NaN: a linear column); None without columns."""
    if "columns" not in params.info.provides:
        return None
    cols = params.columns(dims)
    periodic = np.isin(cols.kind, ("sin", "cos"))
    with np.errstate(divide="ignore"):
        frequency = np.where(periodic, 1.0 / (2.0 * np.pi * cols.divisor), np.nan)
    return np.abs(frequency - np.round(frequency))  # integer positions cannot tell f from f ± 1


@dataclass(frozen=True)
class _ImageGrid:
    """Where each bin goes on the image's logarithmic frequency axis."""

    log_low: float
    log_high: float
    run_starts: np.ndarray  # first bin of each column that holds bins
    run_columns: np.ndarray  # those columns
    centre_bins: np.ndarray  # for every column, the bin whose cell holds the column's centre


def _image_grid(n: int, bins: int) -> _ImageGrid:
    """The grid of :data:`IMAGE_COLUMNS` columns from the first bin's lower edge to the last bin's upper edge."""
    log_low, log_high = math.log10(0.5 / n), math.log10((bins + 0.5) / n)
    step = (log_high - log_low) / IMAGE_COLUMNS
    log_frequency = np.log10(np.arange(1, bins + 1) / n)
    column = np.clip(np.floor((log_frequency - log_low) / step).astype(np.int64), 0, IMAGE_COLUMNS - 1)
    run_starts = np.flatnonzero(np.concatenate([[True], column[1:] != column[:-1]]))
    centres = log_low + (np.arange(IMAGE_COLUMNS) + 0.5) * step
    centre_bins = np.clip(np.floor(n * 10.0**centres + 0.5).astype(np.int64), 1, bins) - 1
    return _ImageGrid(log_low, log_high, run_starts, column[run_starts], centre_bins)


def _image_block(hann_share: np.ndarray, grid: _ImageGrid, group: int) -> np.ndarray:
    """Image rows of a block of dimensions (a multiple of ``group`` of them, but the last block): log₁₀ share.

    A cell is the largest share over its row's dimensions and its column's
    bins; the two maxima commute, so the dimensions are grouped first, on
    the bins × dimensions array, before the bins spread over the columns.
    Returns a C-contiguous ``(rows, IMAGE_COLUMNS)`` array.
    """
    floored = np.where(np.isnan(hann_share), -np.inf, np.log10(np.maximum(hann_share, SHARE_FLOOR)))
    bins, dims = floored.shape
    if group > 1:
        rows = -(-dims // group)
        by_dimension = np.full((rows * group, bins), -np.inf)
        by_dimension[:dims] = floored.T
        by_row = by_dimension.reshape(rows, group, bins).max(axis=1)
    else:
        by_row = floored.T
    image = np.take(by_row, grid.centre_bins, axis=1)
    image[:, grid.run_columns] = np.maximum.reduceat(by_row, grid.run_starts, axis=1)
    return image


@dataclass(frozen=True, eq=False)
class PeriodogramData:
    """Each dimension's spectrum over the first :attr:`positions` positions, and the image of all of them.

    Attributes
    ----------
    params : EncodingParams
    positions : int
        ``n``: positions ``0 … n − 1`` were analysed (:func:`periodogram_positions`).
    frequency : ndarray
        Bin frequencies ``k/n``, ``k = 1 … ⌊n/2⌋`` (cycles per position).
    image : ndarray
        ``(rows, IMAGE_COLUMNS)`` log₁₀ Hann share (see the module): row ``r``
        holds dimensions ``r·stride … r·stride + stride − 1`` (the largest
        share of them), ``−inf`` where they are all constant.
    image_rows : AxisSample
        The dimensions of the rows (``start`` 0, ``stride`` dimensions per row).
    log_frequency_range : tuple of float
        log₁₀ of the frequencies at the image's left and right edges.
    peak_bin : ndarray
        Per dimension, the bin ``k`` of its peak (frequency ``k/n``); 0 for a constant dimension.
    peak_share, lobe_share : ndarray
        Per dimension: the peak's share (Fisher's g) and the Hann share
        within ±2 bins of it; NaN for a constant dimension.
    variance : ndarray
        Per dimension, its variance over the analysed positions.
    known_frequency : ndarray or None
        Per dimension, its analytic frequency as seen at integer positions
        (NaN for a linear column); None for a scheme without columns.
    constant_rows : ndarray
        Per row of :attr:`image`, True where every dimension of the row is
        constant (its cells all ``−inf``).
    """

    params: EncodingParams
    positions: int
    frequency: np.ndarray
    image: np.ndarray
    image_rows: AxisSample
    log_frequency_range: tuple[float, float]
    peak_bin: np.ndarray
    peak_share: np.ndarray
    lobe_share: np.ndarray
    variance: np.ndarray
    known_frequency: np.ndarray | None
    constant_rows: np.ndarray

    @property
    def constant(self) -> np.ndarray:
        """Per dimension, True where it does not vary over the analysed positions."""
        return np.isnan(self.peak_share)

    @property
    def peak_frequency(self) -> np.ndarray:
        """Per dimension, its peak's frequency in cycles per position (NaN: constant)."""
        return np.where(self.constant, np.nan, self.peak_bin / self.positions)

    @property
    def too_slow(self) -> np.ndarray:
        """Per dimension, True where it varies and its peak is below bin :data:`SLOWEST_TOLD_BIN`."""
        return ~self.constant & (self.peak_bin < SLOWEST_TOLD_BIN)

    @property
    def one_frequency(self) -> np.ndarray:
        """Per dimension, True where its peak is not too slow and holds :data:`ONE_FREQUENCY_SHARE` in its main lobe."""
        return (self.peak_bin >= SLOWEST_TOLD_BIN) & (np.nan_to_num(self.lobe_share, nan=0.0) >= ONE_FREQUENCY_SHARE)

    @property
    def resolved(self) -> np.ndarray | None:
        """Per dimension, whether its known frequency completes a cycle in the analysed positions (None: no columns)."""
        if self.known_frequency is None:
            return None
        return np.nan_to_num(self.known_frequency, nan=0.0) * self.positions >= 1.0

    @property
    def agrees(self) -> np.ndarray | None:
        """Per dimension, whether its peak is within one bin of its resolved known frequency (None: no columns)."""
        if self.known_frequency is None:
            return None
        gap = np.abs(self.peak_frequency - self.known_frequency) * self.positions
        return self.resolved & (np.nan_to_num(gap, nan=np.inf) <= 1.0)

    def median_peak_share(self) -> float:
        """The median of the peak shares of the varying dimensions (NaN when none varies)."""
        varying = self.peak_share[~self.constant]
        return float(np.median(varying)) if varying.size else math.nan

    def summary(self) -> str:
        """The headline numbers in one paragraph (plain text)."""
        params, d = self.params, self.params.d_model
        analysed = (f"positions 0 … {self.positions - 1:,}" if self.positions == params.seq_len
                    else f"the first {self.positions:,} of {params.seq_len:,} positions")
        constant = int(self.constant.sum())
        if constant == d:
            return f"Every one of the {d:,} dimensions is constant over {analysed}: no frequency to show."
        one, slow = int(self.one_frequency.sum()), int(self.too_slow.sum())
        text = (f"{analysed[0].upper()}{analysed[1:]}: {one:,} of {d:,} dimensions ({one / d:.0%}) have "
                f"≥ {ONE_FREQUENCY_SHARE:.0%} of their power in one frequency; median peak share "
                f"{self.median_peak_share():.3g} (white noise ≈ {_noise_share(self.positions):.2g})")
        if slow:
            text += f"; {slow:,} too slow to tell (peak under {SLOWEST_TOLD_BIN} cycles)"
        if constant:
            text += f"; {constant:,} constant"
        text += "."
        if self.known_frequency is not None and not np.isnan(self.known_frequency).all():
            resolved, agrees = int(self.resolved.sum()), int(self.agrees.sum())
            unresolved = int((~self.resolved & ~np.isnan(self.known_frequency)).sum())
            text += (f" Peak within one bin of the formula's frequency in {agrees:,} of the {resolved:,} dimensions "
                     "that complete a cycle" + (f" ({unresolved:,} have longer wavelengths)." if unresolved else "."))
        return text


def _noise_share(positions: int) -> float:
    """The typical peak share of white noise over ``positions`` positions: (ln m + γ)/m, m = ⌊n/2⌋ bins."""
    bins = positions // 2
    return (math.log(bins) + 0.5772156649015329) / bins if bins > 1 else 1.0


def periodogram_data(params: EncodingParams) -> PeriodogramData:
    """Each dimension's periodogram, its peak and how much of its power the peak holds (see the module).

    Parameters
    ----------
    params : EncodingParams
        A scheme that gives a table, at least 2 positions.

    Returns
    -------
    PeriodogramData
        Computed over the first :func:`periodogram_positions` positions, in
        blocks of dimensions (memory bounded by :data:`BLOCK_ELEMENTS`).

    Raises
    ------
    ValueError
        For parameters that do not validate, a scheme without a table, or one position.
    """
    params = _checked_periodogram_params(params)
    d_model = params.d_model
    n = periodogram_positions(params.seq_len, d_model)
    positions = np.arange(n, dtype=np.float64)
    bins = n // 2
    grid = _image_grid(n, bins)
    group = -(-d_model // MAX_IMAGE_ROWS)
    block = max(group, (max(1, BLOCK_ELEMENTS // n) // group) * group)
    rows, peak_bin, peak_share, lobe_share, variance = [], [], [], [], []
    for first in range(0, d_model, block):
        dims = np.arange(first, min(first + block, d_model))
        columns = params.encode(positions, dims)
        spectra = _spectra(columns)
        rows.append(_image_block(spectra.hann_share, grid, group))
        peak_bin.append(np.where(spectra.constant, 0, spectra.peak + 1))
        peak_share.append(spectra.peak_share)
        lobe_share.append(spectra.lobe_share)
        variance.append(columns.var(axis=0))
    peak_share = np.concatenate(peak_share)
    image_rows = AxisSample(0, group, -(-d_model // group))
    constant = np.ones(image_rows.count * group, dtype=bool)  # the last row's missing dimensions count as constant
    constant[:d_model] = np.isnan(peak_share)
    return PeriodogramData(
        params=params, positions=n, frequency=np.arange(1, bins + 1) / n,
        image=rows[0] if len(rows) == 1 else np.concatenate(rows),  # one block (the default size): no copy
        image_rows=image_rows, log_frequency_range=(grid.log_low, grid.log_high),
        peak_bin=np.concatenate(peak_bin), peak_share=peak_share,
        lobe_share=np.concatenate(lobe_share), variance=np.concatenate(variance),
        known_frequency=_known_frequencies(params, np.arange(d_model)),
        constant_rows=constant.reshape(image_rows.count, group).all(axis=1),
    )


@dataclass(frozen=True, eq=False)
class DimensionPeriodogram:
    """One dimension's whole spectrum (the same numbers :func:`periodogram_data` sums up for it).

    Attributes
    ----------
    params : EncodingParams
    dim : int
    positions : int
        ``n``, as in :class:`PeriodogramData`.
    frequency : ndarray
        ``k/n``, ``k = 1 … ⌊n/2⌋``.
    share, hann_share : ndarray
        Share of the variance per bin, without and with the Hann window (NaN: constant).
    peak_bin : int
        The peak's bin ``k`` (0: constant).
    peak_share, lobe_share : float
        As in :class:`PeriodogramData` (NaN: constant).
    known_frequency : float or None
        The formula's frequency (NaN for a linear column; None: no columns).
    term : str
        The dimension's formula.
    """

    params: EncodingParams
    dim: int
    positions: int
    frequency: np.ndarray
    share: np.ndarray
    hann_share: np.ndarray
    peak_bin: int
    peak_share: float
    lobe_share: float
    known_frequency: float | None
    term: str

    @property
    def constant(self) -> bool:
        """Whether the dimension does not vary over the analysed positions."""
        return math.isnan(self.peak_share)

    @property
    def peak_frequency(self) -> float:
        """The peak's frequency in cycles per position (NaN: constant)."""
        return math.nan if self.constant else self.peak_bin / self.positions

    @property
    def too_slow(self) -> bool:
        """Whether it varies and its peak is below bin :data:`SLOWEST_TOLD_BIN`, where a wave and a trend look alike."""
        return not self.constant and self.peak_bin < SLOWEST_TOLD_BIN

    @property
    def one_frequency(self) -> bool:
        """Whether its power is in one frequency (as :attr:`PeriodogramData.one_frequency`)."""
        return self.peak_bin >= SLOWEST_TOLD_BIN and self.lobe_share >= ONE_FREQUENCY_SHARE

    @property
    def log_frequency(self) -> np.ndarray:
        """log₁₀ of :attr:`frequency` (the x of a plot on the image's axis)."""
        return np.log10(self.frequency)

    def log_shares(self) -> tuple[np.ndarray, np.ndarray]:
        """log₁₀ of :attr:`share` and :attr:`hann_share`, floored at :data:`SHARE_FLOOR` (NaN: constant)."""
        return tuple(np.log10(np.maximum(values, SHARE_FLOOR)) for values in (self.share, self.hann_share))


def dimension_periodogram(params: EncodingParams, dim: int) -> DimensionPeriodogram:
    """The periodogram of dimension ``dim`` over the first :func:`periodogram_positions` positions.

    Raises
    ------
    ValueError
        As :func:`periodogram_data`, or for ``dim`` outside ``0 … d_model − 1``.
    """
    params = _checked_periodogram_params(params)
    dim = limits.check_int("dim", dim, 0, params.d_model - 1)
    n = periodogram_positions(params.seq_len, params.d_model)
    spectra = _spectra(params.encode(np.arange(n, dtype=np.float64), np.array([dim])))
    known = _known_frequencies(params, np.array([dim]))
    constant = bool(spectra.constant[0])
    return DimensionPeriodogram(
        params=params, dim=dim, positions=n, frequency=np.arange(1, n // 2 + 1) / n, share=spectra.share[:, 0],
        hann_share=spectra.hann_share[:, 0],
        peak_bin=0 if constant else int(spectra.peak[0]) + 1,
        peak_share=float(spectra.peak_share[0]), lobe_share=float(spectra.lobe_share[0]),
        known_frequency=None if known is None else float(known[0]),
        term=formula_term(params.scheme, params.d_model, dim, **params.scheme_kwargs()),
    )


# --------------------------------------------------------------------------- principal components

def pca_positions(seq_len: int, d_model: int) -> AxisSample:
    """The positions :func:`pca_data` uses: every s-th from 0, at most 4,096 (1,024 above d_model 1,024)."""
    seq_len = limits.check_int("seq_len", seq_len, limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
    d_model = limits.check_int("d_model", d_model, limits.MIN_D_MODEL, limits.MAX_D_MODEL)
    most = MAX_PCA_POSITIONS if d_model <= PCA_WIDE_MODEL else MAX_PCA_POSITIONS_WIDE
    return sample_axis(-0.5, seq_len - 0.5, seq_len, most)


@dataclass(frozen=True, eq=False)
class PCAData:
    """The sampled positions' coordinates on the table's first principal components.

    Attributes
    ----------
    params : EncodingParams
    positions : AxisSample
        The positions used (:func:`pca_positions`).
    coordinates : ndarray
        ``(positions.count, components)``: position ``positions.indices()[i]``
        projected on component ``c`` (the centred table times its unit loading vector).
    explained : ndarray
        Per component, the share of the total variance it explains (0 for a component with none).
    loadings : ndarray
        ``(components, d_model)`` unit vectors (rows of zeros for a component with no variance),
        signed so that each one's entry of largest magnitude is positive.
    total_variance : float
        Mean squared distance of the sampled positions from their centroid.
    """

    params: EncodingParams
    positions: AxisSample
    coordinates: np.ndarray
    explained: np.ndarray
    loadings: np.ndarray
    total_variance: float

    @property
    def components(self) -> int:
        """Number of components computed."""
        return int(self.explained.size)

    @property
    def with_variance(self) -> int:
        """Number of computed components that explain any variance."""
        return int(np.count_nonzero(self.explained))

    def summary(self) -> str:
        """The explained variances and the sampling, in one sentence (plain text)."""
        params, sample = self.params, self.positions
        used = (f"all {params.seq_len:,} positions" if sample.stride == 1
                else f"{sample.count:,} positions ({sample.describe('position')} of {params.seq_len:,})")
        if self.with_variance == 0:
            return f"No variance over {used}: every position has the same vector."
        shares = ", ".join(f"PC{c + 1} {self.explained[c]:.1%}" for c in range(self.components))
        together = float(self.explained[:min(3, self.components)].sum())
        return (f"Explained variance over {used}: {shares}"
                + (f" ({together:.1%} together)" if self.components > 1 else "") + ".")


def _signed(loadings: np.ndarray) -> np.ndarray:
    """Per row of ``loadings`` +1 or −1 so that its first entry of largest magnitude (within :data:`SIGN_TIE`) is positive."""
    magnitude = np.abs(loadings)
    first = np.argmax(magnitude >= magnitude.max(axis=1, keepdims=True) * (1.0 - SIGN_TIE), axis=1)
    return np.where(loadings[np.arange(loadings.shape[0]), first] < 0, -1.0, 1.0)


def pca_data(params: EncodingParams, components: int = 3) -> PCAData:
    """The positions' coordinates on the first ``components`` principal components of the table.

    Parameters
    ----------
    params : EncodingParams
        A scheme that gives a table.
    components : int
        ``1 … MAX_COMPONENTS``; components beyond the table's rank explain 0
        and have coordinates 0.

    Returns
    -------
    PCAData
        From the positions of :func:`pca_positions` (every position up to
        4,096 of them): the eigenvectors of the centred table's d × d (or,
        when d_model exceeds the number of positions, positions × positions)
        Gram matrix, largest first.

    Raises
    ------
    ValueError
        For parameters that do not validate, a scheme without a table, or ``components`` out of range.
    """
    params = check_params(params)
    if "table" not in params.info.provides:
        raise ValueError(f"params: principal components need a table; {params.info.lacks(frozenset({'table'}))}")
    components = limits.check_int("components", components, 1, MAX_COMPONENTS)
    sample = pca_positions(params.seq_len, params.d_model)
    table = params.encode(sample.indices().astype(np.float64))
    centred = table - table.mean(axis=0)
    count, d_model = centred.shape
    wide = d_model > count
    gram = centred @ centred.T if wide else centred.T @ centred
    total = float(np.trace(gram))
    values, vectors = np.linalg.eigh(gram)
    order = np.argsort(-values, kind="stable")[:components]
    values, vectors = np.maximum(values[order], 0.0), vectors[:, order]
    kept = values > NEGLIGIBLE_SHARE * total if total > 0 else np.zeros(values.size, dtype=bool)
    if wide:  # vectors are the left singular vectors u; loadings v = Xᵀu / σ
        sigma = np.sqrt(np.where(kept, values, 1.0))
        loadings = (centred.T @ vectors / sigma).T
    else:
        loadings = vectors.T
    loadings = np.where(kept[:, None], loadings, 0.0)
    loadings *= _signed(loadings)[:, None]
    coordinates = centred @ loadings.T
    explained = np.where(kept, values / total if total > 0 else 0.0, 0.0)
    if explained.size < components:  # fewer eigenvalues than asked for (d_model or positions below it)
        missing = components - explained.size
        explained = np.concatenate([explained, np.zeros(missing)])
        loadings = np.vstack([loadings, np.zeros((missing, d_model))])
        coordinates = np.hstack([coordinates, np.zeros((count, missing))])
    return PCAData(params=params, positions=sample, coordinates=coordinates, explained=explained,
                   loadings=loadings, total_variance=total / count)

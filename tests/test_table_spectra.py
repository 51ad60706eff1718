"""The periodogram and the principal components of a table (model layer, no Qt), against hand-worked values.

Numbers pinned here come from the formulas (the sinusoidal and binary
schemes' columns, the periodogram of white noise), worked out in the
comments; tolerances come from the rounding of the FFT and the eigensolver
(about 1e-13 of the values), far below the effects that would change a
result (a frequency off by one bin changes a share by tens of percent).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from posenc_gui.model import EncodingParams
from posenc_gui.model.analyses.table_spectra import (
    IMAGE_COLUMNS, MAX_IMAGE_ROWS, SHARE_FLOOR, dimension_periodogram, pca_data, pca_positions, periodogram_data,
    periodogram_positions,
)

#: Rounding of an FFT of at most 65,536 exact-to-an-ULP values, relative to the column's variance: a few
#: hundred ULP (log₂ n stages of one rounding each, summed over the bins); shares are compared to 1e-9.
SHARE_ATOL = 1e-9


def params_of(scheme: str, seq_len: int, d_model: int, **options) -> EncodingParams:
    return EncodingParams.validated(scheme=scheme, seq_len=seq_len, d_model=d_model, **options)


# --------------------------------------------------------------------------- periodogram: sinusoidal


def test_sinusoidal_puts_each_pair_at_its_frequency():
    # d = 4, base 10000: pair 0 turns at ω₀ = 1 rad per position, f₀ = 1/(2π) = 0.159155 cycles per position;
    # pair 1 at ω₁ = 10000^(−2/4) = 1/100, f₁ = 1/(2π·100) = 0.00159155. Over n = 1024 positions bin k is
    # k/1024: f₀ is bin 1024/(2π) = 162.975, f₁ bin 1024/(200π) = 1.62975.
    data = periodogram_data(params_of("sinusoidal", 1024, 4))
    assert data.positions == 1024
    np.testing.assert_allclose(data.known_frequency, [1 / (2 * math.pi)] * 2 + [1 / (200 * math.pi)] * 2, rtol=1e-15)
    np.testing.assert_array_equal(data.peak_bin[:2], [163, 163])  # the nearest bin to 162.975
    assert np.all(np.abs(data.peak_bin[2:] - 1024 / (200 * math.pi)) <= 1)  # within one bin of 1.630
    assert np.all(np.abs(data.peak_frequency - data.known_frequency) <= 1 / 1024)
    assert data.agrees.tolist() == [True] * 4 and data.resolved.tolist() == [True] * 4
    # Pair 0 is δ = 163 − 162.975 = 0.0253 bins from bin 163, which holds sinc²(δ) = 1 − (πδ)²/3 = 0.99789
    # of its power (the rest leaks to the other bins; the image at −f₀ adds a relative 1e-4 at most).
    share = np.sinc(163 - 1024 / (2 * math.pi)) ** 2
    np.testing.assert_allclose(data.peak_share[:2], share, atol=1e-3)
    # The Hann window's main lobe (±2 bins) holds > 99.9 % of a sinusoid at any offset from a bin.
    assert np.all(data.lobe_share[:2] > 0.999)
    assert data.one_frequency.tolist() == [True, True, False, False]  # 1.6 cycles: too slow to tell from a trend
    assert data.too_slow.tolist() == [False, False, True, True]


def test_sinusoidal_peaks_lie_on_the_formula_wherever_a_cycle_fits():
    # d = 128 at N = 1024: pair i has f_i = 1/(2π·10000^(2i/128)); n·f_i ≥ 1 while 10000^(2i/128) ≤ 162.97,
    # i.e. 2i/128 ≤ log(162.97)/log(10000) = 0.5530, i ≤ 35.4: pairs 0 … 35, dimensions 0 … 71.
    data = periodogram_data(params_of("sinusoidal", 1024, 128))
    assert np.flatnonzero(data.resolved).tolist() == list(range(72))
    assert data.agrees[:72].all() and not data.agrees[72:].any()
    # halves layout: the same frequencies, sines first
    halves = periodogram_data(params_of("sinusoidal", 1024, 128, layout="halves"))
    np.testing.assert_array_equal(halves.peak_bin[:64], data.peak_bin[0::2])
    np.testing.assert_array_equal(halves.peak_bin[64:], data.peak_bin[1::2])
    assert data.image.shape == (128, IMAGE_COLUMNS) and data.image_rows.stride == 1


def test_a_dimension_spectrum_is_the_one_summed_up_for_the_table():
    params = params_of("sinusoidal", 1024, 4)
    data = periodogram_data(params)
    for dim in range(4):
        one = dimension_periodogram(params, dim)
        assert one.positions == 1024 and one.frequency.size == 512 and one.frequency[-1] == 0.5
        assert one.peak_bin == data.peak_bin[dim]
        assert one.peak_share == pytest.approx(data.peak_share[dim], abs=SHARE_ATOL)
        assert one.lobe_share == pytest.approx(data.lobe_share[dim], abs=SHARE_ATOL)
        assert one.share.sum() == pytest.approx(1.0, abs=SHARE_ATOL)  # the shares of a column sum to 1
        assert one.known_frequency == data.known_frequency[dim]
    assert dimension_periodogram(params, 2).term == "sin(pos / 10000^(2·1/4))"


# --------------------------------------------------------------------------- periodogram: binary


def test_binary_bits_are_square_waves_with_their_fundamental_share():
    # Bit k (as ±1) is a square wave of period P = 2^(k+1): frequency 1/P, bin n/P. Over whole periods its DFT
    # has only odd harmonics j with |X_j| ∝ 1/|sin(πj/P)|, and Σ_{j odd < P} csc²(πj/P) = P²/4, so the
    # fundamental (j = 1 and P − 1) holds 2·csc²(π/P)/(P²/4) = 8/(P²·sin²(π/P)) of the power: 1 at P = 4,
    # 1/(4 − 2√2) = 0.853553 at P = 8, → 8/π² for long periods. Bit 0 (P = 2) is the Nyquist bin alone: 1.
    data = periodogram_data(params_of("binary", 1024, 12))
    periods = 2.0 ** np.arange(1, 11)
    np.testing.assert_array_equal(data.peak_bin[:10], 1024 / periods)
    expected = np.concatenate([[1.0], 8 / (periods[1:] ** 2 * np.sin(np.pi / periods[1:]) ** 2)])
    assert expected[2] == pytest.approx(1 / (4 - 2 * math.sqrt(2)), rel=1e-15)
    np.testing.assert_allclose(data.peak_share[:10], expected, atol=SHARE_ATOL)
    # bits 10 and 11 never change below position 1024: constant, no peak
    assert data.constant.tolist() == [False] * 10 + [True] * 2
    assert np.isnan(data.peak_share[10:]).all() and data.peak_bin[10:].tolist() == [0, 0]
    assert data.constant_rows.tolist() == [False] * 10 + [True] * 2 and np.isneginf(data.image[10:]).all()
    assert data.known_frequency is None and data.agrees is None  # a table without analytic columns
    assert "; 2 constant." in data.summary()


# --------------------------------------------------------------------------- periodogram: white noise


def test_an_untrained_learned_table_has_no_dominant_frequency():
    # Each entry is an independent N(0, σ²) draw. For white noise the mean-removed periodogram's interior
    # bins are σ²·χ²₂ and the total σ²·χ²_{n−1}, so a bin's share is Beta(1, (n − 3)/2):
    # P(share > x) = (1 − x)^((n−3)/2) (the Nyquist bin, χ²₁, has a lighter tail). With n = 512 there are
    # 256 bins; over 768 dimensions P(any peak share > 0.1) ≤ 768 · 256 · 0.9^254.5 = 4.5e-7.
    data = periodogram_data(params_of("learned", 512, 768))
    assert data.peak_share.max() < 0.1
    # Fisher's g (the peak share) has the distribution function (1 − (1 − x)^a)^m, a = 254.5, m = 256; its
    # median solves (1 − x)^a = 1 − 2^(−1/m) = 0.0027039: x = 1 − 0.0027039^(1/254.5) = 0.022966. The median
    # of 768 draws has a standard deviation of 1/(2·f(median)·√768) = 2.0e-4 (density f = 90.4 there):
    # 1.5e-3 is over seven of them.
    assert data.median_peak_share() == pytest.approx(0.022966, abs=1.5e-3)
    assert not data.one_frequency.any()  # noise never holds 90 % in one lobe
    assert data.image_rows.stride == 2 and data.image.shape == (384, IMAGE_COLUMNS)  # 768 rows → 384 of 2


def test_an_image_cell_is_the_largest_share_of_its_dimensions_and_bins():
    # The module's definition, cell by cell: 768 dimensions → rows of 2 (768 > 512); n = 512 positions, bins
    # k = 1 … 256 at log₁₀(k/512) on 1024 columns from log₁₀(0.5/512) to log₁₀(256.5/512). A column holding
    # bins takes their largest Hann share; one holding none takes the bin whose cell [k − ½, k + ½] holds its
    # centre. The maxima are exact; the reference's shares come from one-column transforms, which differ
    # from the table's 768-column transform by rounding: |δX_k| ≲ log₂(n)·ε·‖x‖, so a share s moves by a
    # relative 2·9·2.2e-16/√s ≤ 4e-12 for s ≥ 1e-6 (white noise's shares are about 1/256), under 2e-12 in log₁₀.
    params = params_of("learned", 512, 768)
    data = periodogram_data(params)
    low, high = data.log_frequency_range
    assert (low, high) == (math.log10(0.5 / 512), math.log10(256.5 / 512))
    step = (high - low) / IMAGE_COLUMNS
    column_of_bin = np.minimum(((np.log10(np.arange(1, 257) / 512) - low) // step).astype(int), IMAGE_COLUMNS - 1)
    centre_bin = np.clip(np.floor(512 * 10.0 ** (low + (np.arange(IMAGE_COLUMNS) + 0.5) * step) + 0.5), 1, 256)
    assert np.bincount(column_of_bin).max() >= 2  # near Nyquist a column holds several bins
    logs = np.array([np.log10(np.maximum(dimension_periodogram(params, dim).hann_share, SHARE_FLOOR))
                     for dim in range(768)])  # (dimension, bin)
    expected = np.empty((384, IMAGE_COLUMNS))
    for column in range(IMAGE_COLUMNS):
        held = np.flatnonzero(column_of_bin == column)
        bins = held if held.size else [int(centre_bin[column]) - 1]
        expected[:, column] = logs[:, bins].reshape(384, -1).max(axis=1)  # rows: dimensions 2r and 2r + 1
    np.testing.assert_allclose(data.image, expected, rtol=0, atol=1e-11)


# --------------------------------------------------------------------------- periodogram: others, limits


def test_a_ramp_is_too_slow_to_be_one_frequency_and_has_no_formula_frequency():
    data = periodogram_data(params_of("naive", 100, 8))  # p_i = i: a linear column, no frequency
    assert data.too_slow.all() and not data.one_frequency.any()
    assert np.isnan(data.known_frequency).all() and not data.resolved.any() and not data.agrees.any()
    assert data.peak_bin.tolist() == [1] * 8  # a ramp's power falls as 1/k²
    assert "formula's frequency" not in data.summary()  # no periodic column to compare with


def test_nope_is_constant_in_every_dimension():
    data = periodogram_data(params_of("nope", 100, 8))
    assert data.constant.all() and data.constant_rows.all()
    assert "Every one of the 8 dimensions is constant" in data.summary()
    assert math.isnan(data.median_peak_share())


@pytest.mark.parametrize("seq_len, d_model, positions", [
    (1_048_576, 8192, 2048), (1_048_576, 768, 16_384), (1_048_576, 256, 65_536), (1_048_576, 2, 65_536),
    (1000, 8192, 1000), (2, 4, 2),
])
def test_at_most_the_first_65536_positions_fewer_at_a_large_d_model(seq_len, d_model, positions):
    # 2^24 / d_model rounded down to a power of two: 2^24 / 8192 = 2048, 2^24 / 768 = 21,845 → 16,384.
    assert periodogram_positions(seq_len, d_model) == positions


def test_a_million_positions_take_bounded_memory():
    params = params_of("sinusoidal", 1_048_576, 8192)
    tracemalloc.start()
    try:
        spectrum = periodogram_data(params)
        _, peak_spectrum = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        components = pca_data(params)
        _, peak_components = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the whole table would be 64 GiB, the analysed 2,048 positions 128 MiB; blocks stay well under
    assert peak_spectrum < 256 * 2**20, f"periodogram peak {peak_spectrum / 2**20:.0f} MiB"
    assert peak_components < 256 * 2**20, f"PCA peak {peak_components / 2**20:.0f} MiB"
    assert spectrum.positions == 2048 and spectrum.image.shape == (MAX_IMAGE_ROWS, IMAGE_COLUMNS)
    assert spectrum.image_rows.stride == 16 and spectrum.agrees[:2].all()
    assert components.positions.count == 1024 and components.positions.stride == 1024


def test_two_positions_are_the_fewest_and_the_image_is_floored():
    data = periodogram_data(params_of("binary", 2, 2))  # bit 0: −1, +1 (the Nyquist bin only); bit 1 constant
    assert data.frequency.tolist() == [0.5] and data.peak_share[0] == 1.0
    # The periodic Hann window of 2 points is (0, 1): the windowed column (0, 1) has half its energy at
    # frequency 0 and half at ½, so its image row is log₁₀ ½ everywhere (one bin spans the whole axis).
    np.testing.assert_allclose(data.image[0], math.log10(0.5), atol=1e-15)
    varying = periodogram_data(params_of("binary", 1024, 10)).image
    assert np.isfinite(varying).all() and varying.min() >= math.log10(SHARE_FLOOR)  # no −inf but constant rows


@pytest.mark.parametrize("call, message", [
    (lambda: periodogram_data(params_of("rope", 64, 8)), "needs a table"),
    (lambda: periodogram_data(params_of("sinusoidal", 1, 8)), "seq_len must be at least 2"),
    (lambda: dimension_periodogram(params_of("sinusoidal", 64, 8), 8), r"dim must be in 0…7"),
    (lambda: dimension_periodogram(params_of("sinusoidal", 64, 8), -1), r"dim must be in 0…7"),
    (lambda: periodogram_data("sinusoidal"), "params must be an EncodingParams"),
    (lambda: pca_data(params_of("alibi", 64, 8)), "need a table"),
    (lambda: pca_data(params_of("sinusoidal", 64, 8), 0), r"components must be in 1…8"),
    (lambda: pca_data(params_of("sinusoidal", 64, 8), 2.5), "components must be an integer"),
])
def test_bad_input_is_refused_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------- principal components


def pairwise_distances(points: np.ndarray) -> np.ndarray:
    return np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1))


@pytest.mark.parametrize("d_model, radius", [(2, 1.0), (8, 2.0)])
def test_a_sin_cos_pair_is_a_circle_in_two_components(d_model, radius):
    # sincos_pair: PE(p) = [sin p, cos p] tiled d/2 times, rank 2. Two components span it, so they are a
    # rotation (or reflection) of the centred rows: ‖c_p − c_q‖ = ‖PE(p) − PE(q)‖ = √(d/2)·2|sin((p − q)/2)|
    # and every point is √(d/2) from the image of the origin: the unit circle at d = 2.
    params = params_of("sincos_pair", 64, d_model)
    data = pca_data(params)
    p = np.arange(64.0)
    expected = radius * 2 * np.abs(np.sin((p[:, None] - p[None, :]) / 2))
    np.testing.assert_allclose(pairwise_distances(data.coordinates[:, :2]), expected, atol=1e-12)
    table = params.encode()
    centre = -table.mean(axis=0) @ data.loadings[:2].T
    np.testing.assert_allclose(np.hypot(*(data.coordinates[:, :2] - centre).T), radius, atol=1e-12)
    assert data.explained[:2].sum() == pytest.approx(1.0, abs=1e-12)
    assert data.explained[2] == 0.0 and not data.coordinates[:, 2].any() and data.with_variance == 2


def test_naive_has_one_component_with_hand_worked_coordinates():
    # rows i·(1, 1, 1, 1), i = 0 … 4: centred (i − 2)·(1, 1, 1, 1); the one component is (1, 1, 1, 1)/2
    # (positive by the sign rule), the coordinate (i − 2)·‖(1, 1, 1, 1)‖ = 2(i − 2).
    data = pca_data(params_of("naive", 5, 4))
    np.testing.assert_allclose(data.coordinates[:, 0], [-4, -2, 0, 2, 4], atol=1e-13)
    np.testing.assert_allclose(data.loadings[0], [0.5] * 4, atol=1e-15)
    assert data.explained.tolist() == [pytest.approx(1.0, abs=1e-15), 0.0, 0.0]
    assert data.total_variance == pytest.approx(8.0)  # mean of 4·(i − 2)²: 4·(4 + 1 + 0 + 1 + 4)/5
    assert "PC1 100.0%, PC2 0.0%, PC3 0.0%" in data.summary()


def test_components_are_signed_by_their_largest_loading_and_repeat():
    params = params_of("learned", 300, 48)
    first, again = pca_data(params), pca_data(params)
    np.testing.assert_array_equal(first.coordinates, again.coordinates)
    for loading in first.loadings:
        assert loading[np.argmax(np.abs(loading))] > 0
    np.testing.assert_allclose(first.loadings @ first.loadings.T, np.eye(3), atol=1e-12)
    # the coordinates are the centred table on the loadings, and their variance the explained share
    table = params.encode()
    centred = table - table.mean(axis=0)
    np.testing.assert_allclose(first.coordinates, centred @ first.loadings.T, atol=1e-15)
    variance = (centred**2).sum(axis=1).mean()
    np.testing.assert_allclose((first.coordinates**2).mean(axis=0) / variance, first.explained, rtol=1e-10)
    # wider than the positions: the positions × positions route gives the same components
    wide = pca_data(params_of("learned", 40, 48))
    direct = np.linalg.svd(params_of("learned", 40, 48).encode() - params_of("learned", 40, 48).encode().mean(0))
    np.testing.assert_allclose(wide.explained, direct.S[:3] ** 2 / (direct.S**2).sum(), rtol=1e-10)


@pytest.mark.parametrize("seq_len, d_model, stride, count", [
    (100, 8192, 1, 100), (4096, 16, 1, 4096), (1_048_576, 768, 256, 4096), (1_048_576, 8192, 1024, 1024),
])
def test_pca_samples_at_most_4096_positions_evenly(seq_len, d_model, stride, count):
    sample = pca_positions(seq_len, d_model)
    assert (sample.start, sample.stride, sample.count) == (0, stride, count)


def test_a_single_position_has_no_variance():
    data = pca_data(params_of("sinusoidal", 1, 8))
    assert data.with_variance == 0 and not data.coordinates.any()
    assert data.summary() == "No variance over all 1 positions: every position has the same vector."

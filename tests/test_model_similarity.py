"""Similarity and level-of-detail sampling in the model layer."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_gui.model import (
    curve_positions, encode, offset_profile, pairwise, sample_axis, similarity_matrix,
)
from tolerances import assert_close, cosine_atol


def test_dot_similarity_is_toeplitz_for_sinusoidal():
    sim = similarity_matrix("sinusoidal", np.arange(60.0), 32, "dot")
    for k in range(-5, 6):
        diagonal = np.diagonal(sim, offset=k)
        assert np.ptp(diagonal) < 1e-11


def test_dot_similarity_is_not_toeplitz_for_naive():
    sim = similarity_matrix("naive", np.arange(10.0), 4, "dot")
    assert np.ptp(np.diagonal(sim, offset=1)) > 1


def test_distance_is_exact_for_nearly_equal_rows():
    a = np.array([[1e8, 1.0, 2.0]])
    b = np.array([[1e8, 1.0, 2.0 + 3e-7]])
    assert pairwise(a, b, "distance")[0, 0] == pytest.approx(3e-7, rel=1e-6)


def test_cosine_and_distance_against_direct_formulas():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(4, 7))
    cos = pairwise(a, b, "cosine")
    dist = pairwise(a, b, "distance")
    for i in range(5):
        for j in range(4):
            assert cos[i, j] == pytest.approx(a[i] @ b[j] / np.linalg.norm(a[i]) / np.linalg.norm(b[j]))
            assert dist[i, j] == pytest.approx(np.linalg.norm(a[i] - b[j]))


def test_cosine_with_a_zero_vector_is_undefined():
    sim = similarity_matrix("naive", [0.0, 1.0], 4, "cosine")
    assert math.isnan(sim[0, 1]) and sim[1, 1] == pytest.approx(1.0)


def test_offset_profile_equals_the_matrix_row():
    sim = similarity_matrix("sinusoidal", np.arange(50.0), 16, "cosine")
    profile = offset_profile("sinusoidal", 20, np.arange(-20, 30), 16, "cosine")
    assert_close(profile, sim[20], cosine_atol(16))  # the same rows; a matrix product sums in another order


def test_bad_metric_names_metric():
    with pytest.raises(ValueError, match="metric"):
        similarity_matrix("sinusoidal", [0, 1], 4, "manhattan")


def test_similarity_refuses_matrices_past_the_limit():
    with pytest.raises(ValueError, match="similarity"):
        pairwise(np.zeros((5000, 2)), np.zeros((5000, 2)), "dot")


@settings(max_examples=200, deadline=None)
@given(
    low=st.floats(-100, 2e6), span=st.floats(0, 2e6), size=st.integers(1, 2**20), pixels=st.integers(1, 4000)
)
def test_sample_axis_covers_the_visible_indices(low, span, size, pixels):
    sample = sample_axis(low, low + span, size, pixels)
    idx = sample.indices()
    assert idx.size == sample.count >= 1
    assert idx[0] >= 0 and idx[-1] <= size - 1
    assert sample.count <= pixels + 1
    first = min(max(0, math.ceil(low - 0.5)), size - 1)
    last = max(min(size - 1, math.floor(low + span + 0.5)), first)
    assert idx[0] <= first and idx[-1] + sample.stride > last  # nothing visible left uncovered
    assert np.all(idx % sample.stride == 0)  # aligned: panning keeps the same samples


def test_sample_axis_is_exact_when_there_is_room():
    sample = sample_axis(-0.5, 127.5, 128, 400)
    assert sample.stride == 1 and sample.indices().tolist() == list(range(128))


def test_curve_positions_stay_inside_the_sequence():
    xs = curve_positions(-10, 1e9, 100, 50)
    assert xs[0] == 0 and xs[-1] == 99 and xs.size == 51


def test_sampled_values_equal_the_full_computation():
    full = encode("sinusoidal", np.arange(4096.0), 64)
    sample = sample_axis(0, 4095, 4096, 300)
    sampled = encode("sinusoidal", sample.indices(), 64)
    np.testing.assert_array_equal(sampled, full[sample.indices()])


def test_value_range_hand_cases():
    from posenc_gui.model import columns, value_range

    cols = columns("harmonic", 2)  # sin(pos), cos(pos)
    low, high = value_range(cols, np.array([0.0, 0.1, 3.0]), np.array([np.pi, 0.2, 3.0 + 2 * np.pi]))
    # [0, π]: the sine peaks at π/2; the cosine falls from 1 to −1
    assert high[0, 0] == 1.0 and abs(low[0, 0]) < 1e-15
    assert high[0, 1] == 1.0 and low[0, 1] == -1.0
    # [0.1, 0.2]: both monotonic, the ends are the model's values (the same expressions, bit for bit)
    at_ends = encode("harmonic", [0.1, 0.2], 2)
    np.testing.assert_array_equal(low[1], [at_ends[0, 0], at_ends[1, 1]])
    np.testing.assert_array_equal(high[1], [at_ends[1, 0], at_ends[0, 1]])
    # a whole period: the full range
    assert (low[2] == -1.0).all() and (high[2] == 1.0).all()
    naive_low, naive_high = value_range(columns("naive", 3), np.array([2.0]), np.array([5.5]))
    assert (naive_low == 2.0).all() and (naive_high == 5.5).all()


@given(
    scheme=st.sampled_from(["sinusoidal", "harmonic", "all_sine", "four_vector", "normalized"]),
    start=st.floats(0, 1e6),
    width=st.floats(0, 50),
    dim=st.integers(0, 63),
)
@settings(max_examples=200, deadline=None)
def test_value_range_bounds_dense_samples_tightly(scheme, start, width, dim):
    from posenc_gui.model import columns, value_range

    cols = columns(scheme, 64, np.array([dim]))
    low, high = value_range(cols, np.array([start]), np.array([start + width]))
    dense = encode(scheme, np.linspace(start, start + width, 4001), 64, dims=np.array([dim]))[:, 0]
    tolerance = 1e-9 * max(1.0, abs(dense).max())
    assert low[0, 0] <= dense.min() + tolerance and dense.max() <= high[0, 0] + tolerance
    # Tight: next to an extremum a sinusoid departs from it quadratically, so
    # samples spaced Δθ apart in angle come within Δθ²/2 of it; linear
    # columns take their extremes at the ends, which are sampled.
    spacing = (width / 4000) / cols.divisor[0]
    allowance = 0.0 if cols.kind[0] == "linear" else spacing**2 / 2
    assert high[0, 0] - dense.max() <= allowance + tolerance
    assert dense.min() - low[0, 0] <= allowance + tolerance

"""Verdicts over the whole range 0 … N−1, checked against brute force (no Qt).

Tolerances. Every distance here is ‖PE(p) − PE(q)‖ from two rows of
``encode``. A row's value sin(p/c) carries the rounding of its angle
(half an ulp of p/c) and of the sine (an ulp): at most ε·(p/c + 1) with
ε = 2.2e-16. Two pairs at the same offset have the same distance
mathematically; computed, they differ by at most twice that per component,
so by at most TIE = 4·√d·ε·(N/c_min + 1) (a factor 2 to spare). Results
drawn from the closed form P(k) carry in addition the product form's error
bound (``offset_scan.product_error_bound``), ε_P in P = D², i.e. ε_P / 2D in D.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_gui.model import EncodingParams, SCHEMES, columns, encode
from posenc_gui.model.analyses.closest import continue_uniqueness, range_uniqueness
from posenc_gui.model.analyses.offset_scan import offset_form, product_error_bound
from posenc_gui.model.panels.panel_data import continue_uniqueness_data, uniqueness_data
from posenc_gui.model.analyses.scorecard import BOUNDED_WORDS, score_scheme, scorecard
from posenc_gui.model.analyses.spectrum import spectrum

EPS = float(np.finfo(np.float64).eps)


def tie(scheme: str, n: int, d: int, **params) -> float:
    """TIE of the module docstring for these parameters."""
    divisors = columns(scheme, d, **params).divisor
    return 4.0 * math.sqrt(d) * EPS * (n / float(divisors.min()) + 1.0)


def brute_distances(scheme: str, n: int, d: int, **params) -> np.ndarray:
    """‖PE(p) − PE(q)‖ for every pair p, q of 0 … n−1 (n × n; the diagonal is +inf), from differences."""
    pe = encode(scheme, np.arange(n, dtype=np.float64), d, **params)
    out = np.empty((n, n))
    for p in range(n):
        out[p] = np.linalg.norm(pe - pe[p], axis=1)
        out[p, p] = np.inf
    return out


def pair_distance(scheme: str, d: int, p: float, q: float, **params) -> float:
    a, b = encode(scheme, [p, q], d, **params)
    return float(np.linalg.norm(a - b))


# Every case is too long for the pair budget given (2¹²: about 16 … 45 leading positions), so
# the answer must come from the offsets (and the unpaired columns at odd d).
WHOLE_RANGE_CASES = [
    ("sinusoidal", 1200, 16, {}),
    ("sinusoidal", 1200, 7, {}),  # odd d: the last sine has no cosine
    ("sinusoidal", 1000, 9, {"layout": "halves"}),
    ("sincos_pair", 1200, 3, {}),
    ("four_vector", 1200, 7, {}),
    ("harmonic", 1000, 9, {}),
    ("naive", 800, 4, {}),
    ("normalized", 800, 5, {"length": 800}),
]


@pytest.mark.parametrize(("scheme", "n", "d", "params"), WHOLE_RANGE_CASES)
def test_closest_pair_over_the_whole_range_equals_brute_force(scheme, n, d, params):
    found = range_uniqueness(scheme, n, d, top=5, pair_work=2**12, **params)
    assert found.whole_range and found.method in ("offsets", "offsets and unpaired columns")
    brute = brute_distances(scheme, n, d, **params)
    tol = tie(scheme, n, d, **params)
    p, q, distance = found.closest_pair
    # from the difference, as reported (summing d squares rounds by at most d·ε relative)
    assert distance == pytest.approx(pair_distance(scheme, d, p, q, **params), rel=d * EPS)
    assert abs(distance - brute.min()) <= tol
    # the near-repeats are the five closest pairs, in order (ties within rounding)
    closest = np.sort(brute[np.triu_indices(n, 1)])[:5]
    listed = np.array([dist for _, _, dist in found.near_repeats])
    np.testing.assert_allclose(listed, closest, rtol=0, atol=tol)
    steps = np.diagonal(brute, offset=1)
    assert abs(found.neighbour_step - np.median(steps)) <= tol


@pytest.mark.parametrize(("scheme", "n", "d", "params"), [c for c in WHOLE_RANGE_CASES if c[0] in
                                                          ("sinusoidal", "four_vector", "naive") and c[2] % 2 == 0])
def test_offset_only_curve_is_each_positions_nearest_over_the_whole_range(scheme, n, d, params):
    found = range_uniqueness(scheme, n, d, top=1, pair_work=2**12, **params)
    assert found.curve_whole_range
    brute = brute_distances(scheme, n, d, **params)
    curve = found.curve
    p = curve.positions.astype(np.int64)
    nearest = brute[p].min(axis=1)
    form = offset_form(scheme, d, **params)
    tol = tie(scheme, n, d, **params) + product_error_bound(form, n) / (2 * nearest.min())
    np.testing.assert_allclose(curve.nearest_distance, nearest, rtol=0, atol=tol)
    np.testing.assert_allclose(brute[p, curve.nearest_position.astype(np.int64)], nearest, rtol=0, atol=tol)


def test_distinct_offsets_list_the_closest_offsets_of_the_whole_range():
    n, d = 1200, 6  # sin/cos pair's ±1 frequencies and four-vector's ½: offsets only
    found = range_uniqueness("four_vector", n, d, top=4, distinct_offsets=True, pair_work=2**12)
    brute = brute_distances("four_vector", n, d)
    by_offset = np.array([np.diagonal(brute, offset=k).min() for k in range(1, n)])
    tol = tie("four_vector", n, d)
    listed = [(abs(q - p), dist) for p, q, dist in found.near_repeats]
    np.testing.assert_allclose([dist for _, dist in listed], np.sort(by_offset)[:4], rtol=0, atol=tol)
    for offset, dist in listed:
        assert abs(by_offset[int(offset) - 1] - dist) <= tol


def test_a_million_positions_at_d16_closest_pair_is_offset_615746():
    # Brute force over every offset: for (sin, cos) pairs the distance depends on the offset only,
    # so ‖PE(0) − PE(k)‖ for k = 1 … N−1 covers every pair (checked at other p below).
    n, d = 1_048_576, 16
    origin = encode("sinusoidal", [0.0], d)[0]
    distance = np.empty(n - 1)
    for start in range(1, n, 2**16):
        k = np.arange(start, min(start + 2**16, n), dtype=np.float64)
        distance[start - 1:start - 1 + k.size] = np.linalg.norm(encode("sinusoidal", k, d) - origin, axis=1)
    best = int(np.argmin(distance)) + 1
    ratio = distance[best - 1] / distance[0]
    assert best == 615_746 and abs(ratio - 0.868419) < 1e-6
    assert np.sort(distance)[1] / distance[0] > 0.9  # the runner-up (735,139) is far behind: no rounding tie
    tol = tie("sinusoidal", n, d)
    for p in (1.0, 400_000.0, float(n - 1 - best)):  # the same distance at every p
        assert abs(pair_distance("sinusoidal", d, p, p + best) - distance[best - 1]) <= tol
    # the scorecard and the Uniqueness panel's data find it
    score = score_scheme(EncodingParams("sinusoidal", n, d))
    assert score.closest_pair == (0.0, float(best)) and score.unique_whole_range
    assert abs(score.unique_ratio - ratio) <= 2 * tol / distance[0]
    data = uniqueness_data(EncodingParams("sinusoidal", n, d), 10, True)
    while data.found.pending:
        data = continue_uniqueness_data(data)
    assert data.found.closest_pair[:2] == (0.0, float(best)) and not data.truncated


def test_a_million_positions_at_odd_d_matches_an_exhaustive_search():
    # D² = P(k) + U(p, k) with U ≥ 0: only offsets with P(k) below the best D² can hold a closer
    # pair. P is evaluated here directly (4 sin²(k/2c) per pair, every offset), and at each such
    # offset every pair (p, p + k) is measured from encode.
    n, d = 1_048_576, 3
    found = range_uniqueness("sinusoidal", n, d, top=1)
    assert found.whole_range and found.method == "offsets and unpaired columns"
    best = found.closest_pair[2]
    k = np.arange(1, n, dtype=np.float64)
    lower = 4.0 * np.sin(k / 2.0) ** 2  # the one pair: divisor 1
    tol = tie("sinusoidal", n, d)
    candidates = k[lower <= (best + tol) ** 2]
    assert 0 < candidates.size < 50
    pe = encode("sinusoidal", np.arange(n, dtype=np.float64), d)
    exhaustive = min(float(np.linalg.norm(pe[int(c):] - pe[:n - int(c)], axis=1).min()) for c in candidates)
    assert abs(best - exhaustive) <= tol
    p, q, _ = found.closest_pair
    assert abs(pair_distance("sinusoidal", d, p, q) - exhaustive) <= tol


def test_a_scan_in_steps_ends_where_the_scan_at_once_does():
    params = ("harmonic", 200_000, 64)
    at_once = range_uniqueness(*params, top=3, distinct_offsets=True, pair_work=2**16)
    stepped = range_uniqueness(*params, top=3, distinct_offsets=True, pair_work=2**16, scan_work=2**18)
    steps = 0
    assert stepped.pending and not stepped.whole_range  # meanwhile: the leading positions, and says so
    assert "only" in stepped.coverage()
    while stepped.pending:
        done = stepped.scan.offsets_done
        stepped = continue_uniqueness(stepped, "harmonic", 64, scan_work=2**18)
        assert stepped.pending is False or stepped.scan.offsets_done > done
        steps += 1
    assert steps > 3 and stepped.whole_range
    assert stepped.near_repeats == at_once.near_repeats


def test_schemes_whose_distances_depend_on_the_position_say_what_they_cover():
    found = range_uniqueness("all_sine", 5000, 64, top=1, pair_work=2**20, sweep_work=1)  # no search fits
    assert found.method == "leading positions" and not found.whole_range and not found.pending
    assert found.pairs_range == 128
    assert found.coverage() == "proved over pairs of positions 0…127 only, of 0…4,999"
    score = score_scheme(EncodingParams("all_sine", 1_048_576, 64))
    assert not score.unique_whole_range and score.unique_positions < 1_048_576


@pytest.mark.parametrize(("call", "name"), [
    (lambda: range_uniqueness("sinusoidal", 1, 16), "n_positions"),
    (lambda: range_uniqueness("sinusoidal", 100, 16, top=0), "top"),
    (lambda: range_uniqueness("sinusoidal", 100, 16, scan_work=0), "scan_work"),
    (lambda: range_uniqueness("sinusoidal", 100, 1), "d_model"),
    (lambda: range_uniqueness("sinusoidal", 100, 16, base=1.0), "base"),
    (lambda: score_scheme(EncodingParams(seq_len=4), scan_work=0), "scan_work"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- T_k


# (128, 255) and (4096, 65): a fit on a few positions called the last sine exact; (128, 2049): the
# check ran at an even, halved d_model.
@pytest.mark.parametrize(("n", "d"), [(128, 255), (4096, 65), (128, 2049), (1_048_576, 129), (128, 7)])
def test_tk_is_not_exact_at_odd_d(n, d):
    s = score_scheme(EncodingParams("sinusoidal", n, d))
    assert not s.tk_exact and s.tk_unpaired == 1
    if s.tk_method == "least-squares":  # fitted between the integers, measured on the integers
        assert s.tk_fit_positions >= 2 * d and s.tk_positions == min(n, max(2, 2**20 // d))


def test_an_unpaired_sine_fitted_over_the_whole_range_leaves_a_large_residual():
    # The last sine of d = 129 has wavelength ≈ 2π·10⁴: over 1,048,576 positions it turns ~16 times,
    # and no combination of the other columns follows it (a fit on 169 evenly spaced ones did).
    s = score_scheme(EncodingParams("sinusoidal", 1_048_576, 129))
    assert s.tk_method == "least-squares" and s.tk_residual > 0.01


# --------------------------------------------------------------------------- bounded


def test_one_meaning_of_bounded_in_summaries_and_the_scorecard():
    card = scorecard(EncodingParams(seq_len=128, d_model=64))
    for s in card.scores:
        summary = SCHEMES[s.scheme].summary
        if "bounded" in summary:
            assert s.bounded_words in summary, (s.scheme, summary, s.bounded_words)
    normalized = card.score("normalized")
    assert normalized.bounded_within and not normalized.bounded_past
    assert normalized.bounded_words == BOUNDED_WORDS[(True, False)] == "bounded in 0…N−1, unbounded past N"


def test_normalized_is_bounded_within_the_trained_length_at_every_length():
    for n in (1, 128, 50_000, 1_048_576):
        s = score_scheme(EncodingParams("normalized", n, 16))
        assert s.bounded_within and not s.bounded_past, n
        assert s.trained_max_norm[2] == pytest.approx(4.0)  # ‖p_{L−1}‖ = √d at every length L


# --------------------------------------------------------------------------- spectrum


@pytest.mark.parametrize("scheme", ["naive", "normalized"])
def test_spectrum_of_a_scheme_without_periodic_columns_says_not_periodic(scheme):
    s = spectrum(EncodingParams(scheme))
    assert not s.periodic
    assert s.summary().startswith("not periodic: no wavelength")
    assert spectrum(EncodingParams("sinusoidal")).periodic

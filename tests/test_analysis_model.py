"""Known answers for the analysis model (uniqueness, norms, T_k, offset spread).

Expected values are derived independently here (math.sin/cos loops, the
2π-multiples, closed forms), never copied from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_gui.model import encode, limits, pairwise
from posenc_gui.model.analyses import analysis
from tolerances import angle_atol, assert_close


# ---------------------------------------------------------------------------
# uniqueness


def _brute_force_pairs(vectors):
    """All (distance, p, q) for p < q, with plain Python arithmetic."""
    out = []
    for p in range(len(vectors)):
        for q in range(p + 1, len(vectors)):
            out.append((math.sqrt(sum((a - b) ** 2 for a, b in zip(vectors[p], vectors[q]))), p, q))
    return out


def test_closest_pair_of_sincos_pair_within_0_to_100_is_the_best_2pi_multiple():
    # By hand: [sin p, cos p] and [sin q, cos q] are close when q − p is close
    # to a multiple of 2π. Best offset in 1…100:
    gaps = {delta: min(abs(delta - 2 * math.pi * m) for m in range(1, 17)) for delta in range(1, 101)}
    best_offset = min(gaps, key=gaps.get)
    assert best_offset == 44  # 44 ≈ 7·2π
    # Brute force with math.sin/cos: the smallest distance, earliest pair on ties (rounding).
    vectors = [(math.sin(p), math.cos(p)) for p in range(101)]
    pairs = _brute_force_pairs(vectors)
    smallest = min(d for d, _, _ in pairs)
    expected = min((p, q) for d, p, q in pairs if d - smallest <= 1e-12)
    assert expected[1] - expected[0] == best_offset

    result = analysis.uniqueness("sincos_pair", np.arange(101), 2)
    p, q, distance = result.closest_pair
    assert (p, q) == expected
    # |[sin p, cos p] − [sin q, cos q]| = 2·|sin((q − p)/2)|
    assert distance == pytest.approx(2 * abs(math.sin(best_offset / 2)), rel=1e-12)
    assert result.near_repeats[0] == result.closest_pair


def test_near_repeats_with_distinct_offsets_list_the_2pi_multiples():
    result = analysis.uniqueness("sincos_pair", np.arange(1000), 2, top=5, distinct_offsets=True)
    offsets = [q - p for p, q, _ in result.near_repeats]
    assert len(set(offsets)) == len(offsets) == 5
    # Independently: the 5 offsets in 1…999 closest (on the circle) to a multiple of 2π.
    def circle_gap(delta):
        return abs(math.remainder(delta, 2 * math.pi))
    expected = sorted(range(1, 1000), key=circle_gap)[:5]
    assert offsets == expected
    assert 710 in offsets  # 710 ≈ 113·2π (355 ≈ 113π)
    distances = [d for _, _, d in result.near_repeats]
    assert all(b >= a - 1e-12 for a, b in zip(distances, distances[1:]))


def test_near_repeats_are_the_top_closest_pairs_sorted():
    positions = np.arange(60)
    vectors = [
        (math.sin(p), math.cos(p), math.sin(p / 2), math.cos(p / 2)) for p in range(60)
    ]
    pairs = sorted(_brute_force_pairs(vectors))
    result = analysis.uniqueness("four_vector", positions, 4, top=7)
    got = [d for _, _, d in result.near_repeats]
    assert len(got) == 7
    assert all(b >= a - 1e-12 for a, b in zip(got, got[1:]))  # sorted; rounding ties by order
    np.testing.assert_allclose(got, [d for d, _, _ in pairs[:7]], rtol=1e-12)


def test_nearest_position_matches_brute_force():
    vectors = [(math.sin(p), math.cos(p), math.sin(p / 2), math.cos(p / 2)) for p in range(40)]
    result = analysis.uniqueness("four_vector", np.arange(40), 4)
    for p in range(40):
        dists = [
            math.dist(vectors[p], vectors[q]) if q != p else math.inf for q in range(40)
        ]
        best = min(dists)
        assert result.nearest_distance[p] == pytest.approx(best, rel=1e-12)
        assert math.isclose(dists[int(result.nearest_position[p])], best, rel_tol=1e-9)


def test_uniqueness_in_small_blocks_equals_the_full_matrix(monkeypatch):
    positions = np.arange(0, 150, 1.5)
    pe = encode("harmonic", positions, 6)
    full = pairwise(pe, pe, "distance")
    np.fill_diagonal(full, np.inf)
    monkeypatch.setattr(analysis, "BLOCK_ELEMENTS", 37)  # many blocks, uneven
    result = analysis.uniqueness("harmonic", positions, 6, top=12)
    np.testing.assert_allclose(result.nearest_distance, full.min(axis=1), rtol=1e-12)
    upper = full[np.triu_indices(positions.size, 1)]
    np.testing.assert_allclose([d for *_, d in result.near_repeats], np.sort(upper)[:12], rtol=1e-12)


@pytest.mark.parametrize("scheme, d_model", [("sinusoidal", 512), ("naive", 7), ("harmonic", 6)])
def test_uniqueness_gives_the_norms_pe_norms_gives(scheme, d_model):
    # The view takes the typical norm from here instead of encoding the positions again.
    positions = np.arange(0, 150, 1.5)
    result = analysis.uniqueness(scheme, positions, d_model)
    np.testing.assert_array_equal(result.norms, analysis.pe_norms(scheme, positions, d_model))


def test_pe_norms_of_given_encodings_equal_encoding_them_itself():
    positions = np.arange(0, 150, 1.5)
    for scheme, d_model in (("sinusoidal", 64), ("naive", 7), ("harmonic", 6)):
        rows = encode(scheme, positions, d_model)
        np.testing.assert_array_equal(analysis.pe_norms(scheme, positions, d_model, encoded=rows),
                                      analysis.pe_norms(scheme, positions, d_model))
    with pytest.raises(ValueError, match="encoded"):
        analysis.pe_norms("sinusoidal", positions, 64, encoded=np.zeros((positions.size, 63)))
    with pytest.raises(ValueError, match="base"):  # the parameters are checked all the same
        analysis.pe_norms("sinusoidal", positions, 64, base=1.0, encoded=np.zeros((positions.size, 64)))


def test_uniqueness_of_given_encodings_equals_encoding_them_itself():
    positions = np.arange(0, 150, 1.5)
    own = analysis.uniqueness("sinusoidal", positions, 64, top=5, base=500.0)
    given_rows = analysis.uniqueness("sinusoidal", positions, 64, top=5, base=500.0,
                                     encoded=encode("sinusoidal", positions, 64, base=500.0))
    for name in ("nearest_position", "nearest_distance", "norms"):
        np.testing.assert_array_equal(getattr(given_rows, name), getattr(own, name))
    assert given_rows.near_repeats == own.near_repeats
    with pytest.raises(ValueError, match="encoded"):
        analysis.uniqueness("sinusoidal", positions, 64, encoded=np.zeros((positions.size, 63)))
    with pytest.raises(ValueError, match="base"):  # the parameters are checked all the same
        analysis.uniqueness("sinusoidal", positions, 64, base=1.0, encoded=np.zeros((positions.size, 64)))


def test_uniqueness_recomputes_no_distance_of_a_position_to_itself(monkeypatch):
    # Each position's distance to itself cancels in the Gram formula, but it is 0 and left out:
    # only the reported distances (nearest neighbours, near-repeats) are recomputed from differences.
    rows = []
    real = analysis._pair_distances

    def counted(a, b, i, j):
        rows.append(i.size)
        return real(a, b, i, j)

    monkeypatch.setattr(analysis, "_pair_distances", counted)
    monkeypatch.setattr(analysis, "BLOCK_ELEMENTS", 64 * 40)  # several blocks of rows
    result = analysis.uniqueness("sinusoidal", np.arange(128), 64, top=5)
    assert len(rows) == 2 and rows[0] == 128  # nearest neighbours, then the near-repeats (and pairs tied)
    assert np.all(result.nearest_distance > 0.1)


@pytest.mark.parametrize("block_elements", [None, 64])  # the shared fast path, and the loop over offsets
def test_offset_spread_and_profiles_use_the_encoder_they_are_given(monkeypatch, block_elements):
    if block_elements is not None:
        monkeypatch.setattr(analysis, "BLOCK_ELEMENTS", block_elements)
    positions, offsets = np.arange(0, 60, 1.5), np.array([0.0, 1.0, 7.0, 30.0])
    asked = []

    def encoder(rows):
        asked.append(np.asarray(rows).size)
        return encode("harmonic", rows, 6)

    spread = analysis.offset_spread("harmonic", positions, 6, offsets, encoder=encoder)
    alone = analysis.offset_spread("harmonic", positions, 6, offsets)
    assert asked  # every row came from the encoder
    for name in ("minimum", "maximum", "mean", "spread", "count"):
        np.testing.assert_array_equal(getattr(spread, name), getattr(alone, name))
    asked.clear()
    profiles = analysis.offset_profiles("harmonic", [0.0, 12.0], offsets, 6, encoder=encoder)
    assert asked
    np.testing.assert_array_equal(profiles, analysis.offset_profiles("harmonic", [0.0, 12.0], offsets, 6))


def test_uniqueness_distance_is_exact_for_nearly_equal_large_encodings():
    # naive: PE(p) = p·(1, …, 1), so ‖PE(p) − PE(q)‖ = |p − q|·√d exactly.
    result = analysis.uniqueness("naive", [1e9, 1e9 + 1e-3, 3.0], 16)
    p, q, distance = result.closest_pair
    assert {p, q} == {1e9, 1e9 + 1e-3}
    assert distance == pytest.approx(abs((1e9 + 1e-3) - 1e9) * 4.0, rel=1e-12)


def test_more_frequencies_push_the_minimum_distance_up():
    positions = np.arange(128)
    minimum = {
        scheme: analysis.uniqueness(scheme, positions, 64).closest_pair[2]
        for scheme in ("sine", "sincos_pair", "four_vector", "sinusoidal")
    }
    assert minimum["sine"] < minimum["sincos_pair"] < minimum["four_vector"] < minimum["sinusoidal"]


def test_single_sine_collides():
    # sin(p) = sin(q) nearly when q ≈ π − p + 2πm: 11 and 344 (11 + 344 = 355 ≈ 113π).
    result = analysis.uniqueness("sine", np.arange(400), 2)
    p, q, distance = result.closest_pair
    assert distance == pytest.approx(abs(math.sin(p) - math.sin(q)) * math.sqrt(2), rel=1e-9, abs=1e-15)
    by_hand = min(
        (abs(math.sin(a) - math.sin(b)), a, b) for a in range(400) for b in range(a + 1, 400)
    )
    assert (p, q) == by_hand[1:]
    assert distance < 1e-5


@pytest.mark.parametrize("value", [0.0, 0.5])
@pytest.mark.parametrize("distinct_offsets", [False, True])
def test_uniqueness_of_equal_rows_stays_in_bounded_memory(value, distinct_offsets):
    # Every pair ties at distance 0 (a zero table is NoPE's): the worst case of a closest-pair search.
    # Before the fix every tied entry of a block was gathered at once (pairs × d values: 268 MB here,
    # 8.6 GB at 2048 × 2048) and every tied pair was kept.
    import tracemalloc

    n, d = 256, 512
    table = np.full((n, d), value)
    tracemalloc.start()
    try:
        result = analysis.uniqueness("nope", np.arange(n), d, top=5, distinct_offsets=distinct_offsets,
                                     encoded=table)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the table (1 MB), a block of n² distances (0.5 MB) and a bounded gather (8 MB) with its difference
    assert peak < 48 * 2**20, f"{peak / 2**20:.0f} MB"
    # equal distances: the earliest pairs, (0, 1) … (0, 5), whether or not one per offset is asked
    assert result.near_repeats == tuple((0.0, float(q), 0.0) for q in range(1, 6))
    assert np.all(result.nearest_distance == 0.0)
    assert np.array_equal(result.nearest_position, np.r_[1.0, np.zeros(n - 1)])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"positions": [3.0]}, "positions"),
        ({"top": 0}, "top"),
        ({"d_model": 1}, "d_model"),
        ({"positions": np.arange(5000)}, "positions"),
        ({"positions": [0, -1]}, "positions"),
        ({"base": 100.0}, "base"),
    ],
)
def test_uniqueness_bad_input_names_the_parameter(kwargs, name):
    args = {"scheme": "sine", "positions": np.arange(10), "d_model": 4} | kwargs
    with pytest.raises(ValueError, match=name):
        analysis.uniqueness(**args)


def test_uniqueness_refuses_a_million_positions_before_allocating():
    with pytest.raises(ValueError, match="positions"):
        analysis.uniqueness("sinusoidal", np.arange(limits.MAX_SEQ_LEN), 512)
    most = analysis.uniqueness_max_positions(512)
    assert most**2 <= limits.MAX_SIMILARITY_ELEMENTS
    assert most**2 * 512 <= analysis.MAX_UNIQUENESS_WORK


# ---------------------------------------------------------------------------
# magnitude


@pytest.mark.parametrize("d_model", [2, 64, 512])
def test_sinusoidal_norm_squared_is_half_d(d_model):
    norms = analysis.pe_norms("sinusoidal", [0, 1, 17.5, 1e5], d_model)
    np.testing.assert_allclose(norms**2, d_model / 2, rtol=1e-12)


def test_naive_norm_grows_like_position_times_sqrt_d(monkeypatch):
    monkeypatch.setattr(analysis, "BLOCK_ELEMENTS", 50)  # several blocks
    positions = np.arange(0, 40, 3.0)
    norms = analysis.pe_norms("naive", positions, 16)
    np.testing.assert_allclose(norms, positions * 4.0, rtol=1e-14)


def test_embedding_norm_is_rms_norm_of_gaussian_vectors():
    rng = np.random.default_rng(5)
    samples = rng.normal(0.0, 0.3, size=(4000, 256))
    rms = math.sqrt(np.mean(np.sum(samples**2, axis=1)))
    assert analysis.embedding_norm(256, 0.3) == pytest.approx(rms, rel=0.01)


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, "big", 1e9])
def test_embedding_norm_rejects_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        analysis.embedding_norm(64, scale)


# ---------------------------------------------------------------------------
# linear relation


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_sinusoidal_tk_is_exact_rotation(layout):
    relation = analysis.linear_relation("sinusoidal", np.arange(128), 64, 5, layout=layout)
    assert relation.exact
    assert relation.method == "rotation"
    assert relation.max_residual < 1e-9
    # Holds for positions it never saw, too.
    unseen = np.array([1000.25, 5000.0])
    np.testing.assert_allclose(
        encode("sinusoidal", unseen, 64, layout=layout) @ relation.matrix().T,
        encode("sinusoidal", unseen + 5, 64, layout=layout),
        atol=1e-9,
    )


def test_sinusoidal_tk_entries_by_hand():
    d, k, base = 6, 3.0, 10000.0
    expected, angles = np.zeros((d, d)), np.zeros((d, d))
    for i in range(d // 2):
        omega = 1.0 / base ** (2 * i / d)
        c, s = math.cos(k * omega), math.sin(k * omega)
        expected[2 * i, 2 * i], expected[2 * i, 2 * i + 1] = c, s
        expected[2 * i + 1, 2 * i], expected[2 * i + 1, 2 * i + 1] = -s, c
        angles[2 * i:2 * i + 2, 2 * i:2 * i + 2] = k * omega
    relation = analysis.linear_relation("sinusoidal", np.arange(10), d, k)
    assert_close(relation.matrix(), expected, angle_atol(angles))  # the zeros are exact: atol(0) = a few eps


def test_t1_at_d4_by_hand():
    # d = 4, base 10000: ω_0 = 1, ω_1 = 10000^(−2/4) = 0.01. T_1 holds the rotations by 1 and by 0.01 rad:
    # cos 1 = 0.5403023058681398, sin 1 = 0.8414709848078965,
    # cos 0.01 = 0.9999500004166653, sin 0.01 = 0.009999833334166664 (Taylor series, by hand).
    c1, s1, c2, s2 = 0.5403023058681398, 0.8414709848078965, 0.9999500004166653, 0.009999833334166664
    expected = np.array([
        [c1, s1, 0, 0],
        [-s1, c1, 0, 0],
        [0, 0, c2, s2],
        [0, 0, -s2, c2],
    ])
    angles = np.array([1.0, 1.0, 0.01, 0.01])
    tolerance = angle_atol(angles, evaluations=1)  # against the correctly rounded values
    relation = analysis.linear_relation("sinusoidal", np.arange(32), 4, 1)
    assert_close(relation.matrix(), expected, tolerance[:, None])
    # The residual compares T_1·PE(p) with PE(p + 1), two evaluations at angles up to 32 rad.
    assert relation.exact and relation.max_residual < angle_atol(32.0)
    # halves layout [sin ω0, sin ω1 | cos ω0, cos ω1]: the same rotations on channels (0, 2) and (1, 3)
    halves = analysis.linear_relation("sinusoidal", np.arange(32), 4, 1, layout="halves")
    order = [0, 2, 1, 3]
    assert_close(halves.matrix(order, order), expected, tolerance[:, None])
    # p = 0: PE(0) = [0, 1, 0, 1], so T_1·PE(0) is the second and fourth columns = PE(1) = [sin 1, cos 1, sin .01, cos .01]
    assert_close(relation.matrix() @ [0, 1, 0, 1], [s1, c1, s2, c2], tolerance)
    assert_close(relation.apply(np.array([[0.0, 1, 0, 1]]))[0], [s1, c1, s2, c2], tolerance)


def test_all_sine_has_no_exact_tk_at_d64():
    relation = analysis.linear_relation("all_sine", np.arange(256), 64, 1)
    assert not relation.exact
    assert relation.method == "least-squares"
    assert relation.max_residual > 0.1
    assert relation.fit.rank.max() < 64  # many exact solutions: the fit is not unique


def test_naive_least_squares_tk_has_a_residual():
    # naive: PE(p+k) = PE(p) + k·1 is affine, not linear; the best linear map
    # leaves a residual. rank is 1 (all columns equal).
    relation = analysis.linear_relation("naive", np.arange(50), 8, 2)
    assert relation.fit.rank.tolist() == [1] * 8
    assert relation.rms_residual > 0.1


def test_odd_d_sinusoidal_is_not_claimed_exact():
    relation = analysis.linear_relation("sinusoidal", np.arange(200), 7, 2)
    assert not relation.exact and relation.method == "rotation + least squares"
    assert relation.note.startswith("Exact on the 6 paired dimensions; the unpaired sine (dimension 6) has no exact T_k")
    assert relation.fit.dims.tolist() == [6] and relation.pairs == 3
    assert relation.max_residual < 1e-3  # the unpaired sine is slow; the fit is good, not exact


def test_least_squares_note_warns_when_fit_can_interpolate():
    relation = analysis.linear_relation("all_sine", np.arange(10), 64, 1, fit_positions=np.arange(10) + 0.5)
    assert "pass through every position it was fitted on" in relation.note
    # by default 2·64 + 8 positions between the integers, however few positions are checked
    relation = analysis.linear_relation("all_sine", np.arange(10), 64, 1)
    assert relation.note == "" and relation.fit.positions.size == 2 * 64 + 8


def test_negative_offset_leaves_out_positions_below_zero():
    relation = analysis.linear_relation("sinusoidal", np.arange(10), 8, -3)
    assert relation.n_positions == 7
    assert relation.max_residual < 1e-12


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"k": math.nan}, "k"),
        ({"k": "x"}, "k"),
        ({"d_model": 8193}, "d_model"),
        ({"positions": [0.0, 1.0], "k": -5}, "positions"),
        ({"scheme": "naive", "positions": np.arange(100_000), "d_model": 512}, "positions"),
        ({"layout": "diagonal"}, "layout"),
    ],
)
def test_linear_relation_bad_input_names_the_parameter(kwargs, name):
    args = {"scheme": "sinusoidal", "positions": np.arange(10), "d_model": 8, "k": 1} | kwargs
    with pytest.raises(ValueError, match=name):
        analysis.linear_relation(**args)


# ---------------------------------------------------------------------------
# relative vs absolute


def test_sinusoidal_offset_spread_is_zero_and_equals_sum_of_cosines():
    d = 64
    offsets = np.arange(0, 40)
    spread = analysis.offset_spread("sinusoidal", np.arange(128), d, offsets)
    assert np.all(spread.spread <= 1e-9)
    for k, value in zip(offsets, spread.mean):
        by_hand = sum(math.cos(k / 10000 ** (2 * i / d)) for i in range(d // 2))
        assert value == pytest.approx(by_hand, abs=1e-9)


@pytest.mark.parametrize("scheme", ["naive", "all_sine"])
def test_absolute_schemes_have_large_spread(scheme):
    spread = analysis.offset_spread(scheme, np.arange(128), 64, [1, 5, 10])
    assert np.all(spread.spread > 1.0)


def test_offset_spread_by_hand_for_naive():
    # naive: PE(p)·PE(p+k) = d·p·(p+k); over p in 0…9, k = 2: min 0, max d·9·11.
    spread = analysis.offset_spread("naive", np.arange(10), 4, [2, -3])
    assert spread.minimum[0] == 0 and spread.maximum[0] == 4 * 9 * 11
    assert spread.count[1] == 7  # p = 3 … 9
    assert spread.minimum[1] == 0 and spread.maximum[1] == 4 * 9 * 6


def test_offset_spread_blocks_agree(monkeypatch):
    direct = analysis.offset_spread("all_sine", np.arange(30), 16, np.arange(8))
    monkeypatch.setattr(analysis, "BLOCK_ELEMENTS", 40)
    blocked = analysis.offset_spread("all_sine", np.arange(30), 16, np.arange(8))
    np.testing.assert_allclose(blocked.spread, direct.spread, rtol=1e-12)


def test_offset_profiles_nan_below_zero_and_match_dot():
    profiles = analysis.offset_profiles("harmonic", [0, 10], [-2, 0, 3], 6)
    assert np.isnan(profiles[0, 0])
    a = [math.sin(10), math.cos(10), math.sin(5), math.cos(5), math.sin(10 / 3), math.cos(10 / 3)]
    b = [math.sin(13), math.cos(13), math.sin(6.5), math.cos(6.5), math.sin(13 / 3), math.cos(13 / 3)]
    assert profiles[1, 2] == pytest.approx(sum(x * y for x, y in zip(a, b)), rel=1e-12)
    assert profiles[1, 1] == pytest.approx(3.0, rel=1e-12)  # ‖PE(10)‖² = d/2


def test_offset_spread_and_profiles_encode_each_position_once(monkeypatch):
    # p and p + k overlap, and so do r + k for nearby references: the relative view's
    # update encoded 320 + 198 rows for 192 + 128 positions.
    params = {"base": 10000.0}
    positions, offsets, references = np.arange(128.0), np.arange(65.0), [0.0, 32.0, 63.0]
    base = encode("all_sine", positions, 64, **params)
    dots = [np.einsum("ij,ij->i", base, encode("all_sine", positions + k, 64, **params)) for k in offsets]
    # Each reference's row of dot products, as computed before (bit for bit).
    expected_profiles = [encode("all_sine", r + offsets, 64, **params) @ encode("all_sine", [r], 64, **params)[0]
                         for r in references]
    rows = []
    real = analysis.encode
    monkeypatch.setattr(analysis, "encode", lambda scheme, p, *a, **k: rows.append(len(p)) or real(scheme, p, *a, **k))
    spread = analysis.offset_spread("all_sine", positions, 64, offsets, **params)
    assert sum(rows) == 192  # positions 0 … 191
    rows.clear()
    profiles = analysis.offset_profiles("all_sine", references, offsets, 64, **params)
    assert sum(rows) == 128  # positions 0 … 127
    np.testing.assert_allclose(spread.spread, [v.max() - v.min() for v in dots], rtol=1e-12)
    assert spread.spread.min() > 1  # all-sine: PE(p)·PE(p+k) depends on p
    np.testing.assert_array_equal(profiles, np.array(expected_profiles))


@pytest.mark.parametrize(
    ("offsets", "name"),
    [([], "offsets"), ([math.inf], "offsets"), (np.zeros((2, 2)), "offsets"), (np.arange(70_000), "offsets")],
)
def test_offset_spread_bad_offsets(offsets, name):
    with pytest.raises(ValueError, match=name):
        analysis.offset_spread("sinusoidal", np.arange(4), 8, offsets)


def test_offset_spread_refuses_too_many_pairs():
    with pytest.raises(ValueError, match="positions"):
        analysis.offset_spread("sinusoidal", np.arange(limits.MAX_SEQ_LEN), 8, np.arange(100))


def _pairs_one_column_at_a_time(kind, divisor):
    """The pairing rule spelled out: each column takes the earliest waiting partner of its frequency."""
    sin_cols, cos_cols, waiting = [], [], {}
    for j in range(len(kind)):
        if kind[j] not in ("sin", "cos"):
            continue
        other = "cos" if kind[j] == "sin" else "sin"
        queue = waiting.get((other, float(divisor[j])))
        if queue:
            partner = queue.pop(0)
            sin_cols.append(j if kind[j] == "sin" else partner)
            cos_cols.append(partner if kind[j] == "sin" else j)
        else:
            waiting.setdefault((kind[j], float(divisor[j])), []).append(j)
    unpaired = [j for j in range(len(kind)) if j not in set(sin_cols) | set(cos_cols)]
    return sin_cols, cos_cols, unpaired


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["sin", "cos", "linear"]), st.sampled_from([1.0, 2.5, 1e4, 7.0])),
                max_size=40))
def test_rotation_pairs_follow_the_pairing_rule(columns_):
    kind = np.array([k for k, _ in columns_] or [], dtype="<U6")
    divisor = np.array([d for _, d in columns_], dtype=np.float64)
    got = analysis._rotation_pairs(kind, divisor)
    assert [a.tolist() for a in got] == [list(a) for a in _pairs_one_column_at_a_time(kind, divisor)]
    assert all(a.dtype == np.int64 for a in got)


@pytest.mark.parametrize("scheme, params", [
    ("sinusoidal", {"base": 10000.0, "layout": "interleaved"}), ("sinusoidal", {"base": 10000.0, "layout": "halves"}),
    ("sincos_pair", {}), ("four_vector", {}), ("harmonic", {}), ("all_sine", {"base": 10000.0}), ("naive", {}),
])
@pytest.mark.parametrize("d_model", [2, 3, 8, 9, 512, 513])
def test_rotation_pairs_of_every_scheme_follow_the_pairing_rule(scheme, params, d_model):
    from posenc_gui.model.schemes import columns

    cols = columns(scheme, d_model, **params)
    got = analysis._rotation_pairs(cols.kind, cols.divisor)
    assert [a.tolist() for a in got] == [list(a) for a in _pairs_one_column_at_a_time(cols.kind, cols.divisor)]



@pytest.mark.parametrize(("scheme", "k"), [("sinusoidal", 1.0), ("sinusoidal", -3.0), ("all_sine", 2.5),
                                           ("sincos_pair", 40.0), ("harmonic", 200.0)])
def test_linear_relation_encodes_each_position_once(monkeypatch, scheme, k):
    # p and p + k overlap: the T_k view's update encoded 2 × 128 rows for 129 positions.
    p = np.arange(128.0)
    p = p[p + k >= 0]
    rows = []
    from posenc_gui.model.analyses import linear_relation as module

    real = module.encode
    monkeypatch.setattr(module, "encode",
                        lambda scheme, pos, *a, **kw: rows.append(len(pos)) or real(scheme, pos, *a, **kw))
    x, y = module._encode_both(scheme, p, p + k, 16)
    assert rows == [np.union1d(p, p + k).size]
    np.testing.assert_array_equal(x, real(scheme, p, 16))  # the rows of separate calls, bit for bit
    np.testing.assert_array_equal(y, real(scheme, p + k, 16))
    rows.clear()
    analysis.linear_relation(scheme, np.arange(128.0), 16, k)
    assert rows[-1] == np.union1d(p, p + k).size  # the residual's (a fit, if any, encodes its own positions)

"""Known answers for the spectrum, addition-vs-concatenation and scorecard models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers_imports import assert_loads_none_of
from posenc_gui.model import SCHEMES, EncodingParams, encode
from posenc_gui.model.analyses.addition import (
    TERMS,
    orthogonality,
    projection_cost,
    sample_positions,
    scale_sweep,
    split_at_scale,
)
from posenc_gui.model.analyses.scorecard import GROWTH_TOL, TK_TOL, UNIQUE_TOL, sample_range, score_scheme, scorecard
from posenc_gui.model.analyses.spectrum import spectrum
from tolerances import assert_close, cosine_atol

# --------------------------------------------------------------------------- spectrum


@pytest.mark.parametrize("d_model, base", [(512, 10000.0), (64, 10000.0), (16, 500.0)])
@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_sinusoidal_wavelengths_at_the_ends(d_model, base, layout):
    s = spectrum(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=d_model, base=base, layout=layout))
    assert s.n_components == d_model // 2
    assert s.wavelength[0] == pytest.approx(2 * math.pi, rel=1e-12)
    assert s.wavelength[-1] == pytest.approx(2 * math.pi * base ** ((d_model - 2) / d_model), rel=1e-12)
    assert np.all(np.diff(s.wavelength) > 0)  # geometric, increasing
    assert set(s.kinds) == {"sin+cos"}


def test_sinusoidal_pairs_are_the_right_dimensions():
    inter = spectrum(EncodingParams("sinusoidal", 128, 8))
    halves = spectrum(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=8, layout="halves"))
    assert inter.component_dims == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert halves.component_dims == ((0, 4), (1, 5), (2, 6), (3, 7))


def test_phase_step_and_total_phase():
    n = 100
    s = spectrum(EncodingParams("sinusoidal", n, 512))
    omega = 10000.0 ** (-2 * np.arange(256) / 512)
    np.testing.assert_allclose(s.omega, omega, rtol=1e-12)
    np.testing.assert_allclose(s.total_phase, omega * (n - 1), rtol=1e-12)
    # The chord between PE(p) and PE(p+1) restricted to pair i, measured from encode.
    pe = encode("sinusoidal", [37.0, 38.0], 512)
    chord = np.hypot(pe[1, 0::2] - pe[0, 0::2], pe[1, 1::2] - pe[0, 1::2])
    np.testing.assert_allclose(s.step_chord, chord, atol=1e-12)


def test_categories_follow_the_criteria():
    s = spectrum(EncodingParams("sinusoidal", 128, 512), step_tol=0.1, static_tol=0.1)
    fine = s.step_chord >= 0.1
    static = ~fine & (s.total_phase < 0.1)
    assert np.array_equal(s.category == "fine", fine)
    assert np.array_equal(s.category == "static", static)
    assert s.count("fine") + s.count("coarse") + s.count("static") == 256
    # the first pair (λ = 2π) resolves neighbours and wraps; the last barely moves over 128 positions
    assert s.category[0] == "fine" and s.wraps[0]
    assert s.category[-1] == "static" and not s.wraps[-1]
    # a longer sequence: fewer static pairs
    longer = spectrum(EncodingParams("sinusoidal", 100_000, 512))
    assert longer.count("static") < s.count("static")


def test_seq_len_crossing_lies_between_the_wavelengths_around_it():
    s = spectrum(EncodingParams("sinusoidal", 128, 512))
    x = s.seq_len_crossing
    j = int(math.floor(x))
    assert s.wavelength[j] < 128 <= s.wavelength[j + 1]
    assert math.isnan(spectrum(EncodingParams("sincos_pair", 128, 512)).seq_len_crossing)


def test_other_schemes_components():
    assert spectrum(EncodingParams("sincos_pair", 128, 512)).n_components == 1
    four = spectrum(EncodingParams("four_vector", 128, 512))
    np.testing.assert_allclose(four.wavelength, [2 * math.pi, 4 * math.pi])
    naive = spectrum(EncodingParams("naive", 128, 16))
    assert naive.kinds == ("linear",) and np.isinf(naive.wavelength[0]) and naive.category[0] == "fine"
    normalized = spectrum(EncodingParams("normalized", 128, 16))
    assert normalized.step_chord[0] == pytest.approx(1 / 127) and normalized.category[0] == "coarse"
    all_sine = spectrum(EncodingParams("all_sine", 128, 32))
    assert all_sine.n_components == 32 and set(all_sine.kinds) == {"sin"}


def test_spectrum_rejects_bad_tolerance():
    with pytest.raises(ValueError, match="step_tol"):
        spectrum(EncodingParams(), step_tol=0)
    with pytest.raises(ValueError, match="static_tol"):
        spectrum(EncodingParams(), static_tol=float("nan"))


# --------------------------------------------------------------------------- addition


@pytest.mark.parametrize("d", [2, 64, 512, 8192])
def test_concatenation_doubles_the_projection(d):
    cost = projection_cost(d, 128)
    assert cost.params_add == d * d
    assert cost.params_concat == 2 * d * d
    assert cost.macs_add == 128 * d * d
    assert cost.macs_concat == 2 * 128 * d * d
    assert cost.params_ratio == 2.0 and cost.macs_ratio == 2.0


def test_projection_cost_validates():
    with pytest.raises(ValueError, match="d_model"):
        projection_cost(1, 128)
    with pytest.raises(ValueError, match="seq_len"):
        projection_cost(512, 0)


def test_four_terms_sum_to_the_logit():
    params = EncodingParams("sinusoidal", 20, 16)
    split = split_at_scale(params, 0.7, seed=3)
    total = split.ee + split.ep + split.pe + split.pp
    np.testing.assert_allclose(total, split.total, atol=1e-12)
    # and the logit is the formula applied to x = e + p, recomputed here independently
    from posenc_gui.model.attention import attention_weights

    w = attention_weights(16, 3)
    rng = np.random.default_rng([3, 0xADD, 16, 20])
    x = 0.7 * rng.standard_normal((20, 16)) + encode("sinusoidal", np.arange(20), 16)
    logits = (x @ w.w_q) @ (x @ w.w_k).T / math.sqrt(w.d_k)
    np.testing.assert_allclose(split.total, logits, atol=1e-12)


def test_scale_sweep_terms_scale_as_powers_of_sigma():
    params = EncodingParams("sinusoidal", 32, 64)
    sweep = scale_sweep(params, scales=[0.1, 1.0, 10.0], seed=0)
    ee, ep, pe, pp = sweep.term_rms.T
    np.testing.assert_allclose(ee[1:] / ee[:-1], 100.0, rtol=1e-9)  # e·e ∝ σ²
    np.testing.assert_allclose(ep[1:] / ep[:-1], 10.0, rtol=1e-9)  # e·p ∝ σ
    np.testing.assert_allclose(pe[1:] / pe[:-1], 10.0, rtol=1e-9)
    np.testing.assert_allclose(pp, pp[0], rtol=1e-12)  # p·p does not depend on σ
    np.testing.assert_allclose(sweep.term_share.sum(axis=1), 1.0)
    assert np.all(sweep.split_residual < 1e-9)
    assert len(TERMS) == 4


def test_the_split_residual_is_computed_when_read_not_on_every_update(monkeypatch):
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    calls = []
    real = addition._split_residual
    monkeypatch.setattr(addition, "_split_residual", lambda *args: calls.append(args) or real(*args))
    sweep = scale_sweep(EncodingParams.validated(scheme="sinusoidal", seq_len=32, d_model=64, base=777.0), scales=[0.1, 3.0])
    assert calls == []  # nothing on screen shows it
    residual = sweep.split_residual
    assert len(calls) == 1 and residual.shape == (2,) and np.all(residual < 1e-9)
    assert sweep.split_residual is residual and len(calls) == 1  # read again: kept


def test_cosine_of_e_and_e_plus_p():
    params = EncodingParams("sinusoidal", 128, 512)
    sweep = scale_sweep(params, scales=[0.01, 0.7071, 100.0])
    # tiny embeddings: e + p ≈ p, almost orthogonal to e; huge ones: e + p ≈ e
    assert sweep.cosine_mean[0] < 0.05
    assert sweep.cosine_mean[2] > 0.999
    # balanced (‖e‖ ≈ ‖p‖, e ⟂ p): cos ≈ 1/√2
    assert sweep.cosine_mean[1] == pytest.approx(1 / math.sqrt(2), abs=0.03)
    assert sweep.balance_scale == pytest.approx(math.sqrt(0.5))
    assert sweep.split_d_model == 64 and sweep.split_tokens == 64


def test_naive_positions_swamp_the_embedding():
    sweep = scale_sweep(EncodingParams("naive", 128, 512), scales=[1.0])
    assert sweep.cosine_mean[0] < 0.1
    assert sweep.term_share[0, 3] > 0.9  # p·p dominates the logits


def test_near_orthogonality_grows_with_d():
    o = orthogonality(EncodingParams("sinusoidal", 128, 512), dims=[4, 64, 1024], n_samples=2000, seed=1)
    assert np.all(np.diff(o.pe_mean) < 0)
    # the mean |cos| follows √(2/(π d)) within sampling error in high d
    np.testing.assert_allclose(o.pe_mean[1:], o.reference[1:], rtol=0.1)
    np.testing.assert_allclose(o.random_mean[1:], o.reference[1:], rtol=0.1)
    assert o.pe_q95[-1] < 0.1
    assert o.current_values.size == 0  # 512 was not among the requested dims
    with_current = orthogonality(EncodingParams("sinusoidal", 128, 512), n_samples=64)
    assert 512 in with_current.dims.tolist() and with_current.current_values.size == 64


def test_orthogonality_after_a_d_model_step_computes_only_the_new_dimension():
    from posenc_gui.model.analyses import addition

    addition._cosines_at.cache_clear()
    orthogonality(EncodingParams("sinusoidal", 128, 512), n_samples=64)
    computed = addition._cosines_at.cache_info().misses
    stepped = orthogonality(EncodingParams("sinusoidal", 128, 510), n_samples=64)
    assert addition._cosines_at.cache_info().misses == computed + 1  # d = 510; the powers of two are kept
    addition._cosines_at.cache_clear()
    fresh = orthogonality(EncodingParams("sinusoidal", 128, 510), n_samples=64)
    for name in ("pe_mean", "pe_q95", "pe_max", "random_mean", "random_q95", "current_values"):
        np.testing.assert_array_equal(getattr(stepped, name), getattr(fresh, name))
    # Another base changes every positional entry.
    orthogonality(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=510, base=500.0), n_samples=64)
    assert addition._cosines_at.cache_info().misses == 2 * fresh.dims.size


def test_orthogonality_after_a_base_step_draws_its_sample_positions_again_for_no_dimension(monkeypatch):
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    draws = []
    real = addition.orthogonality_positions
    monkeypatch.setattr(addition, "orthogonality_positions", lambda *args: draws.append(args) or real(*args))
    first = orthogonality(EncodingParams("sinusoidal", 128, 512), n_samples=64)
    assert len(draws) == len(set(draws)) >= 1  # each (N, count, seed) drawn once, not once per dimension
    drawn = len(draws)
    stepped = orthogonality(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=512, base=500.0), n_samples=64)
    assert len(draws) == drawn  # a base step measures every dimension again with the same draws
    addition.clear_caches()
    fresh = orthogonality(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=512, base=500.0), n_samples=64)
    for name in ("pe_mean", "pe_q95", "pe_max", "current_values"):
        np.testing.assert_array_equal(getattr(stepped, name), getattr(fresh, name))
    assert not np.array_equal(first.pe_mean, stepped.pe_mean)


def test_scale_sweep_after_a_d_model_step_reuses_the_toy_heads_split():
    from posenc_gui.model.analyses import addition

    addition._split_sweep.cache_clear()
    scale_sweep(EncodingParams("sinusoidal", 128, 512))
    computed = addition._split_sweep.cache_info().misses
    stepped = scale_sweep(EncodingParams("sinusoidal", 128, 510))  # the toy head stays at 64 dimensions
    assert addition._split_sweep.cache_info().misses == computed
    addition._split_sweep.cache_clear()
    fresh = scale_sweep(EncodingParams("sinusoidal", 128, 510))
    for name in ("term_rms", "term_share", "split_residual", "cosine_mean", "cosine_min"):
        np.testing.assert_array_equal(getattr(stepped, name), getattr(fresh, name))
    scale_sweep(EncodingParams("sinusoidal", 128, 32))  # below 64 dimensions the head shrinks: a new split
    assert addition._split_sweep.cache_info().misses == 2


def test_orthogonality_embeddings_of_a_dimension_are_the_first_columns_of_a_larger_one():
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    small = addition.orthogonality_embeddings(3, 40, 300)  # drawn first: its blocks are drawn for 300 columns
    addition.clear_caches()
    large = addition.orthogonality_embeddings(3, 40, 1100)
    assert small.shape == (40, 300) and large.shape == (40, 1100)
    np.testing.assert_array_equal(small, large[:, :300])
    np.testing.assert_array_equal(addition.orthogonality_embeddings(3, 40, 2), large[:, :2])
    assert not np.array_equal(addition.orthogonality_embeddings(3, 40, 300, draw=1), small)  # e' is another draw
    assert not np.array_equal(addition.orthogonality_embeddings(4, 40, 300), small)  # and so is another seed
    # Each column block is drawn on its own: no block repeats another.
    blocks = large[:, :1024].reshape(40, 4, addition.EMBEDDING_BLOCK)
    assert len({blocks[:, k].tobytes() for k in range(4)}) == 4
    # Standard normal entries: 44,000 of them have mean 0 ± 0.02 and variance 1 ± 0.03.
    assert abs(large.mean()) < 0.02 and abs(large.var() - 1) < 0.03


def test_orthogonality_after_a_base_step_draws_no_embedding(monkeypatch):
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    orthogonality(EncodingParams("sinusoidal", 128, 512))
    seeds = []
    real_rng = np.random.default_rng

    def counted_rng(seed=None):
        seeds.append(seed)
        return real_rng(seed)

    monkeypatch.setattr(np.random, "default_rng", counted_rng)
    rebased = orthogonality(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=512, base=500.0))
    assert not seeds  # nothing drawn: the embedding blocks and the sample positions are kept
    orthogonality(EncodingParams.validated(scheme="sinusoidal", seq_len=128, d_model=2000, base=500.0))  # columns 1025…2000: four new blocks
    assert sum(seed[1] == 0x0A7 for seed in seeds) == 2 * 4  # of e and of e'
    assert np.isfinite(rebased.pe_mean).all()


def test_orthogonality_embedding_blocks_stay_within_their_memory_bound(monkeypatch):
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    block_bytes = 50 * addition.EMBEDDING_BLOCK * 8
    monkeypatch.setattr(addition, "MAX_EMBEDDING_BYTES", 3 * block_bytes)
    wide = addition.orthogonality_embeddings(1, 50, 5 * addition.EMBEDDING_BLOCK)
    assert sum(block.nbytes for block in addition._EMBEDDING_BLOCKS.values()) == 3 * block_bytes
    addition.clear_caches()  # drawn again after eviction: the same values
    np.testing.assert_array_equal(addition.orthogonality_embeddings(1, 50, 5 * addition.EMBEDDING_BLOCK), wide)


def test_orthogonality_leaves_out_zero_vectors():
    # sine at position 0 is the zero vector: its cosine is undefined and left out
    o = orthogonality(EncodingParams("sine", 1, 16), dims=[16], n_samples=32)
    assert np.isnan(o.pe_mean[0]) and o.current_values.size == 0


def test_sample_positions():
    assert np.array_equal(sample_positions(5, 10), np.arange(5.0))
    s = sample_positions(1_000_000, 100)
    assert s[0] == 0 and s[-1] == 999_999 and s.size == 100
    assert np.array_equal(sample_range(10, 20, 100), np.arange(10.0, 20.0))


# --------------------------------------------------------------------------- scorecard


@pytest.fixture(scope="module")
def card():
    return scorecard(EncodingParams("sinusoidal", 128, 64))


def test_sinusoidal_is_bounded_unique_and_exact(card):
    s = card.score("sinusoidal")
    assert s.bounded_within and s.bounded_past and s.unique and s.deterministic and s.generalizes and s.tk_exact
    assert s.max_norm[0] == pytest.approx(math.sqrt(32))
    assert s.tk_residual < TK_TOL and s.tk_method == "rotation"
    # the closest pair is a pair of neighbours: every offset-1 pair is equally far
    p, q = s.closest_pair
    assert abs(q - p) == 1


def test_naive_grows(card):
    s = card.score("naive")
    assert not s.bounded_within and not s.bounded_past and not s.generalizes and not s.tk_exact
    assert s.unique  # every position distinct
    assert s.max_norm[1] / s.max_norm[0] > 5  # ~×10 per decade
    assert s.max_norm[0] == pytest.approx(127 * 8)  # ‖p_127‖ = 127·√64


def test_normalized_leaves_its_range_past_n(card):
    s = card.score("normalized")
    assert s.max_norm[0] == pytest.approx(8.0)  # ‖p_{N−1}‖ = √d
    assert not s.generalizes and s.unseen_ratio > GROWTH_TOL


def test_sine_is_not_unique(card):
    s = card.score("sine")
    assert s.bounded_within and s.bounded_past and not s.unique and not s.tk_exact
    assert s.unique_ratio < UNIQUE_TOL
    p, q = s.closest_pair
    # a near-collision: sin(p) ≈ sin(q) with p ≠ q
    assert p != q and abs(math.sin(p) - math.sin(q)) < 0.01


def test_sincos_pair_nearly_repeats_at_44(card):
    s = card.score("sincos_pair")
    assert s.closest_pair == (0.0, 44.0)  # 44 ≈ 7·2π
    assert not s.unique and s.tk_exact and s.bounded_within and s.bounded_past


def test_more_frequencies_restore_uniqueness(card):
    assert card.score("harmonic").unique
    assert card.score("sinusoidal").unique_ratio > card.score("four_vector").unique_ratio
    assert card.score("four_vector").unique_ratio > card.score("sincos_pair").unique_ratio


def test_all_sine_has_no_exact_tk(card):
    s = card.score("all_sine")
    assert s.bounded_within and s.bounded_past and not s.tk_exact and s.tk_residual > 0.1
    assert s.tk_method == "least-squares" and s.tk_fit_positions > 2 * 64 and s.tk_unpaired == 64


def test_every_scheme_is_deterministic(card):
    assert all(s.deterministic for s in card.scores)
    # every table but a model file's (none is open: learned_file has no row)
    assert len(card.table()) == len(card.scores) == sum(bool(info.provides & {"table", "angles"}) and info.sizes is None
                                                        for info in SCHEMES.values())


def test_scorecard_at_a_million_positions_covers_the_whole_range():
    s = score_scheme(EncodingParams("sinusoidal", 1_048_576, 1024))
    assert s.bounded_within and s.bounded_past and s.tk_exact and s.unique
    assert s.unique_positions == 1_048_576 and s.unique_whole_range and s.uniqueness.method == "offsets"
    naive = score_scheme(EncodingParams("naive", 1_048_576, 1024))
    assert not naive.bounded_past and naive.tk_method == "none"  # no least-squares fit at d = 1024
    assert any("d_model = 1,024" in note for note in naive.notes)
    all_sine = score_scheme(EncodingParams("all_sine", 1_048_576, 1024))
    assert all_sine.unique_positions < 1_048_576 and not all_sine.unique_whole_range  # leading positions only


def test_single_position():
    s = score_scheme(EncodingParams("sinusoidal", 1, 16))
    assert s.unique and math.isnan(s.min_distance) and s.closest_pair is None


def test_odd_d_model_breaks_exactness():
    s = score_scheme(EncodingParams("sinusoidal", 128, 7))
    assert not s.tk_exact  # the last sine has no cosine partner


def test_scorecard_rejects_unknown_scheme():
    with pytest.raises(ValueError, match="schemes"):
        scorecard(EncodingParams(), schemes=["rope?"])
    with pytest.raises(ValueError, match="scheme"):
        scorecard(EncodingParams(), schemes=["sine"]).score("naive")


def test_these_model_modules_load_no_qt():
    assert_loads_none_of("import posenc_gui.model.analyses.spectrum, posenc_gui.model.analyses.addition,"
                         " posenc_gui.model.analyses.scorecard")


def test_unique_work_budget_is_validated_and_used():
    # all-sine's distances depend on the position: the budget decides whether every pair is compared or
    # only those close along one coordinate; both cover the whole range and find the same pair
    small = score_scheme(EncodingParams("all_sine", 1000, 512))
    large = score_scheme(EncodingParams("all_sine", 1000, 512), unique_work=2**29)
    assert (small.uniqueness.method, large.uniqueness.method) == ("sweep", "all pairs")
    assert small.unique_positions == 1000 == large.unique_positions
    assert small.closest_pair == large.closest_pair
    # the sin/cos pair's depend on the offset only: every offset is checked within any budget
    pair = score_scheme(EncodingParams("sincos_pair", 1000, 512))
    assert pair.unique_positions == 1000 and pair.closest_pair == (0.0, 710.0)  # 710 ≈ 113·2π
    with pytest.raises(ValueError, match="unique_work"):
        score_scheme(EncodingParams(), unique_work=1)


@pytest.mark.parametrize("scheme, seq_len, d", [("sinusoidal", 128, 510), ("normalized", 40, 96), ("harmonic", 3, 64)])
def test_orthogonality_samples_and_summary_equal_the_direct_computation(scheme, seq_len, d):
    """Each drawn position is encoded once and the summary kept with the samples: same numbers as drawing them out."""
    from posenc_gui.model.analyses import addition

    addition.clear_caches()
    params = EncodingParams(scheme, seq_len, d)
    o = orthogonality(params, dims=[d], n_samples=300)
    positions = addition.orthogonality_positions(seq_len, 300, 0)
    e, e2 = addition.orthogonality_embeddings(0, 300, d), addition.orthogonality_embeddings(0, 300, d, draw=1)

    def abs_cos(a, b):  # |cos| of each pair, zero vectors left out, as the model measures it
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        ok = (na > 0) & (nb > 0)
        return np.abs(np.sum(a * b, axis=1)[ok]) / (na[ok] * nb[ok])

    # Every position encoded in turn, every row's dot product over all its columns at once.
    values, rand = abs_cos(e, encode(scheme, positions, d)), abs_cos(e, e2)
    assert 0 < values.size <= 300
    # Equal up to rounding: the model sums each dot product block by block, in another order.
    # Each |cos| is then within cosine_atol(d), and so are their mean, quantile and maximum.
    assert_close(o.current_values, values, cosine_atol(d))
    assert_close([o.pe_mean[0], o.pe_q95[0], o.pe_max[0]],
                 [values.mean(), np.quantile(values, 0.95), values.max()], cosine_atol(d))
    assert_close([o.random_mean[0], o.random_q95[0]], [rand.mean(), np.quantile(rand, 0.95)], cosine_atol(d))
    # Another base keeps the random pairs (they never see the scheme): the same numbers, drawn once.
    if scheme == "sinusoidal":
        rebased = orthogonality(EncodingParams.validated(scheme=scheme, seq_len=seq_len, d_model=d, base=500.0), dims=[d], n_samples=300)
        assert not np.array_equal(rebased.current_values, o.current_values)
        np.testing.assert_array_equal([rebased.random_mean[0], rebased.random_q95[0]],
                                      [o.random_mean[0], o.random_q95[0]])
        assert addition._random_pairs.cache_info().currsize == 1
    # The Addition dock's sweep and its own scale share one draw: the same cosines as a sweep alone.
    sweep = scale_sweep(params, [0.5, 2.0])
    addition.clear_caches()
    alone = scale_sweep(params, [2.0])
    np.testing.assert_array_equal(sweep.cosine_mean[1:], alone.cosine_mean)
    np.testing.assert_array_equal(sweep.cosine_min[1:], alone.cosine_min)


@pytest.mark.parametrize("scheme, seq_len, d_model", [("sinusoidal", 100, 128), ("naive", 20, 16), ("harmonic", 64, 40)])
def test_scale_sweep_split_equals_each_scales_own_split(scheme, seq_len, d_model):
    """The sweep scales the terms at σ = 1; each scale's own head and split give the same numbers."""
    params = EncodingParams(scheme, seq_len, d_model)
    scales = [0.01, 0.3, 1.0, 7.0, 1000.0]
    sweep = scale_sweep(params, scales, seed=2)
    for row, sigma in enumerate(scales):
        split = split_at_scale(params, sigma, seed=2)
        terms, shares = split.terms(), split.shares()
        np.testing.assert_allclose(sweep.term_rms[row], [math.sqrt(np.mean(terms[n] ** 2)) for n in TERMS],
                                   rtol=1e-12)
        np.testing.assert_allclose(sweep.term_share[row], [shares[n] for n in TERMS], rtol=1e-12, atol=1e-15)
        assert 0 <= sweep.split_residual[row] <= 1e-12 * max(float(np.abs(split.total).max()), 1.0)


def test_a_scheme_that_does_not_take_the_sizes_is_left_out_and_named():
    from posenc_gui.model.analyses.scorecard import scorecard

    card = scorecard(EncodingParams(seq_len=16, d_model=33), scan_work=None)
    assert "rope" not in [s.scheme for s in card.scores] and "sinusoidal" in [s.scheme for s in card.scores]
    assert [key for key, _ in card.left_out] == ["rope", "xpos"]
    assert "= 33; Hugging Face turns ceil(33/2) pairs of channels, which must" in card.left_out[0][1]
    assert "d_model must be even for xPos" in card.left_out[1][1]
    with pytest.raises(ValueError, match="pairs of channels"):
        scorecard(EncodingParams(seq_len=16, d_model=33), schemes=["rope"])
    # partial rotary: the unrotated channels are constants whose row of T_k is the identity
    partial = scorecard(EncodingParams(seq_len=64, d_model=16), schemes=["rope"], options={"partial_rotary_factor": 0.5})
    assert partial.scores[0].tk_exact and partial.scores[0].tk_unpaired == 0

"""Positional logits: q·R(n − m)·k of RoPE (and PE(m)·PE(n) of a table) in the model, and the panel that shows them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model import (
    EncodingParams, Scheme, register, rope_frequencies, rope_rotate, t5_random_table, t5_relative_bucket, unregister,
)
from posenc_gui.model.attention.logits import (
    DENSE_OFFSETS, LOG_OFFSETS, MATRIX_POSITIONS, logit_profile_data, positional_logits, profile_distances,
    random_vectors,
)
from posenc_gui.model.schemes.rope import hf_config
from posenc_gui.views.plotkit import MASKED_COLOUR
from posenc_gui.views.positional_logits import PositionalLogitsPanel
import helpers_panels
from helpers_panels import settle_params

EPS = np.finfo(np.float64).eps
#: head_dim 4, theta 10000: θ = (10000^0, 10000^(−2/4)) = (1, 0.01).
TINY = dict(scheme="rope", seq_len=3, d_model=4, rope_theta=10000.0)
LLAMA31 = dict(scheme="rope", seq_len=1_048_576, d_model=128, rope_theta=500000.0, rope_type="llama3", factor=8.0,
               original_max_position_embeddings=8192)
YARN = dict(scheme="rope", seq_len=1_048_576, d_model=128, rope_theta=1e6, rope_type="yarn", factor=4.0,
            original_max_position_embeddings=32768)


def params(**values) -> EncodingParams:
    return EncodingParams.validated(**values)


# ------------------------------------------------------------------ the model: hand-worked values


def test_ones_logit_is_twice_the_cosine_sum_worked_by_hand():
    # q = k = 1, θ = (1, 0.01): q·R(n − m)·k = 2 cos(r) + 2 cos(0.01 r), r = m − n (Python's decimal, 60 digits):
    # r = 0: 2 + 2 = 4; r = 1: 2·0.540302305868… + 2·0.999950000416… = 3.080504612569609990…;
    # r = 2: 2·(−0.416146836547…) + 2·0.999800006666… = 1.167306340238870782…
    expected = [4.0, 3.0805046125696100, 1.1673063402388708]
    logits = positional_logits("rope", [2, 3, 4], [2, 1, 0], d_model=4, rope_theta=10000.0)
    # each cos within an ULP (≤ 2.2e-16 of a value ≤ 1), times 2, two terms, two additions: ≤ 1.4e-15
    np.testing.assert_allclose(logits[:, 0], expected, rtol=0, atol=1.5e-15)
    np.testing.assert_allclose(logits[0], expected, rtol=0, atol=1.5e-15)  # m = 2 against n = 2, 1, 0


def test_the_panels_profile_bound_and_half_point_worked_by_hand():
    data = logit_profile_data(params(**TINY))
    np.testing.assert_array_equal(data.distances, [0, 1, 2])
    np.testing.assert_allclose(data.profile, [4.0, 3.0805046125696100, 1.1673063402388708], rtol=0, atol=1.5e-15)
    # B(r) = (|S_1| + |S_2|)/2 = (1 + |e^{ir} + e^{0.01ir}|)/2 = (1 + 2|cos(0.495 r)|)/2:
    # B(0) = (d/2 + 1)/2 = 1.5; B(1) = (1 + 2·0.879968709836…)/2 = 1.379968709836204 (decimal, 60 digits)
    np.testing.assert_allclose(data.rotation.decay_bound[:2], [1.5, 1.3799687098362042], rtol=0, atol=1e-15)
    # q = k = 1: every h_i = 2, the largest step the last one (to h_{d/2} = 0): |logit| ≤ 2·Σ|S_j| = 4·B(r)
    np.testing.assert_allclose(data.rotation.ones_bound[:2], [6.0, 4 * 1.3799687098362042], rtol=0, atol=4e-15)
    # 3.08 at r = 1 is above half of 4, 1.17 at r = 2 below: the first crossing is after 1, at 2
    assert (data.half_distance, data.half_after) == (2, 1)
    assert data.rotation.attention_factor == 1.0 and data.logit_at_zero == 4.0


def test_a_tables_profile_is_from_the_last_query_position():
    # naive, d 2: PE(p) = (p, p), PE(m)·PE(m − r) = 2·m·(m − r); from m = N − 1 = 9: 162, 144, …; half of 162 is
    # first passed at r = 5 (2·9·4 = 72 < 81; r = 4: 2·9·5 = 90)
    data = logit_profile_data(params(scheme="naive", seq_len=10, d_model=2))
    np.testing.assert_array_equal(data.profile, [2 * 9 * (9 - r) for r in range(10)])
    assert (data.half_distance, data.half_after, data.query_position) == (5, 4, 9)
    np.testing.assert_array_equal(data.matrix, 2 * np.multiply.outer(np.arange(10.0), np.arange(10.0)))


def test_a_table_schemes_positional_logit_is_its_encodings_dot_product():
    # sinusoidal, d 4, base 10000: PE(p) = (sin p, cos p, sin 0.01p, cos 0.01p), so
    # PE(m)·PE(n) = cos(m − n) + cos(0.01(m − n)): 2, 1.540252306284805, 0.583653170119435 (decimal, 60 digits)
    logits = positional_logits("sinusoidal", [0, 1], [0, 1, 2], d_model=4, base=10000.0)
    np.testing.assert_allclose(logits, [[2.0, 1.540252306284805, 0.5836531701194354],
                                        [1.540252306284805, 2.0, 1.540252306284805]], rtol=0, atol=1e-15)


def test_ropes_ones_logit_is_twice_the_sinusoidal_tables_at_the_same_frequencies():
    # θ_i = ω_i = 10000^(−2i/d) for both; PE(m)·PE(m − r) = Σ cos(r ω_i) (DESIGN.md) and q = k = 1 gives 2 Σ cos(r θ_i).
    # The table's dot product rounds sin·sin + cos·cos of angles up to 4,095 rad (error ≤ 4,095·eps each): 256 terms
    rope = logit_profile_data(params(scheme="rope", seq_len=4096, d_model=512))
    table = logit_profile_data(params(scheme="sinusoidal", seq_len=4096, d_model=512))
    np.testing.assert_array_equal(rope.distances, table.distances)
    np.testing.assert_allclose(rope.profile, 2 * table.profile, rtol=0, atol=2 * 256 * 4 * 4096 * EPS)
    assert rope.half_distance == table.half_distance == 54


# ------------------------------------------------------------------ the model: against rope_rotate


@pytest.mark.parametrize("pairing", ["halves", "interleaved"])
@pytest.mark.parametrize("options", [
    {"rope_theta": 100.0},
    {"rope_theta": 500.0, "partial_rotary_factor": 0.5, "rope_type": "yarn", "factor": 4.0,
     "original_max_position_embeddings": 16},
])
def test_the_closed_form_is_rotating_q_by_m_and_k_by_n(pairing, options):
    rng = np.random.default_rng(7)
    d_model = 8
    query, key = rng.standard_normal(d_model), rng.standard_normal(d_model)
    chosen = params(scheme="rope", seq_len=64, d_model=d_model, pairing=pairing, **options)
    inv_freq, factor = rope_frequencies(hf_config(d_model, **chosen.options), seq_len=64)
    rows, cols = np.array([0.0, 5.0, 7.0, 40.0]), np.array([3.0, 9.0, 40.0])
    rotated_q = rope_rotate(np.tile(query, (rows.size, 1)), rows, inv_freq, pairing, attention_factor=factor)
    rotated_k = rope_rotate(np.tile(key, (cols.size, 1)), cols, inv_freq, pairing, attention_factor=factor)
    logits = positional_logits("rope", rows, cols, d_model=d_model, seq_len=64, query=query, key=key,
                               pairing=pairing, **options)
    # both sides sum d products of size ≤ af²·|q_i||k_i|, with angles m·θ ≤ 40 rad (error ≤ 40·eps):
    # well within 100·eps·af²·Σ|q_i||k_i|
    tolerance = 100 * EPS * factor ** 2 * float(np.abs(query) @ np.abs(key))
    np.testing.assert_allclose(logits, rotated_q @ rotated_k.T, rtol=0, atol=tolerance)
    # with the sign of the sin term flipped (the other direction of the offset) the two would not agree
    swapped = positional_logits("rope", cols, rows, d_model=d_model, seq_len=64, query=query, key=key,
                                pairing=pairing, **options).T
    assert np.abs(swapped - rotated_q @ rotated_k.T).max() > 1e3 * tolerance


@pytest.mark.parametrize("shift", [1, 1000, 1_000_000])
def test_the_logit_depends_on_the_distance_only(shift):
    rng = np.random.default_rng(3)
    query, key = rng.standard_normal(16), rng.standard_normal(16)
    inv_freq, _ = rope_frequencies({"rope_theta": 10000.0, "head_dim": 16})
    rows, cols = np.array([0.0, 4.0, 9.0]), np.array([1.0, 4.0, 20.0])
    base = positional_logits("rope", rows, cols, d_model=16, query=query, key=key)
    shifted_q = rope_rotate(query[None].repeat(3, 0), rows + shift, inv_freq)
    shifted_k = rope_rotate(key[None].repeat(3, 0), cols + shift, inv_freq)
    # the rotation at position p has angles p·θ_i ≤ p rad, each with an error ≤ p·eps: the logit moves by at
    # most 2·(p_max + 1)·eps·Σ|q_i||k_i| (two rotated vectors), plus the sums' rounding
    tolerance = (2 * (shift + 21) + 50) * EPS * float(np.abs(query) @ np.abs(key))
    np.testing.assert_allclose(shifted_q @ shifted_k.T, base, rtol=0, atol=tolerance)


def test_the_eq_37_bound_holds_for_the_ones_logit():
    for values in (dict(scheme="rope", seq_len=4096, d_model=64), LLAMA31, YARN):
        data = logit_profile_data(params(**values))
        rotated = data.profile - (data.rotation.head_dim - data.rotation.rotary_dim)
        assert np.all(np.abs(rotated) <= data.rotation.ones_bound * (1 + 1e-12)), values
        # B(0) = (d/2 + 1)/2: at r = 0 the bound is that many times the logit
        assert data.rotation.decay_bound[0] == pytest.approx((data.rotation.rotary_dim / 2 + 1) / 2, rel=1e-15)


def test_independent_random_pairs_spread_alike_at_every_distance():
    # each pair's weights (ac + bd) and (ad − bc) have variance 2 and no correlation: the logit's variance is
    # af⁴·2·(d/2) + (unrotated channels) at every distance. At d 1,024 the seeds' norms concentrate
    # (‖q‖² = d ± √(2d)) and the phases at different distances decorrelate, so the 64-seed std averaged over the
    # 2,048 distances is within 5 % (ddof-0 bias 1/128); af² in place of af⁴ would be 26 % off for the second
    yarn = dict(rope_theta=1e6, rope_type="yarn", factor=4.0, original_max_position_embeddings=32768)
    for values in (dict(scheme="rope", seq_len=65536, d_model=1024),
                   dict(scheme="rope", seq_len=65536, d_model=1024, partial_rotary_factor=0.5, **yarn)):
        data = logit_profile_data(params(**values), seeds=64)
        assert data.rotation.mean_random_std == pytest.approx(data.rotation.expected_random_std, rel=0.05), values
        assert abs(np.mean(data.rotation.random_mean)) < 0.1 * data.rotation.expected_random_std
    assert data.rotation.expected_random_std == pytest.approx(math.sqrt(data.rotation.attention_factor ** 4 * 512
                                                                        + 512), rel=1e-15)
    # at distance 0 the logit is af²·(q·k over the rotated channels) + (q·k over the others), seed by seed
    query, key = random_vectors(1024, 64)
    at_zero = data.rotation.attention_factor ** 2 * np.sum(query[:512] * key[:512], axis=0) + np.sum(
        query[512:] * key[512:], axis=0)
    np.testing.assert_allclose(data.rotation.random_std[0], np.std(at_zero), rtol=1e-12)
    np.testing.assert_allclose(data.rotation.random_mean[0], np.mean(at_zero), rtol=0,
                               atol=1e-12 * np.abs(at_zero).max())


def test_the_random_vectors_are_the_seeded_ones_and_the_matrix_uses_seed_0():
    query, key = random_vectors(8, 3)
    np.testing.assert_array_equal(query[:, 2], np.random.default_rng(2).standard_normal((2, 8))[0])
    np.testing.assert_array_equal(key[:, 2], np.random.default_rng(2).standard_normal((2, 8))[1])
    data = logit_profile_data(params(scheme="rope", seq_len=50, d_model=8), "random", 3)
    expected = positional_logits("rope", np.arange(50), np.arange(50), d_model=8, seq_len=50, query=query[:, 0],
                                 key=key[:, 0])
    np.testing.assert_array_equal(data.matrix, expected)


def test_a_million_positions_are_sampled_within_bounds():
    distances, dense_until = profile_distances(1_048_576)
    assert dense_until == DENSE_OFFSETS - 1 and distances[-1] == 1_048_575
    np.testing.assert_array_equal(distances[:DENSE_OFFSETS], np.arange(DENSE_OFFSETS))
    assert np.all(np.diff(distances) > 0) and distances.size <= DENSE_OFFSETS + LOG_OFFSETS
    assert profile_distances(1) == (pytest.approx([0]), 0)
    data = logit_profile_data(params(**LLAMA31))
    assert data.matrix.shape == (MATRIX_POSITIONS, MATRIX_POSITIONS) and data.positions.stride == 4096
    # Toeplitz: every diagonal one value (exact: the same distance gives the same number)
    assert np.all(data.matrix[1:, 1:] == data.matrix[:-1, :-1])
    # column 0 (key at 0): 2·Σ cos(m θ_i) at the sampled query positions m; the angles m·θ_i ≤ 1.05e6 rad are the
    # same products on both sides, so only the sums' rounding differs (≤ 64 terms of size ≤ 2: 64·2·eps·2)
    inv_freq, _ = rope_frequencies(hf_config(128, **data.params.options))
    expected = 2 * np.cos(np.multiply.outer(data.positions.indices().astype(float), inv_freq)).sum(axis=1)
    np.testing.assert_allclose(data.matrix[:, 0], expected, rtol=0, atol=256 * EPS * 2)


def test_bad_input_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="query must hold head_dim = d_model = 4 channels"):
        positional_logits("rope", [0], [0], d_model=4, query=[1, 2, 3])
    with pytest.raises(ValueError, match="query and key vectors apply to rotation schemes"):
        positional_logits("sinusoidal", [0], [0], d_model=4, key=np.ones(4))
    with pytest.raises(ValueError, match="query_positions must be in 0…1e"):
        positional_logits("rope", [-1], [0], d_model=4)
    with pytest.raises(ValueError, match="exceed the limit"):
        positional_logits("rope", np.arange(5000), np.arange(5000), d_model=4)
    with pytest.raises(ValueError, match="rope_theta"):
        positional_logits("rope", [0], [0], d_model=4, rope_theta=0.5)
    with pytest.raises(ValueError, match="vectors must be one of ones, random"):
        logit_profile_data(params(**TINY), "zeros")
    with pytest.raises(ValueError, match="seeds must be"):
        logit_profile_data(params(**TINY), seeds=1)


def test_the_panel_shows_every_family_but_the_rotations_it_does_not_compute():
    spin = Scheme(key="test_spin", label="test spin", summary="", formula="", order=999, family="rotation")
    register(spin)
    try:
        assert not PositionalLogitsPanel.shows(spin)
        with pytest.raises(ValueError, match="declares no rotation its logits are computed from"):
            logit_profile_data(params(scheme="test_spin"))
    finally:
        unregister("test_spin")
    for scheme in ("rope", "xpos", "sinusoidal", "learned", "alibi", "t5"):
        assert PositionalLogitsPanel.shows(params(scheme=scheme).info), scheme


# ------------------------------------------------------------------ the panel


def show_panel(qtbot, state, compute, size=(1200, 700)) -> PositionalLogitsPanel:
    return helpers_panels.show_panel(qtbot, PositionalLogitsPanel(state, compute), size, settle=False)


def test_the_panel_shows_the_model_and_follows_the_parameters(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    assert state.update(**TINY) is None
    settle_params(state, compute)
    assert not panel.unavailable_label.isVisible() and panel.data.params == params(**TINY)
    np.testing.assert_array_equal(panel.matrix.values, positional_logits("rope", range(3), range(3), d_model=4))
    x, y = panel.ones_curve.getOriginalDataset()
    np.testing.assert_array_equal(x, np.log10([1, 2]))  # on the log axis's scale; distance 0 is off it (line above)
    np.testing.assert_allclose(y, [3.0805046125696100, 1.1673063402388708], rtol=0, atol=1.5e-15)
    summary = panel.summary_label.text()
    assert "logit <b>4</b> at distance 0" in summary and "first below half at distance <b>2</b>" in summary
    assert "af = <b>1</b>" in summary and "af² = <b>1</b>" in summary
    # YaRN ×4: af = 0.1·ln 4 + 1 = 1.138629436111989, af² = 1.296476...: the logit at 0 is af²·4
    assert state.update(**YARN) is None
    settle_params(state, compute)
    summary = panel.summary_label.text()
    assert panel.data.rotation.attention_factor == pytest.approx(0.1 * math.log(4) + 1, rel=1e-15)
    assert "af = <b>1.13863</b>" in summary and "af² = <b>1.29648</b>" in summary
    assert f"logit <b>{1.138629436111989 ** 2 * 128:.6g}</b>" in summary
    assert "every 4,096th position in both directions" in panel.figure_caption()
    assert "then 1,024 log-spaced ones to 1,048,575" in panel.figure_caption()
    bx, by = panel.bound_curve.getOriginalDataset()
    np.testing.assert_array_equal(by, panel.data.rotation.ones_bound[1:])


def test_the_vectors_and_seeds_are_options_of_the_panel_and_its_export(qtbot, state, compute, tmp_path):
    panel = show_panel(qtbot, state, compute)
    assert state.update(scheme="rope", seq_len=40, d_model=16) is None
    settle_params(state, compute)
    ones_matrix = panel.matrix.values.copy()
    panel.apply_options(vectors="random", seeds=5)
    settle_params(state, compute)
    assert (panel.data.rotation.vectors, panel.data.rotation.seeds) == ("random", 5)
    assert panel.current_options() == {"vectors": "random", "seeds": 5, "compare": ""}
    query, key = random_vectors(16, 5)
    np.testing.assert_array_equal(panel.matrix.values, positional_logits(
        "rope", range(40), range(40), d_model=16, seq_len=40, query=query[:, 0], key=key[:, 0]))
    assert not np.array_equal(panel.matrix.values, ones_matrix)
    for bad, message in (({"vectors": "zeros"}, "vectors must be one of"), ({"seeds": 1000}, "seeds must be")):
        with pytest.raises(ValueError, match=message):
            panel.apply_options(**bad)
    assert panel.current_options() == {"vectors": "random", "seeds": 5, "compare": ""}  # the last good ones stay
    exported = json.loads(export.export_bytes(panel, "json"))
    assert exported["meta"]["vectors"] == "random" and exported["meta"]["seeds"] == 5
    np.testing.assert_array_equal(exported["arrays"]["matrix"]["data"], panel.data.matrix)
    assert np.asarray(exported["arrays"]["profile"]["data"]).shape == (40, 6)


def test_the_command_line_exports_the_logits_with_random_vectors(qapp, tmp_path, capsys):
    out = tmp_path / "logits.npy"
    args = ["logits", "-o", str(out), "--scheme", "rope", "--seq-len", "64", "--d-model", "8", "--vectors", "random"]
    assert export_cli.main(args) == 0, capsys.readouterr().err
    query, key = random_vectors(8, 16)
    np.testing.assert_array_equal(np.load(out), positional_logits(
        "rope", range(64), range(64), d_model=8, seq_len=64, query=query[:, 0], key=key[:, 0]))
    assert export_cli.main(["logits", "-o", str(out), "--seeds", "1"]) == export_cli.EXIT_USAGE
    assert "seeds must be" in capsys.readouterr().err


def test_a_table_shows_its_encodings_dot_products_without_the_rotations_terms(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    assert state.update(scheme="sinusoidal", seq_len=3, d_model=4, base=10000.0) is None
    settle_params(state, compute)
    assert not panel.unavailable_label.isVisible() and panel.data.rotation is None
    # PE(m)·PE(n) = cos(m − n) + cos(0.01(m − n)) (see the model's test): 2, 1.540252306284805, 0.583653170119435
    np.testing.assert_allclose(panel.matrix.values[0], [2.0, 1.540252306284805, 0.5836531701194354], rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(panel.data.profile, [2.0, 1.540252306284805, 0.5836531701194354], rtol=0, atol=1e-15)
    assert panel.data.query_position == 2 and not panel.vectors_box.isEnabled()
    assert not panel.bound_curve.isVisible() and not panel.random_curve.isVisible()
    summary = panel.summary_label.text()
    assert "from m = N − 1 = 2: <b>2</b> at distance 0" in summary and "first below half at distance <b>2</b>" in \
        summary
    exported = json.loads(export.export_bytes(panel, "json"))
    assert np.asarray(exported["arrays"]["profile"]["data"]).shape == (3, 2) and "seeds" not in exported["meta"]
    assert state.update(scheme="nope") is None  # zero vectors: no half point to find
    settle_params(state, compute)
    assert "with no positive logit at distance 0 there is no half point" in panel.summary_label.text()
    assert state.update(scheme="rope") is None
    settle_params(state, compute)
    assert panel.vectors_box.isEnabled() and panel.bound_curve.isVisible() and panel.data.rotation is not None


def test_alibis_linear_bias_is_drawn_on_a_linear_distance_axis_the_others_on_a_log_one(qtbot, state, compute):
    from posenc_gui.views.logit_axes import distance_is_log

    panel = show_panel(qtbot, state, compute)
    plots = (panel.logit_plot, panel.size_plot)
    for scheme, log in (("alibi", False), ("t5", True), ("rope", True), ("sinusoidal", True), ("alibi", False)):
        assert state.update(scheme=scheme, seq_len=64, d_model=8) is None
        settle_params(state, compute)
        assert panel.data.params.scheme == scheme
        assert [distance_is_log(plot) for plot in plots] == [log, log], scheme
        distances = panel.data.distances[1:].astype(np.float64)
        shown, _ = panel.ones_curve.getData()  # the curve as drawn: log10 r on a log axis, r on a linear one
        np.testing.assert_allclose(shown, np.log10(distances) if log else distances, rtol=1e-15, err_msg=scheme)
        low, high = panel.logit_plot.viewRange()[0]
        last = math.log10(distances[-1]) if log else distances[-1]
        assert low <= (0 if log else 1) and high >= last, (scheme, low, high)  # every distance in view
        ticks = panel.logit_plot.getAxis("bottom")._tickLevels
        assert (ticks is None) == (not log), scheme  # decades labelled on a log axis, pyqtgraph's ticks on a linear


def test_a_bias_is_shown_with_its_masked_keys_grey_and_said_so_in_the_hover(qtbot, state, compute):
    panel = show_panel(qtbot, state, compute)
    assert state.update(scheme="alibi", seq_len=8, d_model=4) is None
    settle_params(state, compute)
    assert not panel.unavailable_label.isVisible() and panel.unavailable_message() is None
    # head 0 of 8: slope 1/2; row m, column n: −(m − n)/2 below the diagonal, masked above it
    expected = np.where(np.subtract.outer(range(8), range(8)) >= 0, -0.5 * np.subtract.outer(range(8), range(8)),
                        -np.inf)
    np.testing.assert_array_equal(panel.matrix.values, expected)
    shown = panel.matrix.image.image
    assert np.all(np.isnan(shown[np.triu_indices(8, 1)])) and np.all(np.isfinite(shown[np.tril_indices(8)]))
    assert panel.matrix.view_box.background.brush().color().name() == MASKED_COLOUR  # behind the masked cells
    assert panel.matrix.colorbar.levels() == (-3.5, 3.5)  # from the finite values (−3.5 is round), not −inf
    x, y = panel.ones_curve.getOriginalDataset()
    np.testing.assert_array_equal(x, range(1, 8))  # ALiBi: a linear distance axis
    np.testing.assert_array_equal(y, -0.5 * np.arange(1, 8))
    assert not panel.after_curve.isVisible() and not panel.bound_curve.isVisible()
    assert not panel.vectors_box.isEnabled()
    summary = panel.summary_label.text()
    assert "<b>-3.5</b> at 7" in summary and "keys after the query are masked" in summary
    panel.hover.hover((2, 5))
    assert panel.hover_line.text() == "query m 2, key n 5 (m − n = -3): bias masked (−inf)"
    panel.hover.hover((5, 2))
    assert panel.hover_line.text() == "query m 5, key n 2 (m − n = 3): bias -1.5"
    assert state.update(head=3) is None  # 2^(−32/8) = 1/16: the same cell, −3/16
    settle_params(state, compute)
    assert panel.hover_line.text() == "query m 5, key n 2 (m − n = 3): bias -0.1875"
    exported = json.loads(export.export_bytes(panel, "json"))
    assert exported["meta"]["keys_after_the_query"] == "masked (-inf)" and exported["meta"]["masked_cells"] == 28
    assert exported["arrays"]["matrix"]["data"][0][1] is None  # −inf in JSON
    # T5, bidirectional: the keys after the query have buckets of their own, drawn beside the keys before
    assert state.update(scheme="t5", seq_len=20, d_model=64, n_heads=2, head=1, seed=0) is None
    settle_params(state, compute)
    assert panel.after_curve.isVisible() and not panel.matrix.image.image[np.isnan(panel.matrix.image.image)].size
    table = t5_random_table(32, 2, 0, sigma=1 / 8)
    x, y = panel.after_curve.getOriginalDataset()
    np.testing.assert_array_equal(y, table[t5_relative_bucket(np.arange(1, 20)), 1])
    assert "untrained random draw (seed 0)" in panel.summary_label.text()
    assert panel.size_plot.getAxis("bottom").labelText == "distance r: key n = m − r before the query, n = m + r after"

"""The Context extension model (which rotary pairs meet angles training never showed) and its panel."""

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from helpers_panels import change_params, show_panel
from test_model_files import table, write_gguf

from posenc_gui import export
from posenc_gui.model import EncodingParams
from posenc_gui.model.files.model_setup import model_setups
from posenc_gui.model.rope.context import context_extension_data, context_methods
from posenc_gui.views import panel_classes
from posenc_gui.views.model_open import open_model_path
from posenc_gui.views.rope_context import RopeContextPanel

#: float64 ULPs of pow/products: the hand-worked values hold to far better than this.
RTOL = 1e-12
LLAMA31_1M = dict(scheme="rope", seq_len=1_048_576, d_model=128, rope_theta=500000.0, rope_type="llama3",
                  factor=8.0, original_max_position_embeddings=8192)
QWEN_YARN = dict(scheme="rope", seq_len=131072, d_model=128, rope_theta=1e6, rope_type="yarn", factor=4.0,
                 original_max_position_embeddings=32768)


def small(seq_len: int, **options) -> EncodingParams:
    """head_dim 8, rope_theta 10000, L₀ 16, factor 4 (the hand-worked example) at N = ``seq_len``."""
    values = dict(scheme="rope", d_model=8, seq_len=seq_len, rope_theta=10000.0,
                  original_max_position_embeddings=16, factor=4.0)
    return EncodingParams.validated(**{**values, **options})


# ------------------------------------------------------------------ model, worked by hand


def test_the_hand_worked_example_at_64_positions():
    # θ_i = 10000^(−2i/8) = 1, 0.1, 0.01, 0.001; L₀·θ_i = 16, 1.6, 0.16, 0.016: only pair 0 (16 ≥ 2π)
    # completed a turn in training (wavelengths 6.28, 62.8, 628, 6283 against L₀ = 16). N − 1 = 63.
    data = context_extension_data(small(64))
    np.testing.assert_allclose(data.unscaled, [1.0, 0.1, 0.01, 0.001], rtol=RTOL)
    np.testing.assert_allclose(data.trained_max, [16.0, 1.6, 0.16, 0.016], rtol=RTOL)
    assert data.turned.tolist() == [True, False, False, False] and data.turned_count == 1
    assert [m.method for m in data.methods] == list(context_methods()) and data.chosen == "default"
    assert context_methods()[:6] == ("default", "linear", "ntk", "dynamic", "yarn", "llama3")  # the scheme's types
    # default: ratio 63/16 = 3.9375 for every pair: pairs 1–3 meet unseen angles
    default = data.method("default")
    np.testing.assert_allclose(default.used_max, [63.0, 6.3, 0.63, 0.063], rtol=RTOL)
    np.testing.assert_allclose(default.ratio, 3.9375, rtol=RTOL)
    assert default.unseen.tolist() == [False, True, True, True] and default.unseen_count == 3
    # linear: θ/4, ratio 63/64 = 0.984375: none
    linear = data.method("linear")
    np.testing.assert_allclose(linear.inv_freq, [0.25, 0.025, 0.0025, 0.00025], rtol=RTOL)
    np.testing.assert_allclose(linear.ratio, 0.984375, rtol=RTOL)
    assert linear.unseen_count == 0
    # ntk: base' = 10000·4^(8/6), so θ'_i = θ_i·4^(−i/3) and ratio_i = 3.9375·4^(−i/3)
    # = 3.9375, 2.48047, 1.56260, 0.984375: pairs 1 and 2 (YaRN's "out-of-bound" slow pairs), not 3
    ntk = data.method("ntk")
    np.testing.assert_allclose(ntk.ratio, [3.9375 * 4 ** (-i / 3) for i in range(4)], rtol=RTOL)
    np.testing.assert_allclose(ntk.ratio[1:], [2.4804695, 1.5625979, 0.984375], rtol=1e-7)
    assert ntk.unseen.tolist() == [False, True, True, False]
    # dynamic at N = 64 > L₀: base' = 10000·(4·64/16 − 3)^(8/6) = 10000·13^(4/3), θ'_i = θ_i·13^(−i/3);
    # ratio_i = 3.9375·13^(−i/3) = 3.9375, 1.67458, 0.712183, 0.302885: pair 1 only
    dynamic = data.method("dynamic")
    np.testing.assert_allclose(dynamic.ratio, [3.9375 * 13 ** (-i / 3) for i in range(4)], rtol=RTOL)
    assert dynamic.unseen.tolist() == [False, True, False, False]
    # yarn: fcd(r) = 8·ln(16/(2πr))/(2·ln 10000): fcd(32) = −1.099 → floor −2 → 0; fcd(1) = 0.406 → ceil 1;
    # ramp = 0, 1, 1, 1: pair 0 kept (ratio 3.9375, but it turned), pairs 1–3 divided by 4 (0.984375)
    yarn = data.method("yarn")
    np.testing.assert_allclose(yarn.inv_freq, [1.0, 0.025, 0.0025, 0.00025], rtol=RTOL)
    assert yarn.unseen_count == 0 and yarn.attention_factor == pytest.approx(0.1 * math.log(4) + 1, rel=RTOL)
    # llama3: wavelengths 62.8 … > L₀/1 = 16 are divided by 4; pair 0 (6.28, between 16/4 and 16) is smoothed:
    # s = (16/2π − 1)/3, θ' = (1 − s)/4 + s = 1/4 + 3s/4 = 16/(8π) = 2/π
    llama3 = data.method("llama3")
    np.testing.assert_allclose(llama3.inv_freq, [2 / math.pi, 0.025, 0.0025, 0.00025], rtol=RTOL)
    assert llama3.unseen_count == 0


def test_past_factor_times_the_trained_context_every_interpolation_meets_unseen_angles():
    # N = 80 > 4·16: N − 1 = 79; linear, yarn and llama3 divide pairs 1–3 by 4: ratio 79/64 = 1.234375;
    # ntk 4.9375·4^(−i/3) = 3.110, 1.959, 1.234; dynamic 4.9375·(4·80/16 − 3)^(−i/3) = 4.9375·17^(−i/3)
    # = 1.920, 0.747, 0.290
    data = context_extension_data(small(80))
    counts = {m.method: m.unseen_count for m in data.methods}
    assert counts.items() >= {"default": 3, "linear": 3, "ntk": 3, "dynamic": 1, "yarn": 3, "llama3": 3}.items()
    np.testing.assert_allclose(data.method("linear").ratio, 79 / 64, rtol=RTOL)
    np.testing.assert_allclose(data.method("dynamic").ratio, [4.9375 * 17 ** (-i / 3) for i in range(4)], rtol=RTOL)


def test_the_angle_of_position_l0_is_the_first_training_never_showed():
    # Without scaling, N = L₀ = 16 reaches 15·θ_i < 16·θ_i; N = 17 reaches 16·θ_i (the same product) exactly.
    assert context_extension_data(small(16)).method("default").unseen_count == 0
    assert context_extension_data(small(17)).method("default").unseen.tolist() == [False, True, True, True]


def test_a_pair_completed_a_turn_when_its_wavelength_is_at_most_l0():
    # Pair 1's wavelength is 2π/0.1 = 62.83: 63 trained positions turn it by 6.3 ≥ 2π, 62 by 6.2 < 2π.
    assert context_extension_data(small(64, original_max_position_embeddings=63)).turned.tolist() == [
        True, True, False, False]
    assert context_extension_data(small(64, original_max_position_embeddings=62)).turned_count == 1


def test_llama31_at_a_million_positions():
    # Turned: wavelength 2π·500000^(2i/128) ≤ 8192 for i ≤ 64·ln(8192/2π)/ln(500000) = 34.99: pairs 0–34.
    # Past 8× the trained context, every divided pair (35–63) overshoots: llama3 29. Dynamic NTK at N:
    # base' = 500000·(8·1048576/8192 − 7)^(128/126), θ'_i = θ_i·1017^(−i/63), ratio = (1048575/8192)·1017^(−i/63)
    # ≥ 1 for i ≤ 63·ln(127.9999)/ln(1017) = 44.14: pairs 35–44 meet unseen angles, 10.
    data = context_extension_data(EncodingParams.validated(**LLAMA31_1M))
    assert data.turned_count == 35 and data.chosen == "llama3" and data.target_length == 1_048_576
    assert data.method("llama3").unseen_count == 29
    dynamic = data.method("dynamic")
    np.testing.assert_array_equal(np.flatnonzero(dynamic.unseen), np.arange(35, 45))
    np.testing.assert_allclose(dynamic.ratio, 1048575 / 8192 * 1017.0 ** (-np.arange(64) / 63), rtol=1e-11)


def test_qwen_yarn_keeps_every_pair_inside_training_and_ntk_does_not():
    # Turned: 2π·1e6^(2i/128) ≤ 32768 for i ≤ 64·ln(32768/2π)/ln(1e6) = 39.65: pairs 0–39; 24 did not.
    # default: ratio 131071/32768 ≈ 4 for all; ntk: θ'_i = θ_i·4^(−i/63), ratio 3.99997·4^(−i/63) ≥ 1 up to
    # i = 62.9997: pairs 40–62 (23); yarn divides the slow pairs by 4: ratio 131071/131072 < 1.
    data = context_extension_data(EncodingParams.validated(**QWEN_YARN))
    assert data.turned_count == 40
    counts = {m.method: m.unseen_count for m in data.methods}
    assert counts.items() >= {"default": 24, "linear": 0, "ntk": 23, "dynamic": 0, "yarn": 0, "llama3": 0}.items()
    np.testing.assert_array_equal(np.flatnonzero(data.method("ntk").unseen), np.arange(40, 63))
    np.testing.assert_allclose(data.method("yarn").ratio[-1], 131071 / 131072, rtol=RTOL)


def test_a_method_hugging_face_refuses_with_these_options_says_why_and_the_others_still_compute():
    # Two rotated channels: ntk and dynamic raise the base to d/(d − 2), which needs d ≥ 3.
    data = context_extension_data(EncodingParams.validated(scheme="rope", d_model=2, seq_len=64))
    refused = {m.method: m.error for m in data.methods if not m.available}
    assert {"ntk", "dynamic"} <= set(refused) and {"default", "linear", "yarn", "llama3"}.isdisjoint(refused)
    assert "rotary_dim must be ≥ 3" in refused["ntk"] and "rotary_dim must be ≥ 3" in refused["dynamic"]
    assert data.method("ntk").unseen_count == 0 and data.method("default").available
    # An odd rotary dimension (6 × 0.5 = 3): Hugging Face's YaRN fails on it, the other types compute it.
    data = context_extension_data(EncodingParams.validated(scheme="rope", d_model=6, partial_rotary_factor=0.5))
    assert [m.method for m in data.methods if not m.available] == ["yarn"] and data.pairs == 2
    assert "YaRN ramp" in data.method("yarn").error


def smollm2_gguf(path) -> str:
    """SmolLM2-135M's RoPE metadata in a GGUF (llama, hidden 576 / 9 heads = head 64, θ 100,000, context 8,192)."""
    write_gguf(path, "llama", [
        ("add_context_length", 8192), ("add_embedding_length", 576), ("add_head_count", 9),
        ("add_rope_freq_base", 100000.0), ("add_rope_dimension_count", 64),
    ], [("token_embd.weight", table(50, 576), None)])
    return str(path)


def test_a_gguf_models_trained_context_is_l0(tmp_path):
    (setup,) = model_setups(smollm2_gguf(tmp_path / "smollm2.gguf")).setups
    assert setup.params.options["rope_type"] == "default" and setup.params.seq_len == 8192
    data = context_extension_data(setup.params)
    assert (data.trained_context, data.target_length, data.pairs) == (8192, 8192, 32)
    # θ_i = 100000^(−2i/64); a turn in training needs 8192·θ_i ≥ 2π, i.e. i ≤ 32·ln(8192/2π)/ln(100000)
    # = 32 · 7.1731 / 11.5129 = 19.94: pairs 0…19. At N = L₀ no pair goes past training:
    # (N − 1)·θ_i < L₀·θ_i.
    assert data.turned_count == 20 and data.method("default").unseen_count == 0
    # (the scheme's own L₀ of 4,096 would have left pairs 19…31 "unseen" at the model's own context)
    assert context_extension_data(setup.params.replaced(original_max_position_embeddings=4096)).method(
        "default").unseen_count == 13


def test_bad_input_is_refused_naming_it():
    with pytest.raises(ValueError, match="rope scheme"):
        context_extension_data(EncodingParams.validated(scheme="sinusoidal"))
    with pytest.raises(ValueError, match="params must be an EncodingParams"):
        context_extension_data({"scheme": "rope"})
    with pytest.raises(ValueError, match="method must be one of"):
        context_extension_data(small(64)).method("alibi")


# ------------------------------------------------------------------ panel


def framed(plot) -> bool:
    """Whether the plot's view box has a frame (the chosen method's)."""
    return plot.getViewBox().border.style() != Qt.PenStyle.NoPen


def test_registered_after_the_frequencies_panel():
    ids = [cls.panel_id for cls in panel_classes()]
    assert ids.index("context") == ids.index("frequencies") + 1


def test_the_panel_shows_each_methods_pairs_beyond_training_and_follows_the_parameters(state, compute, qtbot):
    panel = show_panel(qtbot, RopeContextPanel(state, compute), (1200, 800))
    assert panel.unavailable_label.isVisible() and "Sinusoidal (Vaswani et al.) gives a table" in panel.unavailable_label.text()
    change_params(state, compute, **LLAMA31_1M)
    assert not panel.unavailable_label.isVisible() and panel.data.target_length == 1_048_576
    llama3, dynamic = panel.plots["llama3"], panel.plots["dynamic"]
    assert llama3.titleLabel.text == "<b>llama3 (chosen)</b>: 29/64 pairs unseen"
    assert dynamic.titleLabel.text == "dynamic: 10/64 pairs unseen"
    assert framed(llama3) and not framed(dynamic)
    x, y = panel.unseen_bars["dynamic"].getOriginalDataset()  # one segment per pair 35–44, training's end → N's
    np.testing.assert_array_equal(x, np.repeat(np.arange(35, 45), 2))
    np.testing.assert_array_equal(y[0::2], panel.data.trained_max[35:45])
    np.testing.assert_array_equal(y[1::2], panel.data.method("dynamic").used_max[35:45])
    x, y = panel.used_curves["llama3"].getOriginalDataset()
    np.testing.assert_array_equal(y, panel.data.method("llama3").used_max)
    summary = panel.summary_label.text()
    assert "L₀ = <b>8,192</b>, target N = <b>1,048,576</b>" in summary
    assert "default 29; linear 29; ntk 29; dynamic 10; yarn 29; <b>llama3 29</b> (chosen)" in summary
    assert panel.figure_title.text.startswith(state.params.title()) and "every method at" not in panel.figure_title.text
    exported = json.loads(export.export_bytes(panel, "json"))
    meta = exported["meta"]
    assert meta["pairs_meeting_unseen_angles"]["dynamic"] == 10 and meta["trained_context"] == 8192
    table = np.asarray(exported["arrays"]["context"]["data"], dtype=np.float64)
    assert table.shape == (64, 4 + 4 * len(context_methods()))
    np.testing.assert_array_equal(table[:, meta["columns"].index("unseen_dynamic")],
                                  panel.data.method("dynamic").unseen)
    change_params(state, compute, **QWEN_YARN)
    assert panel.plots["yarn"].titleLabel.text == "<b>yarn (chosen)</b>: 0/64 pairs unseen"
    assert panel.plots["ntk"].titleLabel.text == "ntk: 23/64 pairs unseen"
    assert framed(panel.plots["yarn"]) and not framed(llama3)
    assert panel.unseen_bars["yarn"].getOriginalDataset() == (None, None) and panel.unseen_bars["ntk"].getOriginalDataset()[0].size == 46


def test_the_title_names_l0_and_the_factor_when_the_chosen_type_hides_them(state, compute, qtbot):
    panel = show_panel(qtbot, RopeContextPanel(state, compute), (1200, 800))
    change_params(state, compute, scheme="rope", d_model=64, original_max_position_embeddings=2048, factor=2.0)
    assert panel.figure_title.text == f"{state.params.title()}; every method at L₀ 2,048, ×2"
    change_params(state, compute, rope_type="linear")
    assert panel.figure_title.text == f"{state.params.title()}; every method at L₀ 2,048"
    assert "×2" in state.params.title()


def test_a_refused_method_is_named_and_one_position_draws_nothing_on_the_log_axis(state, compute, qtbot):
    panel = show_panel(qtbot, RopeContextPanel(state, compute), (1200, 800))
    change_params(state, compute, scheme="rope", d_model=2, seq_len=1)
    assert panel.plots["ntk"].titleLabel.text == "ntk: not available"
    assert not panel.used_curves["ntk"].isVisible() and panel.used_curves["default"].isVisible()
    assert "Not available: ntk: " in panel.summary_label.text() and panel.message_label.text() == ""
    x, y = panel.used_curves["default"].getOriginalDataset()
    assert x is None and y is None  # no points: N = 1 uses the angle 0 only, which a log axis cannot hold
    meta = panel.export_data()["meta"]
    assert meta["pairs_meeting_unseen_angles"]["ntk"] is None and "rotary_dim" in meta["unavailable"]["ntk"]
    assert "unseen_ntk" not in meta["columns"] and "unseen_default" in meta["columns"]


def test_the_panel_measures_an_opened_gguf_against_its_own_context(state, compute, qtbot, tmp_path):
    panel = show_panel(qtbot, RopeContextPanel(state, compute), (1200, 800))
    assert open_model_path(state, smollm2_gguf(tmp_path / "smollm2.gguf"), ask=False) is None
    state.flush()
    assert compute.wait_idle()
    assert panel.plots["default"].titleLabel.text == "<b>default (chosen)</b>: 0/32 pairs unseen"
    assert "L₀ = <b>8,192</b>, target N = <b>8,192</b>" in panel.summary_label.text()
    assert panel.figure_title.text.endswith("every method at L₀ 8,192, ×4")

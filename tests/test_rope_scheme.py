"""The rope scheme (registry, specs, presets) and its Frequencies panel."""

import json
import math
from decimal import Decimal

import numpy as np
import pytest

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model import SCHEMES, EncodingParams, rope_frequencies
from posenc_gui.model.rope.data import rope_frequency_data
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.parameters import ParametersPanel
from posenc_gui.views.plotkit.pgcompat import legend_entries
from posenc_gui.views.rope_frequencies import RopeFrequenciesPanel
from posenc_gui.views.similarity import SimilarityPanel
from posenc_gui.views.waveforms import WaveformsPanel

LLAMA31 = dict(scheme="rope", seq_len=131072, d_model=128, rope_theta=500000.0, rope_type="llama3", factor=8.0,
               low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192)


def test_llama31_options_give_hugging_faces_frequencies_of_its_config():
    config = {"rope_theta": 500000.0, "head_dim": 128, "max_position_embeddings": 131072,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}
    data = rope_frequency_data(EncodingParams.validated(**LLAMA31))
    expected, factor = rope_frequencies(config)
    np.testing.assert_array_equal(data.inv_freq, expected)
    assert data.attention_factor == factor == 1.0
    # Hand-worked: unscaled wavelength 2π·500000^(2i/128) > 8192 for i > 64·ln(8192/2π)/ln(500000) = 34.99…
    assert data.beyond_trained == 29 and list(data.band[:2]) == ["high", "high"] and data.band[-1] == "low"
    np.testing.assert_allclose(data.wavelength[-1], 8.0 * data.unscaled_wavelength[-1], rtol=1e-12)
    np.testing.assert_allclose(data.unscaled_wavelength[35], 2 * math.pi * 500000.0 ** (70 / 128), rtol=1e-12)


def test_the_yarn_presets_attention_factors_are_hugging_faces():
    presets = {preset.label.split(" (")[0]: preset for preset in SCHEMES["rope"].presets}

    def factor(name):
        preset = presets[name]
        params = EncodingParams.validated(scheme="rope", seq_len=preset.seq_len, d_model=preset.d_model,
                                          **preset.options)
        return rope_frequency_data(params).attention_factor

    # gpt-oss: mscale unset → 0.1·ln(32) + 1 = 0.1 · 3.4657359028 + 1 = 1.34657359028
    assert factor("gpt-oss-20b") == pytest.approx(1.34657359028, rel=1e-11)
    # DeepSeek-V3: mscale 1 and mscale_all_dim 1 → (0.1·ln 40 + 1) / (0.1·ln 40 + 1) = 1
    assert factor("DeepSeek-V3") == pytest.approx(1.0, abs=1e-15)
    # Qwen2.5 (factor 4, neither set) → 0.1·ln 4 + 1 = 1.13862943611
    assert factor("Qwen2.5 with YaRN") == pytest.approx(1.13862943611, rel=1e-11)


def test_every_preset_is_valid_and_names_its_source():
    presets = SCHEMES["rope"].presets
    assert len(presets) >= 5
    for preset in presets:
        params = EncodingParams.validated(scheme="rope", seq_len=preset.seq_len, d_model=preset.d_model,
                                          **preset.options)
        assert preset.source and rope_frequency_data(params).inv_freq.size >= 1


def test_a_scaling_types_own_parameters_apply_only_to_it(qtbot, state, compute):
    default = EncodingParams.validated(scheme="rope", d_model=64)
    yarn = default.replaced(rope_type="yarn", factor=4.0)
    assert ", ×" not in default.title() and "beta_fast" not in default.title()
    assert "yarn, ×4, L₀ 4,096" in yarn.title() and "low_freq_factor" not in yarn.title()
    assert "beta_fast" not in yarn.title()  # Hugging Face's default is left out of a title …
    assert yarn.replaced(beta_fast=16.0, truncate=False).title().endswith("beta_fast 16, not truncated")  # … not others
    assert default.slug() == "rope_n128_d64_r10000" and yarn.slug().startswith("rope_n128_d64_r10000_yarn_f4")
    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()

    def shown() -> set[str]:
        return {name for name, control in panel.controls.items() if control.row.isVisible()}

    state.update(scheme="rope", d_model=64)
    state.flush()
    assert shown() == {"seq_len", "d_model", "rope_theta", "partial_rotary_factor", "pairing", "rope_type"}
    state.update(rope_type="llama3")
    state.flush()
    assert {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"} <= shown()
    assert "beta_fast" not in shown()
    state.update(rope_type="yarn")
    state.flush()
    assert {"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"} <= shown() and "low_freq_factor" not in shown()


def test_options_valid_alone_but_not_together_are_refused_naming_the_parameter():
    # 5 channels: Hugging Face turns ceil(5/2) = 3 pairs, 6 channels, more than the head has
    with pytest.raises(ValueError, match=r"partial_rotary_factor: int\(d_model 5 × 1\) = 5; Hugging Face turns"):
        EncodingParams.validated(scheme="rope", d_model=5)
    # an odd rotary dimension fits in 6 channels (2 pairs), but Hugging Face's YaRN fails on it
    assert EncodingParams.validated(scheme="rope", d_model=6, partial_rotary_factor=0.5).d_model == 6
    with pytest.raises(ValueError, match="YaRN ramp has rotary_dim // 2 = 1 values for its 2 frequencies"):
        EncodingParams.validated(scheme="rope", d_model=6, partial_rotary_factor=0.5, rope_type="yarn")


def test_the_frequencies_panel_draws_both_curves_and_the_contexts(qtbot, state, compute):
    panel = RopeFrequenciesPanel(state, compute)
    similarity = SimilarityPanel(state, compute)
    for widget in (panel, similarity):
        qtbot.addWidget(widget)
        widget.resize(800, 600)
        widget.show()
    assert compute.wait_idle()
    assert panel.unavailable_label.isVisible()  # the sinusoidal table is no rotation
    assert "Sinusoidal (Vaswani et al.) gives a table" in panel.unavailable_label.text()
    assert state.update(**{k: v for k, v in LLAMA31.items()}) is None
    state.flush()
    assert compute.wait_idle()
    assert not panel.unavailable_label.isVisible() and similarity.unavailable_label.isVisible()
    shown_by = similarity.unavailable_label.text().split("It is shown by: ")[1]  # where to look instead
    assert {"Heatmap", "Waveforms", "RoPE frequencies"} <= set(shown_by.rstrip(".").split(", "))
    x, y = panel.scaled_curve.getOriginalDataset()
    np.testing.assert_array_equal(y, panel.data.wavelength)
    assert panel.scaled_curve.isVisible() and panel.context_line.isVisible()
    assert [label.text for _, label in legend_entries(panel.legend)] == ["no scaling", "with the scaling type"]
    assert panel.context_line.value() == pytest.approx(math.log10(8192))
    assert "29</b> pairs (unscaled) do not complete one turn within the trained context L₀ = 8,192" in \
        panel.summary_label.text()
    assert panel.extended_line.isVisible() and panel.extended_line.value() == pytest.approx(math.log10(8192 * 8))
    # llama3 keeps pairs with wavelength < L₀/4 = 2,048 (i ≤ 28: 2π·500000^(56/128) = 1,964), smooths
    # those up to L₀ = 8,192 (i ≤ 34), divides the rest: worked from the wavelengths by hand
    assert panel.data.band_ranges == [("high", 0, 28), ("medium", 29, 34), ("low", 35, 63)]
    assert "high 0–28; medium 29–34; low 35–63" in panel.summary_label.text()
    exported = json.loads(export.export_bytes(panel, "json"))
    assert exported["meta"]["pairs_beyond_trained_context"] == 29 and exported["meta"]["extended_context"] == 65536
    assert "Dashed: L₀; dash-dot: L₀ · factor; dotted (orange): N." in panel.summary_label.text()
    np.testing.assert_array_equal(exported["arrays"]["inv_freq"]["data"], panel.data.inv_freq)
    state.update(rope_type="default")
    state.flush()
    assert compute.wait_idle()
    assert not panel.scaled_curve.isVisible() and not panel.context_line.isVisible()
    # the legend lists what is drawn: no entry (pyqtgraph's crossed-eye icon) for the hidden curve
    assert [label.text for _, label in legend_entries(panel.legend)] == ["no scaling"]
    assert "Dashed" not in panel.summary_label.text()  # no trained context: no dashed line, and none named


@pytest.mark.parametrize("pairing", ["halves", "interleaved"])
def test_the_heatmap_and_waveforms_show_the_rotation_in_the_pairings_channel_order(qtbot, state, compute, pairing):
    heatmap, waveforms = HeatmapPanel(state, compute), WaveformsPanel(state, compute)
    for widget in (heatmap, waveforms):
        qtbot.addWidget(widget)
        widget.resize(800, 600)
        widget.show()
    # head 8, rotary 0.5: pairs θ_0 = 10000^0 = 1 and θ_1 = 10000^(-2/4) = 0.01 rotate 4 channels, 4 pass.
    assert state.update(scheme="rope", seq_len=64, d_model=8, partial_rotary_factor=0.5, pairing=pairing) is None
    state.flush()
    assert compute.wait_idle()
    assert not heatmap.unavailable_label.isVisible() and not waveforms.unavailable_label.isVisible()
    values = heatmap.data.values
    cos_channels, sin_channels = ([0, 1], [2, 3]) if pairing == "halves" else ([0, 2], [1, 3])
    p = np.arange(64.0)[:, None]
    theta = np.array([1.0, 0.01])
    # One rounding of cos / sin (and of pos / (1/θ)): a few ULPs of values in [−1, 1].
    np.testing.assert_allclose(values[:, cos_channels], np.cos(p * theta), rtol=0, atol=1e-13)
    np.testing.assert_allclose(values[:, sin_channels], np.sin(p * theta), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(values[:, 4:], 1.0)  # unrotated: the angle 0
    assert values[1, sin_channels[0]] == pytest.approx(math.sin(1.0), abs=1e-15)  # R(θ_0)·(1, 0) = (cos 1, sin 1)
    assert "sin(pos · θ_0), θ_0 = 1" in heatmap.describe_cell(1, sin_channels[0])
    assert "cos(pos · θ_1), θ_1 = 0.01" in heatmap.describe_cell(1, cos_channels[1])
    assert "1 (not rotated)" in heatmap.describe_cell(1, 5)
    assert waveforms.unavailable_message() is None
    state.update(scheme="sinusoidal")
    state.flush()
    assert compute.wait_idle() and not heatmap.unavailable_label.isVisible()


ERROR_CASES = [  # (head dim, rope_theta, rope_type, factor, L₀, N, truncate): the worst seen in a random search first
    (256, 150000.0, "yarn", 40.0, 32768, 1000000, False), (96, 10000.0, "yarn", 32.0, 8192, 8192, True),
    (96, 1e6, "llama3", 64.0, 32768, 98311, True), (128, 500000.0, "llama3", 8.0, 8192, 131072, True),
    (96, 500000.0, "dynamic", 32.0, 2048, 1000000, True), (96, 10000.0, "ntk", 8.0, 32768, 98311, True),
    (96, 500000.0, "linear", 8.0, 4096, 4096, True), (96, 1e6, "default", 1.0, 8192, 24583, True),
    (4, 2.0, "default", 1.0, 512, 512, True),
]


@pytest.mark.parametrize("d, theta, rope_type, factor, original, n, truncate", ERROR_CASES)
def test_the_rotations_divisors_are_within_the_error_bound_the_heatmaps_digits_use(d, theta, rope_type, factor,
                                                                                   original, n, truncate):
    from high_precision import rope_inv_freq

    from posenc_gui.model.core.digits import EPS, _divisor_ulps

    params = EncodingParams.validated(scheme="rope", seq_len=n, d_model=d, rope_theta=theta, rope_type=rope_type,
                                      factor=factor, original_max_position_embeddings=original, truncate=truncate)
    cols = params.columns()
    scaling = {"factor": factor, "original_max_position_embeddings": original, "truncate": truncate,
               "max_position_embeddings": original}
    reference = rope_inv_freq(theta, d, rope_type, seq_len=n, **scaling)
    pairs = np.arange(d // 2)  # halves: channel i is the cos of pair i
    for i in pairs:
        relative = abs((Decimal(float(cols.divisor[i])) * reference[i]) - 1)
        bound = float(_divisor_ulps(cols.divisor[i:i + 1], cols.divisor_extra_ulps)[0]) * EPS
        assert float(relative) <= bound, (i, float(relative) / EPS, bound / EPS)


def test_the_command_line_exports_the_frequencies(qapp, tmp_path, capsys):
    out = tmp_path / "freq.csv"
    args = ["frequencies", "-o", str(out), "--scheme", "rope", "--d-model", "128", "--rope-theta", "500000",
            "--rope-type", "llama3", "--factor", "8", "--original-max-position-embeddings", "8192"]
    assert export_cli.main(args) == 0, capsys.readouterr().err
    table = np.loadtxt(out, delimiter=",")
    assert table.shape == (64, 5) and table[0, 1] == 1.0
    assert export_cli.main(["frequencies", "-o", str(tmp_path / "x.png")]) == export_cli.EXIT_USAGE
    assert "needs a rotation of the queries and keys" in capsys.readouterr().err


def test_a_refused_scheme_leaves_the_drop_down_on_the_scheme_in_use_and_says_why(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    assert state.update(scheme="nope", d_model=33) is None
    state.flush()
    panel.scheme.setCurrentIndex(panel.scheme.findData("rope"))  # 33 channels cannot rotate in pairs
    state.flush()
    assert state.params.scheme == "nope" and panel.scheme.currentData() == "nope"
    assert "= 33; Hugging Face turns ceil(33/2) pairs of channels" in panel.general_error.text()
    assert panel.general_error.isVisible()
    assert state.update(d_model=32) is None
    panel.scheme.setCurrentIndex(panel.scheme.findData("rope"))
    state.flush()
    assert state.params.scheme == "rope" and not panel.general_error.isVisible()


def test_the_parameters_panel_shows_what_hugging_face_warns_about(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    assert state.update(scheme="rope", d_model=64, rope_type="yarn", beta_fast=1.0, beta_slow=2.0) is None
    state.flush()
    assert panel.hf_warning.isVisible() and panel.general_error.isHidden()
    assert "beta_fast (1) must be greater than beta_slow (2)" in panel.hf_warning.text()
    assert panel.export_data()["meta"]["hugging_face_warnings"] == list(panel.hf_warnings(state.params))
    assert state.update(rope_type="default", partial_rotary_factor=0.3) is None  # int(64 × 0.3) = 19
    state.flush()
    assert "= 19 is odd" in panel.hf_warning.text() and "turn 20 channels" in panel.hf_warning.text()
    assert state.update(partial_rotary_factor=1.0) is None
    state.flush()
    assert panel.hf_warning.isHidden() and panel.export_data()["meta"]["hugging_face_warnings"] == []


def test_a_result_on_its_way_when_a_panel_stops_applying_is_dropped(qtbot, state, compute):
    from posenc_gui.views.similarity import SimilarityPanel

    panel = SimilarityPanel(state, compute)
    qtbot.addWidget(panel)
    panel.resize(700, 500)
    panel.show()
    assert compute.wait_idle()
    shown = panel.matrix_data
    assert state.update(d_model=96) is None
    state.flush()  # requests for d_model 96 are on their way …
    assert state.update(scheme="rope", d_model=64) is None
    state.flush()  # … when the panel stops applying
    assert compute.wait_idle()
    assert panel.matrix_data is shown and panel.unavailable_label.isVisible()
    panel.hover.refresh()  # described what it shows, never the current (rotation) scheme's encoding
    assert state.update(seq_len=16) is None  # moves the reference into range: still nothing to compute
    state.flush()
    assert state.view["reference"] == 8 and not compute.is_pending((panel, "profile"))
    assert compute.wait_idle() and panel.matrix_data is shown and panel.profile_data.params.scheme == "sinusoidal"
    assert panel.describe_pair(1, 2).startswith("p 1, q 2")  # the shown (sinusoidal) matrix's pair


def phi35(seq_len=131072):
    preset = next(preset for preset in SCHEMES["rope"].presets if preset.label.startswith("Phi-3.5"))
    return EncodingParams.validated(scheme="rope", seq_len=seq_len, d_model=preset.d_model, **preset.options)


def test_longrope_divides_each_pair_by_its_short_or_long_factor_and_scales_attention():
    from posenc_gui.model.schemes.rope import PHI35_LONG_FACTOR, PHI35_SHORT_FACTOR

    assert len(PHI35_SHORT_FACTOR) == len(PHI35_LONG_FACTOR) == 48  # head 96: 48 rotary pairs
    long, short = rope_frequency_data(phi35()), rope_frequency_data(phi35(seq_len=4096))
    # pair 0: θ_0 = 10000^0 = 1, divided by long_factor[0] = 1.0800000429153442 past L₀ = 4,096;
    # pair 1: θ_1 = 10000^(−2/96) = 0.825404185268…, by short_factor[1] = 1.0199999809265137 within L₀
    assert long.inv_freq[0] == pytest.approx(1 / 1.0800000429153442, rel=1e-15)
    assert short.inv_freq[1] == pytest.approx(0.8254041852680184 / 1.0199999809265137, rel=1e-14)
    # attention factor: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5 ln 2 / (12 ln 2)) = sqrt(17 / 12)
    assert long.attention_factor == pytest.approx(math.sqrt(17 / 12), rel=1e-15)
    assert long.trained_context == 4096 and long.extended_context == 131072
    assert "short 1…2.84, long 1.08…64.84" in phi35().title()
    # empty lists: 1 for every pair, so longrope's frequencies are the unscaled ones
    plain = rope_frequency_data(EncodingParams.validated(scheme="rope", d_model=96, rope_type="longrope"))
    np.testing.assert_array_equal(plain.inv_freq, plain.unscaled)
    with pytest.raises(ValueError, match="short_factor must hold 48 numbers"):
        EncodingParams.validated(scheme="rope", d_model=96, rope_type="longrope", short_factor=(1.0, 2.0))


def test_the_factor_lists_are_typed_in_the_parameters_panel_and_refused_naming_the_field(qtbot, state, compute):
    panel = ParametersPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    assert state.update(scheme="rope", d_model=8, rope_type="longrope") is None
    state.flush()
    control = panel.controls["short_factor"]
    assert control.row.isVisible() and panel.controls["long_factor"].row.isVisible()
    assert not panel.controls["beta_fast"].row.isVisible()
    qtbot.keyClicks(control.editor, "1, 2")  # head 8: 4 pairs, not 2
    state.flush()
    assert "short_factor must hold 4 numbers" in control.error.text() and state.params.options["short_factor"] == ()
    control.editor.clear()
    qtbot.keyClicks(control.editor, "1, 2, 4, 8")
    state.flush()
    assert state.params.options["short_factor"] == (1.0, 2.0, 4.0, 8.0) and not control.error.isVisible()


def test_the_factor_lists_come_from_the_command_line_and_sessions(qapp, tmp_path, capsys):
    from posenc_gui.session import SessionError, parse_session, session_dict, Session

    out = tmp_path / "freq.json"
    args = ["frequencies", "-o", str(out), "--scheme", "rope", "--d-model", "8", "--rope-type", "longrope",
            "--short-factor", "1,2,4,8", "--seq-len", "100"]
    assert export_cli.main(args) == 0, capsys.readouterr().err
    exported = json.loads(out.read_text())
    # within L₀ (4,096 by default) the short factors: θ = (1, 0.1, 0.01, 0.001) / (1, 2, 4, 8)
    np.testing.assert_allclose(exported["arrays"]["inv_freq"]["data"], [1.0, 0.05, 0.0025, 0.000125], rtol=1e-14)
    assert exported["params"]["short_factor"] == [1.0, 2.0, 4.0, 8.0]
    params = EncodingParams.validated(scheme="rope", d_model=8, rope_type="longrope", long_factor=(1.0, 2.0, 3.0, 4.0))
    document = session_dict(Session(params, {}, {}, {}, None))
    assert parse_session(json.dumps(document).encode()).params == params
    document["params"]["long_factor"] = [1.0, "2", 3.0, 4.0]
    with pytest.raises(SessionError, match="params.long_factor must be an array of numbers"):
        parse_session(json.dumps(document).encode())

"""The rope scheme (registry, specs, presets) and its Frequencies panel."""

import json
import math

import numpy as np
import pytest

from posenc_gui import export, export_cli
from posenc_gui.model import SCHEMES, EncodingParams, rope_frequencies
from posenc_gui.model.rope_data import rope_frequency_data
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.parameters import ParametersPanel
from posenc_gui.views.rope_frequencies import RopeFrequenciesPanel

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
    with pytest.raises(ValueError, match=r"partial_rotary_factor: int\(d_model 6 × 0.5\) = 3 rotated channels"):
        EncodingParams.validated(scheme="rope", d_model=6, partial_rotary_factor=0.5)
    with pytest.raises(ValueError, match="high_freq_factor"):
        EncodingParams.validated(scheme="rope", rope_type="llama3", low_freq_factor=4.0, high_freq_factor=1.0)


def test_the_frequencies_panel_draws_both_curves_and_the_contexts(qtbot, state, compute):
    panel = RopeFrequenciesPanel(state, compute)
    heatmap = HeatmapPanel(state, compute)
    for widget in (panel, heatmap):
        qtbot.addWidget(widget)
        widget.resize(800, 600)
        widget.show()
    assert compute.wait_idle()
    assert panel.unavailable_label.isVisible()  # the sinusoidal table is no rotation
    assert "Sinusoidal (Vaswani et al.) gives a table" in panel.unavailable_label.text()
    assert state.update(**{k: v for k, v in LLAMA31.items()}) is None
    state.flush()
    assert compute.wait_idle()
    assert not panel.unavailable_label.isVisible() and heatmap.unavailable_label.isVisible()
    assert heatmap.unavailable_label.text().endswith("It is shown by: RoPE frequencies.")  # where to look instead
    x, y = panel.scaled_curve.getOriginalDataset()
    np.testing.assert_array_equal(y, panel.data.wavelength)
    assert panel.scaled_curve.isVisible() and panel.context_line.isVisible()
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
    np.testing.assert_array_equal(exported["arrays"]["inv_freq"]["data"], panel.data.inv_freq)
    state.update(rope_type="default")
    state.flush()
    assert compute.wait_idle()
    assert not panel.scaled_curve.isVisible() and not panel.context_line.isVisible()


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
    assert "33 rotated channels; they must be even" in panel.general_error.text()
    assert panel.general_error.isVisible()
    assert state.update(d_model=32) is None
    panel.scheme.setCurrentIndex(panel.scheme.findData("rope"))
    state.flush()
    assert state.params.scheme == "rope" and not panel.general_error.isVisible()


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

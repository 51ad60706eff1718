"""The learned scheme (an untrained table, N(0, σ²) per entry): its specs, the model functions the table panels use,
and every panel of the window with it (and with xPos, the other scheme of this module's commit).

Values are checked against :func:`~posenc_gui.model.bias.learned_values` (tested entry by entry in
``tests/test_model_bias.py``) or against statistics of independent normals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_gui.model import OPTION_SPECS, SCHEMES, EncodingParams, encode, learned_values
from posenc_gui.model.analyses.analysis import pe_norms
from posenc_gui.model.core.digits import entry_with_error, shown_number
from posenc_gui.model.analyses.closest import range_uniqueness
from posenc_gui.model.analyses.similarity import similarity_matrix
from waiting import TIMEOUT_S

LEARNED = {"scheme": "learned"}


def params_of(seq_len: int = 64, d_model: int = 16, **options) -> EncodingParams:
    return EncodingParams.validated(scheme="learned", seq_len=seq_len, d_model=d_model, **options)


def test_the_scheme_is_a_seeded_table_with_sigma_and_seed():
    info = SCHEMES["learned"]
    assert info.family == "table" and info.provides == frozenset({"table"}) and info.exact
    assert [spec.name for spec in info.options] == ["sigma", "seed"]
    assert (info.spec("sigma").default, info.spec("seed").default) == (0.02, 0)
    assert OPTION_SPECS["sigma"] is info.spec("sigma") and OPTION_SPECS["seed"] is info.spec("seed")
    assert "untrained baseline" in info.summary and "model files" in info.summary
    chosen = params_of(512, 768, sigma=0.05, seed=3)
    assert chosen.title() == "learned: 512 positions × d_model 768, σ 0.05, seed 3"
    assert chosen.slug() == "learned_n512_d768_sigma0.05_s3"


@pytest.mark.parametrize("values, message", [
    ({"sigma": 0.0}, "sigma must be"),
    ({"sigma": 1001.0}, "sigma must be"),
    ({"seed": -1}, "seed must be in 0…2147483647"),
    ({"seed": 2**31}, "seed must be in 0…2147483647"),
    ({"seed": 1.5}, "seed must be"),
])
def test_bad_options_are_refused_naming_the_parameter(values, message):
    with pytest.raises(ValueError, match=message):
        params_of(**values)


def test_the_presets_are_bert_and_gpt2_at_huggingfaces_initializer_range():
    presets = {preset.label.split(",")[0]: preset for preset in SCHEMES["learned"].presets}
    assert (presets["BERT-base"].seq_len, presets["BERT-base"].d_model) == (512, 768)
    assert (presets["GPT-2"].seq_len, presets["GPT-2"].d_model) == (1024, 768)
    for preset in presets.values():
        assert dict(preset.options) == {"sigma": 0.02} and "initializer_range 0.02" in preset.source
        params_of(preset.seq_len, preset.d_model, **preset.options)


def test_encode_gives_the_seeded_entries_at_any_positions():
    positions = np.array([3.0, 1_048_575.0, 0.0, 17.5])
    table = encode("learned", positions, 64, sigma=0.5, seed=4)
    np.testing.assert_array_equal(table, learned_values(positions, np.arange(64), sigma=0.5, seed=4))
    np.testing.assert_array_equal(table[3], encode("learned", [17.0], 64, sigma=0.5, seed=4)[0])
    np.testing.assert_array_equal(encode("learned", positions, 64, dims=[5, 60], sigma=0.5, seed=4), table[:, [5, 60]])
    # σ scales every entry: the draws themselves do not change (σ·z, the product rounded once)
    np.testing.assert_array_equal(encode("learned", positions, 64, sigma=1.0, seed=4) * 0.5, table)
    assert not np.array_equal(encode("learned", positions, 64, sigma=0.5, seed=5), table)


def test_every_digit_of_an_entry_is_the_tables_own():
    chosen = params_of(128, 16, seed=1)
    value, error = entry_with_error(chosen, 100, 7)
    assert value == learned_values([100.0], [7], seed=1)[0, 0] and error == 0.0
    assert "no digit certain" not in shown_number(value, error)


def test_the_analyses_see_independent_random_vectors():
    # d 512, σ 0.02: ‖PE(p)‖² = σ²·χ²_512, mean σ²·512 = 0.2048 and relative spread √(2/512) = 6.25 %
    chosen = params_of(256, 512)
    norms = pe_norms("learned", np.arange(256.0), 512, **chosen.scheme_kwargs())
    assert np.mean(norms**2) == pytest.approx(0.02**2 * 512, rel=6 * 0.0625 / 16)  # 256 norms: σ of the mean / 16
    # PE(p)·PE(q) for p ≠ q: mean 0, standard deviation σ²·√512 = 0.00905, nothing like ‖PE‖² = 0.2048
    dots = similarity_matrix("learned", np.arange(256.0), 512, metric="dot", **chosen.scheme_kwargs())
    off = dots[~np.eye(256, dtype=bool)]
    assert abs(off.mean()) < 6 * 0.02**2 * math.sqrt(512) / math.sqrt(off.size / 2)
    assert off.std() == pytest.approx(0.02**2 * math.sqrt(512), rel=0.05)
    # no two positions are near: ‖PE(p) − PE(q)‖² = σ²·χ²_2d, about 2σ²d = 0.8192 (d 512); the closest of the
    # 32,640 pairs of 256 positions is a few spreads (√(8/d)·… of 12.5 %) below: above half of √0.8192
    found = range_uniqueness("learned", 256, 512, **chosen.scheme_kwargs())
    assert found.pairs_range == 256 and found.method == "all pairs"
    p, q, distance = found.closest_pair
    assert distance > 0.5 * math.sqrt(2 * 0.02**2 * 512) and p != q
    assert distance == pytest.approx(float(np.linalg.norm(np.diff(encode(
        "learned", [p, q], 512, **chosen.scheme_kwargs()), axis=0))), rel=1e-12)


def _error_shown(panel) -> str:
    from posenc_gui.views.base import MESSAGE_STYLES

    label = panel.message_label
    return label.text() if label.isVisibleTo(panel) and label.styleSheet() == MESSAGE_STYLES["error"] else ""


@pytest.mark.parametrize("values", [
    dict(scheme="learned", seq_len=64, d_model=16),
    dict(scheme="learned", seq_len=1_048_576, d_model=64),
    dict(scheme="xpos", seq_len=64, d_model=16),
    dict(scheme="xpos", seq_len=1_048_576, d_model=64),
], ids=["learned", "learned-1M", "xpos", "xpos-1M"])
def test_every_panel_of_the_window_shows_the_scheme_or_says_why(make_window, tmp_path, values):
    from posenc_gui import export

    window = make_window(restore=False)
    # Every panel built first, with the default scheme: the Permutation demo's constructor computes without
    # asking whether it applies, so built while xPos is chosen it shows the model's refusal as an error
    # instead of its notice (views/permutation.py, reported; once built it says why, as tested here)
    for panel_id in window.panels:
        window.raise_panel(panel_id)
    assert window.compute.wait_idle(TIMEOUT_S)
    assert window.state.update(**values) is None
    window.state.flush()
    assert window.compute.wait_idle()
    info = SCHEMES[values["scheme"]]
    shown = []
    for panel_id, panel in window.panels.items():
        window.raise_panel(panel_id)
        assert window.compute.wait_idle(TIMEOUT_S)
        assert _error_shown(panel) == "", (panel_id, _error_shown(panel))
        if panel.unavailable_label.isVisible() and panel.unavailable_reason(window.state.params) is None:
            # not for the scheme: for want of a model file (the Decoder), which it asks for
            assert "Open a" in panel.unavailable_label.text(), panel_id
            continue
        if panel.unavailable_label.isVisible():
            assert not type(panel).shows(info), panel_id
            assert info.label in panel.unavailable_label.text(), panel_id
            with pytest.raises(export.ExportError, match="does not apply"):
                export.export_panel(panel, tmp_path / f"{panel_id}.png")
            continue
        shown.append(panel_id)
        if values["seq_len"] <= 4096:  # at 1,048,576 positions some panels' data exports refuse (N × N values)
            data = panel.export_data()
            assert data.get("arrays") or data.get("meta"), panel_id
            numbers = [np.asarray(a, dtype=np.float64) for a in (data.get("arrays") or {}).values()]
            assert all(np.isfinite(a).any() or a.size == 0 for a in numbers), panel_id
        path = tmp_path / f"{panel_id}.png"
        assert export.export_panel(panel, path, width=600) == path and path.stat().st_size > 0
        assert _error_shown(panel) == "", panel_id
    if info.family == "table":  # every panel of a table applies
        assert {"heatmap", "waveforms", "similarity", "uniqueness", "magnitude", "linear_relation", "spectrum",
                "addition", "logits"} <= set(shown), shown
    else:
        assert {"heatmap", "waveforms", "logits"} <= set(shown), shown

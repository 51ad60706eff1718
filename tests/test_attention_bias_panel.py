"""The Attention bias panel: the bias matrix of one head, ALiBi's slopes and T5's bucket map, from the model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posenc_gui import export
from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams, t5_random_table
from posenc_gui.model.bias.data import attention_bias_data, bias_at
from posenc_gui.model.attention.logits import positional_logits
from posenc_gui.model.core.sampling import AxisSample
from posenc_gui.views.attention_bias import AttentionBiasPanel
from posenc_gui.views.plotkit import MASKED_COLOUR
from posenc_gui.views.registry import panel_classes
import helpers_panels
from helpers_panels import settle_debounced


def show_panel(qtbot, state, compute, size=(1200, 700)) -> AttentionBiasPanel:
    return helpers_panels.show_panel(qtbot, AttentionBiasPanel(state, compute), size, settle=False)


def change(qtbot, panel, compute, **values):
    assert panel.state.update(**values) is None
    settle_debounced(panel)


def test_registered_after_the_precision_panel_and_only_for_biases(state):
    ids = [cls.panel_id for cls in panel_classes()]
    assert ids.index("bias") == ids.index("precision") + 1
    assert AttentionBiasPanel.requires == frozenset({"bias"})
    for scheme, shown in (("alibi", True), ("t5", True), ("sinusoidal", False), ("rope", False)):
        assert AttentionBiasPanel.shows(EncodingParams.validated(scheme=scheme).info) == shown


def test_alibis_matrix_and_slopes_follow_the_head(qtbot, state, compute):
    state.update(scheme="alibi", seq_len=16, d_model=8)
    panel = show_panel(qtbot, state, compute)
    settle_debounced(panel)  # with the re-sampling after a resize
    data = panel.data
    assert data.params == state.params and data.rows.stride == data.cols.stride == 1
    np.testing.assert_array_equal(panel.matrix.values, positional_logits("alibi", range(16), range(16), d_model=8))
    # causal: the upper triangle (keys after the query) is masked, drawn as transparent cells over the grey view
    image = panel.matrix.image.image
    assert np.all(np.isnan(image[np.triu_indices(16, 1)])) and np.all(np.isfinite(image[np.tril_indices(16)]))
    assert panel.matrix.view_box.background.brush().color().name() == MASKED_COLOUR
    # 8 heads: slopes 2^(−k), k = 1 … 8, exact powers of two; head 0's is 1/2, marked
    x, y = panel.slopes.getOriginalDataset()
    np.testing.assert_array_equal(x, range(8))
    np.testing.assert_array_equal(y, 2.0 ** -np.arange(1, 9))
    assert panel.chosen.getOriginalDataset()[1].tolist() == [0.5] and panel.slopes.isVisible()
    assert not panel.bucket_curve.isVisible()
    before = panel.matrix.values.copy()
    change(qtbot, panel, compute, head=3)  # 2^(−4) = 1/16: every finite bias × (1/16)/(1/2) = 1/8, exactly
    finite = np.isfinite(before)
    np.testing.assert_array_equal(panel.matrix.values[finite], before[finite] / 8)
    assert np.all(np.isneginf(panel.matrix.values[~finite]))
    assert panel.chosen.getOriginalDataset()[0].tolist() == [3.0] and panel.chosen.getOriginalDataset()[1].tolist() == [0.0625]
    summary = panel.summary_label.text()
    assert "slope m = <b>0.0625</b> = 2^−4" in summary and "8 is a power of two" in summary
    assert panel.side_plot.getAxis("left")._tickLevels[0][-1] == (np.log10(1 / 256), "1/256")
    panel.hover.hover((5, 3))
    assert panel.hover_line.text() == "query m 5, key n 3 (n − m = -2): bias -0.125"  # −(5 − 3)/16
    panel.hover.hover((3, 5))
    assert panel.hover_line.text() == "query m 3, key n 5 (n − m = 2): bias masked (−inf)"
    change(qtbot, panel, compute, symmetric=True)
    np.testing.assert_array_equal(panel.matrix.values, panel.matrix.values.T)
    assert panel.hover_line.text() == "query m 3, key n 5 (n − m = 2): bias -0.125"  # the hover follows the data
    assert not np.isnan(panel.matrix.image.image).any() and panel.data.masked == 0


def test_a_head_count_that_is_no_power_of_two_is_explained(qtbot, state, compute):
    state.update(scheme="alibi", seq_len=8, d_model=8, n_heads=12, head=8)
    panel = show_panel(qtbot, state, compute)
    settle_debounced(panel)  # with the re-sampling after a resize
    # c = 8: heads 8 … 11 take 16 heads' slopes at k = 1, 3, 5, 7: 2^(−1/2), 2^(−3/2), 2^(−5/2), 2^(−7/2)
    np.testing.assert_allclose(panel.slopes.getOriginalDataset()[1][8:], 2.0 ** -(np.arange(1, 8, 2) / 2), rtol=4e-16, atol=0)
    summary = panel.summary_label.text()
    assert "12 is not a power of two: heads 0–7 have the slopes of 8 heads, heads 8–11 every other slope of 16, " \
           "so head 8 has the largest" in summary


def test_t5s_bucket_map_and_bias_follow_the_direction(qtbot, state, compute):
    state.update(scheme="t5", seq_len=200, d_model=64, n_heads=2, head=1, seed=4)
    panel = show_panel(qtbot, state, compute)
    settle_debounced(panel)  # with the re-sampling after a resize
    data = panel.data
    table = t5_random_table(32, 2, 4, sigma=1 / 8)  # σ = 64^−0.5
    np.testing.assert_array_equal(data.table, table)
    rows, cols = data.rows.indices(), data.cols.indices()
    np.testing.assert_array_equal(panel.matrix.values, positional_logits(
        "t5", rows, cols, d_model=64, n_heads=2, head=1, seed=4))
    assert not np.isnan(panel.matrix.image.image).any()  # bidirectional: nothing masked
    # the steps: edges at run starts − 1/2; the last bucket of the keys before (15) up to distance 91 (8·16^(7/8) =
    # 90.5), then 14 …; after the query the upper half: 16 + 1 at +1, 31 from +91 on
    edges, buckets = panel.bucket_curve.getData()
    assert edges[0] == -199.5 and edges[-1] == 199.5 and buckets[0] == 15 and buckets[-1] == 31
    assert edges[1] == -90.5  # bucket 15 for −199 … −91
    assert panel.halves_line.isVisible() and panel.halves_line.value() == 15.5
    assert not panel.masked_region.isVisible() and panel.exact_lines[1].value() == 8
    assert not panel.slopes.isVisible()
    summary = panel.summary_label.text()
    assert "bidirectional (encoder): buckets 0–15 for keys at or before the query, 16–31 after it" in summary
    assert "from distance 91 on, every key shares its side's last bucket" in summary
    assert "untrained draw (seed 4" in summary and "σ = d_model^−0.5 = 0.125" in summary
    assert "not a trained model's" in summary
    panel.hover.hover((100, 103))  # relative +3: bucket 16 + 3
    assert panel.hover_line.text() == f"query m 100, key n 103 (n − m = 3, bucket 19): bias {table[19, 1]:.10g}"
    change(qtbot, panel, compute, bidirectional=False)
    assert panel.masked_region.isVisible() and not panel.halves_line.isVisible()
    assert not panel.exact_lines[1].isVisible() and panel.exact_lines[0].value() == -16
    assert panel.hover_line.text() == "query m 100, key n 103 (n − m = 3, bucket 0): bias masked (−inf)"
    masked = np.isnan(panel.matrix.image.image)
    assert np.array_equal(masked, np.less.outer(rows, cols))  # query m < key n: the key after the query
    assert "causal (decoder): keys after the query masked" in panel.summary_label.text()


def test_a_million_positions_are_sampled_and_said_exact(qtbot, state, compute):
    state.update(scheme="alibi", seq_len=1_048_576, head=3)
    panel = show_panel(qtbot, state, compute)
    settle_debounced(panel)  # with the re-sampling after a resize
    data = panel.data
    assert data.rows.stride > 1 and data.matrix.shape == (data.rows.count, data.cols.count)
    assert data.matrix.size <= 1200 * 700
    # the bias at a sampled pair is the bias there: the last sampled query, the key 0, −m·position
    assert data.matrix[-1, 0] == -data.rows.indices()[-1] / 16
    caption = panel.figure_caption()
    assert "(the bias at each sampled pair is exact)" in caption and panel.sampling_label.isVisible()
    change(qtbot, panel, compute, scheme="t5")
    assert panel.data.buckets.farthest == 91 and panel.side_plot.getViewBox().viewRange()[0][1] == pytest.approx(
        1.2 * 128)  # the map's structure in view, not ±1,048,575
    assert "Bucket map: exact at every relative position; beyond ±91 each side keeps its last bucket." in \
        panel.figure_caption()


def test_the_export_holds_the_matrix_its_positions_and_the_schemes_structure(qtbot, state, compute, tmp_path):
    state.update(scheme="t5", seq_len=12, d_model=16, bidirectional=False)
    panel = show_panel(qtbot, state, compute)
    settle_debounced(panel)  # with the re-sampling after a resize
    exported = panel.export_data()
    arrays, meta = exported["arrays"], exported["meta"]
    assert list(arrays)[0] == "bias" and arrays["bias"].shape == (12, 12)
    np.testing.assert_array_equal(arrays["query_positions"], range(12))
    np.testing.assert_array_equal(arrays["bucket_runs"][:, 0], panel.data.buckets.starts)
    assert arrays["table"].shape == (32, 8) and meta["table_sigma"] == 0.25 and meta["masked_cells"] == 66
    document = json.loads(export.export_bytes(panel, "json"))
    assert document["arrays"]["bias"]["data"][0][1] is None  # −inf in JSON
    path = tmp_path / "bias.csv"
    export.export_panel(panel, path)
    np.testing.assert_array_equal(np.loadtxt(path, delimiter=","), arrays["bias"])  # −inf read back


def test_the_command_line_exports_the_chosen_head(qapp, tmp_path, capsys):
    out = tmp_path / "b.json"
    args = ["bias", "-o", str(out), "--scheme", "alibi", "--n-heads", "12", "--head", "3", "--seq-len", "16"]
    assert export_cli.main(args) == export_cli.EXIT_OK, capsys.readouterr().err
    document = json.loads(out.read_text())
    assert document["params"]["n_heads"] == 12 and document["meta"]["slope"] == 0.0625  # head 3 of c = 8: 2^−4
    assert len(document["arrays"]["slopes"]["data"]) == 12
    assert export_cli.main(["bias", "-o", str(out), "--scheme", "alibi", "--n-heads", "4", "--head", "4"]) == \
        export_cli.EXIT_USAGE
    assert "head must be 0…3" in capsys.readouterr().err
    assert export_cli.main(["bias", "-o", str(tmp_path / "s.png"), "--scheme", "sinusoidal"]) == \
        export_cli.EXIT_USAGE
    assert "needs a bias added to the attention logits" in capsys.readouterr().err


def test_the_model_refuses_what_it_cannot_show():
    sinusoidal = EncodingParams.validated(scheme="sinusoidal", seq_len=8, d_model=4)
    alibi = EncodingParams.validated(scheme="alibi", seq_len=8, d_model=4)
    whole = AxisSample(0, 1, 8)
    with pytest.raises(ValueError, match="adds no bias to the logits"):
        attention_bias_data(sinusoidal, whole, whole)
    with pytest.raises(ValueError, match=r"rows must sample positions in 0…7"):
        attention_bias_data(alibi, AxisSample(0, 2, 5), whole)
    with pytest.raises(ValueError, match="key must be in 0…7"):
        bias_at(alibi, 0, 8)
    assert bias_at(alibi, 7, 1) == (-3.0, None)

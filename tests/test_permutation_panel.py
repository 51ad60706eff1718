"""Permutation demo dock: what the panel holds after the user changes its inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from PySide6.QtCore import QPointF

from posenc_gui.model.attention import permutation_demo
from posenc_gui.views.plotkit import SEQUENTIAL
from posenc_gui.views.matrix_items import colour_indices, lookup_table
from posenc_gui.views.permutation import PermutationPanel
from waiting import TIMEOUT_S


@pytest.fixture
def panel(qtbot, state, compute):
    widget = PermutationPanel(state, compute)
    qtbot.addWidget(widget)
    compute.wait_idle()
    return widget


def _settle(panel) -> None:
    panel.state.flush()
    assert panel.compute.wait_idle()


def test_registered_in_the_view_menu():
    from posenc_gui.views import panel_classes

    assert PermutationPanel in panel_classes()
    assert PermutationPanel.panel_id == "permutation" and PermutationPanel.title == "Permutation demo"
    assert "softmax" in PermutationPanel.help_text


def test_default_sentences_with_position(panel):
    demo = panel.demo
    assert demo is not None
    assert demo.tokens_a == ("dog", "bites", "man") and demo.tokens_b == ("man", "bites", "dog")
    assert demo.d_model == 8 and demo.scheme == panel.state.params.scheme
    z_a = panel.figure.matrices["Z_a"]
    np.testing.assert_array_equal(z_a.values, demo.with_pe.trace_a.output)
    assert z_a.row_words == ("dog", "bites", "man")
    np.testing.assert_array_equal(panel.figure.matrices["PE_b"].values, demo.with_pe.trace_b.positional)
    # The verdict states the measured numbers of both modes.
    text = panel.verdict_label.text()
    assert f"{demo.without_pe.max_abs_diff_output:.1e}" in text
    assert f"they differ by {demo.with_pe.max_abs_diff_output:.2g}" in text
    assert "same rows permuted" in text
    assert not panel.message_label.isVisible() or panel.message_label.text() == ""


def test_rows_are_words_with_the_first_word_on_top(panel, qtbot):
    matrix = panel.figure.matrices["A_b"]
    assert matrix.row_labels() == [(0, "man"), (1, "bites"), (2, "dog")]
    attention = panel.demo.with_pe.trace_b.attention
    np.testing.assert_array_equal(matrix.values, attention)
    # The image holds the matrix row-major: pixel (j, i) is A[i, j] ...
    table = lookup_table(SEQUENTIAL)
    image = matrix.image
    assert (image.width(), image.height()) == (3, 3)
    for i, j in ((0, 0), (0, 2), (2, 1)):
        expected = table[colour_indices(attention[i, j], (0.0, 1.0))]
        assert image.pixelColor(j, i).getRgb()[:3] == tuple(int(c) for c in expected)
    # ... and on screen row 0 (the first word) is at the top: sample each cell's corner.
    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    grabbed = panel.canvas.grab().toImage()
    ratio = grabbed.devicePixelRatio()
    for i, j in ((0, 0), (1, 2), (2, 0)):
        cell = matrix.cell_rect(i, j)
        corner = panel.canvas.mapFromScene(matrix.mapToScene(cell.topLeft() + QPointF(2, 2)))
        expected = table[colour_indices(attention[i, j], (0.0, 1.0))]
        got = grabbed.pixelColor(int(corner.x() * ratio), int(corner.y() * ratio)).getRgb()[:3]
        assert np.abs(np.array(got) - expected).max() <= 2, (i, j, got, expected)
    assert matrix.cell_rect(0, 0).y() < matrix.cell_rect(1, 0).y() < matrix.cell_rect(2, 0).y()


def test_cells_show_the_numbers(panel):
    matrix = panel.figure.matrices["A_a"]
    values = panel.demo.with_pe.trace_a.attention
    texts = matrix.annotations()
    assert len(texts) == values.size
    assert [float(t) for t in texts] == pytest.approx(values.ravel().tolist(), abs=0.005)


def test_a_base_step_lays_out_only_the_numbers_and_the_cells_show_the_new_ones(panel, qtbot):
    panel.show()
    qtbot.waitExposed(panel)
    matrix = panel.figure.matrices["X_a"]  # X = E + PE: every value moves with the base
    matrix._layout_now()
    frame, before = matrix._frame, matrix.annotations()
    panel.state.update(base=500.0)
    _settle(panel)
    panel.canvas.grab()  # paints, laying the matrix out again
    assert matrix._frame is frame  # the same title, ticks and labels
    texts = matrix.annotations()
    assert texts != before
    drawn = [text for _, cells in matrix._layout_now()[4][1] for _, text in cells]
    assert sorted(drawn) == sorted(texts)
    # New words or a new title lay the frame out again.
    panel.sentence_b_edit.setText("bites man dog")
    _settle(panel)
    panel.canvas.grab()
    assert panel.figure.matrices["X_b"]._layout_now()[1].startswith("b: bites man dog")


def test_a_base_step_redraws_the_position_matrices_and_leaves_the_word_embeddings_alone(panel, qtbot):
    panel.show()
    qtbot.waitExposed(panel)
    panel.canvas.grab()
    words, positions = panel.figure.matrices["E_a"], panel.figure.matrices["PE_a"]
    word_image, position_image = words.image, positions.image
    embeddings, encodings = words.values.copy(), positions.values.copy()
    panel.state.update(base=500.0)
    _settle(panel)
    assert words.image is word_image  # E does not depend on the base: kept as drawn
    np.testing.assert_array_equal(words.values, embeddings)
    assert positions.image is not position_image  # PE does: drawn anew
    assert not np.array_equal(positions.values, encodings)


def test_changing_a_sentence_updates_the_view(panel, qtbot):
    panel.sentence_b_edit.setText("bites man dog")
    _settle(panel)
    demo = panel.demo
    assert demo.tokens_b == ("bites", "man", "dog")
    assert demo.permutation == (1, 2, 0)
    assert panel.figure.matrices["Z_b"].row_words == ("bites", "man", "dog")
    np.testing.assert_array_equal(panel.figure.matrices["Z_b"].values, demo.with_pe.trace_b.output)
    expected = permutation_demo("dog bites man", "bites man dog", 8, panel.state.params.scheme,
                                panel.state.params.scheme_kwargs())
    np.testing.assert_array_equal(demo.with_pe.trace_b.output, expected.with_pe.trace_b.output)
    assert f"they differ by {expected.with_pe.max_abs_diff_output:.2g}" in panel.verdict_text()


def test_position_switch_shows_the_trace_without_position(panel):
    panel.set_with_position(False)
    _settle(panel)
    demo = panel.demo
    assert not panel.figure.matrices["PE_a"].isVisible() and not panel.figure.matrices["E_b"].isVisible()
    np.testing.assert_array_equal(panel.figure.matrices["X_a"].values, demo.without_pe.trace_a.embeddings)
    np.testing.assert_array_equal(panel.figure.matrices["Z_b"].values, demo.without_pe.trace_b.output)
    # Without position the shown outputs are a's rows reordered.
    z_a, z_b = panel.figure.matrices["Z_a"].values, panel.figure.matrices["Z_b"].values
    np.testing.assert_allclose(z_b, z_a[list(demo.permutation)], rtol=0, atol=1e-12)
    bold = panel.verdict_label.text().split("<b>")[1]
    assert bold.startswith("Without position")
    panel.set_with_position(True)
    _settle(panel)
    assert panel.figure.matrices["PE_a"].isVisible()
    np.testing.assert_array_equal(panel.figure.matrices["X_a"].values, demo.with_pe.trace_a.x)
    assert panel.verdict_label.text().split("<b>")[1].startswith("With position")


def test_demo_d_model_changes_the_matrices(panel):
    panel.set_demo_d_model(5)
    _settle(panel)
    assert panel.demo.d_model == 5
    assert panel.figure.matrices["Q_a"].values.shape == (3, 5)
    assert panel.figure.matrices["S_a"].values.shape == (3, 3)
    assert panel.d_model_spin.maximum() == 64 and panel.d_model_spin.minimum() == 2


def test_scheme_of_the_parameters_panel_is_used(panel, qtbot):
    panel.show()
    qtbot.waitExposed(panel)
    panel.state.update(scheme="naive")
    _settle(panel)
    assert panel.demo.scheme == "naive"
    np.testing.assert_array_equal(panel.figure.matrices["PE_a"].values, np.array([[0.0] * 8, [1.0] * 8, [2.0] * 8]))
    assert "Naive" in panel.scheme_label.text()


def test_four_term_split_adds_up(panel):
    split = panel.demo.split_a
    parts = [panel.figure.matrices[f"split_a_{name}"].values for name in ("e·e", "e·p", "p·e", "p·p")]
    total = panel.figure.matrices["split_a_total"].values
    np.testing.assert_allclose(sum(parts), total, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(total, panel.demo.with_pe.trace_a.scores)
    assert f"{split.max_abs_residual:.1e}" in panel.figure.split_checks["a"]
    assert f"{split.max_abs_residual:.1e}" in panel.figure.check_label.text


def test_not_a_permutation_is_a_message_not_an_error(panel):
    panel.set_sentences("the dog chased another dog", "dog bites man")
    _settle(panel)
    demo = panel.demo
    assert not demo.is_permutation
    text = panel.verdict_label.text()
    assert "not a reordering" in text and "only in b: bites, man" in text
    assert "“dog” occurs more than once" in text
    assert panel.message_label.text() == ""
    # Each sentence is still traced and shown; the two 'dog' rows are identical without position.
    assert panel.figure.matrices["Z_a"].values.shape == (5, 8)
    panel.set_with_position(False)
    _settle(panel)
    z = panel.figure.matrices["Z_a"].values
    np.testing.assert_allclose(z[1], z[4], rtol=0, atol=1e-12)


@pytest.mark.parametrize("which", ["a", "b"])
def test_empty_sentence_shows_the_error_and_keeps_the_last_view(panel, which):
    before = panel.demo
    edit = panel.sentence_a_edit if which == "a" else panel.sentence_b_edit
    edit.setText("  ,,, ")
    _settle(panel)
    assert panel.demo is before
    assert not panel.message_label.isHidden()
    assert f"sentence_{which}" in panel.message_label.text()
    assert "c0392b" in edit.styleSheet()
    edit.setText("man bites dog" if which == "b" else "dog bites man")
    _settle(panel)
    assert panel.message_label.isHidden() and edit.styleSheet() == ""


def test_too_many_words_shows_the_limit(panel):
    panel.set_sentences(None, " ".join(["dog"] * 600))
    _settle(panel)
    assert "512" in panel.message_label.text() and "sentence_b" in panel.message_label.text()


def test_five_hundred_words_work(panel):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in rng.integers(0, 50, 500)]
    shuffled = [words[i] for i in rng.permutation(500)]
    panel.set_sentences(" ".join(words), " ".join(shuffled))
    _settle(panel)
    demo = panel.demo
    assert len(demo.tokens_a) == 500
    assert panel.figure.matrices["A_a"].values.shape == (500, 500)
    assert panel.figure.matrices["A_a"].annotations() == []  # too many cells to write numbers in
    assert f"{demo.without_pe.max_abs_diff_output:.1e}" in panel.verdict_label.text()
    ticks = panel.figure.matrices["A_a"].row_labels()
    assert 0 < len(ticks) <= 25 and ticks[0] == (0, f"0: {words[0]}")


def test_export_data_holds_the_json_dict(panel):
    data = panel.export_data()
    arrays, meta = data["arrays"], data["meta"]
    first = next(iter(arrays))
    assert first == "with_pe_Z_a"
    np.testing.assert_array_equal(arrays[first], panel.demo.with_pe.trace_a.output)
    document = json.loads(json.dumps(meta, allow_nan=False))
    block = document["permutation"]
    assert block["tokens_a"] == ["dog", "bites", "man"]
    for mode in ("without_pe", "with_pe"):
        for key in ("attention_a", "attention_b", "output_a", "output_b",
                    "max_abs_diff_output", "max_abs_diff_attention"):
            assert key in block[mode]
    assert block["with_pe"]["max_abs_diff_output"] == panel.demo.with_pe.max_abs_diff_output
    assert panel.figure_widget() is panel.canvas


def test_figure_renders_with_cells_and_colour(panel, qtbot):
    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    image = panel.figure_widget().grab().toImage()
    assert image.width() >= 800 and image.height() > 900  # tall figure, shown in a scroll area
    pixels = np.array([[image.pixelColor(x, y).rgb() for x in range(0, image.width(), 7)]
                       for y in range(0, image.height(), 7)])
    assert len(np.unique(pixels)) > 50  # heatmaps and text, not a blank canvas


def test_no_graphics_item_is_owned_by_python(panel, qtbot):
    """Python-owned items in a scene are deleted on their own at exit, out of order: a segfault."""
    import shiboken6

    panel.set_sentences("the dog chased another dog", "another dog chased the dog")
    _settle(panel)
    items = panel.canvas.scene().items()
    owned = [type(item).__name__ for item in items if shiboken6.ownedByPython(item)]
    assert owned == []
    # One light item per matrix, not a pyqtgraph plot (axes, view box, menus) each.
    # Rows E, PE, X, Q, K, Q̃, K̃, V, S, A, Z for two sentences; the splits' 5 (added) and 3 (RoPE, bias, a real
    # head's table) each.
    assert len(panel.figure.matrices) == 2 * 12 + 2 * 5 + 2 * 3 + 2 * 3 + 2 * 3  # rows; table, rotation, bias, model
    assert len(items) < 110  # each strip: 3 matrices, a colour bar, a label and its widget, for a and b
    assert all(matrix.scene() is panel.canvas.scene() for matrix in panel.figure.matrices.values())


_EXIT_SCRIPT = r"""
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from posenc_gui.compute import ComputeService
from posenc_gui.state import AppState
from posenc_gui.views.permutation import PermutationPanel
if sys.argv[1] == "window":
    from posenc_gui.mainwindow import MainWindow
    window = MainWindow(restore=False)
    window.show()
    window.raise_panel("permutation")
    panel, compute = window.panels["permutation"], window.compute
else:
    compute = ComputeService()
    panel = PermutationPanel(AppState(), compute)
    panel.resize(1000, 800)
    panel.show()
compute.wait_idle()
for a, b in [("the dog chased another dog", "another dog chased the dog"), ("dog bites man", "man bites dog"),
             ("x y", "y x")]:
    panel.set_sentences(a, b)
    compute.wait_idle()
    app.processEvents()
panel.canvas.grab()
if sys.argv[1] == "window":
    window.close()
    app.processEvents()
print("done", flush=True)
"""


@pytest.mark.parametrize("where", ["panel", "window"])
def test_exit_after_rebuilding_the_plots_does_not_crash(tmp_path, where):
    import os
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")}
    result = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, where], capture_output=True, text=True,
                            env=env, timeout=TIMEOUT_S)
    assert result.stdout.strip() == "done"
    assert result.returncode == 0, result.stderr[-2000:]


def test_a_hidden_dock_waits_for_parameter_changes_until_shown(panel, qtbot):
    before = panel.demo
    panel.state.update(scheme="naive")
    _settle(panel)
    assert panel.demo is before  # hidden: no work
    data = panel.export_data()  # export of a hidden panel computes the current demo itself
    assert data["meta"]["permutation"]["scheme"] == "naive" and data["meta"]["params"]["scheme"] == "naive"
    panel.show()
    qtbot.waitExposed(panel)
    _settle(panel)
    assert panel.demo.scheme == "naive"
    np.testing.assert_array_equal(panel.figure.matrices["PE_a"].values, np.array([[0.0] * 8, [1.0] * 8, [2.0] * 8]))



def test_cell_numbers_are_measured_once_each(panel, qtbot, monkeypatch):
    # The cells' numbers (two decimals) come back on every update; measuring each one for
    # every font size tried, on every paint, took a third of the demo's repaint.
    from posenc_gui.views import matrix_items

    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    panel.figure_widget().grab()
    measured = []
    real = matrix_items._metrics

    class Counting:
        def __init__(self, points):
            self._points, self._metrics = points, real(points)

        def horizontalAdvance(self, text):  # noqa: N802 (Qt name)
            measured.append((self._points, text))
            return self._metrics.horizontalAdvance(text)

        def __getattr__(self, name):
            return getattr(self._metrics, name)

    monkeypatch.setattr(matrix_items, "_metrics", Counting)
    panel.set_demo_d_model(32)  # new numbers in every cell
    _settle(panel)
    panel.figure_widget().grab()
    numbers = [(points, text) for points, text in measured
               if "." in text and text.lstrip("-").replace(".", "", 1).isdigit()]
    assert numbers and len(numbers) == len(set(numbers))


def test_a_window_change_the_demo_does_not_read_leaves_it_alone(panel, qtbot, monkeypatch):
    # The demo has its own d_model: the window's d_model and sequence length
    # change nothing it shows, so nothing is computed or drawn again; the
    # scheme's parameters do change it.
    panel.resize(900, 700)
    panel.show()
    qtbot.waitExposed(panel)
    _settle(panel)
    demo = panel.demo
    submitted = []
    submit = panel.compute.submit
    monkeypatch.setattr(panel.compute, "submit", lambda key, *args, **kwargs: (submitted.append(key),
                                                                             submit(key, *args, **kwargs)))
    for change in ({"d_model": 510}, {"d_model": 512}, {"seq_len": 64}):
        panel.state.update(**change)
        _settle(panel)
    assert submitted == [] and panel.demo is demo
    assert panel.export_data()["meta"]["params"]["seq_len"] == 64  # the export names the current parameters
    panel.state.update(base=500.0)
    _settle(panel)
    assert submitted == [panel] and panel.demo is not demo
    assert "base 500" in panel.figure.title_label.text


# --------------------------------------------------------------------------- RoPE: Q and K rotated


def _on_screen_with(panel, qtbot, scheme: str):
    """``panel`` on screen with ``scheme``'s default parameters, its demo drawn."""
    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.state.update(scheme=scheme) is None
    _settle(panel)
    return panel


@pytest.fixture
def rope_panel(panel, qtbot):
    """The panel on screen with the rope scheme's default parameters."""
    return _on_screen_with(panel, qtbot, "rope")


def test_an_xpos_head_s_switch_and_verdict_name_xpos(panel, qtbot):
    panel = _on_screen_with(panel, qtbot, "xpos")
    assert panel.demo.scheme == "xpos" and panel.demo.rotates
    assert panel.pe_check.text() == "Rotate Q and K by position (xPos)"
    assert f"With xPos they differ by {panel.demo.with_pe.max_abs_diff_output:.2g}" in panel.verdict_text()
    assert "RoPE" not in panel.verdict_text()


def test_rope_shows_the_rotated_queries_and_keys_instead_of_an_added_table(rope_panel):
    panel, demo = rope_panel, rope_panel.demo
    assert panel.unavailable_message() is None and not panel.unavailable_label.isVisible()
    assert demo.scheme == "rope" and demo.rotates
    trace = demo.with_pe.trace_a
    for key in ("Q_rot_a", "K_rot_b", "X_a"):
        assert panel.figure.matrices[key].isVisible(), key
    for key in ("E_a", "PE_b"):  # RoPE adds nothing to X
        assert not panel.figure.matrices[key].isVisible(), key
    np.testing.assert_array_equal(panel.figure.matrices["Q_rot_a"].values, trace.q_rotated)
    np.testing.assert_array_equal(panel.figure.matrices["K_rot_b"].values, demo.with_pe.trace_b.k_rotated)
    np.testing.assert_array_equal(panel.figure.matrices["X_a"].values, trace.embeddings)
    np.testing.assert_array_equal(panel.figure.matrices["S_a"].values, trace.scores)
    assert "Q̃K̃" in panel.figure.step_labels["S"].text
    assert panel.pe_check.text() == "Rotate Q and K by position (RoPE)"
    assert f"With RoPE they differ by {demo.with_pe.max_abs_diff_output:.2g}" in panel.verdict_text()
    # θ_i = 10000^(−2i/8) = 1 … 10000^(−3/4) = 0.001 at the demo's d_k 8, not the window's d_model (RoPE's
    # head dimension, 128 unless set).
    title = panel.figure.title_label.text
    assert panel.state.params.d_model == 128
    assert "d<sub>k</sub> = 8 (not d<sub>model</sub> 128)" in title and "θ<sub>i</sub> = 1 … 0.001" in title


def test_rope_split_is_the_logits_without_and_with_the_rotation(rope_panel):
    panel, demo = rope_panel, rope_panel.demo
    for sentence in ("a", "b"):
        assert not panel.figure.split_strips[f"table_{sentence}"].isVisible()
        assert panel.figure.split_strips[f"rotation_{sentence}"].isVisible()
    without = panel.figure.matrices["split_a_without rotation"].values
    with_rotation = panel.figure.matrices["split_a_with rotation"].values
    np.testing.assert_array_equal(without, demo.without_pe.trace_a.scores)
    np.testing.assert_array_equal(with_rotation, demo.with_pe.trace_a.scores)
    np.testing.assert_array_equal(panel.figure.matrices["split_a_difference"].values, with_rotation - without)
    header = panel.figure.split_header.text
    assert "applies to encodings added to the embeddings only" in header and "without and with the rotation" in header
    assert f"b: {demo.split_b.shift_residual:.1e}" in panel.figure.check_label.text
    assert "depend only on the offset" in panel.figure.check_label.text
    assert f"{demo.split_a.shift_residual:.1e}" in panel.figure.split_checks["a"]


def test_rope_sentence_change_updates_the_rotated_view(rope_panel):
    panel = rope_panel
    panel.sentence_b_edit.setText("bites man dog")
    _settle(panel)
    demo = panel.demo
    assert demo.tokens_b == ("bites", "man", "dog") and demo.permutation == (1, 2, 0)
    expected = permutation_demo("dog bites man", "bites man dog", 8, "rope", panel.state.params.scheme_kwargs())
    np.testing.assert_array_equal(panel.figure.matrices["Q_rot_b"].values, expected.with_pe.trace_b.q_rotated)
    np.testing.assert_array_equal(panel.figure.matrices["Z_b"].values, expected.with_pe.trace_b.output)
    assert panel.figure.matrices["Z_b"].row_words == ("bites", "man", "dog")
    assert f"With RoPE they differ by {expected.with_pe.max_abs_diff_output:.2g}" in panel.verdict_text()
    # Without the rotation the outputs are a's rows reordered, and Q̃, K̃ are not shown.
    panel.set_with_position(False)
    _settle(panel)
    assert not panel.figure.matrices["Q_rot_a"].isVisible()
    z_a, z_b = panel.figure.matrices["Z_a"].values, panel.figure.matrices["Z_b"].values
    np.testing.assert_allclose(z_b, z_a[list(demo.permutation)], rtol=0, atol=1e-12)
    assert panel.verdict_label.text().split("<b>")[1].startswith("Without position")


def test_rope_back_to_a_table_restores_the_four_term_split(rope_panel):
    panel = rope_panel
    assert panel.state.update(scheme="sinusoidal") is None
    _settle(panel)
    assert not panel.demo.rotates and panel.figure.matrices["PE_a"].isVisible()
    assert not panel.figure.matrices["Q_rot_a"].isVisible()
    assert panel.figure.split_strips["table_a"].isVisible() and not panel.figure.split_strips["rotation_a"].isVisible()
    assert "Four-term split" in panel.figure.split_header.text
    assert panel.pe_check.text() == "Add positional encoding"


def test_rope_with_an_odd_demo_d_model_is_an_error_that_keeps_the_view(rope_panel):
    panel = rope_panel
    before = panel.demo
    panel.set_demo_d_model(5)
    _settle(panel)
    assert panel.demo is before
    assert "d_model: the demo head's d_k 5" in panel.message_label.text()
    panel.set_demo_d_model(6)
    _settle(panel)
    assert panel.demo.d_model == 6 and panel.message_label.isHidden()
    assert panel.figure.matrices["Q_rot_a"].values.shape == (3, 6)


def test_rope_export_holds_the_rotation(rope_panel):
    panel = rope_panel
    data = panel.export_data()
    arrays = data["arrays"]
    demo = panel.demo
    np.testing.assert_array_equal(arrays["with_pe_Q_rotated_a"], demo.with_pe.trace_a.q_rotated)
    np.testing.assert_array_equal(arrays["with_pe_S_unrotated_b"], demo.without_pe.trace_b.scores)
    np.testing.assert_array_equal(arrays["split_b_with_rotation"], demo.with_pe.trace_b.scores)
    assert "with_pe_PE_a" not in arrays and "split_a_ee" not in arrays
    document = json.loads(json.dumps(data["meta"], allow_nan=False))
    block = document["permutation"]
    assert block["position"] == "rotation" and block["logit_split"] is None
    assert block["rotation"]["inv_freq"] == demo.with_pe.trace_a.rotation.inv_freq.tolist()


def test_llama31_preset_rotates_at_the_demo_head_with_the_sentence_positions(panel, qtbot):
    panel.resize(1200, 900)
    panel.show()
    qtbot.waitExposed(panel)
    llama = {"scheme": "rope", "d_model": 128, "seq_len": 1_048_576, "rope_theta": 500000.0, "rope_type": "llama3",
             "factor": 8.0, "original_max_position_embeddings": 8192}
    assert panel.state.update(**llama) is None
    _settle(panel)
    rotation = panel.demo.with_pe.trace_a.rotation
    assert rotation.positions.tolist() == [0.0, 1.0, 2.0]  # the sentence's, not the window's 1,048,576
    # θ_3 = 500000^(−3/4)/8 = 6.65e-6: its wavelength 118,000 is above L₀ = 8,192, so llama3 divides by 8.
    assert rotation.inv_freq[3] == pytest.approx(500000.0 ** -0.75 / 8, rel=1e-14)
    assert "θ<sub>i</sub> = 1 … 6.65e-06" in panel.figure.title_label.text and "llama3" in panel.figure.title_label.text


def test_a_rotation_the_demo_does_not_know_says_what_it_needs(panel):
    from types import SimpleNamespace

    from posenc_gui.model import SCHEMES, Scheme

    twist = Scheme(key="twist", label="Twist (test rotation)", summary="Rotates.", formula="q·R·k", order=96,
                   family="rotation")
    assert not PermutationPanel.shows(twist)
    assert PermutationPanel.shows(SCHEMES["rope"]) and PermutationPanel.shows(SCHEMES["nope"])
    assert panel.unavailable_reason(panel.state.params) is None  # sinusoidal: a table to add
    reason = panel.unavailable_reason(SimpleNamespace(info=twist))
    assert reason == ("Twist (test rotation) gives a rotation of the queries and keys, and this panel needs a table "
                      "of positions × dimensions added to the token embeddings, RoPE's rotation of the queries "
                      "and keys, or a bias of the logits.")

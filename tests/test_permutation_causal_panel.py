"""Permutation demo dock with the causal mask: what the panel shows after the user ticks it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from helpers_panels import show_panel
from posenc_gui.model.attention import causal_mask, permutation_demo
from posenc_gui.views.matrix_items import MASKED_RGB, MASKED_TEXT
from posenc_gui.views.permutation import PermutationPanel
from waiting import TIMEOUT_S


@pytest.fixture
def panel(qtbot, state, compute):
    return show_panel(qtbot, PermutationPanel(state, compute), (1200, 900))


def _settle(panel) -> None:
    panel.state.flush()
    assert panel.compute.wait_idle()


@pytest.fixture
def nope_panel(panel):
    assert panel.state.update(scheme="nope") is None
    _settle(panel)
    return panel


def test_the_causal_box_is_in_the_header_and_off_by_default(panel):
    assert panel.causal_check.text() == "Causal mask" and not panel.causal_check.isChecked()
    assert panel.header.indexOf(panel.causal_check) >= 0
    assert not panel.demo.causal
    assert panel.current_options()["causal"] is False
    assert panel.figure.matrices["A_a"].masked is None  # nothing masked without the mask
    assert "Causal mask" in PermutationPanel.help_text and "masked" in PermutationPanel.help_text


def test_ticking_causal_masks_the_future_keys_in_the_view(nope_panel, qtbot):
    panel = nope_panel
    before = panel.figure.matrices["Z_b"].values.copy()
    panel.causal_check.setChecked(True)
    _settle(panel)
    demo = panel.demo
    assert demo.causal and demo.scheme == "nope"
    expected = permutation_demo("dog bites man", "man bites dog", 8, "nope", {}, causal=True)
    np.testing.assert_array_equal(panel.figure.matrices["A_a"].values, expected.with_pe.trace_a.attention)
    np.testing.assert_array_equal(panel.figure.matrices["A_a"].values[0], [1.0, 0.0, 0.0])
    assert not np.array_equal(panel.figure.matrices["Z_b"].values, before)  # the outputs changed
    # The first word's output is its value vector, in the view as in the model.
    np.testing.assert_array_equal(panel.figure.matrices["Z_a"].values[0], panel.figure.matrices["V_a"].values[0])
    for key in ("S_a", "A_b", "split_a_e·e", "split_b_total"):
        np.testing.assert_array_equal(panel.figure.matrices[key].masked, ~causal_mask(3))
    # Masked cells: the neutral colour, no number, "masked" on hover.
    matrix = panel.figure.matrices["A_a"]
    panel.canvas.grab()
    assert matrix.image.pixelColor(2, 0).getRgb()[:3] == MASKED_RGB  # pixel (j=2, i=0): key man, query dog
    assert matrix.image.pixelColor(0, 0).getRgb()[:3] != MASKED_RGB
    texts = matrix.annotations()
    assert texts[1] == texts[2] == texts[5] == "" and texts[0] == "1.00"
    assert matrix.cell_tooltip(0, 2) == MASKED_TEXT == "masked"
    assert matrix.cell_tooltip(1, 0) == f"“bites” × “dog”: {demo.with_pe.trace_a.attention[1, 0]:.6g}"
    assert matrix.cell_at(matrix.cell_rect(0, 2).center()) == (0, 2)
    # The S row's colours span the allowed logits only (the −∞ are not a colour).
    scores = demo.with_pe.trace_a.scores
    assert np.isinf(panel.figure.matrices["S_a"].values).sum() == 3
    assert all(np.isfinite(panel.figure.matrices["S_a"].levels))
    # The verdict says why, with the measured numbers.
    text = panel.verdict_text()
    assert "the causal mask is itself positional" in text and "“dog” 1 → 3, “bites” 2 → 2, “man” 3 → 1" in text
    assert f"they differ by {demo.with_pe.max_abs_diff_output:.2g}" in text
    assert "max |Z[0] − V[0]| = 0 (“dog”, a) and 0 (“man”, b)" in text
    assert "Causal mask" in panel.figure.title_label.text and "keys seen a→b: dog 1→3" in panel.figure.title_label.text
    assert "softmax over keys 0…i" in panel.figure.step_labels["A"].text
    assert "over the keys each word sees" in panel.figure.check_label.text
    assert np.isfinite(scores[panel.demo.with_pe.trace_a.allowed]).all()


def test_hovering_a_masked_cell_shows_masked(nope_panel, qtbot):
    panel = nope_panel
    panel.set_causal(True)
    _settle(panel)
    panel.canvas.grab()
    matrix = panel.figure.matrices["S_b"]
    viewport = panel.canvas.viewport()
    # A mouse move sent to the canvas, as Qt delivers one: the view turns it into the scene's hover events
    # (not QTest.mouseMove, which goes through the window and the cursor that earlier tests left somewhere).
    for (i, j), expected in (((0, 2), "masked"), ((2, 0), f"“dog” × “man”: {matrix.values[2, 0]:.6g}"),
                             ((1, 2), "masked")):
        point = QPointF(panel.canvas.mapFromScene(matrix.mapToScene(matrix.cell_rect(i, j).center())))
        move = QMouseEvent(QEvent.Type.MouseMove, point, viewport.mapToGlobal(point), Qt.MouseButton.NoButton,
                           Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, move)
        assert matrix.toolTip() == expected, (i, j)


def test_unticking_causal_restores_the_equivariant_view(nope_panel):
    panel = nope_panel
    plain = panel.figure.matrices["Z_b"].values.copy()
    panel.apply_options(causal=True)
    _settle(panel)
    panel.apply_options(causal=False)
    _settle(panel)
    assert not panel.demo.causal and panel.figure.matrices["A_a"].masked is None
    np.testing.assert_array_equal(panel.figure.matrices["Z_b"].values, plain)
    assert panel.demo.with_pe.same and "same rows permuted" in panel.verdict_text()
    assert "Causal mask" not in panel.figure.title_label.text


def test_causal_with_rope_masks_the_rotation_split(panel):
    panel.state.update(scheme="rope")
    panel.set_causal(True)
    _settle(panel)
    assert panel.demo.rotates and panel.demo.causal
    np.testing.assert_array_equal(panel.figure.matrices["split_a_difference"].masked, ~causal_mask(3))
    assert "offset n − m" in panel.verdict_text() and "causal mask is itself positional" in panel.verdict_text()


def test_causal_is_an_option_and_a_bad_value_is_refused(panel):
    panel.apply_options(causal=True, sentence_a="a b c", sentence_b="c b a")
    _settle(panel)
    assert panel.current_options() == {"sentence_a": "a b c", "sentence_b": "c b a", "position": True,
                                       "causal": True, "real_head": -1}
    with pytest.raises(ValueError, match="causal"):
        panel.apply_options(causal="on", sentence_a="x y")
    assert panel.causal_check.isChecked() and panel.sentence_a_edit.text() == "a b c"  # nothing changed
    assert any(option.flag == "--causal" and option.boolean for option in PermutationPanel.cli_options)


def test_export_data_of_the_causal_demo(nope_panel):
    panel = nope_panel
    panel.set_causal(True)
    _settle(panel)
    data = panel.export_data()
    assert data["meta"]["causal"] is True
    np.testing.assert_array_equal(data["arrays"]["with_pe_allowed_a"], causal_mask(3))
    document = json.loads(json.dumps(data["meta"], allow_nan=False))
    assert document["permutation"]["causal"] is True
    assert document["permutation"]["with_pe"]["scores_b"][0][1] is None


def test_the_command_line_flag_exports_the_causal_demo(tmp_path):
    import os
    import subprocess
    import sys

    from PySide6.QtGui import QImage

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "figures"
    result = subprocess.run([sys.executable, "-m", "posenc_gui", "export", "permutation", "--causal", "--scheme",
                             "nope", "--format", "png,json", "-o", f"{out}{os.sep}"],
                            capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert result.returncode == 0, result.stderr
    png, = out.glob("*.png")
    document = json.loads(next(out.glob("*.json")).read_text())
    assert document["causal"] is True and document["scheme"] == "nope"
    assert document["with_pe"]["mask"]["keys_seen_b"] == [3, 2, 1]
    assert "the causal mask is itself positional" in document["with_pe"]["verdict"]
    image = QImage(str(png))
    assert image.width() > 800 and image.height() > 800
    # --no-causal: the equivariant demo, as without the flag.
    plain = tmp_path / "plain.json"
    result = subprocess.run([sys.executable, "-m", "posenc_gui", "export", "permutation", "--no-causal",
                             "--scheme", "nope", "-o", str(plain)], capture_output=True, text=True, timeout=TIMEOUT_S,
                            env=env)
    assert result.returncode == 0, result.stderr
    document = json.loads(plain.read_text())
    assert document["causal"] is False and document["with_pe"]["max_abs_diff_output"] <= 1e-15

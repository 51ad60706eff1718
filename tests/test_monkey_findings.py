"""What the monkey (tests/monkey.py) found, each pinned down by a direct test."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from helpers_panels import show_panel
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.parameters import ParametersPanel
from posenc_gui.views.similarity import SimilarityPanel
from posenc_gui.model.panels.table_data import default_dims
from posenc_gui.views.waveforms import WaveformsPanel


def error_shown(panel) -> str:
    text, level = panel._message
    return text if level == "error" and not panel.message_label.isHidden() else ""


def type_dims(panel, text: str) -> None:
    panel.dims_edit.selectAll()
    QTest.keyClicks(panel.dims_edit, text)


def fail_at_d_model(monkeypatch, owner, name: str, d_model: int) -> list[int]:
    """Make ``owner.name`` (a panel's model function) raise for parameters of ``d_model`` (every request, however many the panel makes:
    a resize may add one, and the newest wins); returns the d_model of each call."""
    original = getattr(owner, name)
    calls: list[int] = []

    def compute(params, *args, **kwargs):
        calls.append(params.d_model)
        if params.d_model == d_model:
            raise ValueError("injected failure")
        return original(params, *args, **kwargs)

    monkeypatch.setattr(owner, name, compute)
    return calls


def test_waveforms_asked_to_resample_before_a_smaller_d_model_is_announced_draw_dims_that_fit(
        qtbot, state, compute):
    # A zoom's debounced re-sample can fire in the event-loop turn between a
    # parameter change and its paramsChanged signal (seed 4 of the monkey).
    panel = show_panel(qtbot, WaveformsPanel(state, compute))
    assert max(panel.dims) == 510
    state.update(d_model=64)
    panel.request_update()
    assert compute.wait_idle()
    assert error_shown(panel) == ""
    assert panel.data.params.d_model == 64 and panel.data.dims == default_dims(64)


def test_a_refused_dims_text_replaced_by_the_app_takes_its_message_along(qtbot, state, compute):
    panel = show_panel(qtbot, WaveformsPanel(state, compute))
    type_dims(panel, "-1")
    assert "dims must be" in error_shown(panel)
    state.update(d_model=64)  # the field shows the defaults of the new size
    state.flush()
    assert compute.wait_idle()
    assert panel.dims_edit.text() == ", ".join(map(str, default_dims(64)))
    assert error_shown(panel) == ""


def test_refused_dims_are_tried_again_when_d_model_changes(qtbot, state, compute):
    state.update(d_model=256)
    panel = show_panel(qtbot, WaveformsPanel(state, compute))
    type_dims(panel, "0, 1")
    type_dims(panel, "300")
    assert "0…255" in error_shown(panel)
    state.update(d_model=288)
    state.flush()
    assert compute.wait_idle()
    assert "0…287" in error_shown(panel)  # still refused, for the range that holds now
    state.update(d_model=512)
    state.flush()
    assert compute.wait_idle()
    assert error_shown(panel) == ""
    assert panel.dims_edit.text() == "300" and panel.data.dims == (300,)


@pytest.mark.parametrize("panel_class", [WaveformsPanel, HeatmapPanel])
def test_a_result_clears_the_error_of_a_failed_one(qtbot, state, compute, monkeypatch, panel_class):
    panel = show_panel(qtbot, panel_class(state, compute))
    calls = fail_at_d_model(monkeypatch, panel_class, "model_function", 64)
    state.update(d_model=64)
    state.flush()
    assert compute.wait_idle()
    assert error_shown(panel) == "injected failure"
    state.update(d_model=66)
    state.flush()
    assert compute.wait_idle()
    assert calls[0] == 64 and calls[-1] == 66 and panel.data.params.d_model == 66
    assert error_shown(panel) == ""


def test_a_waveform_result_leaves_the_refusal_of_the_dims_text_on_screen(qtbot, state, compute):
    panel = show_panel(qtbot, WaveformsPanel(state, compute))
    type_dims(panel, "0, 1")
    type_dims(panel, "abc")
    refusal = error_shown(panel)
    assert "abc" in refusal
    state.update(seq_len=200)
    state.flush()
    assert compute.wait_idle()
    assert panel.data.params.seq_len == 200 and panel.data.dims == (0, 1)
    assert error_shown(panel) == refusal


def test_the_base_field_shows_the_base_exactly(qtbot, state, compute):
    # A slider drag sets integer bases such as 36,591,432; shown as "%g"
    # ("3.65914e+07") the field held another number than the views used.
    panel = show_panel(qtbot, ParametersPanel(state, compute))
    for base in (36591432.0, 1.0000001, 12345.678, 10000.0, 1e12):
        state.update(base=base)
        state.flush()
        assert float(panel.controls["base"].editor.text()) == base, panel.controls["base"].editor.text()
    assert panel.controls["base"].editor.text() == "1000000000000"


def test_a_short_similarity_panel_settles_at_every_height(qtbot, state, compute):
    # The note "Matrix every 7th position …" shows only while the matrix is
    # sampled. In a short dock (seed 10) showing it left the matrix 2 px high,
    # which view_pixels took for "not laid out" and replaced by 600 px: all
    # positions, so the note went, the matrix grew to 21 px, was sampled
    # again, and so on, re-computing and repainting for ever.
    panel = show_panel(qtbot, SimilarityPanel(state, compute))

    def settles() -> bool:
        for _ in range(12):
            QApplication.processEvents()
            panel.run_debounced()
            assert compute.wait_idle()
            QApplication.processEvents()
            if not any(timer.isActive() for timer, _ in panel._debounced):
                return True
        return False

    restless = []
    for height in range(100, 400, 2):
        panel.resize(468, height)
        if not settles():
            restless.append(height)
    assert restless == []


def test_a_view_on_screen_is_sampled_at_its_own_size_however_small(qtbot):
    import pyqtgraph as pg

    from posenc_gui.views.plotkit import view_pixels

    canvas = pg.GraphicsLayoutWidget()
    qtbot.addWidget(canvas)
    plot = canvas.addPlot()
    view_box = plot.getViewBox()
    canvas.resize(400, 48)
    canvas.show()
    qtbot.waitExposed(canvas)
    width, height = int(view_box.width()), int(view_box.height())
    assert height <= 8 < width
    assert view_pixels(view_box, 600) == (width, max(1, height))


def test_the_refusal_of_a_typed_base_stays_while_the_field_holds_that_text(qtbot, state, compute):
    # Seeds 4 and 9: the base field held "abc" (or "") with no message once
    # another control's change, or refusal, had cleared the messages.
    panel = show_panel(qtbot, ParametersPanel(state, compute))
    panel.controls["base"].editor.selectAll()
    QTest.keyClicks(panel.controls["base"].editor, "abc")
    refusal = panel.errors["base"].text()
    assert "abc" in refusal and not panel.errors["base"].isHidden()
    state.update(seq_len=state.params.seq_len)  # a slider tick that rounds to the same length
    assert not panel.errors["base"].isHidden() and panel.errors["base"].text() == refusal
    state.update(seq_len=0)  # another control's refusal
    assert not panel.errors["seq_len"].isHidden() and not panel.errors["base"].isHidden()
    state.update(seq_len=200)
    state.flush()  # the field shows the base again: nothing left to refuse
    assert float(panel.controls["base"].editor.text()) == state.params.options["base"] and panel.errors["base"].isHidden()
    panel.controls["base"].editor.selectAll()
    QTest.keyClicks(panel.controls["base"].editor, "1")  # refused (base must be > 1) …
    QTest.keyClicks(panel.controls["base"].editor, "0")  # … until the next key makes it 10
    assert state.params.options["base"] == 10.0 and panel.errors["base"].isHidden()


def test_an_undefined_one_position_profile_hands_no_nan_to_its_dot(qtbot, state, compute):
    # Seed 20: the cosine of PE(0) = 0 (naive scheme) with itself is NaN (undefined);
    # the dot then held only NaN, and pyqtgraph's bounds of it warned "All-NaN
    # slice" on every paint (an exception under the suite's warnings-as-errors,
    # which can crash Qt's paint).
    import warnings

    state.update(scheme="naive", seq_len=1, d_model=8)
    panel = show_panel(qtbot, SimilarityPanel(state, compute))
    panel.set_options(metric="cosine")
    assert compute.wait_idle()
    assert panel.profile_data.offsets.size == 1 and not np.isfinite(panel.profile_data.profile).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        panel.profile_dot.dataBounds(ax=1)
    panel.set_options(metric="dot")  # defined again: the dot is back
    assert compute.wait_idle()
    assert panel.profile_dot.isVisible() and list(panel.profile_dot.data["y"]) == [0.0]


@pytest.mark.parametrize("moved", ["slider", "spin box"])
def test_a_refused_d_model_shows_in_both_of_its_controls(qtbot, state, compute, moved):
    # Seed 1 (action ~1,937): RoPE refuses d_model 3 (no rotary pair fits); dragged there, the slider stayed at
    # 3's tick while the spin box went on showing the value in use — two controls of one parameter disagreeing.
    state.update(scheme="rope")
    state.flush()
    panel = show_panel(qtbot, ParametersPanel(state, compute))
    control = panel.controls["d_model"]
    in_use = state.params.d_model
    refused_tick = next(tick for tick in range(control.slider.maximum() + 1) if control.slider.to_value(tick) == 3)
    if moved == "slider":
        control.slider.setValue(refused_tick)
    else:
        control.editor.setValue(3)
    assert state.params.d_model == in_use != 3 and not control.error.isHidden() and "d_model 3" in control.error.text()
    assert control.editor.value() == 3 and control.slider.to_value(control.slider.value()) == 3
    if moved == "slider":
        assert control.slider.value() == refused_tick  # not moved under the hand that holds it
    state.update(d_model=64)  # a value in use again: both controls show it and the reason goes
    state.flush()
    assert control.editor.value() == 64 and control.slider.to_value(control.slider.value()) == 64
    assert control.error.isHidden()


def test_a_refused_base_from_the_slider_stays_in_the_text_field_with_its_reason(qtbot):
    # The text-field side of the test above: a real parameter's slider value refused by the scheme.
    from PySide6.QtWidgets import QWidget

    from posenc_gui.model import SCHEMES
    from posenc_gui.views.param_controls import ParamControl

    parent = QWidget()
    qtbot.addWidget(parent)
    applied: list[float] = []

    def refuse_above_1e5(name: str, value: float) -> str | None:
        applied.append(value)
        return f"{name} {value:g} refused" if value > 1e5 else None

    control = ParamControl(SCHEMES["rope"].spec("rope_theta"), refuse_above_1e5, parent)
    control.show(10000.0)
    tick = next(t for t in range(control.slider.maximum() + 1) if control.slider.to_value(t) > 1e5)
    control.slider.setValue(tick)
    refused = applied[-1]
    assert refused > 1e5 and float(control.editor.text()) == refused
    assert control.refusal == f"rope_theta {refused:g} refused"
    control.show(10000.0)  # the value in use again: the text and the refusal go
    assert float(control.editor.text()) == 10000.0 and control.refusal == ""

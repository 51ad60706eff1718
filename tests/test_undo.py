"""Undo and redo of parameter changes: one step per change or gesture, the Edit menu and its shortcuts."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QUndoView

from posenc_gui.history import UNDO_LIMIT, change_text
from posenc_gui.model import EncodingParams
from waiting import TIMEOUT_MS


def parameters(window):
    return window.panels["parameters"]


def focus(qtbot, widget) -> None:
    widget.window().activateWindow()
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=TIMEOUT_MS)


def test_a_change_is_undone_and_redone_and_the_controls_show_it(make_window):
    window = make_window(restore=False)
    controls = parameters(window).controls
    controls["d_model"].editor.setValue(256)
    window.state.flush()
    assert window.state.params.d_model == 256
    window.undo_action.trigger()
    window.state.flush()
    assert window.state.params == EncodingParams()
    assert controls["d_model"].editor.value() == 512
    assert controls["d_model"].slider.to_value(controls["d_model"].slider.value()) == 512
    window.redo_action.trigger()
    window.state.flush()
    assert window.state.params.d_model == 256 and controls["d_model"].editor.value() == 256


def test_the_starting_parameters_are_no_step(make_window):
    window = make_window(restore=False, overrides={"d_model": 64})
    assert window.state.params.d_model == 64
    assert window.state.history.count() == 0 and not window.undo_action.isEnabled()


def test_changes_of_a_field_without_the_focus_are_steps_of_their_own(make_window):
    window = make_window(restore=False)
    editor = parameters(window).controls["d_model"].editor
    assert not editor.hasFocus()
    editor.setValue(256)  # as a script would
    editor.setValue(128)
    assert window.state.history.count() == 2


def test_a_slider_drag_of_twenty_ticks_is_one_step(make_window):
    window = make_window(restore=False)
    slider = parameters(window).controls["d_model"].slider
    start = slider.value()
    slider.setSliderDown(True)
    for tick in range(1, 21):
        slider.setValue(start - tick)
    slider.setSliderDown(False)
    window.state.flush()
    dragged_to = slider.to_value(start - 20)
    assert window.state.params.d_model == dragged_to
    assert window.state.history.count() == 1
    assert window.state.history.undoText() == f"d_model 512 → {dragged_to}"
    window.undo_action.trigger()
    window.state.flush()
    assert window.state.params.d_model == 512


def test_two_drags_are_two_steps_and_a_drag_back_to_the_start_is_none(make_window):
    window = make_window(restore=False)
    slider = parameters(window).controls["seq_len"].slider
    start = slider.value()
    for _ in range(2):
        slider.setSliderDown(True)
        slider.setValue(slider.value() + 3)
        slider.setSliderDown(False)
    assert window.state.history.count() == 2
    slider.setSliderDown(True)
    slider.setValue(slider.value() + 5)
    slider.setValue(start + 6)
    slider.setSliderDown(False)
    assert window.state.history.count() == 2


def test_typing_a_number_digit_by_digit_is_one_step_until_return(qtbot, make_window):
    window = make_window(restore=False)
    base = parameters(window).controls["base"].editor
    focus(qtbot, base)
    base.selectAll()
    qtbot.keyClicks(base, "500")  # applied as typed: 5, 50, 500
    qtbot.keyClick(base, Qt.Key.Key_Return)
    assert window.state.params.options["base"] == 500.0
    assert window.state.history.count() == 1 and window.state.history.undoText() == "base 10000 → 500"
    base.selectAll()
    qtbot.keyClicks(base, "64")
    assert window.state.history.count() == 2  # a new editing after Return
    window.state.history.undo()
    window.state.history.undo()
    window.state.flush()
    assert window.state.params == EncodingParams()


def test_a_refused_value_adds_no_step(qtbot, make_window):
    window = make_window(restore=False)
    assert window.state.update(d_model=0) is not None
    base = parameters(window).controls["base"].editor
    focus(qtbot, base)
    base.selectAll()
    qtbot.keyClicks(base, "0.5")  # 0, 0. and 0.5: each refused (base must be > 1)
    assert parameters(window).errors["base"].isVisible()
    assert window.state.history.count() == 0 and not window.undo_action.isEnabled()
    assert window.state.params == EncodingParams()


def test_a_preset_or_walkthrough_step_is_one_step(make_window):
    window = make_window(restore=False)
    panel = parameters(window)
    panel._apply_preset(1)
    window.state.flush()
    preset = EncodingParams.from_preset(panel.presets.itemText(1))
    assert window.state.params == preset and window.state.history.count() == 1
    window.panels["walkthrough"].go_to(0)
    assert window.state.history.count() == 2
    window.undo_action.trigger()
    window.undo_action.trigger()
    window.state.flush()
    assert window.state.params == EncodingParams()


def test_switching_the_scheme_and_back_restores_its_options(make_window):
    window = make_window(restore=False)
    state = window.state
    state.update(base=640.0, layout="halves")
    state.update(scheme="binary")
    state.update(bit_values="unsigned")
    assert state.history.count() == 3
    state.history.undo()
    state.history.undo()
    state.flush()
    assert state.params == EncodingParams.validated(base=640.0, layout="halves")
    assert parameters(window).controls["layout"].editor.currentData() == "halves"
    state.history.redo()
    state.history.redo()
    state.flush()
    assert state.params == EncodingParams.validated(scheme="binary", bit_values="unsigned")
    assert state.remembered["base"] == 640.0  # switching back keeps them, as without undo
    state.update(scheme="sinusoidal")
    assert dict(state.params.options) == {"base": 640.0, "layout": "halves"}


def test_undo_restores_the_remembered_options_exactly(state):
    state.update(scheme="binary")
    state.update(scheme="sinusoidal", base=50.0)
    state.history.undo()
    assert state.remembered["base"] == 10000.0
    state.update(scheme="sinusoidal")
    assert state.params.options["base"] == 10000.0


def test_the_edit_menu_names_the_steps_and_is_disabled_when_empty(make_window):
    window = make_window(restore=False)
    texts = [action.text() for action in window.edit_menu.actions() if not action.isSeparator()]
    assert texts == ["&Undo", "&Redo", "&History…"]
    assert not window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    window.state.update(d_model=256)
    window.state.update(scheme="binary")
    assert window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    assert window.undo_action.text() == "&Undo scheme sinusoidal → binary"
    window.undo_action.trigger()
    assert window.undo_action.text() == "&Undo d_model 512 → 256"
    assert window.redo_action.text() == "&Redo scheme sinusoidal → binary" and window.redo_action.isEnabled()
    assert QKeySequence("Ctrl+Z") in window.undo_action.shortcuts()
    assert {QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")} <= set(window.redo_action.shortcuts())


def test_the_history_lists_the_steps_and_clicking_one_goes_there(qtbot, make_window):
    window = make_window(restore=False)
    for d_model in (256, 128, 64):
        window.state.update(d_model=d_model)
    dialog = window.show_history()
    view = dialog.findChild(QUndoView)
    model = view.model()
    assert [model.index(row, 0).data() for row in range(model.rowCount())] == [
        "Start", "d_model 512 → 256", "d_model 256 → 128", "d_model 128 → 64"]
    rect = view.visualRect(model.index(1, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    window.state.flush()
    assert window.state.params.d_model == 256 and window.state.history.index() == 1
    assert f"last {UNDO_LIMIT} steps" in dialog.findChild(QLabel).text()


def test_the_history_is_bounded(state):
    for step in range(UNDO_LIMIT + 5):
        state.update(seq_len=200 + step)
    assert state.history.count() == UNDO_LIMIT
    while state.history.canUndo():
        state.history.undo()
    assert state.params.seq_len == 204  # the first five steps (128 → 200, …, 203 → 204) were dropped


def test_ctrl_z_undoes_in_the_window_but_a_focused_field_keeps_its_own_undo(qtbot, make_window):
    window = make_window(restore=False)
    panel = parameters(window)
    window.state.update(d_model=256)
    window.state.flush()
    scheme = panel.scheme
    focus(qtbot, scheme)
    qtbot.keyClick(scheme, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    window.state.flush()
    assert window.state.params.d_model == 512  # the window's shortcut
    qtbot.keyClick(scheme, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    window.state.flush()
    assert window.state.params.d_model == 256
    base = panel.controls["base"].editor
    focus(qtbot, base)
    base.selectAll()
    qtbot.keyClicks(base, "640")
    steps = window.state.history.count()
    qtbot.keyClick(base, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    QApplication.processEvents()
    assert base.text() == "10000"  # the field undid its own typing …
    assert window.state.params == EncodingParams.validated(d_model=256)  # … the window's step stays …
    assert window.state.history.count() == steps - 1  # … and the typing, back where it began, is no step


def test_change_text_names_at_most_two_changes():
    before = EncodingParams()
    assert change_text(before, before.replaced(d_model=256)) == "d_model 512 → 256"
    assert change_text(before, before.replaced(seq_len=1000, d_model=64, base=500.0)) == (
        "seq_len 128 → 1,000, d_model 512 → 64 and 1 more")
    assert change_text(before, EncodingParams.validated(scheme="binary")) == "scheme sinusoidal → binary"


def test_each_change_clears_the_refusals_once_and_a_refusal_names_its_field(state):
    # the parameter panel hides every refusal line on each clearing: it ran twice a default step
    seen = []
    state.paramError.connect(lambda field, message: seen.append((field, message)))
    assert state.update(d_model=256) is None  # a change: its step's redo clears them
    assert seen == [("", "")]
    assert state.update(d_model=256) is None  # no change, no step: cleared all the same
    assert seen == [("", "")] * 2
    assert state.update(d_model=-3) is not None
    assert seen[2][0] == "d_model" and "d_model" in seen[2][1]
    state.history.undo()  # an undo clears them too
    assert seen[3:] == [("", "")]

"""The linked cursor: a position (and a dimension) hovered or clicked in one panel is marked in every panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from posenc_gui.linked_cursor import Cursor
from posenc_gui.views.cursor import SHIFT_STEP
from posenc_gui.views.heatmap import HeatmapPanel
from posenc_gui.views.registry import panel_classes
from helpers_panels import change_params, show_panel
from waiting import finish_pending

LONG = 1_048_576
TARGET = 1_000_000
#: Small enough that every panel's model work at a million positions is quick.
D_MODEL = 16


def viewport_point(canvas, plot, x: float, y: float) -> QPoint:
    """The canvas pixel over data point ``(x, y)`` of ``plot``."""
    scene = plot.getViewBox().mapViewToScene(QPointF(x, y))
    return canvas.mapFromScene(scene)


def hover(canvas, plot, x: float, y: float) -> None:
    QTest.mouseMove(canvas.viewport(), viewport_point(canvas, plot, x, y))


def click(canvas, plot, x: float, y: float) -> None:
    QTest.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     viewport_point(canvas, plot, x, y))


def marks(panel, coordinate: str) -> list:
    return [mark for mark in panel.cursor_link.marks if mark.target.coordinate == coordinate]


def drawn_at(mark) -> float:
    """Where the line is on screen, in its axis's data coordinates (through the view's current transform)."""
    view_box = mark.target.plot.getViewBox()
    view_box.updateMatrix()  # a range set since the last paint is applied at the next one: apply it now
    point = view_box.mapSceneToView(mark.line.mapToScene(QPointF(0, 0)))
    return point.x() if mark.target.axis == "x" else point.y()


def zoom_heatmap_rows(heatmap, low: float, high: float) -> None:
    heatmap.matrix.view_box.setRange(yRange=(low, high), xRange=(-0.5, D_MODEL - 0.5), padding=0)


@pytest.fixture
def long_window(make_window):
    window = make_window(size=(1500, 950), restore=False)
    assert window.state.update(seq_len=LONG, d_model=D_MODEL) is None
    window.state.flush()
    assert window.compute.wait_idle()
    return window


# ----------------------------------------------------------------- the shared cursor
def test_cursor_changes_in_one_turn_are_announced_once_with_the_last(state, qtbot):
    seen = []
    state.cursor.changed.connect(seen.append)
    for position in range(5):  # a mouse moving over five pixels within one event-loop turn
        state.cursor.hover(position, 3)
    qtbot.waitUntil(lambda: bool(seen))
    state.cursor.flush()
    assert seen == [Cursor(4, 3, pinned=False)]


def test_hover_shows_over_the_pinned_cursor_and_leaving_shows_the_pinned_one_again(state):
    cursor = state.cursor
    cursor.pin(100, 5)
    cursor.hover(120)  # a plot of positions only: the dimension stays
    assert cursor.current == Cursor(120, 5, pinned=False)
    cursor.unhover()
    assert cursor.current == Cursor(100, 5, pinned=True)
    cursor.hover(dimension=7)  # a plot of dimensions only (the spectrum): the position stays
    assert cursor.current == Cursor(100, 7, pinned=False)
    cursor.clear()
    assert cursor.current is None


def test_cursor_is_clamped_to_the_sequence_and_follows_a_shorter_one(state):
    # default parameters: seq_len 128, d_model 64 (AppState's EncodingParams())
    params = state.params
    state.cursor.pin(params.seq_len + 50, params.d_model + 3)
    assert state.cursor.current == Cursor(params.seq_len - 1, params.d_model - 1, pinned=True)
    state.cursor.pin(-4, -1)
    assert state.cursor.current == Cursor(0, 0, pinned=True)
    state.cursor.pin(100, 40)
    assert state.update(seq_len=32, d_model=16) is None
    state.flush()
    assert state.cursor.current == Cursor(31, 15, pinned=True)


# ------------------------------------------------------------- the panels' declaration
def test_every_panel_marks_what_it_declares_and_nothing_else(state, compute, qtbot):
    declaring = 0
    for panel_class in panel_classes():
        panel = panel_class(state, compute)
        qtbot.addWidget(panel)
        declared = set(panel_class.cursor_axes)
        assert declared <= {"position", "dimension"}, panel_class
        if declared:
            declaring += 1
            assert panel.cursor_link is not None, panel_class
            assert {mark.target.coordinate for mark in panel.cursor_link.marks} == declared, panel_class
        else:
            assert panel.cursor_link is None, panel_class
    assert declaring >= 4  # at least heatmap, waveforms, similarity and spectrum


def test_a_mark_makes_its_lines_when_first_drawn_and_keeps_them(state, compute, qtbot):
    panel = HeatmapPanel(state, compute)
    qtbot.addWidget(panel)
    plot_items = {id(item) for item in panel.matrix.plot.items}
    row, column = sorted(panel.cursor_link.marks, key=lambda mark: mark.target.coordinate == "dimension")
    assert row.line is None and column.line is None  # nothing made before the cursor is anywhere
    panel.cursor_link.draw(Cursor(10, None, pinned=False))  # a position only: the dimension's mark stays unmade
    assert column.line is None and row.line is not None and row.line.isVisible() and row.value == 10
    assert {id(row.halo), id(row.line)} == {id(item) for item in panel.matrix.plot.items} - plot_items
    line = row.line
    panel.cursor_link.draw(Cursor(12, 3, pinned=True))
    assert row.line is line and row.value == 12 and column.value == 3
    assert row.line.pen.style() == Qt.PenStyle.SolidLine and column.line.pen.style() == Qt.PenStyle.SolidLine
    panel.cursor_link.draw(None)
    assert not row.line.isVisible() and not column.line.isVisible() and row.value is None


# ------------------------------------------------------------------------- the window
def assert_marked(panel, position: int, dimension: int) -> None:
    """Each of the panel's marks is at the cursor, in its axis's data coordinates, as stored and as drawn."""
    for mark in panel.cursor_link.marks:
        value = position if mark.target.coordinate == "position" else dimension
        expected = mark.target.to_plot(value)
        assert expected is not None, (panel.panel_id, mark.target.axis)
        assert mark.value == expected, (panel.panel_id, mark.target.axis)
        assert drawn_at(mark) == pytest.approx(expected, abs=1e-6 * LONG), panel.panel_id


def test_hover_at_a_million_in_the_heatmap_marks_it_in_every_panel(long_window, qtbot):
    window = long_window
    drawing = [cls.panel_id for cls in panel_classes() if cls.cursor_axes]
    for panel_id in drawing:  # built, as the window's prebuilder builds them when idle
        window.panels[panel_id]
    QApplication.processEvents()  # their docks lay them out
    heatmap = window.panels["heatmap"]
    zoom_heatmap_rows(heatmap, TARGET - 10.5, TARGET + 10.5)  # 21 rows: many pixels per row
    heatmap.run_debounced()
    assert window.compute.wait_idle()
    hover(heatmap.canvas, heatmap.matrix.plot, 5, TARGET)
    window.state.cursor.flush()
    assert window.state.cursor.current == Cursor(TARGET, 5, pinned=False)
    assert "Cursor at position 1,000,000, dimension 5" in window.cursor_label.text()
    on_screen = [panel_id for panel_id in drawing if window.panels[panel_id].on_screen()]
    assert {"heatmap", "waveforms", "similarity"} <= set(on_screen)
    for panel_id in on_screen:  # while the mouse is over the heatmap
        assert_marked(window.panels[panel_id], TARGET, 5)
    similarity = window.panels["similarity"]
    reference = similarity.profile_data.reference
    profile_mark = [mark for mark in marks(similarity, "position") if mark.target.plot is similarity.profile_plot][0]
    assert profile_mark.value == TARGET - reference  # the profile's offset k = q − reference
    # The others are behind tabs: pinned by a click there, each has it when brought to the front.
    click(heatmap.canvas, heatmap.matrix.plot, 5, TARGET)
    for panel_id in drawing:
        window.raise_panel(panel_id)
        panel = window.panels[panel_id]
        qtbot.waitUntil(panel.on_screen)
        if panel.unavailable_message() is None:
            assert window.compute.wait_idle()
            assert_marked(panel, TARGET, 5)
    spectrum = window.panels["spectrum"]
    # the sinusoidal scheme interleaves: dimension 5 is the cosine of pair 2 (dimensions 4 and 5)
    assert [mark.value for mark in marks(spectrum, "dimension")] == [2.0, 2.0]


def test_the_marks_follow_zoom(long_window, qtbot):
    window = long_window
    waveforms, heatmap = window.panels["waveforms"], window.panels["heatmap"]
    window.state.cursor.pin(TARGET, 3)
    window.state.cursor.flush()
    [line] = marks(waveforms, "position")
    assert drawn_at(line) == pytest.approx(TARGET, abs=1e-6 * LONG)  # the whole sequence: ~1,500 positions a pixel
    waveforms.plot.getViewBox().setXRange(TARGET - 40, TARGET + 40, padding=0)
    zoom_heatmap_rows(heatmap, TARGET - 3.5, TARGET + 3.5)
    for panel in (waveforms, heatmap):
        panel.run_debounced()
    assert window.compute.wait_idle()
    assert drawn_at(line) == pytest.approx(TARGET, abs=1e-6)  # 80 positions wide: exact to a fraction of one
    [row] = marks(heatmap, "position")
    assert drawn_at(row) == pytest.approx(TARGET, abs=1e-6)
    # on screen: the row is mid-plot, where the mouse over row 1,000,000 is
    pixel = viewport_point(heatmap.canvas, heatmap.matrix.plot, 3, TARGET)
    line_pixel = heatmap.canvas.mapFromScene(row.line.mapToScene(QPointF(0, 0)))
    assert abs(line_pixel.y() - pixel.y()) <= 1


def test_click_pins_arrows_move_and_escape_clears(long_window, qtbot):
    window = long_window
    heatmap = window.panels["heatmap"]
    zoom_heatmap_rows(heatmap, TARGET - 10.5, TARGET + 10.5)
    heatmap.run_debounced()
    assert window.compute.wait_idle()
    cursor = window.state.cursor
    click(heatmap.canvas, heatmap.matrix.plot, 5, TARGET)
    assert cursor.pinned == Cursor(TARGET, 5, pinned=True)
    canvas = heatmap.canvas
    canvas.setFocus()
    QTest.keyClick(canvas, Qt.Key.Key_Right)
    assert cursor.current == Cursor(TARGET + 1, 5, pinned=True)
    # 21 rows over hundreds of pixels: a pixel is under one position, so Shift moves SHIFT_STEP = 10
    QTest.keyClick(canvas, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert cursor.current == Cursor(TARGET + 1 - SHIFT_STEP, 5, pinned=True)
    QTest.keyClick(canvas, Qt.Key.Key_Up)
    QTest.keyClick(canvas, Qt.Key.Key_Up)
    QTest.keyClick(canvas, Qt.Key.Key_Down)
    assert cursor.current == Cursor(TARGET - 9, 6, pinned=True)
    cursor.flush()
    assert "pinned at position 999,991, dimension 6" in window.cursor_label.text()
    assert marks(heatmap, "dimension")[0].value == 6.0
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    cursor.flush()
    assert cursor.current is None
    assert all(mark.value is None for mark in heatmap.cursor_link.marks)
    assert window.cursor_label.text().startswith("Cursor: hover a plot")


def test_shift_arrow_moves_a_pixel_at_a_long_context(long_window):
    window = long_window
    waveforms = window.panels["waveforms"]
    view_box = waveforms.plot.getViewBox()
    (low, high), _ = view_box.viewRange()  # the whole million, about a thousand pixels wide
    per_pixel = (high - low) / view_box.width()
    assert per_pixel > SHIFT_STEP
    window.state.cursor.pin(TARGET, 0)
    waveforms.cursor_link.key(Qt.Key.Key_Right, shift=True)
    moved = window.state.cursor.current.position - TARGET
    assert per_pixel <= moved < per_pixel + 1


def test_a_shorter_sequence_clamps_the_marks(long_window):
    window = long_window
    window.state.cursor.pin(TARGET, 9)
    assert window.state.update(seq_len=4096, d_model=8) is None
    window.state.flush()
    assert window.compute.wait_idle()
    window.state.cursor.flush()
    assert window.state.cursor.current == Cursor(4095, 7, pinned=True)
    heatmap = window.panels["heatmap"]
    assert [mark.value for mark in heatmap.cursor_link.marks] == [4095.0, 7.0]
    assert "position 4,095, dimension 7" in window.cursor_label.text()


def test_a_panel_off_screen_gets_the_cursor_when_shown(long_window, qtbot):
    window = long_window
    magnitude = window.panels["magnitude"]  # built behind another dock's tab
    assert not magnitude.on_screen()
    window.state.cursor.pin(TARGET)
    window.state.cursor.flush()
    [line] = marks(magnitude, "position")
    assert line.value is None  # not drawn while hidden
    window.raise_panel("magnitude")
    qtbot.waitUntil(lambda: line.value == float(TARGET))


def test_moving_the_cursor_computes_nothing(long_window, monkeypatch, qtbot):
    window = long_window
    # the first layout's re-sampling, before the cursor: a result that resizes a view (a notice line shown)
    # re-samples it after a pause, and its result may do the same
    finish_pending(qtbot, window)
    assert window.compute.wait_idle()
    finish_pending(qtbot, window)
    submitted = []
    real_submit = window.compute.submit
    monkeypatch.setattr(window.compute, "submit", lambda *args, **kwargs: (submitted.append(args[0]),
                                                                          real_submit(*args, **kwargs)))
    heatmap, waveforms = window.panels["heatmap"], window.panels["waveforms"]
    for position in (10, 500_000, TARGET):
        hover(heatmap.canvas, heatmap.matrix.plot, 2, position)
        hover(waveforms.canvas, waveforms.plot, position, 0)
    window.state.cursor.pin(TARGET, 4)
    heatmap.cursor_link.key(Qt.Key.Key_Right)
    heatmap.cursor_link.key(Qt.Key.Key_Up, shift=True)
    window.state.cursor.flush()
    assert window.state.cursor.current == Cursor(TARGET + 1, 14, pinned=True)
    assert not any(panel.run_debounced() for panel in window.panels.built().values())
    assert window.compute.wait_idle()
    assert submitted == []


def test_panel_alone_marks_a_hover_of_another_panel(state, compute, qtbot):
    # "build view from model, change the model, assert on the view": two panels on one state
    heatmap = show_panel(qtbot, HeatmapPanel(state, compute))
    change_params(state, compute, seq_len=1000, d_model=32)
    state.cursor.hover(700, 31)
    state.cursor.flush()
    assert [mark.value for mark in heatmap.cursor_link.marks] == [700.0, 31.0]
    change_params(state, compute, seq_len=500, d_model=32)
    state.cursor.flush()
    assert [mark.value for mark in heatmap.cursor_link.marks] == [499.0, 31.0]

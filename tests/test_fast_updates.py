"""Parameter steps repaint cheaply: text changes without re-laying out the window, canvases fill their background."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QObject, QPointF
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QGraphicsView, QLabel, QVBoxLayout, QWidget

from posenc_gui.views.labels import StatusText, WrappedLabelHolder
from posenc_gui.views.plotkit import new_layout_widget, set_title
from helpers_panels import show_panel
from waiting import TIMEOUT_MS, TIMEOUT_S


class LayoutRequests(QObject):
    """Counts LayoutRequest events delivered to a widget (or a graphics widget: a plot)."""

    def __init__(self, widget: QObject) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


@pytest.mark.parametrize("label_class, relayouts", [(StatusText, False), (QLabel, True)])
def test_status_text_changes_without_a_layout_request(qtbot, label_class, relayouts):
    # QLabel is the control: it does ask for a new layout, so the check can fail.
    parent = QWidget()
    qtbot.addWidget(parent)
    layout = QVBoxLayout(parent)
    label = label_class("128 positions × 512 dimensions", parent) if label_class is QLabel else \
        label_class("Showing every 512th position and every 8th dimension", parent)
    layout.addWidget(label)
    parent.show()
    qtbot.waitExposed(parent)
    QApplication.processEvents()
    requests = LayoutRequests(parent)
    hint = label.sizeHint()
    label.setText("Showing every 2,048th position and every 8th dimension (512 × 1,024 samples)")
    QApplication.processEvents()
    assert (requests.count > 0) == relayouts
    if label_class is StatusText:
        assert label.sizeHint() == hint
        assert label.text() == label.toolTip() == \
            "Showing every 2,048th position and every 8th dimension (512 × 1,024 samples)"


def test_status_text_draws_its_text(qtbot):
    label = StatusText("some sample text to size the label")
    qtbot.addWidget(label)
    label.resize(300, label.sizeHint().height())
    label.show()
    qtbot.waitExposed(label)
    blank = label.grab().toImage()
    label.setText("something to read")
    drawn = label.grab().toImage()
    assert blank != drawn


def test_status_texts_and_notices_are_there_for_screen_readers(qtbot):
    # Painted by hand, they have no text for accessibility tools unless they give it.
    from PySide6.QtGui import QAccessible

    from posenc_gui.views.labels import NoticeLine

    label = StatusText("some sample text to size the label")
    qtbot.addWidget(label)
    label.setText("128 positions × 512 dimensions")
    read = QAccessible.queryAccessibleInterface(label)
    assert read.text(QAccessible.Text.Name) == "128 positions × 512 dimensions"
    notice = NoticeLine("some sample text to size the notice")
    qtbot.addWidget(notice)
    notice.set_notice("Aliasing: 3 of the 512 shown dimensions (greyed)", "warning")
    read = QAccessible.queryAccessibleInterface(notice)
    assert read.text(QAccessible.Text.Name) == "Aliasing: 3 of the 512 shown dimensions (greyed)"
    assert read.text(QAccessible.Text.Description) == "warning"


@pytest.mark.parametrize("held", [True, False])
def test_wrapped_message_relays_out_only_for_a_new_height(qtbot, held):
    # A bare word-wrapped QLabel is the control: every new text asks the window for a layout.
    window = QWidget()
    panel = QWidget(window)
    QVBoxLayout(window).addWidget(panel)
    panel_layout = QVBoxLayout(panel)
    label = _wrapped_label("3 of the 512 shown dimensions are aliased.")
    panel_layout.addWidget(WrappedLabelHolder(label) if held else label)
    panel_layout.addStretch(1)
    _show_and_settle(qtbot, window)
    requests = LayoutRequests(window)
    label.setText("4 of the 512 shown dimensions are aliased.")
    settle()
    assert (requests.count > 0) == (not held)
    assert label.text() == "4 of the 512 shown dimensions are aliased."
    one_line = label.height()
    label.setText("A message long enough to need several lines at this width: " * 4)
    settle()
    # More lines: the label grows to the height its text needs, whichever route it takes.
    assert label.height() == label.heightForWidth(label.width()) > one_line
    assert label.width() == panel.contentsRect().width() - sum(panel_layout.getContentsMargins()[::2])


@pytest.mark.parametrize("keep_height", [True, False])
def test_a_summary_keeps_its_tallest_height_at_a_width(qtbot, keep_height):
    # Headline numbers wrap onto one more line or one fewer as they change: a summary line that
    # shrank and grew again resized the plots below it and painted them twice per step.
    window = QWidget()
    layout = QVBoxLayout(window)
    label = _wrapped_label("short")
    holder = WrappedLabelHolder(label, keep_height=keep_height)
    layout.addWidget(holder)
    layout.addStretch(1)
    _show_and_settle(qtbot, window)
    one_line = holder.height()
    label.setText("Headline numbers long enough to wrap onto several lines at this width: " * 3)
    settle()
    tall = holder.height()
    assert tall > one_line
    requests = LayoutRequests(window)
    label.setText("short again")
    settle()
    assert holder.height() == (tall if keep_height else one_line)
    assert (requests.count == 0) == keep_height
    window.resize(700, 300)  # another width: the height its text needs there
    settle()
    assert holder.height() == label.heightForWidth(holder.width()) == one_line


def settle() -> None:
    for _ in range(5):  # showing a canvas posts layout requests in several rounds
        QApplication.processEvents()


def _wrapped_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def _show_and_settle(qtbot, window: QWidget) -> None:
    """``window`` on screen at 400 × 300 and laid out."""
    show_panel(qtbot, window, (400, 300), settle=False)
    settle()


def _plot_on_canvas(qtbot, width: int, height: int):
    """A plot on a new canvas of ``width`` × ``height`` (not shown yet); returns both."""
    canvas = new_layout_widget()
    qtbot.addWidget(canvas)
    canvas.resize(width, height)
    return canvas, canvas.addPlot()


@pytest.mark.parametrize("width, room", [(240, False), (900, True)])
def test_a_styled_plots_title_gives_way_to_a_narrow_canvas(qtbot, width, room):
    # pyqtgraph makes a title's text width its minimum: in a narrow dock the canvas then
    # became wider than its view and was clipped at the right, axis, plot end and all. The
    # title now wraps there, centred, so its words stay inside the canvas.
    from posenc_gui.views.plotkit import style_plot

    canvas, plot = _plot_on_canvas(qtbot, width, 300)
    style_plot(plot)
    set_title(plot, "sinusoidal, d_model 8,192, from position 524,288")
    canvas.show()
    qtbot.waitExposed(canvas)
    settle()
    label = plot.titleLabel
    assert canvas.ci.geometry().width() <= canvas.viewport().width() + 0.5  # the canvas fits its view
    assert (label.item.textWidth() < 0) == room  # one line where it fits, wrapped where it does not
    assert label.itemRect().width() <= label.geometry().width() + 1  # inside the label either way
    shown = label.item.mapRectToParent(label.item.boundingRect())
    assert shown.center().x() == pytest.approx(label.rect().center().x(), abs=1.0)  # centred either way


def test_waveform_note_follows_the_curves_once_the_user_pauses(qtbot, state, compute):
    from posenc_gui.views.waveforms import NOTE_DELAY_MS, WaveformsPanel

    panel = WaveformsPanel(state, compute)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: "/512))" in panel.note_label.text(), timeout=TIMEOUT_MS)
    # However long the steps take on this machine, the pause must not end during the drag.
    panel._note_timer.setInterval(TIMEOUT_MS)
    for d_model in (100, 80, 64):  # a drag: the note waits for the last step
        state.update(d_model=d_model)
        state.flush()
        assert compute.wait_idle()
        assert panel.data.params.d_model == d_model  # the curves are current at once
        assert "/512))" in panel.note_label.text() and panel._note_timer.isActive()
    panel._note_timer.setInterval(NOTE_DELAY_MS)  # the user pauses (restarts the running timer)
    qtbot.waitUntil(lambda: "/64))" in panel.note_label.text(), timeout=TIMEOUT_MS)
    assert "dim 0 = sin(pos / 10000^(2·0/64))" in panel.note_label.text()


def test_hovering_the_heatmap_does_not_re_lay_out_the_panel(qtbot, state, compute):
    from posenc_gui.views.heatmap import HeatmapPanel

    panel = show_panel(qtbot, HeatmapPanel(state, compute), (900, 650))
    settle()
    requests = LayoutRequests(panel)
    view_box = panel.matrix.view_box
    for pos, dim in ((3, 5), (40, 200), (127, 511)):
        panel._hover(view_box.mapViewToScene(QPointF(dim, pos)))
        settle()
        assert panel.hover_label.text().startswith(f"pos {pos}, dim {dim}:")
    assert requests.count == 0


class Paints(QObject):
    """Counts Paint events delivered to the watched widgets."""

    def __init__(self, widgets) -> None:
        super().__init__()
        self.count = 0
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


@pytest.mark.parametrize("opaque_panels", [True, False])
def test_a_parameter_step_does_not_repaint_the_docks(make_window, opaque_panels):
    # The controls that change (the d_model spin box, the waveforms' dimension
    # list) repaint from their panel down; with see-through panels (the
    # control) Qt redraws each dock's frame and title under them as well.
    window = make_window(size=(1400, 900), restore=False)
    for panel in window.panels.values():
        panel.setAutoFillBackground(opaque_panels)
    QApplication.processEvents()
    docks = Paints(window.docks.values())
    for d_model in (510, 512):
        window.state.update(d_model=d_model)
        window.state.flush()
        assert window.compute.wait_idle()
        QApplication.processEvents()
    assert window.panels["waveforms"].data.params.d_model == 512
    assert (docks.count == 0) == opaque_panels, docks.count


def in_front(make_window, panel_id: str, **kwargs):
    """A settled 1400 × 900 window with ``panel_id`` brought to the front."""
    window = make_window(size=(1400, 900), restore=False, **kwargs)
    window.raise_panel(panel_id)
    assert window.compute.wait_idle()
    settle()
    return window


@pytest.mark.parametrize("panel_id", ["addition", "linear_relation", "magnitude", "permutation", "relative",
                                      "spectrum", "uniqueness"])
def test_a_parameter_step_with_an_analysis_panel_in_front_re_lays_out_no_dock(make_window, panel_id):
    # Each of these panels rewrites a word-wrapped summary on every update; a
    # bare QLabel would ask its dock (and the main window) for a new layout.
    from posenc_gui.model import EncodingParams

    window = in_front(make_window, panel_id, params=EncodingParams(seq_len=32, d_model=64))
    assert window.panels[panel_id].on_screen()
    requests = LayoutRequests(window.docks[panel_id])
    for d_model in (62, 64):
        window.state.update(d_model=d_model)
        window.state.flush()
        assert window.compute.wait_idle()
        settle()
    assert requests.count == 0


def test_an_analysis_panel_in_front_computes_while_the_core_panels_update(make_window, monkeypatch):
    # The linear-relation panel in front computes in a worker, which must
    # already be running when the core panels compute, not start after them.
    import threading

    from posenc_gui.views import linear_relation, waveforms

    window = in_front(make_window, "linear_relation")
    analysis_started = threading.Event()
    seen_by_core = []

    def analysis(*args, compute=linear_relation.linear_relation_data):
        analysis_started.set()
        return compute(*args)

    def core(*args, compute=waveforms.compute_waveforms):
        seen_by_core.append(analysis_started.wait(TIMEOUT_S))
        return compute(*args)

    monkeypatch.setattr(linear_relation.LinearRelationPanel, "model_function", analysis)
    monkeypatch.setattr(waveforms.WaveformsPanel, "model_function", core)
    window.state.update(d_model=510)
    window.state.flush()
    assert window.compute.wait_idle()
    assert seen_by_core and all(seen_by_core)  # (a re-sample after the new layout may add a second)
    assert window.panels["linear_relation"].data.params.d_model == 510


@pytest.mark.parametrize("panel_id", ["spectrum", "uniqueness", "addition", "relative"])
def test_analysis_panels_compute_in_the_worker_process_at_the_default_size(make_window, panel_id, monkeypatch):
    from posenc_gui.compute import WORKER_PROCESS_ENV, worker_process

    monkeypatch.delenv(WORKER_PROCESS_ENV, raising=False)
    window = in_front(make_window, panel_id)
    panel = window.panels[panel_id]
    window.state.update(d_model=510)
    window.state.flush()  # no event processed yet: the analysis is in the process
    assert panel.data.params.d_model == 512 and window.compute.is_pending(panel)
    assert worker_process() is not None and worker_process().alive
    assert window.compute.wait_idle(TIMEOUT_S)
    assert panel.data.params.d_model == 510


def _canvas_with_curve(qtbot, y):
    canvas, plot = _plot_on_canvas(qtbot, 300, 200)
    plot.setRange(xRange=(0, 2), yRange=(0, 1))
    curve = plot.plot([0, 1, 2], y, pen=pg.mkPen("k", width=2))
    canvas.show()
    qtbot.waitExposed(canvas)
    settle()
    return canvas, curve


def _on_screen(widget) -> QImage:
    """What the window shows now (its backing store), not a fresh rendering as ``grab`` gives."""
    return widget.screen().grabWindow(widget.winId()).toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_canvas_repaint_leaves_nothing_of_the_old_data(qtbot):
    # Canvases fill their white background on each repaint (no cached
    # pixmap) and repaint one rectangle around what changed (not the exact
    # region): after new data, the window must show exactly what a canvas
    # drawn with the new data from the start shows.
    canvas, curve = _canvas_with_curve(qtbot, [0, 1, 0])
    assert canvas.cacheMode() == QGraphicsView.CacheModeFlag.CacheNone
    assert canvas.viewportUpdateMode() == QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate
    before = _on_screen(canvas)
    curve.setData([0, 1, 2], [1, 0, 1])
    settle()
    after = _on_screen(canvas)
    fresh, _ = _canvas_with_curve(qtbot, [1, 0, 1])
    assert after == fresh.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert after != before  # the control: the curve did move
    assert after.pixelColor(1, 1) == QColor("white")


@pytest.mark.parametrize("side", ["left", "bottom"])
def test_a_new_axis_title_is_centred_along_its_axis(qtbot, side):
    from posenc_gui.views.plotkit import set_axis_label, style_plot

    canvas, plot = _plot_on_canvas(qtbot, 400, 300)
    style_plot(plot)
    axis = plot.getAxis(side)
    set_axis_label(axis, "dot product")
    canvas.show()
    qtbot.waitExposed(canvas)
    settle()
    set_axis_label(axis, "Euclidean distance ‖PE(p) − PE(q)‖")
    settle()
    title = axis.label.mapRectToScene(axis.label.boundingRect()).center()
    middle = axis.mapRectToScene(axis.rect()).center()  # the axis itself, not the room its end labels may use
    along = (lambda point: point.y()) if side == "left" else (lambda point: point.x())
    assert along(title) == pytest.approx(along(middle), abs=1)


def _titled_canvas(qtbot, title: str, axis_title: str, entry: str):
    """A styled plot with a title, an axis title and a one-entry legend (each a rich-text item)."""
    from posenc_gui.views.plotkit import FOREGROUND, add_legend_below, set_axis_label, style_plot

    canvas, plot = _plot_on_canvas(qtbot, 400, 300)
    style_plot(plot)
    legend = add_legend_below(canvas, plot, labelTextColor=FOREGROUND)
    plot.plot([0, 1], [0, 1], pen=pg.mkPen("k", width=2), name=entry)
    plot.setTitle(title)
    set_axis_label(plot.getAxis("bottom"), axis_title)
    canvas.show()
    qtbot.waitExposed(canvas)
    settle()
    (_, entry_label), = legend.items
    return canvas, plot, entry_label


def _text_items(plot, entry_label):
    return plot.titleLabel.item, plot.getAxis("bottom").label, plot.getAxis("left").label, entry_label.item


def _drawn_without_caches(canvas, items) -> QImage:
    for item in items:
        item.setCacheMode(item.CacheMode.NoCache)
    return canvas.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _largest_difference(image: QImage, other: QImage) -> int:
    """The largest difference of one colour channel between two images of one size, 0…255."""
    import numpy as np

    assert image.size() == other.size()
    arrays = [np.frombuffer(im.constBits(), np.uint8).reshape(im.height(), im.bytesPerLine())[:, :4 * im.width()]
              for im in (image, other)]
    return int(np.abs(arrays[0].astype(int) - arrays[1]).max())


#: How much a text pixmap's glyph edges may differ from text drawn straight onto the
#: canvas: at a fractional position Qt places glyphs a fraction of a pixel apart in the
#: two (up to 56 seen). A pixmap shifted or scaled by a pixel differs by 150 or more.
TEXT_EDGE_TOLERANCE = 80


def test_plot_text_is_drawn_from_a_cache_that_follows_the_text(qtbot):
    # Titles, axis titles and legend entries draw from pixmaps (a repaint is
    # a blit); a new text must still reach the screen, not the old pixmap.
    from posenc_gui.views.plotkit import set_axis_label

    canvas, plot, entry_label = _titled_canvas(qtbot, "first title", "first axis", "first entry")
    items = _text_items(plot, entry_label)
    for item in items:
        assert item.cacheMode() == item.CacheMode.DeviceCoordinateCache
    before = _on_screen(canvas)
    plot.setTitle("second title")
    set_axis_label(plot.getAxis("bottom"), "second axis")
    entry_label.setText("second entry")
    settle()
    after = _on_screen(canvas)
    assert _largest_difference(after, _drawn_without_caches(canvas, items)) <= TEXT_EDGE_TOLERANCE
    assert _largest_difference(after, before) > 150  # the control: the texts did change


def test_cached_plot_text_looks_as_drawn_directly(qtbot):
    # The pixmap is in device pixels: no blur, no shift against the text
    # Qt draws without it (as export does).
    canvas, plot, entry_label = _titled_canvas(qtbot, "sinusoidal, d_model 512", "position (row)", "dim 128")
    cached = canvas.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert _largest_difference(cached, _drawn_without_caches(canvas, _text_items(plot, entry_label))) \
        <= TEXT_EDGE_TOLERANCE

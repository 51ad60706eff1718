"""A parameter step at the default size repaints the window without laying anything out again (issue #40).

Counted, not timed: the layout passes and canvas paints a d_model step causes
in the real window. A plot title with d_model in it, a legend entry with a
wavelength and the spin boxes' limits each used to lay out their panel again
on every step (a second paint of the waveforms' canvas, three layout passes
of the Parameters panel).
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from posenc_gui.views.plotkit.pgcompat import label_shown_text, legend_entries


class EventCounter(QObject):
    """Counts layout requests and paints, by the panel (``panel-…`` object name) of the widget receiving them."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter = Counter()

    def eventFilter(self, watched, event):  # noqa: N802 (Qt override)
        kind = event.type()
        if kind in (QEvent.Type.LayoutRequest, QEvent.Type.Paint):
            self.counts[(kind.name, type(watched).__name__, self._panel(watched))] += 1
        return False

    @staticmethod
    def _panel(watched) -> str:
        while watched is not None:
            name = watched.objectName() if isinstance(watched, QObject) else ""
            if name.startswith("panel-"):
                return name
            watched = watched.parent() if isinstance(watched, QObject) else None
        return ""


def d_model_steps(window, values) -> Counter:
    """Step d_model through ``values`` as a drag does, each step finished and painted; the events it caused."""
    counter = EventCounter()
    app = QApplication.instance()
    app.installEventFilter(counter)
    try:
        for d_model in values:
            assert window.state.update(d_model=d_model) is None
            window.state.flush()
            assert window.compute.wait_idle()
            QApplication.processEvents()
    finally:
        app.removeEventFilter(counter)
    return counter.counts


def test_a_d_model_step_lays_nothing_out_and_paints_each_canvas_once(make_window):
    window = make_window(size=(1500, 950), restore=False)
    d_model_steps(window, (514, 516))  # the first steps after the window's own set-up
    for _ in range(5):  # the last of the set-up's layout rounds
        QApplication.processEvents()
    steps = (518, 520, 522, 524)
    counts = d_model_steps(window, steps)
    layouts = {key: count for key, count in counts.items() if key[0] == "LayoutRequest"}
    assert layouts == {}  # before: the plots' and the legend's layouts, and the Parameters panel's, every step
    canvas_paints = {key[2]: count for key, count in counts.items()
                     if key[0] == "Paint" and key[1] == "QWidget" and key[2] in ("panel-heatmap", "panel-waveforms")}
    assert canvas_paints == {"panel-heatmap": len(steps), "panel-waveforms": len(steps)}  # one paint per step
    # and what the step changed is shown: d_model in the titles, the waveforms' dimensions in their legend
    heatmap, waveforms = window.panels["heatmap"], window.panels["waveforms"]
    assert "d_model 524" in label_shown_text(waveforms.plot.titleLabel)
    assert "d_model 524" in label_shown_text(heatmap.matrix.plot.titleLabel)
    entries = [label_shown_text(label) for _, label in legend_entries(waveforms.legend)]
    assert [entry.split(" (")[0] for entry in entries[:len(waveforms.dims)]] == [
        f"dim {dim}" for dim in waveforms.dims]
    assert max(waveforms.dims) == 522  # the default dimensions follow d_model (the slowest pair): the legend changed

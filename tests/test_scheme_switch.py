"""A scheme switch asks for each shown panel's data once (issue #40, item 4).

Counted, not timed. A switch into another family shows that family's docks
(their panels ask for the new scheme's data as they appear), then the
panels hear of the new parameters and ask again: the same request twice,
the first result thrown away, the worker process busy with it meanwhile.
"""

from __future__ import annotations

import functools
import threading

from posenc_gui.compute import ComputeService, ModelJob
from posenc_gui.views.base import Panel
from waiting import TIMEOUT_S

CALLS: list[int] = []
GATE = threading.Event()


def held_square(value: int, progress=None) -> int:
    """A stand-in model function (it runs in a worker thread: not of the model layer) that waits for the test,
    and reports its progress once when asked to."""
    GATE.wait(TIMEOUT_S)
    if progress is not None:
        progress(1, 1)
    CALLS.append(value)
    return value * value


def test_a_request_equal_to_the_one_under_way_is_not_run_again(compute):
    CALLS.clear()
    GATE.clear()
    delivered_first, delivered_second = [], []
    compute.submit("key", ModelJob(held_square, (3,)), delivered_first.append)
    compute.submit("key", ModelJob(held_square, (3,)), delivered_second.append)
    GATE.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert CALLS == [3]  # before: [3, 3], the first result dropped
    assert delivered_first == [] and delivered_second == [9]  # the newest callbacks get it


def test_an_equal_request_that_follows_its_progress_is_not_joined_to_one_that_does_not(compute):
    CALLS.clear()
    GATE.clear()
    delivered, progressed = [], []
    compute.submit("key", ModelJob(held_square, (3,)), delivered.append)
    compute.submit("key", ModelJob(held_square, (3,)), delivered.append,
                   on_progress=lambda done, total: progressed.append((done, total)))
    GATE.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == [9] and progressed == [(1, 1)]  # joined, the job would not report its progress


def test_a_different_request_still_supersedes_the_one_under_way(compute):
    CALLS.clear()
    GATE.clear()
    delivered = []
    compute.submit("key", ModelJob(held_square, (3,)), delivered.append)
    compute.submit("key", ModelJob(held_square, (4,)), delivered.append)
    compute.submit("other", ModelJob(held_square, (3,)), delivered.append)  # another key is another request
    GATE.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert 4 in CALLS and sorted(delivered) == [9, 16]  # the first (3) may have been skipped before it ran


def repeated_requests(window, monkeypatch, scheme: str, **options) -> tuple[int, int]:
    """Switch ``window`` to ``scheme``: how many times a key was asked for the same model function's result as
    the request of it still under way, and how many of those were made again (superseding that request)."""
    under_way: dict = {}
    repeats = [0, 0]
    submit = ComputeService.submit

    def counted(self, key, function, *args, **kwargs):
        before = self._latest.get(key)
        job = function.func if isinstance(function, functools.partial) else function
        again = self.is_pending(key) and key in under_way and _same(under_way[key], job)
        submit(self, key, function, *args, **kwargs)
        if not isinstance(job, ModelJob):  # a closure (the similarity's samples) cannot be compared
            return
        repeats[0] += again
        repeats[1] += again and self._latest.get(key) != before
        if self._latest.get(key) != before:
            under_way[key] = job

    monkeypatch.setattr(ComputeService, "submit", counted)
    assert window.state.update(scheme=scheme, **options) is None
    window.state.flush()
    assert window.compute.wait_idle()
    monkeypatch.undo()
    return repeats[0], repeats[1]


def _same(one: ModelJob, other: ModelJob) -> bool:
    try:
        return one.function is other.function and bool(one.args == other.args)
    except ValueError:  # arrays among the arguments
        return False


def panel_widget_of(view):
    """The panel (an object named ``panel-…``) that holds the canvas ``view``, or None."""
    widget = view.parentWidget()
    while widget is not None and not widget.objectName().startswith("panel-"):
        widget = widget.parentWidget()
    return widget


def test_a_switch_into_another_family_asks_the_worker_once_per_shown_panel(make_window, monkeypatch):
    window = make_window(restore=False)
    for scheme, options in (("rope", {}), ("sinusoidal", {}), ("alibi", {}), ("sinusoidal", {})):
        repeated_requests(window, monkeypatch, scheme, **options)  # each family's layout visited once
    # setups not seen before: a panel that keeps its results (Panel.keeps_results) asks for them
    unseen = (("rope", {"rope_theta": 500000.0}), ("alibi", {"head": 1}), ("sinusoidal", {"base": 20000.0}))
    for scheme, options in unseen:
        asked_again, made_again = repeated_requests(window, monkeypatch, scheme, **options)
        # the docks of the family shown ask as they appear; before, they asked again as their panels heard of the
        # new scheme, and each request was made again (3 to 4 per switch)
        assert made_again == 0, (scheme, asked_again, made_again)


def test_switching_back_to_a_setup_shows_its_logit_properties_without_measuring_again(make_window, monkeypatch):
    from posenc_gui.model.attention.logit_properties import properties_table

    window = make_window(restore=False)
    measured: list = []
    submit = ComputeService.submit

    def counted(self, key, function, *args, **kwargs):
        if isinstance(function, ModelJob) and function.function is properties_table:
            measured.append(function.args[0].scheme)
        return submit(self, key, function, *args, **kwargs)

    monkeypatch.setattr(ComputeService, "submit", counted)
    logits = window.panels["logits"]
    shown = {}
    for scheme in ("alibi", "t5", "alibi", "t5"):
        assert window.state.update(scheme=scheme) is None
        window.state.flush()
        assert window.compute.wait_idle()
        logits.run_debounced()  # the measurement waits for a pause after the last change: now
        assert window.compute.wait_idle()
        assert logits.on_screen() and logits._measured_key == logits._properties_key()
        shown.setdefault(scheme, []).append(logits.properties.item(0, 0).text())
    # (the table the window opened with, sinusoidal, may be measured meanwhile: its pause ran out)
    assert measured.count("alibi") == 1 and measured.count("t5") == 1, measured  # before: at each switch
    assert all(first == again for first, again in shown.values()), shown


def test_a_new_layout_paints_its_panels_once_their_data_for_the_new_scheme_is_in(make_window, monkeypatch, qtbot):
    from pyqtgraph.widgets.GraphicsView import GraphicsView
    from PySide6.QtWidgets import QApplication

    import posenc_gui.window.paint_hold as paint_hold
    from waiting import TIMEOUT_MS

    monkeypatch.setattr(paint_hold, "HOLD_MS", TIMEOUT_MS)  # however slow the machine: only the data ends it
    painted: list[tuple[str, object]] = []
    paint = GraphicsView.paintEvent

    def recorded(view, event) -> None:  # each panel's canvas painted, and the parameters of the data it holds
        paint(view, event)
        widget = panel_widget_of(view)
        if widget is not None:
            panels = getattr(view.window(), "panels", None)  # the main window (none while it is built)
            panel = panels.built().get(widget.objectName().removeprefix("panel-")) if panels else None
            painted.append((panel.panel_id, getattr(panel.data, "params", None)) if panel else ("?", None))

    monkeypatch.setattr(GraphicsView, "paintEvent", recorded)  # before the window: PySide keeps the overrides
    window = make_window(restore=False)
    for scheme, theta in (("rope", 20000.0), ("sinusoidal", None)):  # each family's layout visited once
        assert window.state.update(scheme=scheme, **({"rope_theta": theta} if theta else {})) is None
        window.state.flush()
        assert window.compute.wait_idle()
        QApplication.processEvents()
    painted.clear()
    assert window.state.update(scheme="rope", rope_theta=500000.0) is None  # not the rope the docks last drew
    window.state.flush()
    assert window.compute.wait_idle()
    hold = window.dock_placement.paint_hold
    qtbot.waitUntil(lambda: not hold.holding)  # the data is in and laid out
    QApplication.processEvents()
    new = window.state.params
    fresh = {panel_id for panel_id, panel in window.panels.built().items()
             if panel.on_screen() and getattr(panel.data, "params", None) == new}
    assert {"heatmap", "frequencies", "context", "logits"} <= fresh
    assert {panel_id for panel_id, _ in painted} >= fresh  # each painted its new data
    stale = [(panel_id, params.scheme if params else None) for panel_id, params in painted
             if panel_id in fresh and params != new]
    assert stale == []  # before: each painted what it last drew first (the heatmap sinusoidal, the others rope
    #                     at rope_theta 20000), then again with the new data


def test_a_scheme_switched_back_to_shows_the_kept_results_without_asking(make_window, monkeypatch):
    window = make_window(restore=False)
    for scheme in ("rope", "sinusoidal"):
        repeated_requests(window, monkeypatch, scheme)  # rope's layout visited: its panels computed rope's data
    asked: list = []
    shown: list = []
    submit, receive = ComputeService.submit, Panel._receive
    monkeypatch.setattr(ComputeService, "submit",
                        lambda self, key, *args, **kwargs: (asked.append(key), submit(self, key, *args, **kwargs)))
    monkeypatch.setattr(Panel, "_receive", lambda self, data: (shown.append(self), receive(self, data)))
    assert window.state.update(scheme="rope") is None
    window.state.flush()
    assert window.compute.wait_idle()
    panels = window.panels.built()
    kept = [panels[panel_id] for panel_id in ("heatmap", "frequencies", "context", "logits")]
    assert all(panel.on_screen() and panel.data.params == window.state.params for panel in kept)
    assert not set(asked) & set(kept), asked  # before: each asked (twice: see above)
    # not drawn at all: each shows rope's result still (before: drawn as its dock appeared; before that, again as
    # the panel heard of the new scheme in the same change)
    assert not set(shown) & set(kept[1:]), shown
    # a setup not seen before is computed
    assert window.state.update(rope_theta=123456.0) is None
    window.state.flush()
    assert window.compute.wait_idle()
    assert set(kept) <= set(asked)
    assert all(panel.data.params == window.state.params for panel in kept)


def settle_window(qtbot, window) -> None:
    """Compute, lay out and paint what ``window`` has pending, its debounced re-samples too, until none is left."""
    from waiting import finish_pending

    def settled() -> bool:
        assert window.compute.wait_idle()
        finish_pending(qtbot, window)
        waiting = [panel.run_debounced() for panel in window.panels.built().values()]
        return not any(waiting) and window.compute.is_idle()

    qtbot.waitUntil(settled)


def test_a_layout_that_leaves_a_plot_s_samples_as_they_were_draws_them_once(make_window, monkeypatch, qtbot):
    window = make_window(size=(1500, 950), restore=False)
    for scheme in ("alibi", "rope"):  # ALiBi's layout visited once: its matrix computed and kept
        assert window.state.update(scheme=scheme) is None
        settle_window(qtbot, window)
    shown: list = []
    receive = Panel._receive
    monkeypatch.setattr(Panel, "_receive", lambda self, data: (shown.append(self.panel_id), receive(self, data)))
    assert window.state.update(scheme="alibi") is None
    settle_window(qtbot, window)  # the new layout's passes resize the matrix and start its re-sample
    bias = window.panels["bias"]
    assert bias.on_screen() and bias.data.params == window.state.params
    assert shown.count("bias") == 1, shown  # before: 2 to 3, the same samples drawn again after
    #                                          a pass of the new layout


def test_a_resize_that_changes_the_samples_computes_them(make_window, qtbot):
    window = make_window(restore=False)
    assert window.state.update(seq_len=8192) is None  # more positions than the heatmap has pixels
    settle_window(qtbot, window)
    heatmap = window.panels["heatmap"]
    rows_before = heatmap.data.positions.count
    assert rows_before < 8192
    heatmap.resample()  # nothing moved: nothing asked
    assert window.compute.is_idle() and heatmap.data.positions.count == rows_before
    window.resize(window.width(), window.height() // 2)
    settle_window(qtbot, window)
    assert heatmap.data.positions.count < rows_before  # fewer pixels high, fewer rows sampled


def test_a_switch_into_another_family_paints_each_shown_plot_once(make_window, monkeypatch, qtbot):
    from pyqtgraph.widgets.GraphicsView import GraphicsView

    import posenc_gui.window.paint_hold as paint_hold
    from waiting import TIMEOUT_MS

    monkeypatch.setattr(paint_hold, "HOLD_MS", TIMEOUT_MS)  # however slow the machine: only the data ends it
    painted: list[str] = []
    paint = GraphicsView.paintEvent

    def recorded(view, event) -> None:
        paint(view, event)
        widget = panel_widget_of(view)
        painted.append(widget.objectName() if widget is not None else "?")

    monkeypatch.setattr(GraphicsView, "paintEvent", recorded)  # before the window: PySide keeps the overrides
    window = make_window(size=(1500, 950), restore=False)
    for scheme in ("alibi", "rope"):  # each family's layout visited once
        assert window.state.update(scheme=scheme) is None
        settle_window(qtbot, window)
    painted.clear()
    assert window.state.update(scheme="alibi") is None
    window.state.flush()
    hold = window.dock_placement.paint_hold
    qtbot.waitUntil(lambda: not hold.holding)
    settle_window(qtbot, window)  # then whatever else would paint, until nothing is pending
    shown = {f"panel-{panel_id}" for panel_id, panel in window.panels.built().items()
             if panel.on_screen() and panel.canvas is not None}
    assert {"panel-bias", "panel-logits"} <= shown
    counts = {name: painted.count(name) for name in shown}
    # before: the bias matrix and the logits twice here (5 and 4 times in run.py --switch), once per axis that
    # took a new width for its labels in its paint, and once more after a paint whose start applied new ranges
    assert set(counts.values()) == {1}, counts


def test_a_result_that_is_drawn_is_not_drawn_again_when_its_setup_comes_back(make_window, monkeypatch):
    from posenc_gui.views.plotkit import theme
    from posenc_gui.views.rope_context import RopeContextPanel

    drawn: list = []
    show = RopeContextPanel.show_data

    def counted(panel, data) -> None:
        drawn.append(data)
        show(panel, data)

    monkeypatch.setattr(RopeContextPanel, "show_data", counted)
    window = make_window(restore=False)

    def switch(scheme: str) -> None:
        assert window.state.update(scheme=scheme) is None
        window.state.flush()
        assert window.compute.wait_idle()

    switch("rope")
    context = window.panels["context"]
    assert context.on_screen() and drawn and drawn[-1] is context.data
    first = len(drawn)
    context.show_message("a refusal of other arguments", "error")
    switch("sinusoidal")
    assert not context.on_screen()
    switch("rope")  # the kept result is the one drawn: shown as it was (before: its fourteen plots drawn again)
    assert context.on_screen() and len(drawn) == first
    assert context.message_label.isHidden()  # a message about other arguments goes
    switch("sinusoidal")
    try:
        theme.set_theme("dark")  # while hidden: the same result is drawn again, in the new colours, when shown
        switch("rope")
        assert len(drawn) == first + 1 and drawn[-1] is context.data
    finally:
        theme.set_theme("light")

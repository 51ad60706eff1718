"""The scheme switch of ``run.py --switch``: what is switched to, one timed switch, and the line it prints.

Imported by ``run.py`` (after it has set Qt's platform up), which opens the
window and runs the rounds.
"""

from __future__ import annotations

import statistics
import time

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

#: Rounds of :func:`switches` timed (after one round that visits each family's layout first).
SWITCH_ROUNDS = 6
#: Passes of the event loop without a canvas repaint after which a switch's window counts as repainted.
QUIET_PASSES = 2


def switches(rope_options: dict) -> tuple[tuple[str, dict], ...]:
    """The schemes switched to, in order, with the options each gets: one of each family (RoPE with
    ``rope_options``), and T5 beside ALiBi (a switch within the biases' layout)."""
    return ("rope", rope_options), ("alibi", {}), ("t5", {}), ("sinusoidal", {})


def timed_switch(window, scheme: str, options: dict, canvas_paints) -> tuple[float, float]:
    """Seconds from a switch to ``scheme`` to the repainted window with every visible panel's new data, and the
    GUI thread's CPU seconds meanwhile.

    As ``run.timed_update``, and the re-samples the switch started (a plot
    whose size or range changed with the new layout re-samples after its
    pause, ``Panel.debounce``) are run at once and counted in, until no
    panel has one waiting and no request is on its way; then the repaints
    that repaints started (a plot laid out anew as it paints its new axis
    labels) until :data:`QUIET_PASSES` passes of the event loop paint no
    canvas (``canvas_paints``: ``run.CanvasPaints``, or None not to wait).
    """
    start, cpu = time.perf_counter(), time.thread_time()
    window.state.update(scheme=scheme, **options)
    window.state.flush()
    # a window that holds its repaints until the new data is in and laid out (window/paint_hold.py) paints after
    hold = getattr(getattr(window, "dock_placement", None), "paint_hold", None)
    while True:
        window.compute.wait_idle(120)
        while hold is not None and hold.holding:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        QApplication.processEvents()  # the layout's and the new data's repaints, a refit posted for later
        waiting = [panel.run_debounced() for panel in window.panels.built().values()]
        if not any(waiting) and window.compute.is_idle() and not (hold is not None and hold.holding):
            break
    quiet = 0
    while canvas_paints is not None and quiet < QUIET_PASSES:
        painted = dict(canvas_paints.finished)
        QApplication.processEvents()
        quiet = quiet + 1 if canvas_paints.finished == painted else 0
    return time.perf_counter() - start, time.thread_time() - cpu


def switch_line(times: dict[str, list[tuple[float, float]]], rounds: int, steal: float | None) -> str:
    """The line of ``run.py --switch``: per scheme switched to, the median wall time (the slowest first, as
    ``step N ms`` for ab.py) and the GUI thread's median CPU time, what the switch costs the window on a quiet
    machine, where the workers compute on the other core meanwhile."""
    medians = {scheme: 1000 * statistics.median(wall for wall, _ in values) for scheme, values in times.items()}
    cpu = {scheme: 1000 * statistics.median(cpu for _, cpu in values) for scheme, values in times.items()}
    slowest = max(medians, key=medians.get)
    return (f"128 × 512, scheme switch (median of {rounds}): slowest into {slowest}, step {medians[slowest]:.1f} ms; "
            + ", ".join(f"into {scheme} {ms:.1f} (GUI CPU {cpu[scheme]:.1f})" for scheme, ms in medians.items())
            + " ms; VM steal " + ("n/a" if steal is None else f"{steal:.1f} %"))

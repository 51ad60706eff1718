"""Panels in the view tests: shown as a dock shows them, their parameters changed as the user changes them.

Every wait here ends as soon as its condition holds; its bound is the tests' own (``waiting.TIMEOUT_S``, the
default of ``ComputeService.wait_idle`` in the tests).
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from waiting import finish_pending

Shown = TypeVar("Shown", bound=QWidget)


def show_panel(qtbot, panel: Shown, size: tuple[int, int] | None = (900, 600), *, settle: bool = True,
               on_screen: bool = True) -> Shown:
    """Put ``panel`` on screen as a dock does (or lay it out off screen), closed after the test.

    Parameters
    ----------
    qtbot
        The test's ``qtbot``; it closes the panel after the test.
    panel
        A panel (or any widget with ``state`` and ``compute`` when ``settle``).
    size
        Its size in pixels (width, height); ``None`` leaves its own.
    settle
        Then emit the parameter change still pending (``AppState`` debounces them) and wait until the
        compute service is idle: the panel shows what its parameters give. Without it the panel is only
        exposed, its first computation may be under way.
    on_screen
        Shown on the screen and exposed. Without it, shown off screen as an export lays a panel out
        (``WA_DontShowOnScreen``: laid out and painted, never exposed): its pending events and paints are run
        (:func:`waiting.finish_pending`).

    Returns
    -------
    The panel.
    """
    qtbot.addWidget(panel)
    if size is not None:
        panel.resize(*size)
    if on_screen:
        panel.show()
        qtbot.waitExposed(panel)
    else:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.show()
        finish_pending(qtbot, panel)  # the show and its layout
    if settle:
        settle_params(panel.state, panel.compute)
    return panel


def settle_params(state, compute) -> None:
    """Emit ``state``'s pending parameter change now and wait until ``compute`` has computed what it asks for."""
    state.flush()
    assert compute.wait_idle()


def change_params(state, compute, **params) -> None:
    """Set ``params`` (each accepted: ``state.update`` returns no error) and wait until they are computed."""
    assert state.update(**params) is None
    settle_params(state, compute)


def settle_panel(qtbot, panel) -> None:
    """Wait until ``panel`` shows its parameters, then what the resize asked for, then its layout and paint.

    That is: the pending parameter change emitted and computed, the panel's pending events, paints and
    debounced re-samples run (:func:`waiting.finish_pending`), the re-samples computed, and what arrived
    laid out and painted.
    """
    settle_params(panel.state, panel.compute)
    finish_pending(qtbot, panel)  # the resize-triggered re-sampling, delayed texts
    assert panel.compute.wait_idle()
    finish_pending(qtbot, panel)  # the layout and paint of what arrived


def settle_debounced(panel) -> None:
    """Wait until ``panel`` shows its parameters, including what it computes only after a pause in the changes.

    The pending parameter change is emitted and computed, then the panel's debounced work (a re-sample after a
    resize, properties measured after a pause) is run at once rather than waited for, and computed.
    """
    settle_params(panel.state, panel.compute)
    panel.run_debounced()
    assert panel.compute.wait_idle()

"""The linked cursor: a position (and a dimension) that every panel marks, set by hovering or clicking any of them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

if TYPE_CHECKING:
    from .state import AppState


@dataclass(frozen=True)
class Cursor:
    """The linked cursor: a position (and a dimension, or None) every panel that maps them marks.

    ``pinned``: set by a click (it stays, arrow keys move it); otherwise it follows the mouse.
    """

    position: int
    dimension: int | None = None
    pinned: bool = False


class LinkedCursor(QObject):
    """The cursor shared by the panels: a pinned one (click) and a transient one (hover) drawn over it.

    Changes within one event-loop turn are announced once, with the final
    cursor (a mouse move per pixel does not redraw each panel per setter).
    Positions and dimensions are clamped to the parameters' ``seq_len`` and
    ``d_model``, and follow them when they shrink.

    Signals
    -------
    changed(object)
        The :class:`Cursor` shown now, or None.
    """

    changed = Signal(object)

    def __init__(self, state: AppState) -> None:
        super().__init__(state)
        self._state = state
        self._pinned: Cursor | None = None
        self._hovered: Cursor | None = None
        self._emitted: Cursor | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.flush)
        state.paramsChanged.connect(self._clamp_all)

    @property
    def current(self) -> Cursor | None:
        """The hovered cursor while the mouse is over a plot, else the pinned one (None for neither)."""
        return self._hovered or self._pinned

    @property
    def pinned(self) -> Cursor | None:
        """The cursor set by the last click (None after :meth:`clear`)."""
        return self._pinned

    def hover(self, position: int | None = None, dimension: int | None = None) -> None:
        """Show a transient cursor over the pinned one; a coordinate left None keeps the shown cursor's."""
        self._hovered = self._make(position, dimension, False)
        self._announce()

    def unhover(self) -> None:
        """The mouse left the plots: the pinned cursor (if any) shows again."""
        self._hovered = None
        self._announce()

    def pin(self, position: int | None = None, dimension: int | None = None) -> None:
        """Pin the cursor (a click); a coordinate left None keeps the shown cursor's."""
        self._pinned = self._make(position, dimension, True)
        self._hovered = None
        self._announce()

    def move(self, positions: int = 0, dimensions: int = 0) -> None:
        """Move the pinned cursor (the shown one becomes pinned) by whole steps; clamped to the parameters."""
        start = self.current
        if start is None:
            return
        dimension = start.dimension
        if dimensions and dimension is None:
            dimension = 0
        elif dimension is not None:
            dimension += dimensions
        self.pin(start.position + positions, dimension)

    def clear(self) -> None:
        """Remove the pinned and the hovered cursor."""
        self._pinned = self._hovered = None
        self._announce()

    def flush(self) -> None:
        """Announce a pending change now (tests, scripts)."""
        self._timer.stop()
        if self.current != self._emitted:
            self._emitted = self.current
            self.changed.emit(self._emitted)

    def _make(self, position: int | None, dimension: int | None, pinned: bool) -> Cursor:
        shown = self.current
        if dimension is None and shown is not None:
            dimension = shown.dimension
        if position is None:  # a plot of dimensions only (the spectrum's components)
            position = 0 if shown is None else shown.position
        return self._clamped(Cursor(int(position), None if dimension is None else int(dimension), pinned))

    def _clamped(self, cursor: Cursor) -> Cursor:
        params = self._state.params
        dimension = cursor.dimension
        return replace(cursor, position=min(max(cursor.position, 0), params.seq_len - 1),
                       dimension=None if dimension is None else min(max(dimension, 0), params.d_model - 1))

    def _clamp_all(self, *_: object) -> None:
        self._pinned = None if self._pinned is None else self._clamped(self._pinned)
        self._hovered = None if self._hovered is None else self._clamped(self._hovered)
        self._announce()

    def _announce(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

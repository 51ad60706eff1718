"""The linked cursor in a panel: its marker lines, and the mouse and keys that set and move it.

A panel that maps positions or dimensions onto a plot's axis lists those
axes (:class:`CursorAxis`) and calls :meth:`Panel.link_cursor`; the
:class:`CursorLink` it gets draws :attr:`AppState.cursor <posenc_gui.state.AppState.cursor>`
as a line across each axis (a marker moved, no model work) and sets the
cursor from the mouse (hover: transient; click: pinned) and the keys (arrows
move the pinned cursor, Escape clears it) over the panel's canvas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QKeyEvent

from ..linked_cursor import Cursor, LinkedCursor
from .plotkit.colours import CURSOR_COLOUR, CURSOR_HALO

#: Width in pixels of the cursor's line and of the white halo that makes it read on dark and light colours.
LINE_WIDTH = 1.0
HALO_WIDTH = 3.0
#: Above the images, their overlays (aliasing shade) and the panels' own reference lines.
CURSOR_Z = 50
#: Positions a Shift+arrow moves the cursor, at least (else a screen pixel's worth of the view).
SHIFT_STEP = 10

COORDINATES = ("position", "dimension")
#: (positions, dimensions) an arrow key moves the cursor, in steps: left/right the position, up/down the dimension.
ARROWS = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, 1), Qt.Key.Key_Down: (0, -1)}


def _identity(value: int) -> float | None:
    return float(value)


def _nearest(value: float) -> int:
    return int(round(value))


@dataclass(frozen=True)
class CursorAxis:
    """One axis of one plot that shows positions or dimensions.

    Attributes
    ----------
    plot : pg.PlotItem
        The plot.
    axis : str
        ``"x"`` (the cursor is a vertical line) or ``"y"`` (a horizontal one).
    coordinate : str
        ``"position"`` or ``"dimension"``.
    to_plot : callable
        The axis's coordinate of a cursor value (an offset from the profile's
        reference, a spectrum's component of a dimension); None when the
        value has none (nothing drawn).
    from_plot : callable
        The cursor value at an axis coordinate (for the mouse).
    """

    plot: pg.PlotItem
    axis: str
    coordinate: str
    to_plot: Callable[[int], float | None] = field(default=_identity)
    from_plot: Callable[[float], int] = field(default=_nearest)

    def __post_init__(self) -> None:
        if self.axis not in ("x", "y"):
            raise ValueError(f"axis must be 'x' or 'y', got {self.axis!r}")
        if self.coordinate not in COORDINATES:
            raise ValueError(f"coordinate must be one of {', '.join(COORDINATES)}, got {self.coordinate!r}")


class CursorMark:
    """A cursor line across one axis: a thin dark line on a white halo (solid when pinned, dashed on hover).

    The two lines are made the first time the mark is drawn (``halo`` and
    ``line`` are None until then): a window's panels have a dozen marks
    before the first paint, 0.6 ms each, that no one may hover.
    """

    def __init__(self, target: CursorAxis) -> None:
        self.target = target
        self.halo: pg.InfiniteLine | None = None
        self.line: pg.InfiniteLine | None = None
        self._pinned: bool | None = None
        self._value: float | None = None

    def _make_lines(self) -> None:
        angle = 90 if self.target.axis == "x" else 0
        self.halo = pg.InfiniteLine(angle=angle, movable=False, pen=pg.mkPen(CURSOR_HALO, width=HALO_WIDTH))
        self.line = pg.InfiniteLine(angle=angle, movable=False, pen=pg.mkPen(CURSOR_COLOUR, width=LINE_WIDTH))
        for z, item in enumerate((self.halo, self.line)):
            item.setZValue(CURSOR_Z + z)
            item.hide()
            self.target.plot.addItem(item, ignoreBounds=True)  # the cursor never widens the plot's range

    @property
    def value(self) -> float | None:
        """Where the line is drawn, in the axis's data coordinates (None while hidden)."""
        return self._value

    def show(self, cursor: Cursor | None) -> None:
        """Draw ``cursor`` (or hide the line when it is None or has nothing on this axis)."""
        value = None if cursor is None else getattr(cursor, self.target.coordinate)
        shown = None if value is None else self.target.to_plot(value)
        self._value = shown
        if self.line is None:
            if shown is None:
                return
            self._make_lines()
        for item in (self.halo, self.line):
            if shown is not None:
                item.setPos(shown)
            if item.isVisible() != (shown is not None):
                item.setVisible(shown is not None)
        if cursor is not None and cursor.pinned != self._pinned:
            self._pinned = cursor.pinned
            style = Qt.PenStyle.SolidLine if cursor.pinned else Qt.PenStyle.DashLine
            self.line.setPen(pg.mkPen(CURSOR_COLOUR, width=LINE_WIDTH, style=style))


class CursorLink(QObject):
    """The cursor of one panel: its marks, and the hover, click and keys over ``canvas`` that set it.

    Parameters
    ----------
    cursor : LinkedCursor
        The shared cursor.
    canvas : pg.GraphicsView
        The panel's canvas (its scene's mouse signals and its keys are used).
    axes : sequence of CursorAxis
        The axes it marks; over a plot, the first axis of each coordinate sets it.
    """

    def __init__(self, cursor: LinkedCursor, canvas: pg.GraphicsView, axes: Sequence[CursorAxis],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.cursor = cursor
        self.canvas = canvas
        self.marks = [CursorMark(axis) for axis in axes]
        canvas.scene().sigMouseMoved.connect(self._moved)
        canvas.scene().sigMouseClicked.connect(self._clicked)
        if canvas.focusPolicy() == Qt.FocusPolicy.NoFocus:
            canvas.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        canvas.installEventFilter(self)

    def draw(self, cursor: Cursor | None) -> None:
        """Move the marks to ``cursor``."""
        for mark in self.marks:
            mark.show(cursor)

    def values_at(self, scene_pos: QPointF) -> dict[str, int]:
        """The cursor's coordinates under ``scene_pos`` that its plot maps: ``{"position": …, "dimension": …}``."""
        found: dict[str, int] = {}
        for mark in self.marks:
            target = mark.target
            view_box = target.plot.getViewBox()
            if target.coordinate in found or not view_box.sceneBoundingRect().contains(scene_pos):
                continue
            point = view_box.mapSceneToView(scene_pos)
            found[target.coordinate] = target.from_plot(point.x() if target.axis == "x" else point.y())
        return found

    def _moved(self, scene_pos: QPointF) -> None:
        values = self.values_at(scene_pos)
        if values:
            self.cursor.hover(**values)
        else:
            self.cursor.unhover()

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        values = self.values_at(event.scenePos())
        if values:
            self.cursor.pin(**values)

    def position_step(self, shift: bool) -> int:
        """Positions an arrow key moves: 1, or with Shift the larger of 10 and a screen pixel's worth of the view."""
        if not shift:
            return 1
        for mark in self.marks:
            target = mark.target
            if target.coordinate == "position":
                view_box = target.plot.getViewBox()
                x_range, y_range = view_box.viewRange()
                low, high = x_range if target.axis == "x" else y_range
                pixels = view_box.width() if target.axis == "x" else view_box.height()
                if pixels > 0:
                    return max(SHIFT_STEP, math.ceil((high - low) / pixels))
        return SHIFT_STEP

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.Leave:
            self.cursor.unhover()
        elif event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self.key(event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        return False

    def key(self, key: int, shift: bool = False) -> bool:
        """Act on an arrow key or Escape (True), or leave the key to the canvas (False)."""
        if key == Qt.Key.Key_Escape and self.cursor.current is not None:
            self.cursor.clear()
            return True
        if key not in ARROWS or self.cursor.current is None:
            return False
        positions, dimensions = ARROWS[key]
        step = self.position_step(shift)
        self.cursor.move(positions * step, dimensions * (SHIFT_STEP if shift else 1))
        return True

"""The docks' default layout for each family of schemes, and the user's own layout per family.

A RoPE user comes for the frequencies, the context extension and the
positional logits; an ALiBi user for the bias itself. So the window's
default layout follows the scheme's family (added tables, rotations, biases,
a model file's table), and shows in front only panels that apply to the
current scheme. Switching to another family re-arranges the docks the user
has not moved (floated, closed or dragged elsewhere stay where the user put
them); coming back to a family brings back the layout the user had in it.
View ▸ Layout names the layouts. The window keeps one :class:`DockLayouts`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from ..model import EncodingParams
from ..views.registry import declarations

#: The version tag of the window's saved dock states (QMainWindow.saveState).
SETTINGS_VERSION = 1
#: Widths of the left column and of each dock of the right area's second row, at first launch (logical pixels).
LEFT_WIDTH, ROW_WIDTH = 330, 600
#: Heights of the right area's first and second rows, and of the left column's first and next docks.
RIGHT_HEIGHTS, LEFT_HEIGHTS = (480, 440), (420, 500)
#: Height of the window's menu bar, status bar and the docks' title bars together (logical pixels, about).
CHROME_HEIGHT = 110
#: The window's size at first launch (logical pixels), and the share of a larger screen's available area it takes
#: instead, up to the largest first size: on 1920 × 1080 the four docks of a rotation or bias layout need all of
#: it to show their plots; a larger screen gets no larger window than that.
DEFAULT_SIZE, SCREEN_SHARE, LARGEST_FIRST_SIZE = (1500, 950), 0.96, (1840, 1040)
#: Longest saved dock state kept per layout (bytes; the window's is about 3 KB).
MAX_STATE_BYTES = 8 * 1024


@dataclass(frozen=True)
class Layout:
    """A default arrangement of the docks.

    Attributes
    ----------
    key, title
        Its name in settings, and in View ▸ Layout.
    left
        The left column's docks, top to bottom.
    top
        The right area's first row, side by side (those that apply to the scheme).
    row
        The right area's second row, side by side (those that apply).
    heights
        The first and second rows' heights at first launch (in this ratio on a taller window).
    """

    key: str
    title: str
    left: tuple[str, ...]
    top: tuple[str, ...]
    row: tuple[str, ...]
    heights: tuple[int, int] = RIGHT_HEIGHTS


def _tables_layout() -> Layout:
    """The layout the panels declare (:class:`~posenc_gui.views.registry.DockPlacement`): the added tables'."""
    left = tuple(d.panel_id for d in declarations() if d.dock.area == "left" and d.dock.shown)
    right = tuple(d.panel_id for d in declarations() if d.dock.area == "right" and d.dock.shown)
    return Layout("tables", "&Added tables (sinusoidal, learned, …)", left, right[:1], right[1:])


def layouts() -> dict[str, Layout]:
    """Every default layout by key, in View ▸ Layout order."""
    tables = _tables_layout()
    return {layout.key: layout for layout in (
        tables,
        # one plot each above; below, the context extension's grid of plots and the positional logits' stack
        Layout("rotations", "&Rotations (RoPE, xPos)", tables.left, ("heatmap", "frequencies"),
               ("context", "logits"), (360, 560)),
        Layout("biases", "&Biases (ALiBi, T5)", tables.left, ("bias",), ("logits", "permutation"), (400, 520)),
        Layout("model_table", "A &model file's table", tables.left, ("heatmap",), ("periodogram", "similarity")),
    )}


def first_size(available: QSize) -> tuple[int, int]:
    """The window's width and height at first launch on a screen whose available area is ``available``:
    :data:`DEFAULT_SIZE`, or :data:`SCREEN_SHARE` of a larger screen up to :data:`LARGEST_FIRST_SIZE` (the window
    is kept on a smaller one)."""
    return tuple(max(default, min(largest, int(side * SCREEN_SHARE))) for default, largest, side in
                 zip(DEFAULT_SIZE, LARGEST_FIRST_SIZE, (available.width(), available.height())))


def layout_key(params: EncodingParams) -> str:
    """The key of the default layout for ``params``' scheme."""
    info = params.info
    if info.key == "learned_file":
        return "model_table"
    return {"table": "tables", "rotation": "rotations", "bias": "biases"}[info.family]


class DockLayouts:
    """Arranges a window's docks by layout, remembers the user's layout per family, and knows who moved what.

    Parameters
    ----------
    window
        The main window holding the docks.
    docks
        Every panel's dock by panel id.
    applies
        Whether panel ``panel_id`` applies to ``params`` (shown in front only then).
    """

    def __init__(self, window: QMainWindow, docks: dict[str, QDockWidget],
                 applies: Callable[[str, EncodingParams], bool]) -> None:
        self.window, self.docks, self._applies = window, docks, applies
        self.layouts = layouts()
        self.current: str | None = None
        #: The dock state the user last had in each layout left since (saveState).
        self._saved: dict[str, QByteArray] = {}
        #: Where each dock was after the window last placed it: (area, floating, closed).
        self._placed_as: dict[str, tuple[object, bool, bool]] = {}

    def _where(self, dock: QDockWidget) -> tuple[object, bool, bool]:
        return self.window.dockWidgetArea(dock), dock.isFloating(), dock.isHidden()

    def _note_placement(self) -> None:
        self._placed_as = {pid: self._where(dock) for pid, dock in self.docks.items()}

    @property
    def moved(self) -> set[str]:
        """The docks the user floated, closed, opened or moved to another area since the window last placed them."""
        return {pid for pid, dock in self.docks.items()
                if pid in self._placed_as and self._where(dock) != self._placed_as[pid]}

    @contextlib.contextmanager
    def arrangement(self) -> Iterator[None]:
        """Dock changes made within are the window's, not the user's."""
        try:
            yield
        finally:
            self._note_placement()

    # ------------------------------------------------------------ queries
    def placed(self, key: str, params: EncodingParams) -> tuple[list[str], list[str], list[str]]:
        """The left column, top and second row of layout ``key`` for ``params``: the panels that apply.

        When none of the top's panels applies, the second row's first that
        does takes its place.
        """
        layout = self.layouts[key]
        applies = [pid for pid in (*layout.left, *layout.top, *layout.row)
                   if pid in self.docks and self._applies(pid, params)]
        left = [pid for pid in layout.left if pid in applies]
        top = [pid for pid in layout.top if pid in applies]
        row = [pid for pid in layout.row if pid in applies]
        return left, (top or row[:1]), (row if top else row[1:])

    def rows(self) -> list[list[QDockWidget]]:
        """The current layout's first and second rows of the right area (each side by side at first)."""
        if self.current is None:
            return [[], []]
        _, top, row = self.placed(self.current, self.window.state.params)
        return [[self.docks[pid] for pid in top], [self.docks[pid] for pid in row]]

    def left_docks(self) -> list[QDockWidget]:
        """The current layout's left column, top to bottom."""
        if self.current is None:
            return []
        return [self.docks[pid] for pid in self.placed(self.current, self.window.state.params)[0]]

    # ------------------------------------------------------------ arranging
    def tab_in_order(self, first: QDockWidget, docks: Sequence[QDockWidget]) -> None:
        """Tab ``docks`` behind ``first`` and order its tab bar: ``first``, the current layout's rows in their
        order, then the other panels in the panels' order.

        Qt appends a dock tabbed later at the end of the bar: the layout's
        own panels, tabbed when a screen is too small to show them side by
        side, would come after a dozen others. Each dock is tabbed again in
        order; meanwhile the docks' signals are held, so that no panel is
        built for a tab that is current only while the tabs move, and
        ``first`` is in front after. The window's arrangement, not the user's.
        """
        group = {first, *docks, *self.window.tabifiedDockWidgets(first)}
        ranked = [*(dock for line in self.rows() for dock in line), *self.docks.values()]
        ordered = [dock for dock in dict.fromkeys(ranked) if dock in group and dock is not first]
        ordered += [dock for dock in docks if dock not in ordered]  # not a panel's dock: last
        held = [first, *ordered]
        was_blocked = [dock.blockSignals(True) for dock in held]
        try:
            with self.arrangement():
                for dock in ordered:
                    self.window.tabifyDockWidget(first, dock)
                first.raise_()
        finally:
            for dock, blocked in zip(held, was_blocked):
                dock.blockSignals(blocked)

    def arrange(self, key: str, params: EncodingParams, keep_moved: bool = False) -> None:
        """Place the docks as layout ``key`` has them for ``params``; the docks the user moved stay when
        ``keep_moved``. Panels of the layout that do not apply, and the panels it does not name, are
        tabbed behind the first dock of their area."""
        window, qt_area = self.window, {"left": Qt.DockWidgetArea.LeftDockWidgetArea,
                                        "right": Qt.DockWidgetArea.RightDockWidgetArea}
        skip = self.moved if keep_moved and self._placed_as else set()
        left_ids, top_ids, row_ids = self.placed(key, params)
        left = [self.docks[pid] for pid in left_ids if pid not in skip]
        top = [self.docks[pid] for pid in top_ids if pid not in skip]
        row = [self.docks[pid] for pid in row_ids if pid not in skip]
        right = [*top, *row]
        with self.arrangement():
            for dock in left:
                window.addDockWidget(qt_area["left"], dock)
            for above, below in zip(left, left[1:]):
                window.splitDockWidget(above, below, Qt.Orientation.Vertical)
            for dock in right:
                window.addDockWidget(qt_area["right"], dock)
            if top and row:  # the first row above the second
                window.splitDockWidget(top[0], row[0], Qt.Orientation.Vertical)
            for line in (top, row):  # each row's docks side by side
                for before, after in zip(line, line[1:]):
                    window.splitDockWidget(before, after, Qt.Orientation.Horizontal)
            shown = {*left, *right}
            declared = {d.panel_id: d for d in declarations()}
            for panel_id, dock in self.docks.items():
                if dock in shown or panel_id in skip:
                    continue
                area = declared[panel_id].dock.area if panel_id in declared else "right"
                window.addDockWidget(qt_area[area], dock)
                front = (right if area == "right" else left) or left or right
                if front:
                    window.tabifyDockWidget(front[0], dock)
            for dock in [*left, *right]:
                dock.show()
                dock.raise_()
            if left:
                window.resizeDocks(left[:1], [LEFT_WIDTH], Qt.Orientation.Horizontal)
            if len(left) > 1:
                heights = [LEFT_HEIGHTS[0]] + [LEFT_HEIGHTS[1]] * (len(left) - 1)
                window.resizeDocks(left, heights, Qt.Orientation.Vertical)
            for line in (top, row):  # an even share of the window's right area, side by side
                if len(line) > 1:
                    width = max(ROW_WIDTH, (window.width() - LEFT_WIDTH) // len(line))
                    window.resizeDocks(line, [width] * len(line), Qt.Orientation.Horizontal)
            if top and row:  # the layout's heights, in their ratio on a taller window
                heights = self.layouts[key].heights
                grown = max(1.0, (window.height() - CHROME_HEIGHT) / sum(heights))
                window.resizeDocks([top[0], row[0]], [round(h * grown) for h in heights], Qt.Orientation.Vertical)
        self.current = key

    def reset(self, params: EncodingParams, key: str | None = None) -> None:
        """Every dock back to layout ``key`` (default: the current one), floating and closed ones included;
        the user's own layout of it is forgotten."""
        key = key or self.current or layout_key(params)
        with self.arrangement():
            for dock in self.docks.values():
                dock.setFloating(False)
        self._saved.pop(key, None)
        self.arrange(key, params)

    def follow(self, params: EncodingParams) -> bool:
        """Switch to the layout of ``params``' family when it changed; True when the docks were re-arranged.

        The layout left is remembered as the user had it; the one entered
        comes back as the user left it, else as its default with the docks
        the user moved left alone.
        """
        key = layout_key(params)
        if key == self.current:
            return False
        if self.current is not None:
            self._saved[self.current] = self.window.saveState(SETTINGS_VERSION)
        saved = self._saved.get(key)
        restored = False
        if saved is not None:
            with self.arrangement():
                restored = self.window.restoreState(saved, SETTINGS_VERSION)
        if restored:
            self.current = key
        else:
            self.arrange(key, params, keep_moved=True)
        return True

    def restore(self, state: QByteArray, params: EncodingParams) -> bool:
        """Restore a saved window state that was saved with ``params``' layout; False (default layout) when
        Qt cannot read it."""
        with self.arrangement():
            restored = self.window.restoreState(state, SETTINGS_VERSION)
        if restored:
            self.current = layout_key(params)
        else:
            self.arrange(layout_key(params), params)
        return restored

    # ------------------------------------------------------------ settings
    def to_text(self) -> str:
        """The layout the window is in and the user's layout of the others, as JSON for the settings file."""
        saved = dict(self._saved)
        if self.current is not None:
            saved[self.current] = self.window.saveState(SETTINGS_VERSION)
        return json.dumps({"current": self.current,
                           "states": {key: base64.b64encode(bytes(state.data())).decode("ascii")
                                      for key, state in saved.items() if state.size() <= MAX_STATE_BYTES}})

    def remember(self, key: str, state: QByteArray) -> None:
        """Keep ``state`` as the user's layout of ``key``, for when the window next switches to it."""
        self._saved[key] = state

    def saved(self, key: str) -> QByteArray | None:
        """The user's layout of ``key`` kept so far, or None."""
        return self._saved.get(key)

    def load_text(self, text: str) -> tuple[str | None, list[str]]:
        """Take the user's layouts per family from :meth:`to_text`'s JSON.

        Returns the key of the layout the window was in when saved (None when
        not known), and what was not usable, in words.
        """
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            return None, ["layouts per family ignored (not JSON)"]
        states = record.get("states") if isinstance(record, dict) else None
        if not isinstance(states, dict):
            return None, ["layouts per family ignored (not a JSON object of states)"]
        current = record.get("current")
        problems = []
        for key, value in states.items():
            if key not in self.layouts or not isinstance(value, str) or len(value) > 2 * MAX_STATE_BYTES:
                problems.append(f"layout {str(key)[:40]!r} ignored")
                continue
            try:
                self._saved[key] = QByteArray(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                problems.append(f"layout {key!r} ignored (not base64)")
        return (current if current in self.layouts else None), problems

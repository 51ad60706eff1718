"""A/B comparison in every panel: a pinned setup A beside the current setup B, and B − A for matrices.

The user pins the current setup as A (:meth:`Comparison.pin`) and goes on
changing the parameters, which are B. Each comparable panel's dock then
holds a :class:`ComparedPanel`: a second instance of the same panel class
built on a :class:`PinnedState` (A's parameters, the window's view
settings, B's panel options), beside the window's own panel, and, for a
panel that shows a matrix (:meth:`Panel.shown_matrix`) in the "B − A"
mode, the difference on a diverging scale centred at 0. Both instances
compute through the window's compute service, so A costs what one more
panel costs, and only while its dock is on screen.

A :class:`ComparedPanel` has the export interface of a panel (figure,
caption, numbers), so exporting a panel while comparing writes A, B and
their difference together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
import shiboken6

from PySide6.QtCore import QObject, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from ..model import EncodingParams
from ..model.analyses.compare import COMPARE_MODES as MODES, DEFAULT_COMPARE_MODE as DEFAULT_MODE, MatrixDifference, \
    matrix_difference
from ..state import AppState
from .labels import MESSAGE_COLOURS, WrappedLabelHolder
from .plotkit import DIVERGING, FOREGROUND, MatrixPlot, new_layout_widget
from .plotkit.pgcompat import item_option
from .plotkit.theme import current as current_theme, restyle, window_palette

if TYPE_CHECKING:
    from .base import Panel

#: How often a compared panel looks whether A and B both show their current data, to take B − A.
DIFFERENCE_POLL_MS = 40
#: A linked zoom re-samples the other side this long after the last range change (as a panel's own zoom).
LINKED_ZOOM_DELAY_MS = 30
#: The strip above each side: its role's colour (the first two of the Okabe–Ito palette's lines).
ROLE_COLOURS = {"A": "#E69F00", "B": "#0072B2"}
PINNED_MESSAGE = "A is pinned: its parameters change only by pinning again (Compare ▸ Pin current setup as A)"


class PinnedState(AppState):
    """The state of setup A: fixed parameters, the view settings of the window it follows.

    Parameters
    ----------
    params : EncodingParams
        A's parameters (validated here).
    follow : AppState
        The window's state: its view settings (embedding scale, reference
        position, …) and its linked cursor are A's too, and a panel of A
        that sets one sets the window's.
    """

    def __init__(self, params: EncodingParams, follow: AppState, parent: QObject | None = None) -> None:
        super().__init__(params, parent)
        self.follow = follow
        self._view = follow.view
        self.cursor = follow.cursor  # one linked cursor: a position hovered in A is marked in B, and back
        follow.viewChanged.connect(self._follow_view)

    def _follow_view(self, name: str, value: object) -> None:
        self._view = self.follow.view
        self.viewChanged.emit(name, value)

    def _keep_reference(self) -> None:
        """Nothing: the reference is the window's, kept within B's length."""

    def set_view(self, **changes: object) -> None:
        """Set the window's view settings (A has none of its own)."""
        self.follow.set_view(**changes)

    def update(self, **changes) -> str | None:
        """Refused: A changes only through :meth:`pin`. Returns the reason (also emitted as ``paramError``)."""
        self.paramError.emit(next(iter(changes), ""), PINNED_MESSAGE)
        return PINNED_MESSAGE

    def pin(self, params: EncodingParams) -> None:
        """Make ``params`` A's parameters (announced once, as any change)."""
        self._params = params.validate()
        self._timer.start()


class RoleStrip(QLabel):
    """One line above a side naming its role and setup ("A (pinned) — sinusoidal: …"), elided to its width.

    One line whatever the width, so the two sides' panels start at the same
    height; the full text is the tooltip, and each panel's own title and
    the exported caption give the parameters in full.
    """

    def __init__(self, role: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName(f"role-{role}")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setStyleSheet(f"color:{FOREGROUND}; border-left:6px solid {ROLE_COLOURS.get(role, FOREGROUND)};"
                           " padding:2px 6px; font-weight:bold;")
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.full_text = ""

    def set_full_text(self, text: str) -> None:
        """Show ``text``, elided at the right when it does not fit."""
        self.full_text = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(10, self.contentsRect().width() - 14)  # the border and padding of the style sheet
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, room))


class DifferenceView(QWidget):
    """B − A of a matrix both setups show, on a diverging scale centred at 0, with its headline numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.canvas = new_layout_widget(self)
        self.matrix = MatrixPlot(self.canvas.ci, "", "", colorbar_label="B − A")  # axes named by the first matrix
        self.matrix.set_colormap(DIVERGING)
        layout.addWidget(self.canvas, 1)
        self.summary_label = QLabel(self)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setStyleSheet(f"color:{FOREGROUND};")
        layout.addWidget(WrappedLabelHolder(self.summary_label, self, keep_height=True))
        self.difference: MatrixDifference | None = None

    def show_difference(self, difference: MatrixDifference, title: str, row_label: str, column_label: str) -> None:
        """Draw ``difference`` (its cells at their own indices) under ``title``, its axes named as the panel's."""
        self.difference = difference
        self.matrix.plot.setLabel("left", row_label)
        self.matrix.plot.setLabel("bottom", column_label)
        rows, columns = difference.rows, difference.columns
        row_step = int(rows[1] - rows[0]) if rows.size > 1 else 1
        column_step = int(columns[1] - columns[0]) if columns.size > 1 else 1
        y0, x0 = rows[0] - 0.5 * row_step, columns[0] - 0.5 * column_step
        rect = QRectF(float(x0), float(y0), float(column_step * columns.size), float(row_step * rows.size))
        # a cell masked on either side is NaN: drawn in the masked grey, as the panels draw a mask
        self.matrix.set_matrix(difference.values, rect, levels=difference.levels, signed=True,
                               masked=bool(np.isnan(difference.values).any()))
        self.matrix.set_title(title)
        text = difference.describe()
        if not difference.regular:
            text += " A and B sample their positions differently: the cells are drawn evenly spaced."
        self.summary_label.setText(text)

    def show_problem(self, text: str) -> None:
        """Say why there is no difference to draw (the last one drawn stays)."""
        self.summary_label.setText(text)


class ComparedPanel(QWidget):
    """A panel of the window (B) with the same panel for a pinned setup (A) beside it, and B − A for a matrix.

    It has the export interface of a :class:`~posenc_gui.views.base.Panel`:
    the figure is both sides (and the difference) under strips naming A and
    B, the caption says each side's, the numbers are both sides' arrays
    (``"A <name>"``, ``"B <name>"``, ``"B − A"``) with both parameter sets.

    Parameters
    ----------
    b_panel : Panel
        The window's panel; it keeps its state, controls and place in the window.
    a_state : PinnedState
        A's state, which the copy of the panel is built on.
    mode : str
        One of :data:`MODES`.
    """

    def __init__(self, b_panel: Panel, a_state: PinnedState, mode: str = DEFAULT_MODE,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.setObjectName(f"compared-{b_panel.panel_id}")
        self.b = b_panel
        self.a_state = a_state
        self.a = type(b_panel)(a_state, b_panel.compute, self)
        self.a.setObjectName(f"panel-{b_panel.panel_id}-A")
        self._copy_options()
        for index in range(self.a.header.count()):  # A follows B's controls: its own would do nothing
            widget = self.a.header.itemAt(index).widget()
            if widget is not None and widget is not self.a.help_button:
                widget.setEnabled(False)
        self.panel_id, self.title = b_panel.panel_id, f"{b_panel.title} (A/B)"
        self.export_formats = b_panel.export_formats
        self.mode = mode
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.figure = QWidget()
        grid = QGridLayout(self.figure)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        self.strips = {"A": RoleStrip("A", self.figure), "B": RoleStrip("B", self.figure)}
        grid.addWidget(self.strips["A"], 0, 0)
        grid.addWidget(self.strips["B"], 0, 1)
        grid.addWidget(self.a, 1, 0)
        grid.addWidget(b_panel, 1, 1)
        b_panel.show()
        self.difference_view: DifferenceView | None = None
        if mode == "difference" and type(b_panel).compares_matrix:
            self.difference_view = DifferenceView(self.figure)
            self.strips["B − A"] = RoleStrip("B − A", self.figure)
            grid.addWidget(self.strips["B − A"], 0, 2)
            grid.addWidget(self.difference_view, 1, 2)
        for column in range(grid.columnCount()):
            grid.setColumnStretch(column, 1)
        grid.setRowStretch(1, 1)
        # In a scroll area: two panels need twice one's width, more than a dock may have (the window
        # would grow past the screen); a narrow dock scrolls instead.
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.figure)
        outer.addWidget(self.scroll, 1)
        self.note_label = QLabel(self)
        self.note_label.setWordWrap(True)
        background, border, text = MESSAGE_COLOURS["info"]
        self.note_label.setStyleSheet(f"background:{background}; color:{text}; border:1px solid {border}; "
                                      "padding:3px 6px;")
        outer.addWidget(self.note_label)
        self.note_label.setVisible(mode == "difference" and self.difference_view is None)
        self.note_label.setText(f"B − A is drawn for matrices; the {b_panel.title} panel shows A and B side by side.")
        self._link_views()
        b_panel.updateScheduled.connect(self._b_scheduled)
        b_panel.state.paramsChanged.connect(self._name_sides)
        a_state.paramsChanged.connect(self._name_sides)
        #: B's plots' copies of A's curves in the overlay mode, by (plot, curve) index of A's panel.
        self.overlays: dict[tuple[int, int], pg.PlotDataItem] = {}
        self._poll = QTimer(self)
        self._poll.setInterval(DIFFERENCE_POLL_MS)
        self._poll.timeout.connect(self._both_drawn)
        self._name_sides()
        b_panel.comparison = self
        restyle(self)  # A's copy and the strips are built in light colours: into the theme in use
        self._wait_for_sides()

    # ------------------------------------------------------------- the sides
    def _copy_options(self) -> None:
        options = self.b.current_options()
        if options and options != self.a.current_options():
            try:
                self.a.apply_options(**options)
            except (TypeError, ValueError) as error:  # valid for B's parameters, not for A's
                self.a.show_message(f"A keeps its own {', '.join(options)}: {error}", "warning")

    def _b_scheduled(self) -> None:
        self._copy_options()
        self._wait_for_sides()

    def _name_sides(self, *_: Any) -> None:
        self.strips["A"].set_full_text(f"A (pinned) — {self.a_state.params.title()}")
        dashed = " (A dashed in its line plots)" if self.mode == "overlay" else ""
        self.strips["B"].set_full_text(f"B — {self.b.state.params.title()}{dashed}")
        if "B − A" in self.strips:
            self.strips["B − A"].set_full_text(f"B − A — {self.b.title}")
        self._wait_for_sides()

    def _link_views(self) -> None:
        """Zoom and pan A, B and the difference together: a user's zoom of one gives the others its ranges.

        Not pyqtgraph's view links: those line up screen positions (plots
        stacked in one column), which shifts side-by-side plots whose titles
        or axes differ in size. The side that did not move re-samples after
        a pause, as a panel's own zoom does.
        """
        self._resample: dict[int, QTimer] = {}
        for panel in (self.a, self.b):
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.setInterval(LINKED_ZOOM_DELAY_MS)
            timer.timeout.connect(panel.schedule_update)
            self._resample[id(panel)] = timer
        a_boxes, b_boxes = self.a.linked_view_boxes(), self.b.linked_view_boxes()
        groups = [[(a_box, self.a), (b_box, self.b)] for a_box, b_box in zip(a_boxes, b_boxes)]
        if self.difference_view is not None and groups:
            groups[0].append((self.difference_view.matrix.view_box, None))
        for group in groups:
            for source, _ in group:
                others = [(box, panel) for box, panel in group if box is not source]
                source.sigRangeChangedManually.connect(lambda *_, s=source, o=others: self._follow(s, o))

    def _follow(self, source, others: list) -> None:
        (x0, x1), (y0, y1) = source.viewRange()
        for box, panel in others:
            if not shiboken6.isValid(box):  # A's copy was rebuilt (a new setup pinned, an undo): its old plots are gone
                continue
            box.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
            if panel is not None:
                self._resample[id(panel)].start()

    # ------------------------------------------------- difference, overlay
    def _wait_for_sides(self) -> None:
        """Draw B − A or the overlay once both sides show their current data (looked at every few ms)."""
        if self.difference_view is not None or self.mode == "overlay":
            self._poll.start()

    def _both_drawn(self) -> None:
        if not (self.a.shows_current_data() and self.b.shows_current_data()):
            return
        self._poll.stop()
        if self.mode == "overlay":
            self._draw_overlays()
        if self.difference_view is not None:
            self._take_difference()

    def _draw_overlays(self) -> None:
        """Copy every line of A's plots, dashed, into the same plot of B (the plots correspond one to one).

        A step curve stays a step curve (its ``stepMode``).
        """
        seen = set()
        for plot_index, (a_plot, b_plot) in enumerate(zip(plot_items(self.a), plot_items(self.b))):
            # PlotDataItem (which the plot's log mode transforms) or PlotCurveItem (drawn as given): the copy is
            # of the same kind, so it lands where A's curve does
            curves = [item for item in a_plot.listDataItems() if isinstance(item, (pg.PlotDataItem, pg.PlotCurveItem))]
            for item_index, item in enumerate(curves):
                pen = item_option(item, "pen")
                if pen is None or item.xData is None or pg.mkPen(pen).style() == Qt.PenStyle.NoPen:
                    continue
                key = (plot_index, item_index)
                seen.add(key)
                mirror = self.overlays.get(key)
                if mirror is None or type(mirror) is not type(item) or mirror.getViewBox() is not b_plot.getViewBox():
                    dashed = pg.mkPen(pen)
                    dashed.setStyle(Qt.PenStyle.DashLine)
                    mirror = type(item)(pen=dashed)
                    mirror.setZValue(item.zValue() + 0.5)
                    b_plot.addItem(mirror)
                    self.overlays[key] = mirror
                # a step curve (stepMode "center": the x of its n + 1 edges) is copied as steps: without the mode
                # pyqtgraph reads n + 1 x values for n y values as an error, in every paint
                mirror.setData(item.xData, item.yData, connect=item_option(item, "connect", "all"),
                               stepMode=item_option(item, "stepMode"))
                mirror.setVisible(item.isVisible())
        for key, mirror in self.overlays.items():
            if key not in seen:
                mirror.setVisible(False)
        self._show_overlays_whole()

    def _show_overlays_whole(self) -> None:
        """Widen each of B's plots' y range to A's curves where they run past it (B fits its range to its own)."""
        by_view: dict[int, tuple[pg.ViewBox, list]] = {}
        for mirror in self.overlays.values():
            view = mirror.getViewBox()
            if view is not None and mirror.isVisible():
                by_view.setdefault(id(view), (view, []))[1].append(mirror.dataBounds(1))
        for view, bounds in by_view.values():
            lows = [low for low, high in bounds if low is not None and np.isfinite(low)]
            highs = [high for low, high in bounds if high is not None and np.isfinite(high)]
            if not lows or not highs:
                continue
            y0, y1 = view.viewRange()[1]
            low, high = min(min(lows), y0), max(max(highs), y1)
            if (low, high) != (y0, y1):
                view.setYRange(low, high, padding=0.02)

    def _take_difference(self) -> None:
        """Take B − A of what A and B show (in the worker)."""
        problem = self.a.unavailable_message() or self.b.unavailable_message()
        a_shown, b_shown = self.a.shown_matrix(), self.b.shown_matrix()
        if problem or a_shown is None or b_shown is None:
            self.difference_view.show_problem(problem or "B − A: waiting for both matrices.")
            return
        title = f"B − A: {self.b.title}"
        self.b.compute.submit(self, lambda: matrix_difference(a_shown, b_shown),
                              lambda difference: self.difference_view.show_difference(
                                  difference, title, b_shown.row_label, b_shown.column_label),
                              lambda error: self.difference_view.show_problem(str(error)))

    # --------------------------------------------------------------- release
    def release(self) -> Panel:
        """Give B's panel back (for its dock, without A's curves) and delete A's copy with this widget."""
        self._poll.stop()
        for mirror in self.overlays.values():
            view = mirror.getViewBox()
            if view is not None:
                view.removeItem(mirror)
        self.overlays.clear()
        self.b.compute.cancel_owner(self)
        self.b.updateScheduled.disconnect(self._b_scheduled)
        self.b.state.paramsChanged.disconnect(self._name_sides)
        self.a_state.paramsChanged.disconnect(self._name_sides)
        self.b.comparison = None
        self.b.setParent(None)
        self.a.compute.cancel_owner(self.a)
        self.deleteLater()
        return self.b

    def follow_theme(self) -> None:
        """In a theme other than the window's (an export's), the panels' own backgrounds and texts follow it:
        their figure holds whole panels, not only canvases the theme restyles."""
        palette, shown = window_palette(), current_theme()
        if palette is None and shown.name == "print":  # paper: white around the canvases too
            palette = QPalette(self.palette())
            palette.setColor(QPalette.ColorRole.Window, QColor(shown.background))
        self.setPalette(QPalette() if palette is None else palette)

    # ---------------------------------------------------- panel's interface
    @property
    def sides(self) -> int:
        """How many figures stand side by side: A and B, and B − A when it is drawn."""
        return 2 if self.difference_view is None else 3

    @property
    def state(self) -> AppState:
        return self.b.state

    @property
    def compute(self):
        return self.b.compute

    @property
    def message_label(self) -> QLabel:
        return self.b.message_label

    def apply_options(self, **values: Any) -> None:
        """Set B's panel options (the command line, a session) and give them to A."""
        self.b.apply_options(**values)
        self._copy_options()

    def current_options(self) -> dict[str, Any]:
        return self.b.current_options()

    def unavailable_message(self) -> str | None:
        """Why neither side applies (None when one does: the other shows why in its place)."""
        a, b = self.a.unavailable_message(), self.b.unavailable_message()
        return f"A: {a} B: {b}" if a and b else None

    def on_screen(self) -> bool:
        return self.b.on_screen()

    def ensure_current(self) -> None:
        self.a.ensure_current()
        self.b.ensure_current()

    def run_debounced(self) -> bool:
        self.a_state.flush()
        waiting = [timer for timer in self._resample.values() if timer.isActive()]
        for timer in waiting:
            timer.stop()
            timer.timeout.emit()
        ran = [bool(waiting), self.a.run_debounced(), self.b.run_debounced()]
        return any(ran)

    def shows_current_data(self) -> bool:
        current = (self.a.shows_current_data() and self.b.shows_current_data()
                   and not any(timer.isActive() for timer in self._resample.values()))
        if self.difference_view is not None or self.mode == "overlay":
            current = current and not self._poll.isActive()
        return current

    def figure_widget(self) -> QWidget:
        return self.figure

    def headline(self) -> str:
        """Both sides' headline numbers, named."""
        parts = [f"{role}: {text}" for role, panel in (("A", self.a), ("B", self.b)) if (text := panel.headline())]
        if self.difference_view is not None and self.difference_view.difference is not None:
            parts.append(self.difference_view.difference.describe())
        return " ".join(parts)

    def figure_caption(self) -> str:
        parts = [f"A (pinned): {self.a_state.params.title()}.", f"B: {self.b.state.params.title()}."]
        for role, panel in (("A", self.a), ("B", self.b)):
            caption = panel.figure_caption()
            if caption:
                parts.append(f"{role}: {caption}")
        if self.difference_view is not None and self.difference_view.difference is not None:
            parts.append(self.difference_view.difference.describe())
        return " ".join(parts)

    def export_data(self) -> dict[str, Any]:
        """Both sides' arrays, named ``"A name"`` and ``"B name"``, B − A, and both sides' meta."""
        a, b = self.a.export_data(), self.b.export_data()
        arrays = {f"A {name}": values for name, values in a["arrays"].items()}
        arrays.update({f"B {name}": values for name, values in b["arrays"].items()})
        meta: dict[str, Any] = {"panel": self.panel_id, "compared": True, "A": a.get("meta", {}),
                                "B": b.get("meta", {})}
        difference = self.difference_view.difference if self.difference_view is not None else None
        if difference is not None:
            arrays["B − A"] = difference.values
            arrays["B − A rows"] = difference.rows
            arrays["B − A columns"] = difference.columns
            meta["difference"] = {"max_abs": difference.max_abs, "rms": difference.rms,
                                  "at": list(difference.at) if difference.at else None}
        return {"arrays": arrays, "meta": meta}


class Comparison(QObject):
    """The window's A/B comparison: the pinned setup, the mode, and the compared panels of its docks.

    Parameters
    ----------
    state : AppState
        The window's state (B).

    Signals
    -------
    changed()
        A was pinned, cleared or swapped, or the mode changed.
    """

    changed = Signal()

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.pinned: PinnedState | None = None
        self.mode = DEFAULT_MODE

    @property
    def active(self) -> bool:
        return self.pinned is not None

    def pin(self, params: EncodingParams | None = None) -> None:
        """Pin ``params`` (the current setup by default) as A."""
        params = (params or self.state.params).validate()
        if self.pinned is None:
            self.pinned = PinnedState(params, self.state, self)
        else:
            self.pinned.pin(params)
        self.changed.emit()

    def clear(self) -> None:
        """Stop comparing."""
        if self.pinned is not None:
            pinned, self.pinned = self.pinned, None
            self.changed.emit()
            pinned.deleteLater()

    def swap(self) -> str | None:
        """Make A the current setup and the current setup A; None, or why not (nothing changed)."""
        if self.pinned is None:
            return "Nothing is pinned as A"
        a, b = self.pinned.params, self.state.params
        problem = self.state.set_params(a)
        if problem is None:
            self.pinned.pin(b)
            self.changed.emit()
        return problem

    def set_mode(self, mode: str) -> None:
        """Show the compared panels ``mode`` (:data:`MODES`); ValueError naming the choices otherwise."""
        if mode not in MODES:
            raise ValueError(f"compare mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode != self.mode:
            self.mode = mode
            self.changed.emit()

    def wrap(self, panel: Panel) -> ComparedPanel:
        """``panel`` with A's copy beside it, in the current mode."""
        return ComparedPanel(panel, self.pinned, self.mode)


def plot_items(panel: QWidget) -> list[pg.PlotItem]:
    """The plots of ``panel``'s canvases in the order they were made: the same for two panels of one class."""
    found: list[pg.PlotItem] = []

    def walk(layout: pg.GraphicsLayout) -> None:
        for item in layout.items:  # insertion order
            if isinstance(item, pg.PlotItem):
                found.append(item)
            elif isinstance(item, pg.GraphicsLayout):
                walk(item)

    for view in panel.findChildren(pg.GraphicsView):
        if isinstance(getattr(view, "ci", None), pg.GraphicsLayout):
            walk(view.ci)
        elif isinstance(getattr(view, "plotItem", None), pg.PlotItem):
            found.append(view.plotItem)
    return found

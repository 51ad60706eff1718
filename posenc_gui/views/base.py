"""Common frame of every panel: header with help, inline message bar, body."""

from __future__ import annotations

import html
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QToolButton, QVBoxLayout, QWidget

from ..compute import ComputeService, ModelJob
from ..job_match import same_request
from ..export import FORMATS
from ..model import EncodingParams, Scheme
from ..model.analyses.compare import ShownMatrix
from ..state import VIEW_SPECS, AppState
from .labels import MESSAGE_COLOURS, HoverReadout, StatusText, WrappedLabelHolder
from .plotkit.theme import themed_text
from .registry import DockPlacement, PanelOption, panel_classes

if TYPE_CHECKING:
    from .cursor import CursorAxis, CursorLink
    from .host import PanelHost
    from .param_controls import ViewSpinBox

#: Results a panel that :attr:`~Panel.keeps_results` keeps, the newest first (a setup switched away from and back).
KEPT_RESULTS = 3

MESSAGE_STYLES = {
    level: f"background:{background}; color:{text}; border:1px solid {border}; padding:3px 6px;"
    for level, (background, border, text) in MESSAGE_COLOURS.items()
}


class Panel(QWidget):
    """Base class of every dock's content.

    Subclasses set the class attributes (the declaration the registry reads,
    see :mod:`posenc_gui.views.registry`), build their controls into
    ``self.header`` (a row above the plot) and ``self.body``, listen to
    ``state.paramsChanged``, and call :meth:`schedule_update` when what they
    show is out of date.

    The template of a panel that shows one model function's result: it
    declares :attr:`model_function`, gives its arguments in
    :meth:`model_arguments` (the parameters by default) and draws the result
    in :meth:`show_data`; :meth:`request_update` runs the function off the GUI
    thread (the newest request wins), keeps the result in ``self.data`` and
    shows an error in the message bar. It puts its figure in ``self.canvas``
    (:meth:`figure_widget`), its headline numbers in :meth:`add_summary_label`
    lines (:meth:`figure_caption`), and gives its numbers in
    :meth:`data_export` (:meth:`export_data` refuses while nothing is
    computed). A panel with several requests of its own submits them through
    ``self.compute.submit((self, name), ...)`` in its own :meth:`request_update`.

    Export contract (used by ``posenc_gui.export``):

    - :meth:`figure_widget` returns the widget whose rendering is the figure;
    - :meth:`export_data` returns the numbers behind the figure;
    - :meth:`unavailable_message` says why there is neither (None when there are).

    A/B comparison (:mod:`posenc_gui.views.compare`): a :attr:`comparable`
    panel is built a second time for the pinned setup A; one that shows a
    matrix gives it with :meth:`shown_matrix` (:attr:`compares_matrix`) for B − A,
    and :meth:`linked_view_boxes` are zoomed together with A's.

    Signals
    -------
    updateScheduled()
        :meth:`schedule_update` was called (parameters, view settings or the
        panel's own options changed): a comparison copies the options to A.
    """

    updateScheduled = Signal()

    panel_id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    help_text: ClassVar[str] = ""
    #: Where the window docks the panel.
    dock: ClassVar[DockPlacement] = DockPlacement()
    #: The functions of ``posenc_gui.model`` that compute what the panel shows (its :attr:`model_function` first).
    model_functions: ClassVar[tuple[Callable[..., Any], ...]] = ()
    #: The function of ``posenc_gui.model`` whose result :meth:`request_update` hands to :meth:`show_data`
    #: (None: the panel requests its own model work).
    model_function: ClassVar[Callable[..., Any] | None] = None
    #: Whether :attr:`model_function` may run in the worker process; False keeps it in a worker thread of the
    #: window's process (a fast function whose cache serves the next step of a slider).
    model_in_process: ClassVar[bool] = True
    #: Whether the panel keeps its last :data:`KEPT_RESULTS` results of :attr:`model_function` by their arguments
    #: and shows a kept one again at once instead of asking for it (a scheme switched back to). Only for a
    #: function whose result is whole when delivered (not a scan continued in steps); never for parameters that
    #: read a file.
    keeps_results: ClassVar[bool] = False
    #: The formats the panel exports (a subset of ``export.FORMATS``).
    export_formats: ClassVar[tuple[str, ...]] = FORMATS
    #: Flags of ``posenc-gui export`` for this panel, applied by :meth:`apply_options`.
    cli_options: ClassVar[tuple[PanelOption, ...]] = ()
    #: What the panel needs of a scheme (``Scheme.provides``): a table of values by default.
    requires: ClassVar[frozenset[str]] = frozenset({"table"})
    #: Other sets of capabilities that serve the panel as well (the heatmap draws a table, or a
    #: rotation's cos and sin: ``frozenset({"angles"})``).
    requires_instead: ClassVar[tuple[frozenset[str], ...]] = ()
    #: The shared view settings it shows (``state.view``): a change schedules an update, and
    #: :meth:`apply_options` sets them.
    view_settings: ClassVar[tuple[str, ...]] = ()
    #: What of the linked cursor (``state.cursor``) the panel marks: ``"position"``, ``"dimension"``, both, or
    #: nothing; a panel that marks any calls :meth:`link_cursor` with the axes that show them.
    cursor_axes: ClassVar[tuple[str, ...]] = ()
    #: Whether :meth:`apply_options` also sets the parameters and other panels' options (the
    #: walkthrough's step): a session applies such a panel's options first, so its own values win.
    sets_other_state: ClassVar[bool] = False
    #: Whether the panel is built for setup A beside the window's when comparing (not the controls, the tour).
    comparable: ClassVar[bool] = True
    #: Whether :meth:`shown_matrix` gives a matrix for B − A.
    compares_matrix: ClassVar[bool] = False
    #: Whether a handout includes the panel by default (not the controls or the tour: they are no figures).
    in_handout: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """List a declared :attr:`model_function` first among the :attr:`model_functions` (declared once)."""
        super().__init_subclass__(**kwargs)
        function = cls.__dict__.get("model_function")
        if function is not None and function not in cls.model_functions:
            cls.model_functions = (function, *cls.model_functions)

    def __init__(self, state: AppState, compute: ComputeService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"panel-{self.panel_id}")
        #: The last result shown (of :attr:`model_function` for a panel of the template); None before any.
        self.data: Any = None
        #: The figure's widget (:meth:`figure_widget`), once the panel has built it.
        self.canvas: QWidget | None = None
        # Opaque: a control that changes inside the panel repaints from here
        # down, not from the dock with its frame and title.
        self.setAutoFillBackground(True)
        self.state = state
        self.compute = compute
        if self.view_settings:
            state.viewChanged.connect(self._view_changed)
        #: The linked cursor's marks and mouse handling (:meth:`link_cursor`); None in a panel that marks nothing.
        self.cursor_link: CursorLink | None = None
        self._cursor_due = False
        #: The window that docks the panel, once it has attached itself (:meth:`attach_host`).
        self.host: PanelHost | None = None
        #: The A/B comparison that holds the panel while setup A is pinned (a ComparedPanel), else None.
        self.comparison: Any = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(4)
        self.header = QHBoxLayout()
        self.header.setSpacing(6)
        outer.addLayout(self.header)
        self.help_button = QToolButton(self)
        self.help_button.setText("?")
        self.help_button.setAccessibleName("What am I looking at?")
        self.help_button.setToolTip(self._help_html())
        self.help_button.setToolTipDuration(60_000)
        self.help_button.clicked.connect(self._show_help)
        self._help_label = QLabel(self._help_html(), self)
        self._help_label.setWordWrap(True)
        self._help_label.setTextFormat(Qt.TextFormat.RichText)
        self._help_label.setStyleSheet(MESSAGE_STYLES["info"])
        self._help_label.hide()
        self.message_label = QLabel(self)
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._message_holder = WrappedLabelHolder(self.message_label, self)
        self._message_holder.hide()
        self._message: tuple[str, str] = ("", "")
        self._stale = False
        self._caught_up_for: EncodingParams | None = None  # the parameters ensure_current last caught up with
        self._debounced: list[tuple[QTimer, Callable[[], None]]] = []
        self._summary_labels: list[QLabel] = []
        self._kept: list[tuple[ModelJob, Any]] = []  # (request, its result), the newest first (keeps_results)
        self._shown_request: ModelJob | None = None  # the request whose result the view shows (see resample)
        outer.addWidget(self._help_label)
        outer.addWidget(self._message_holder)
        # The body sits in a widget of its own, so that the notice of an
        # unavailable panel can take its place; in a scroll area, so that a
        # dock smaller than the body's minimum scrolls instead of widening
        # the window past a small screen.
        self._content = QWidget(self)
        self.body = QVBoxLayout(self._content)
        self.body.setContentsMargins(0, 0, 0, 0)
        self.body.setSpacing(4)
        self._content_scroll = QScrollArea(self)
        self._content_scroll.setWidgetResizable(True)
        self._content_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._content_scroll.setWidget(self._content)
        outer.addWidget(self._content_scroll, 1)
        self._unavailable: str | None = None
        self.unavailable_label = QLabel(self)
        self.unavailable_label.setObjectName("unavailable")
        self.unavailable_label.setWordWrap(True)
        self.unavailable_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.unavailable_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.unavailable_label.setStyleSheet(MESSAGE_STYLES["info"])
        self.unavailable_label.hide()
        outer.addWidget(self.unavailable_label, 1)
        # under the notice, a button per panel that shows the scheme: one click brings it to the front
        self.shown_by_bar = QWidget(self)
        self._shown_by_layout = QHBoxLayout(self.shown_by_bar)
        self._shown_by_layout.setContentsMargins(0, 0, 0, 4)
        self.shown_by_bar.hide()
        outer.addWidget(self.shown_by_bar)

    # --------------------------------------------------------- declarations
    @classmethod
    def shows(cls, info: Scheme) -> bool:
        """Whether the panel applies to the scheme ``info`` (by default: it provides what :attr:`requires`, or
        one of :attr:`requires_instead`, names)."""
        return any(info.lacks(needs) is None for needs in (cls.requires, *cls.requires_instead))

    def unavailable_reason(self, params: EncodingParams) -> str | None:
        """Why the panel does not apply to ``params`` (one sentence), or None when it does.

        By default: what of :attr:`requires` the scheme does not provide (unless it
        provides one of :attr:`requires_instead`).
        While there is a reason the panel shows it in place of its plot,
        computes nothing, and its export refuses with it.
        """
        return None if type(self).shows(params.info) else params.info.lacks(self.requires)

    def unavailable_message(self) -> str | None:
        """What the panel shows instead of its plot for the current parameters, or None when it applies."""
        reason = self.unavailable_reason(self.state.params)
        if reason is None:
            return None
        others = [cls.title for cls in self._shown_by()]
        hint = f" It is shown by: {', '.join(others)}." if others else ""
        return f"The {self.title} panel does not apply here: {reason}{hint}"

    def _shown_by(self) -> list[type[Panel]]:
        """The panels made for the current scheme's family (none listed for a table: they are most of the
        window; nor the panels that apply to every scheme)."""
        info = self.state.params.info
        if info.family == "table":
            return []
        return [cls for cls in panel_classes() if (cls.requires or cls.requires_instead) and cls.shows(info)]

    def _fill_shown_by(self, shown: bool) -> None:
        """One button per panel that shows the scheme, in a window that can bring a dock forward."""
        while self._shown_by_layout.count():
            item = self._shown_by_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        classes = self._shown_by() if shown and self.host is not None else []
        if classes:
            self._shown_by_layout.addStretch(1)
            self._shown_by_layout.addWidget(QLabel("Show:", self.shown_by_bar))
            for cls in classes:
                button = QPushButton(cls.title, self.shown_by_bar)
                button.setToolTip(f"Bring the {cls.title} panel to the front")
                button.clicked.connect(lambda _=False, panel_id=cls.panel_id: self.host.raise_panel(panel_id))
                self._shown_by_layout.addWidget(button)
            self._shown_by_layout.addStretch(1)
        self.shown_by_bar.setVisible(bool(classes))

    def apply_options(self, **values: Any) -> None:
        """Set the panel's options, keyed by the ``dest`` of its :attr:`cli_options` (walkthrough, command line).

        Raises
        ------
        ValueError
            For a value out of its allowed range (named in the message).
        TypeError
            For an option the panel does not declare.

        This one sets the panel's :attr:`view_settings` and refuses anything else.
        """
        shared = {name: value for name, value in values.items() if name in self.view_settings and value is not None}
        others = [name for name in values if name not in self.view_settings]
        if others:
            raise TypeError(f"the {self.title} panel has no option {', '.join(others)}")
        self.state.set_view(**shared)

    def current_options(self) -> dict[str, Any]:
        """The panel's own options as :meth:`apply_options` takes them (a saved session); none by default.

        The shared view settings are not among them: a session keeps those once (``state.view``).
        """
        return {}

    def _view_changed(self, name: str, value: Any) -> None:
        if name in self.view_settings:
            self.schedule_update()

    def attach_host(self, host: PanelHost) -> None:
        """Called by the window that docks the panel, once it is built."""
        self.host = host
        self._fill_shown_by(self._unavailable is not None)

    def model_arguments(self) -> tuple:
        """The arguments of :attr:`model_function` for what the panel shows now: the parameters by default."""
        return (self.state.params,)

    def request_update(self) -> None:
        """Recompute what the panel shows: :attr:`model_function` on :meth:`model_arguments`, newest wins.

        Its result goes to :meth:`show_data` and an error (a ValueError naming
        the parameter) to :meth:`show_error`; nothing when the panel declares
        no model function (it then overrides this to submit its own work).
        """
        function = type(self).model_function  # from the class: a plain function, not a method of the panel
        if function is None:
            return
        job = ModelJob(function, self.model_arguments())
        on_result = partial(self._receive_result_of, job)
        if self.keeps_results and not any(isinstance(arg, EncodingParams) and _reads_file(arg) for arg in job.args):
            kept = next((data for request, data in self._kept if same_request(request, job)), None)
            if kept is not None:
                self.compute.cancel(self)  # a result on its way is for other arguments
                if self._shown_request is not None and same_request(self._shown_request, job):
                    # Drawn already: a scheme switched away from and back (the RoPE frequency and context
                    # panels drew theirs again, ~5 ms of a switch back into RoPE).
                    self.show_message("")  # a refusal of other arguments meanwhile no longer applies
                    return
                self._receive_result_of(job, kept)
                return
            on_result = partial(self._keep, job)
        self.compute.submit(self, job if self.model_in_process else partial(job), on_result, self.show_error)

    def resample(self) -> None:
        """Update for a new size or view range of the plot (a debounce's slot), unless the request would be the one
        whose result is shown.

        The samples are about one per pixel of the visible range: a layout
        pass that moves a plot by a few pixels, or a range set to what it was,
        often asks for the same samples. Re-drawing them cost a scheme switch
        one to three more repaints of the panel (ALiBi's matrix: three).
        """
        function = type(self).model_function
        if (function is not None and self._shown_request is not None and not self._stale
                and self._unavailable is None and not self.compute.is_pending(self) and self.on_screen()
                and same_request(self._shown_request, ModelJob(function, self.model_arguments()))):
            return
        self.schedule_update()

    def _keep(self, job: ModelJob, data: Any) -> None:
        """Keep ``data``, the result of ``job`` (see :attr:`keeps_results`), and show it."""
        others = [(request, kept) for request, kept in self._kept if not same_request(request, job)]
        self._kept = [(job, data), *others][:KEPT_RESULTS]
        self._receive_result_of(job, data)

    def _receive_result_of(self, job: ModelJob, data: Any) -> None:
        """Show ``data``, the result of ``job``, and remember the request it answers (see :meth:`resample`)."""
        self._shown_request = None  # while drawing: a draw that fails leaves no request behind as shown
        self._receive(data)
        self._shown_request = job

    def _receive(self, data: Any) -> None:
        """Keep and draw a result of :attr:`model_function`; the message bar is cleared first."""
        self.data = data
        self.show_message("")
        self.show_data(data)

    def show_data(self, data: Any) -> None:
        """Draw ``data``, a result of :attr:`model_function` (kept in ``self.data``)."""
        raise NotImplementedError

    def show_error(self, error: BaseException) -> None:
        """Say in the message bar why the model function refused (the last good view stays)."""
        self.show_message(str(error), "error")

    # -------------------------------------------------------- linked cursor
    def link_cursor(self, canvas: Any, axes: list[CursorAxis]) -> CursorLink:
        """Mark the linked cursor on ``axes`` of ``canvas``'s plots, and let its mouse and keys set it.

        The marks move when the cursor does, while the panel is on screen
        (else when it is next shown); nothing is recomputed.
        """
        from .cursor import CursorLink

        self.cursor_link = CursorLink(self.state.cursor, canvas, axes, self)
        self.state.cursor.changed.connect(self.redraw_cursor)
        self.redraw_cursor()
        return self.cursor_link

    def redraw_cursor(self, *_: Any) -> None:
        """Move the cursor's marks to the current cursor now if on screen, else when the panel is next shown.

        A panel whose axes map the cursor through its data (an offset from a
        reference) calls it after new data.
        """
        if self.cursor_link is None:
            return
        self._cursor_due = not self.on_screen()
        if not self._cursor_due:
            self.cursor_link.draw(self.state.cursor.current)

    def schedule_update(self, *args: Any) -> None:
        """Update now if the panel is on screen, else when it is next shown.

        Hidden docks (tabbed behind others, closed) cost nothing while the
        user drags a slider or switches the scheme: whether they apply is
        shown when they are next shown. A panel that does not apply to the
        parameters (:meth:`unavailable_reason`) shows why, and computes nothing.
        Called from ``state.paramsChanged`` with parameters that the panel
        was just brought up to date for (its dock shown by the new scheme's
        layout, earlier in the same change: :meth:`ensure_current`), it does
        not update again.
        """
        self.updateScheduled.emit()
        if not (args and isinstance(args[0], EncodingParams)):
            self._shown_request = None  # a view setting, the theme, a control: the same request may draw otherwise
        caught_up, self._caught_up_for = self._caught_up_for, None
        if args and caught_up is not None and args[0] is caught_up:
            return
        if self.on_screen():
            self._stale = False
            self._update_or_say_why()
        else:
            self._stale = True

    def _update_or_say_why(self) -> None:
        """Request new data, or show why the panel does not apply (and drop a result on its way)."""
        if self._show_availability():
            self.compute.cancel_owner(self)  # a result still on its way is for parameters it no longer shows
        else:
            self.request_update()

    def _show_availability(self) -> bool:
        """Show the body, or the reason the panel does not apply in its place; True in the second case."""
        message = self.unavailable_message()
        if message != self._unavailable:
            self._unavailable = message
            self.unavailable_label.setText(message or "")
            self.unavailable_label.setVisible(message is not None)
            self._content_scroll.setVisible(message is None)
            self._fill_shown_by(message is not None)
        return message is not None

    def on_screen(self) -> bool:
        """Shown and not behind another dock's tab.

        Qt does not hide the docks of unselected tabs: it moves them out of
        the window, and ``isVisible()`` stays true. Their visible region is
        empty, though.
        """
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def ensure_current(self) -> None:
        """Recompute now if parameters changed while the panel was off screen (and draw a cursor that moved)."""
        if self._cursor_due:
            self.redraw_cursor()
        if self._stale:
            self._stale = False
            self._caught_up_for = self.state.params  # for these parameters (see schedule_update)
            self._update_or_say_why()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self.on_screen():  # not when built into a dock that sits behind a tab
            self.ensure_current()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if (self._stale or self._cursor_due) and self.on_screen():  # a dock collapsed to nothing, opened again
            self.ensure_current()

    def debounce(self, slot: Callable[[], None], *signals: Any, delay_ms: int = 30) -> QTimer:
        """Call ``slot`` once, ``delay_ms`` after the last emission of any of ``signals``.

        Dragging or zooming a plot emits a range change per mouse event; the
        view re-samples once the user pauses instead of once per event.
        """
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(delay_ms)
        timer.timeout.connect(slot)
        for signal in signals:
            signal.connect(lambda *_: timer.start())
        self._debounced.append((timer, slot))
        return timer

    def run_debounced(self) -> bool:
        """Run now what a waiting debounce timer would run after its delay (scripts, benchmarks, export).

        Returns
        -------
        bool
            Whether any was waiting.
        """
        waiting = [(timer, slot) for timer, slot in self._debounced if timer.isActive()]
        for timer, slot in waiting:
            timer.stop()
            slot()
        return bool(waiting)

    def shows_current_data(self) -> bool:
        """Whether the view shows the current parameters at its current size and range.

        False while an update is due (parameters changed off screen, a
        re-sampling after a zoom or resize waits for its debounce) or while
        a request of the panel's compute service has not been delivered:
        the service is shared by the panels of a window, so this waits for
        all of them. Headless export renders once this holds.
        """
        return (not self._stale and not any(timer.isActive() for timer, _ in self._debounced)
                and self.compute.is_idle())

    def add_summary_label(self) -> QLabel:
        """A word-wrapped, selectable rich-text line of the panel's headline numbers, added to the body.

        It keeps the tallest height its numbers have needed at the panel's width (see :class:`WrappedLabelHolder`).
        """
        from .labels import WrappedLabelHolder
        from .plotkit import FOREGROUND

        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setStyleSheet(f"color:{FOREGROUND};")
        self.body.addWidget(WrappedLabelHolder(label, self, keep_height=True))
        self._summary_labels.append(label)
        return label

    def add_headline_and_canvas(self) -> None:
        """End the header and lay out a figure's panel: its headline line (``self.summary_label``, the default
        caption) above the canvas (``self.canvas``, the default figure widget, added to the body by the panel once
        its plots are in)."""
        from .plotkit import new_layout_widget

        self.finish_header()
        self.summary_label = self.add_summary_label()
        self.canvas = new_layout_widget(self)

    def add_view_spin_box(self, text: str, name: str) -> ViewSpinBox:
        """Add a labelled spin box of the shared view setting ``name`` (``state.view``) to the header."""
        from .param_controls import ViewSpinBox

        self.header.addWidget(QLabel(text))
        spin = ViewSpinBox(self.state, name, self)
        self.header.addWidget(spin.box)
        return spin

    def add_hover_line(self, prompt: str, cell_at: Callable[[Any], tuple[int, int] | None],
                       describe: Callable[[tuple[int, int]], str],
                       valid: Callable[[tuple[int, int]], bool]) -> HoverReadout:
        """Add a line to the body, ``self.hover_line``, that describes the cell of the canvas under the mouse.

        ``cell_at`` maps the mouse's scene position to a cell (None off the
        cells); ``describe`` and ``valid`` are :class:`HoverReadout`'s. The
        panel calls the readout's ``refresh()`` after new data.
        """
        self.hover_line = StatusText(prompt, self)
        self.body.addWidget(self.hover_line)
        hover = HoverReadout(self.hover_line, prompt, describe, valid)
        self.canvas.scene().sigMouseMoved.connect(lambda scene_pos: hover.hover(cell_at(scene_pos)))
        return hover

    def headline(self) -> str:
        """The panel's headline numbers as plain text (its summary lines; a handout prints them under the figure)."""
        from .labels import plain_text

        return " ".join(text for label in self._summary_labels if (text := plain_text(label.text())))

    def finish_header(self, stretch: bool = True) -> None:
        """Push the help button to the right end of the header; call after adding controls.

        ``stretch=False`` when a control added with a stretch factor already
        takes the spare width (a StatusText that should not be elided early).
        """
        if stretch:
            self.header.addStretch(1)
        self.header.addWidget(self.help_button)

    def _help_html(self) -> str:
        """The panel's help, and what the chosen scheme is (the help text explains the panel, the scheme itself)."""
        info = self.state.params.info
        return (f"<b>What am I looking at?</b><br>{self.help_text}"
                f"<br><b>The scheme now: {html.escape(info.label)}.</b> {html.escape(info.summary)}")

    def _show_help(self) -> None:
        if self._help_label.isHidden():
            self._help_label.setText(self._help_html())
        self._help_label.setVisible(not self._help_label.isVisible())

    def show_message(self, text: str, level: str = "error") -> None:
        """Show ``text`` in the panel's message bar (empty text hides it)."""
        if (text, level) == self._message or (not text and self.message_label.isHidden()):
            return  # restyling a label re-polishes it: a millisecond per update for nothing
        self._message = (text, level)
        self.message_label.setText(text)
        self.message_label.setStyleSheet(themed_text(MESSAGE_STYLES.get(level, MESSAGE_STYLES["info"])))
        self.message_label.setVisible(bool(text))
        self._message_holder.setVisible(bool(text))

    def figure_widget(self) -> QWidget:
        """The widget that is the figure, for image export: ``self.canvas``, or the whole panel without one."""
        return self.canvas if self.canvas is not None else self

    def figure_caption(self) -> str:
        """What an exported figure must say in words that its canvas does not show ("" for nothing).

        The sampling of a view of a long context, or dimensions drawn as
        moiré or as value bands: the window says it on lines outside the
        canvas, and export writes it under the figure. By default the
        headline numbers (:meth:`headline`) once something is computed.
        """
        return self.headline() if self.data is not None else ""

    def shown_matrix(self) -> ShownMatrix | None:
        """The matrix on screen with its row and column indices, for B − A; None before any (or none shown)."""
        return None

    def set_pinned(self, params: EncodingParams | None) -> None:
        """The window's pinned setup A (None when not comparing), for a panel that is not :attr:`comparable`
        but compares A and B in its own figure (the Scorecard's row "A"); nothing by default."""

    def linked_view_boxes(self) -> list:
        """The plots' view boxes that zoom and pan together with the same panel's of the other setup (A/B)."""
        return []

    def exported(self) -> Any:
        """What an export of the panel renders: its comparison while A is pinned, else the panel itself."""
        return self.comparison if self.comparison is not None else self

    def export_data(self) -> dict[str, Any]:
        """The numbers behind the figure.

        Returns
        -------
        dict
            ``{"arrays": {name: ndarray, ...}, "meta": {json-able values}}``;
            the first array is the panel's main matrix.

        Raises
        ------
        ValueError
            While nothing is computed (``self.data`` is None).

        By default :meth:`data_export` of ``self.data``, with the panel's id
        and the parameters it shows first in ``meta``.
        """
        if self.data is None:
            raise ValueError(f"{self.panel_id}: nothing computed yet")
        arrays, meta = self.data_export(self.data)
        return {"arrays": arrays, "meta": {"panel": self.panel_id, "params": self.data.params.as_dict(), **meta}}

    def data_export(self, data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The arrays and the further ``meta`` of :meth:`export_data` for ``data`` (a panel of the template)."""
        raise NotImplementedError


def _reads_file(params: EncodingParams) -> bool:
    """Whether ``params`` name a file to read (a model's table or configuration): its result is not kept, the file
    may change or go (then the panel must say so)."""
    return any(spec.kind == "path" for spec in params.info.options_in_use(params.options))


class ControlsPanel(Panel):
    """A panel of controls, not a figure (the Parameters, the Walkthrough): it applies to every scheme, is not
    built again for setup A when comparing, and is no page of a handout; it is shown on the left at first launch."""

    comparable: ClassVar[bool] = False
    in_handout: ClassVar[bool] = False
    requires: ClassVar[frozenset[str]] = frozenset()
    dock: ClassVar[DockPlacement] = DockPlacement("left", shown=True)


class EmbeddingScalePanel(Panel):
    """A panel of the positional encoding beside word embeddings of scale σ (Magnitude, Addition).

    Its model function takes the parameters and σ, the shared view setting
    ``embedding_scale`` that the spin box it puts first in the header sets.
    """

    view_settings: ClassVar[tuple[str, ...]] = ("embedding_scale",)
    cli_options: ClassVar[tuple[PanelOption, ...]] = (
        PanelOption("--embedding-scale", "embedding scale σ (e ~ N(0, σ²·I))", spec=VIEW_SPECS["embedding_scale"],
                    example=2.0),)

    def __init__(self, state: AppState, compute: ComputeService, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.scale = self.add_view_spin_box("Embedding scale σ:", "embedding_scale")

    def model_arguments(self) -> tuple:
        """The parameters and the embedding scale σ."""
        return self.state.params, self.state.view["embedding_scale"]


class TableOrAnglesPanel(Panel):
    """A panel that draws a table's values, or a rotation's cos and sin as one (the heatmap, the waveforms).

    Its model function runs in a worker thread of the window's process: it
    evaluates only the visible samples, fast enough for every step of a
    slider, and its cache serves the next step.
    """

    requires_instead: ClassVar[tuple[frozenset[str], ...]] = (frozenset({"angles"}),)
    model_in_process: ClassVar[bool] = False


class RopeOnlyPanel(Panel):
    """A panel computed from a rotation's Hugging Face configuration (:attr:`~posenc_gui.model.Scheme.hf_rope`).

    Subclasses set :attr:`rope_subject`, what of RoPE they show, for the
    sentence another scheme gets instead of the plot.
    """

    requires: ClassVar[frozenset[str]] = frozenset({"rotation"})
    #: What the panel shows of RoPE ("Hugging Face frequencies"), in the notice for another scheme.
    rope_subject: ClassVar[str] = ""

    @classmethod
    def shows(cls, info: Scheme) -> bool:
        """Only a scheme whose options are a Hugging Face RoPE configuration: what the panel computes from."""
        return info.hf_rope is not None

    def unavailable_reason(self, params: EncodingParams) -> str | None:
        reason = super().unavailable_reason(params)
        if reason is None and not self.shows(params.info):
            return f"{params.info.label} is not the rope scheme, whose {self.rope_subject} this panel shows."
        return reason

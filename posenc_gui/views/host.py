"""The typed interface between panels (and the export actions) and the window that docks them.

A panel never reaches into the window by attribute names: the window hands
itself to each panel it builds (:meth:`Panel.attach_host`) as a
:class:`PanelHost`, and the export actions take an :class:`ExportHost`.
:class:`posenc_gui.mainwindow.MainWindow` is both; a test can stand in
with any object that has these members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Protocol, runtime_checkable

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from ..compute import ComputeService
    from ..settings import Settings
    from ..state import AppState
    from .base import Panel


class PanelMap(Protocol):
    """The window's panels by id, each built on first access (:class:`posenc_gui.window.panels.LazyPanels`)."""

    def __getitem__(self, panel_id: str) -> Panel: ...
    def __contains__(self, panel_id: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def built(self) -> dict[str, Panel]: ...


@runtime_checkable
class PanelHost(Protocol):
    """What a panel may use of the window that docks it: the other panels, and bringing their docks forward."""

    @property
    def panels(self) -> PanelMap: ...

    def raise_panel(self, panel_id: str, keep_in_view: str | None = None) -> None:
        """Show the dock of ``panel_id`` in front of its tab group.

        ``keep_in_view``: a panel (the caller) that must stay visible; if it
        is tabbed with ``panel_id``, the window moves it out of that tab group first.
        KeyError for an unknown id.
        """

    def panel_shown(self, panel_id: str) -> bool:
        """Whether the dock of ``panel_id`` is shown (it may still be behind another tab)."""


@runtime_checkable
class ExportHost(PanelHost, Protocol):
    """What the export actions (:mod:`posenc_gui.views.export_ui`) use of the window."""

    @property
    def state(self) -> AppState: ...

    @property
    def compute(self) -> ComputeService: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def last_used_panel(self) -> str | None:
        """The panel the user last hovered or clicked a plot of, zoomed or typed in (None before any)."""

    def show_status(self, message: str) -> None:
        """Show ``message`` in the status bar for a while."""

    def window_widget(self) -> QWidget:
        """The window as a widget: the parent of dialogs, and what "Export window as PNG" renders."""

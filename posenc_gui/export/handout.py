"""A handout: several panels' figures with the parameters and each panel's headline numbers, in one file or folder.

Two forms, chosen by the target:

- ``NAME.pdf``: one multi-page vector PDF, a title page (the setup, the
  A/B comparison, the list of figures) and then one page per figure, each
  page the size of its figure with its title above and its caption and
  headline numbers under it;
- a folder: one PNG (and/or SVG) per figure and an ``index.html`` that
  shows them in order with the same texts.

Figures are added one at a time (:meth:`Handout.add`), each from a panel
that is drawn at that moment: the command line builds each panel off
screen in turn, the window uses its docks. Nothing is written until
:meth:`Handout.finish`; a PDF is written atomically, a folder's files each
atomically and the index last.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument
from PySide6.QtWidgets import QWidget

from .. import __version__
from ..views.plotkit import theme
from .figures import (_PDF_NOISE, _Caption, _export_mode, _render_widget, _scaled_cosmetic_pens,
                      _without_qt_messages, figure_caption, image_png_bytes, render_image, svg_bytes)
from .files import ExportError, atomic_write, check_target

#: The formats of a handout folder's figures.
FOLDER_FORMATS = ("png", "svg")
#: Space above a page's figure for its title, and the title's size, in logical pixels and points.
TITLE_HEIGHT_PX = 28
TITLE_POINTS = 12.0
#: The title page's width and height in logical pixels (A4's proportions).
TITLE_PAGE_PX = (794, 1123)


@dataclass(frozen=True)
class HandoutEntry:
    """One figure of the handout: what its page or its part of the index says."""

    panel_id: str
    title: str
    caption: str
    headline: str
    file: str = ""


def headline_of(panel: Any) -> str:
    """A panel's headline numbers (its summary lines), or "" for a panel that has none."""
    headline = getattr(panel, "headline", None)
    return headline() if callable(headline) else ""


class Handout:
    """A handout being written to ``target`` (a ``.pdf`` file, or a folder given with a trailing slash or existing).

    Parameters
    ----------
    target : path
        Where to write.
    heading : str
        The handout's title ("Positional encodings — sinusoidal: 128 positions × d_model 512 …").
    setup : list of str
        Lines describing the setup(s): the parameters, and A and B when comparing.
    panel_titles : list of str
        The figures to come, for the title page.
    formats : tuple of str
        For a folder: :data:`FOLDER_FORMATS` to write each figure in (PNG by default).
    width : int, optional
        PNG width in pixels (the default scale otherwise).
    theme_name : str, optional
        The figures' theme (``"light"``, ``"dark"``, ``"print"``); the current one by default.

    Raises
    ------
    ExportError
        For a target that cannot be written (a folder that is a file, a PDF path that is a folder, …).
    """

    def __init__(self, target: str | os.PathLike, heading: str, setup: list[str], panel_titles: list[str],
                 formats: tuple[str, ...] = ("png",), width: int | None = None,
                 theme_name: str | None = None) -> None:
        self.theme = theme.current() if theme_name is None else theme.theme_named(theme_name)
        self.target = Path(target)
        self.heading, self.setup = heading, setup
        self.entries: list[HandoutEntry] = []
        self.width = width
        self.is_pdf = self.target.suffix.lower() == ".pdf" and not str(target).endswith(("/", os.sep))
        if self.is_pdf:
            check_target(self.target)
            self._start_pdf(panel_titles)
        else:
            unknown = [fmt for fmt in formats if fmt not in FOLDER_FORMATS]
            if unknown or not formats:
                raise ExportError(f"a handout folder holds {' or '.join(FOLDER_FORMATS)} figures, not "
                                  f"{', '.join(unknown) or 'none'}")
            if self.target.exists() and not self.target.is_dir():
                raise ExportError(f"{self.target} is a file, not a folder: give a folder (DIR/) or a .pdf")
            try:
                self.target.mkdir(parents=False, exist_ok=True)
            except OSError as error:
                raise ExportError(f"Cannot create the folder {self.target}: {error.strerror or error}") from None
            self.formats = formats

    # ------------------------------------------------------------------ PDF
    def _start_pdf(self, panel_titles: list[str]) -> None:
        self._buffer = QBuffer()
        self._buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        self._writer = QPdfWriter(self._buffer)
        self._dpi = 96
        self._writer.setResolution(self._dpi)
        self._writer.setTitle(self.heading)
        self._writer.setCreator(f"posenc_gui {__version__}")
        self._set_page(*TITLE_PAGE_PX)
        self._painter = QPainter()
        if not self._painter.begin(self._writer):
            raise ExportError("Could not start the PDF writer")
        self._painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self._painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
        self._painter.fillRect(QRectF(0, 0, *TITLE_PAGE_PX), QColor(self.theme.background))
        lines = "".join(f"<p>{html.escape(line)}</p>" for line in self.setup)
        figures = "".join(f"<li>{html.escape(title)}</li>" for title in panel_titles)
        self._draw_text(f"<h1>{html.escape(self.heading)}</h1>{lines}<h3>Figures</h3><ol>{figures}</ol>"
                        f"<p>posenc_gui {html.escape(__version__)}, {date.today():%Y-%m-%d}</p>",
                        QRectF(48, 48, TITLE_PAGE_PX[0] - 96, TITLE_PAGE_PX[1] - 96), 11.0)
        self._pages = 1

    def _set_page(self, width: float, height: float) -> None:
        points = QSizeF(width * 72.0 / self._dpi, height * 72.0 / self._dpi)
        layout = QPageLayout(QPageSize(points, QPageSize.Unit.Point, "figure", QPageSize.SizeMatchPolicy.ExactMatch),
                             QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
        if not self._writer.setPageLayout(layout):
            raise ExportError("The PDF writer refused the page size")

    def _draw_text(self, rich: str, rect: QRectF, points: float) -> float:
        """Draw rich text in ``rect``; returns its height."""
        document = QTextDocument()
        document.setDocumentMargin(0)
        font = QFont()
        font.setPointSizeF(points)
        document.setDefaultFont(font)
        document.setDefaultStyleSheet(f"body {{ color: {self.theme.foreground}; }}")
        document.setHtml(f"<body>{rich}</body>")
        document.setTextWidth(rect.width())
        self._painter.save()
        try:
            self._painter.translate(rect.topLeft())
            document.drawContents(self._painter, QRectF(0, 0, rect.width(), rect.height()))
        finally:
            self._painter.restore()
        return document.size().height()

    # ------------------------------------------------------------------ add
    def add(self, panel: Any) -> HandoutEntry:
        """Add ``panel``'s figure (a drawn panel, or an A/B comparison of one) as the next page or file.

        Raises
        ------
        ExportError
            When the figure cannot be rendered (the handout goes on without it if the caller catches it).
        """
        widget = panel.figure_widget()
        if widget.width() <= 0 or widget.height() <= 0:
            raise ExportError(f"The {panel.title} figure has no size yet")
        # drawn in the current theme, as every export is (a panel built or shown earlier may still be in another)
        roots = [panel] if isinstance(panel, QWidget) and panel.isAncestorOf(widget) else [panel, widget]
        with theme.theme_for([root for root in roots if isinstance(root, QWidget)], self.theme.name) as shown:
            caption, headline = figure_caption(panel), headline_of(panel)
            index = len(self.entries) + 1
            if self.is_pdf:
                entry = HandoutEntry(panel.panel_id, panel.title, caption, headline)
                self._add_page(widget, entry)
            else:
                stem = f"{index:02d}_{panel.panel_id}"
                for fmt in self.formats:
                    path = self.target / f"{stem}.{fmt}"
                    check_target(path)
                    if fmt == "png":
                        image = render_image(widget, width=self.width, caption=caption,
                                             background=QColor(shown.background))
                        data = image_png_bytes(image, panel.title)
                    else:
                        data = svg_bytes(widget, title=panel.title, caption=caption)
                    atomic_write(path, data)
                entry = HandoutEntry(panel.panel_id, panel.title, caption, headline, f"{stem}.{self.formats[0]}")
        self.entries.append(entry)
        return entry

    def _add_page(self, widget: Any, entry: HandoutEntry) -> None:
        width = widget.width()
        below = _Caption(" ".join(part for part in (entry.caption, entry.headline) if part), width)
        self._set_page(width, TITLE_HEIGHT_PX + widget.height() + below.height)
        if not self._writer.newPage():
            raise ExportError("The PDF writer could not start a new page")
        painter = self._painter
        painter.save()
        try:
            painter.fillRect(QRectF(0, 0, width, TITLE_HEIGHT_PX + widget.height() + below.height),
                             QColor(self.theme.background))
            font = QFont()
            font.setPointSizeF(TITLE_POINTS)
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor(self.theme.foreground))
            painter.drawText(QRectF(6, 0, width - 12, TITLE_HEIGHT_PX),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             f"{len(self.entries) + 1}. {entry.title}")
            painter.translate(0, TITLE_HEIGHT_PX)
            with (_export_mode(widget), _scaled_cosmetic_pens(widget, theme.current().line_scale),
                  _without_qt_messages(_PDF_NOISE)):
                _render_widget(widget, painter)
            below.draw(painter, widget.height())
        finally:
            painter.restore()
        self._pages += 1

    # --------------------------------------------------------------- finish
    def finish(self) -> Path:
        """Write the PDF, or the folder's ``index.html``; the path of the PDF or of the index."""
        if self.is_pdf:
            self._painter.end()
            data = bytes(self._buffer.data())
            if not data.startswith(b"%PDF"):
                raise ExportError("The PDF writer produced no document")
            return atomic_write(self.target, data)
        return atomic_write(self.target / "index.html", self.index_html().encode("utf-8"))

    def index_html(self) -> str:
        """The folder's index page: the setup, then each figure with its title, caption and headline numbers."""
        setup = "".join(f"<p>{html.escape(line)}</p>" for line in self.setup)
        colours = self.theme  # the page in the figures' theme, so they do not sit on another background
        figures = []
        for number, entry in enumerate(self.entries, start=1):
            texts = "".join(f"<p class='{kind}'>{html.escape(text)}</p>"
                            for kind, text in (("caption", entry.caption), ("headline", entry.headline)) if text)
            figures.append(f"<figure id='{html.escape(entry.panel_id)}'><h2>{number}. {html.escape(entry.title)}</h2>"
                           f"<img src='{html.escape(entry.file)}' alt='{html.escape(entry.title)}'>{texts}</figure>")
        return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                f"<title>{html.escape(self.heading)}</title><style>"
                f"body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:{colours.foreground};"
                f"background:{colours.background}}}"
                "img{max-width:100%;border:1px solid #888}.caption,.headline{font-size:90%}"
                "</style></head><body>"
                f"<h1>{html.escape(self.heading)}</h1>{setup}{''.join(figures)}"
                f"<p>posenc_gui {html.escape(__version__)}, {date.today():%Y-%m-%d}</p>"
                "</body></html>\n")

    def abandon(self) -> None:
        """Stop without writing the PDF (a folder keeps the figures already written)."""
        if self.is_pdf and self._painter.isActive():
            self._painter.end()

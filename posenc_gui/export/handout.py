"""A handout: several panels' figures with the parameters and each panel's headline numbers, in one file or folder.

Two forms, chosen by the target:

- ``NAME.pdf``: one multi-page vector PDF, every page of one paper size
  (landscape A4 or Letter, :data:`PAGE_SIZES`): a title page (the setup,
  the A/B comparison, the list of figures) and then one page per figure,
  its title above, its caption and headline numbers under it, and the
  figure scaled (aspect kept) to fill the printable area left between them;
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

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument
from PySide6.QtWidgets import QWidget

from .. import __version__
from ..views.plotkit import theme
from .figures import (CAPTION_MARGIN_PX, _PDF_NOISE, _Caption, _export_mode, _render_widget, _scaled_cosmetic_pens,
                      _without_qt_messages, figure_caption, image_png_bytes, render_image, svg_bytes)
from .files import ExportError, atomic_write, check_target

#: The formats of a handout folder's figures.
FOLDER_FORMATS = ("png", "svg")
#: Space above a page's figure for its title, and the title's size, in logical pixels and points.
TITLE_HEIGHT_PX = 28
TITLE_POINTS = 12.0
#: The PDF's paper sizes (each page landscape), by the name ``--page`` and the dialog take.
PAGE_SIZES = {"a4": QPageSize.PageSizeId.A4, "letter": QPageSize.PageSizeId.Letter}
#: The paper a handout takes when none is chosen.
DEFAULT_PAGE = "a4"
#: The printable area's margin on every side of a page, in logical pixels (half an inch at 96 per inch).
PAGE_MARGIN_PX = 48


@dataclass(frozen=True)
class HandoutEntry:
    """One figure of the handout: what its page or its part of the index says."""

    panel_id: str
    title: str
    caption: str
    headline: str
    file: str = ""


def headline_of(panel: Any, caption: str = "") -> str:
    """A panel's headline numbers (its summary lines), or "" for a panel that has none or whose ``caption``
    (its figure's, printed with it) already says them: most captions are the summary lines, and a page
    printed both ("64 rotary pairs; … 64 rotary pairs; …")."""
    headline = getattr(panel, "headline", None)
    text = headline() if callable(headline) else ""
    return "" if " ".join(text.split()) in " ".join(caption.split()) else text


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
    page : str
        For a PDF: the paper of every page, a key of :data:`PAGE_SIZES`, landscape.

    Raises
    ------
    ExportError
        For a target that cannot be written (a folder that is a file, a PDF path that is a folder, …).
    ValueError
        For a ``page`` not in :data:`PAGE_SIZES`.
    """

    def __init__(self, target: str | os.PathLike, heading: str, setup: list[str], panel_titles: list[str],
                 formats: tuple[str, ...] = ("png",), width: int | None = None,
                 theme_name: str | None = None, page: str = DEFAULT_PAGE) -> None:
        if page not in PAGE_SIZES:
            raise ValueError(f"page must be one of {', '.join(PAGE_SIZES)}, not {page!r}")
        self.page = page
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
        layout = QPageLayout(QPageSize(PAGE_SIZES[self.page]), QPageLayout.Orientation.Landscape,
                             QMarginsF(0, 0, 0, 0))
        if not self._writer.setPageLayout(layout):
            raise ExportError("The PDF writer refused the page size")
        points = layout.fullRect(QPageLayout.Unit.Point)
        self._page_px = QSizeF(points.width() * self._dpi / 72.0, points.height() * self._dpi / 72.0)
        self._painter = QPainter()
        if not self._painter.begin(self._writer):
            raise ExportError("Could not start the PDF writer")
        self._painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self._painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
        self._painter.fillRect(QRectF(QPointF(0, 0), self._page_px), QColor(self.theme.background))
        lines = "".join(f"<p>{html.escape(line)}</p>" for line in self.setup)
        figures = "".join(f"<li>{html.escape(title)}</li>" for title in panel_titles)
        self._draw_text(f"<h1>{html.escape(self.heading)}</h1>{lines}<h3>Figures</h3><ol>{figures}</ol>"
                        f"<p>posenc_gui {html.escape(__version__)}, {date.today():%Y-%m-%d}</p>",
                        self._printable(), 11.0)
        self._pages = 1

    def _printable(self) -> QRectF:
        """The page's printable area in logical pixels: the page less :data:`PAGE_MARGIN_PX` on every side."""
        return QRectF(PAGE_MARGIN_PX, PAGE_MARGIN_PX, self._page_px.width() - 2 * PAGE_MARGIN_PX,
                      self._page_px.height() - 2 * PAGE_MARGIN_PX)

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
            caption = figure_caption(panel)
            headline = headline_of(panel, caption)
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
        """Draw ``widget`` on a new page: its title on top, its caption and headline at the bottom across the
        printable width, and the figure scaled (aspect kept) to fill what is left."""
        area = self._printable()
        below = _Caption(" ".join(part for part in (entry.caption, entry.headline) if part),
                         int(area.width()) + 2 * CAPTION_MARGIN_PX)
        room = QSizeF(area.width(), area.height() - TITLE_HEIGHT_PX - below.height)
        if room.height() < area.height() / 4:  # a caption that long: the figure keeps a quarter of the page
            room.setHeight(area.height() / 4)
        scale = min(room.width() / widget.width(), room.height() / widget.height())
        drawn = QSizeF(widget.width() * scale, widget.height() * scale)
        if not self._writer.newPage():
            raise ExportError("The PDF writer could not start a new page")
        painter = self._painter
        painter.save()
        try:
            painter.fillRect(QRectF(QPointF(0, 0), self._page_px), QColor(self.theme.background))
            font = QFont()
            font.setPointSizeF(TITLE_POINTS)
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor(self.theme.foreground))
            painter.drawText(QRectF(area.left(), area.top(), area.width(), TITLE_HEIGHT_PX),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             f"{len(self.entries) + 1}. {entry.title}")
            painter.save()
            painter.translate(area.left() - CAPTION_MARGIN_PX, 0)  # the caption's text starts at the area's left
            below.draw(painter, area.top() + TITLE_HEIGHT_PX + drawn.height())
            painter.restore()
            painter.translate(area.left() + (area.width() - drawn.width()) / 2, area.top() + TITLE_HEIGHT_PX)
            painter.scale(scale, scale)
            with (_export_mode(widget), _scaled_cosmetic_pens(widget, theme.current().line_scale),
                  _without_qt_messages(_PDF_NOISE)):
                _render_widget(widget, painter)
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

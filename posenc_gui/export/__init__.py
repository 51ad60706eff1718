"""Figure and data export: PNG, SVG, PDF for figures; CSV, NPY, JSON for numbers.

Every file is written atomically: the bytes are produced in memory, written
to a temporary file in the target folder, flushed to disk and only then
moved over the target with :func:`os.replace`. A failure at any step
(unwritable folder, full disk, bad format, a panel that refuses) raises
:class:`ExportError` with a one-line message and leaves an existing file at
the target exactly as it was. A symbolic link is kept: the file it leads to
is replaced. Folders, devices, FIFOs and sockets are refused before
anything is rendered, and never opened.

Figures are rendered from the live widget (``Panel.figure_widget()``):

- PNG: the widget is painted through a scaled painter, so text, lines and
  heatmap cells are drawn at the output resolution (not an upscaled grab);
- SVG: :class:`QSvgGenerator` (pyqtgraph 0.14's ``SVGExporter`` fails with
  PySide6 6.12). Qt's SVG writer either drops clipping (SVG Tiny) or writes
  wrong clip references (SVG 1.1), so plot areas are clipped here instead,
  and heatmap images are embedded at their data resolution with
  nearest-neighbour rendering;
- PDF: :class:`QPdfWriter`, vector, one page the size of the figure.

A figure whose canvas does not say everything it shows (a heatmap of
every 3,913th position, dimensions drawn as moiré or as value bands) gets
the panel's :meth:`~posenc_gui.views.base.Panel.figure_caption` as a line
of text under the canvas, in every format: the window says it on lines
above or under the plot, which are not part of the figure.
"""

from __future__ import annotations

import os
from typing import Any, Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSize
from PySide6.QtGui import QColor, QGuiApplication, QImage
from PySide6.QtWidgets import QWidget

from ..views.plotkit.theme import THEME_NAMES, theme_for

from .files import (
    DATA_FORMATS,
    ExportError,
    FORMATS,
    FORMAT_DESCRIPTIONS,
    IMAGE_FORMATS,
    MAX_LINK_HOPS,
    atomic_write,
    check_target,
    format_for_path,
    suggested_name,
)
from .figures import (
    CAPTION_COLOUR,
    CAPTION_MARGIN_PX,
    CAPTION_POINTS,
    DEFAULT_FIGURE_SIZE,
    DEFAULT_PNG_SCALE,
    MAX_PNG_PIXELS,
    MAX_PNG_SIDE,
    MAX_SCALE,
    MAX_SVG_IMAGE_PIXELS,
    MIN_PNG_WIDTH,
    MIN_SCALE,
    SVG_IMAGE_OVERSAMPLE,
    caption_height,
    figure_caption,
    image_png_bytes,
    pdf_bytes,
    png_bytes,
    png_size_problem,
    prepare_widget,
    process_events,
    render_image,
    svg_bytes,
)
from .data import (
    MAX_TEXT_VALUES,
    csv_bytes,
    json_bytes,
    npy_bytes,
)
from .data import _check_data, _params_dict


# ------------------------------------------------------------------ panels
def describe(panel: Any) -> str:
    """One line naming the figure and its parameters (image metadata)."""
    params = getattr(getattr(panel, "state", None), "params", None)
    text = f"posenc_gui {getattr(panel, 'title', '') or 'figure'}"
    if params is not None:
        text += " — " + ", ".join(f"{k}={v}" for k, v in _params_dict(params).items())
    return text


def panel_data(panel: Any) -> dict[str, Any]:
    """``panel.export_data()``, with refusals turned into :class:`ExportError`."""
    name = getattr(panel, "title", "") or type(panel).__name__
    try:
        data = panel.export_data()
    except NotImplementedError:
        raise ExportError(f"The {name} panel has no data export; export it as an image") from None
    except (ValueError, RuntimeError, MemoryError) as error:
        raise ExportError(f"{name}: {error}") from None
    _check_data(data, name, allow_empty=True)
    return data


def export_bytes(
    panel: Any, fmt: str, *, width: int | None = None, scale: float | None = None, size: QSize | None = None,
    theme: str | None = None,
) -> bytes:
    """The bytes of ``panel`` exported as ``fmt`` (figure formats render ``figure_widget()``)."""
    return render_export(panel, fmt, width=width, scale=scale, size=size, theme=theme)()


def render_export(
    panel: Any, fmt: str, *, width: int | None = None, scale: float | None = None, size: QSize | None = None,
    theme: str | None = None,
) -> Callable[[], bytes]:
    """Render ``panel`` for ``fmt`` now (GUI thread); the function returned gives the file's bytes.

    For PNG that function encodes the rendered image, most of a PNG's cost,
    and may run in another thread (a QImage is not tied to the GUI thread)
    while the next figure renders. The other formats are produced here.
    :class:`ExportError` for a format the panel does not declare, or when it
    does not apply to its parameters (its ``unavailable_message()``).

    A figure is drawn in ``theme`` (``"light"``, ``"dark"``, ``"print"``; the
    current theme for None), its background included, and the panel shows
    the current theme again afterwards.
    """
    if fmt not in FORMATS:
        raise ExportError(f"Unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    if theme is not None and theme not in THEME_NAMES:
        raise ExportError(f"theme must be one of {', '.join(THEME_NAMES)}, got {theme!r}")
    compute = getattr(panel, "compute", None)
    name = getattr(panel, "title", "") or type(panel).__name__
    declared = getattr(panel, "export_formats", FORMATS)
    if fmt not in declared:
        raise ExportError(f"The {name} panel exports {', '.join(declared)}, not {fmt}")
    unavailable = panel.unavailable_message() if hasattr(panel, "unavailable_message") else None
    if unavailable:
        raise ExportError(unavailable)
    state = getattr(panel, "state", None)
    # The figure shows the parameters of now: a change still batched, or a
    # measurement waiting for the user to pause (the scorecard), is applied first.
    if callable(getattr(state, "flush", None)):
        state.flush()
    if callable(getattr(panel, "run_debounced", None)):
        panel.run_debounced()
    params = getattr(state, "params", None)
    if fmt in IMAGE_FORMATS:
        widget = panel.figure_widget()
        # a figure of its own (not inside the panel) is restyled too
        roots = [panel, widget] if isinstance(panel, QWidget) else [widget]
        if isinstance(panel, QWidget) and panel.isAncestorOf(widget):
            roots = [panel]
        with theme_for(roots, theme) as shown:
            prepare_widget(widget, size)
            if compute is not None:
                compute.wait_idle()
                process_events()
            title, caption = describe(panel), figure_caption(panel)
            if fmt == "png":
                image = render_image(widget, width=width, scale=scale, caption=caption,
                                     background=QColor(shown.background))
                return lambda: image_png_bytes(image, title)
            if fmt == "svg":
                data = svg_bytes(widget, title=title, caption=caption)
            else:
                data = pdf_bytes(widget, title=title, caption=caption)
        return lambda: data
    if compute is not None:
        compute.wait_idle()
    numbers = panel_data(panel)
    if fmt == "csv":
        data = csv_bytes(numbers, name=name, params=params)
    elif fmt == "npy":
        data = npy_bytes(numbers, name=name)
    else:
        data = json_bytes(numbers, name=name, panel_id=getattr(panel, "panel_id", ""), params=params)
    return lambda: data


def export_panel(
    panel: Any,
    path: str | os.PathLike,
    *,
    fmt: str | None = None,
    width: int | None = None,
    scale: float | None = None,
    size: QSize | None = None,
    theme: str | None = None,
) -> Path:
    """Write ``panel``'s figure or data to ``path`` (format from the extension unless ``fmt``), a figure in
    ``theme`` (see :func:`render_export`).

    Returns
    -------
    Path
        The absolute path written.

    Raises
    ------
    ExportError
        One line saying why; nothing was written and an existing file is intact.
    """
    fmt = fmt or format_for_path(path)
    check_target(path)
    return atomic_write(path, export_bytes(panel, fmt, width=width, scale=scale, size=size, theme=theme))


def export_widget_png(widget: QWidget, path: str | os.PathLike, *, width: int | None = None,
                      scale: float | None = None, description: str = "") -> Path:
    """Write any widget (e.g. the whole main window) as PNG."""
    if format_for_path(path) != "png":
        raise ExportError(f"{Path(path).name}: a window is exported as .png")
    check_target(path)
    process_events()
    return atomic_write(path, png_bytes(widget, width=width, scale=scale, description=description))


def copy_to_clipboard(widget: QWidget, *, scale: float | None = None, with_svg: bool = True,
                      caption: str = "") -> QImage:
    """Put the figure (``caption`` under it) on the clipboard as an image (and as SVG for apps that take it)."""
    factor = scale if scale is not None else max(1.0, widget.devicePixelRatioF())
    image = render_image(widget, scale=factor, caption=caption)
    image.setDevicePixelRatio(factor)
    svg = None
    if with_svg:
        try:
            svg = QByteArray(svg_bytes(widget, caption=caption))
        except ExportError:
            pass
    # Let Qt create the clipboard's QMimeData (setImage): one made in Python
    # is destroyed by Qt after the interpreter has finalized (at process exit,
    # on platforms where the clipboard is a global) and segfaults the exit.
    clipboard = QGuiApplication.clipboard()
    clipboard.setImage(image)
    if svg is not None:
        clipboard.mimeData().setData("image/svg+xml", svg)
    return image


__all__ = [
    "CAPTION_COLOUR",
    "CAPTION_MARGIN_PX",
    "CAPTION_POINTS",
    "DATA_FORMATS",
    "DEFAULT_FIGURE_SIZE",
    "DEFAULT_PNG_SCALE",
    "ExportError",
    "FORMATS",
    "FORMAT_DESCRIPTIONS",
    "IMAGE_FORMATS",
    "MAX_LINK_HOPS",
    "MAX_PNG_PIXELS",
    "MAX_PNG_SIDE",
    "MAX_SCALE",
    "MAX_SVG_IMAGE_PIXELS",
    "MAX_TEXT_VALUES",
    "MIN_PNG_WIDTH",
    "MIN_SCALE",
    "SVG_IMAGE_OVERSAMPLE",
    "atomic_write",
    "caption_height",
    "check_target",
    "copy_to_clipboard",
    "csv_bytes",
    "describe",
    "export_bytes",
    "export_panel",
    "export_widget_png",
    "figure_caption",
    "format_for_path",
    "image_png_bytes",
    "json_bytes",
    "npy_bytes",
    "panel_data",
    "pdf_bytes",
    "png_bytes",
    "png_size_problem",
    "prepare_widget",
    "process_events",
    "render_export",
    "render_image",
    "suggested_name",
    "svg_bytes",
]

"""The plotting kit: every figure's canvas, colours, axes, titles, legends and matrix images.

Split by concern: :mod:`.theme` (light, dark and print themes and the
chosen colour maps, switched at run time), :mod:`.colours` (palettes,
colour maps, the colour rule),
:mod:`.ticks` (round ranges, tick labels, decade and integer ticks, no Qt), :mod:`.canvas` (the
canvas), :mod:`.axes`, :mod:`.text` (titles), :mod:`.static_text`, :mod:`.items`
(legends), :mod:`.matrix` (matrix image and colour bar), :mod:`.stacked`
(plots stacked on one x axis), :mod:`.polyline` (curves drawn through the
samples the screen tells apart). The kit's only uses of pyqtgraph's internals
are in :mod:`.pgcompat`, listed at its top.
"""

from .axes import (CompactAxisItem, add_plot, fit_y_range, lay_out_axes, new_plot, set_axis_label, set_integer_ticks,
                   set_ticks, set_y_range, show_grid, style_axis, style_plot)
from .canvas import close_canvases, new_layout_widget, paint_guard, prepare_for_paint, view_pixels
from .colours import (BLUE, DIVERGING, FOREGROUND, GREEN, MASKED_COLOUR, NO_PEN, ORANGE, PALETTE, PINK, SEQUENTIAL,
                      colour_scale, get_colormap, shared_brush, symmetric_levels)
from .items import MAX_DOTS, LegendBelow, add_legend_below
from .matrix import MatrixImageItem, MatrixPlot
from .polyline import ScreenCurve
from .static_text import remembered, static_text_at
from .text import add_canvas_title, cache_text, set_canvas_title, set_title
from .ticks import (colorbar_ticks, compact_tick_strings, decade_label, decade_step, decade_ticks, integer_ticks,
                    nice_bounds, snap_log_span)

__all__ = [
    "BLUE", "DIVERGING", "FOREGROUND", "GREEN", "MASKED_COLOUR", "MAX_DOTS", "NO_PEN", "ORANGE", "PALETTE", "PINK", "SEQUENTIAL",
    "CompactAxisItem", "LegendBelow", "MatrixImageItem", "MatrixPlot", "ScreenCurve",
    "add_canvas_title", "add_legend_below", "add_plot", "lay_out_axes", "cache_text", "close_canvases", "colorbar_ticks", "colour_scale",
    "compact_tick_strings",
    "decade_label", "decade_step", "decade_ticks", "integer_ticks", "set_integer_ticks", "fit_y_range", "get_colormap", "new_layout_widget", "nice_bounds", "paint_guard", "prepare_for_paint", "remembered",
    "new_plot", "set_axis_label", "set_canvas_title", "set_ticks", "set_title", "set_y_range", "show_grid", "snap_log_span",
    "shared_brush", "static_text_at", "style_axis", "style_plot", "symmetric_levels", "view_pixels",
]

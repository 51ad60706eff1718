"""Spectrum: the wavelength of each (sin, cos) pair on a log axis, with the sequence length marked."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ..model.analyses.spectrum import CATEGORIES, Spectrum, spectrum
from .base import Panel
from .cursor import CursorAxis
from .plotkit import (
    BLUE, FOREGROUND, GREEN, ORANGE, add_canvas_title, cache_text, decade_ticks, new_plot, nice_bounds,
    prepare_for_paint, set_axis_label, set_canvas_title, set_integer_ticks, set_ticks, show_grid, snap_log_span,
    style_plot,
)
from .plotkit.theme import themed_text

#: Colour per category (Okabe–Ito): resolves neighbours, coarse, barely moves.
CATEGORY_COLOURS = {"fine": BLUE, "coarse": GREEN, "static": ORANGE}
SEQ_COLOUR = "#444444"
#: The key above the phase plot.
PHASE_KEY = (f'<span style="color:{BLUE}">━ ω per position</span> &nbsp; '
             f'<span style="color:{ORANGE}">━ ω·(N−1) over the sequence</span> &nbsp; '
             f'<span style="color:{SEQ_COLOUR}">┈ 2π (one full turn)</span>')
#: Above this many components the markers are drawn without outlines (speed) …
MAX_OUTLINED = 1024
#: … and above this many, each category is drawn as a thick line instead of markers.
MAX_MARKERS = 1024
#: Up to this many components the phase curves also get markers (one component is a single point).
MAX_SYMBOLS = 64
#: Decades kept free above the 2π line and below the 0.1 rad line for their labels.
LABEL_ROOM = 0.6


def _log_span(low: float, high: float, minimum: float = 2.0) -> tuple[float, float]:
    """A log10 range around ``[low, high]`` spanning at least ``minimum`` decades (readable ticks)."""
    low, high = low - 0.2, high + 0.3
    if high - low < minimum:
        middle = (low + high) / 2
        low, high = middle - minimum / 2, middle + minimum / 2
    return low, high


class SpectrumPanel(Panel):
    """Wavelength, phase step and total phase of each frequency of the encoding."""

    panel_id = "spectrum"
    title = "Spectrum"
    model_function = spectrum
    cursor_axes = ("dimension",)
    help_text = (
        "Each (sin, cos) pair i of the sinusoidal encoding turns with angular frequency "
        "ω<sub>i</sub> = base<sup>−2i/d</sup>, so its wavelength is λ<sub>i</sub> = 2π·base<sup>2i/d</sup> "
        "positions: 2π for the first pair up to 2π·base<sup>(d−2)/d</sup> for the last at even d "
        "(at odd d the last sine, without a cosine, has 2π·base<sup>(d−1)/d</sup>). "
        "<b>Top:</b> λ<sub>i</sub> on a log axis; the dashed line is the sequence length N. "
        "<b>Bottom:</b> phase turned per position, ω<sub>i</sub>, and over the whole sequence, "
        "ω<sub>i</sub>·(N−1). A pair <i>resolves neighbouring positions</i> when one step moves its "
        "point on the unit circle by a chord 2|sin(ω/2)| ≥ 0.1 (blue); it <i>barely moves</i> when its "
        "total phase over the sequence is below 0.1 rad (orange); green pairs are in between. Pairs whose "
        "total phase exceeds 2π repeat inside the sequence on their own; only together do they stay unique. "
        "Other schemes show their distinct frequencies the same way; a scheme with no periodic column "
        "(naive, normalized) has no wavelength, and the panel says so instead of plotting."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas)
        self.wave_key = self.canvas.addLabel("", row=1, col=0, color=FOREGROUND, size="9pt")
        self.wave_plot: pg.PlotItem = new_plot(self.canvas, row=2, col=0)
        self.phase_key = self.canvas.addLabel("", row=3, col=0, color=FOREGROUND, size="9pt")
        self.phase_plot: pg.PlotItem = new_plot(self.canvas, row=4, col=0)
        for key in (self.wave_key, self.phase_key):
            cache_text(key.item)
        for plot in (self.wave_plot, self.phase_plot):
            style_plot(plot)
            plot.hideButtons()
            show_grid(plot)
            plot.setLogMode(x=False, y=True)
        self.phase_plot.setXLink(self.wave_plot)
        self.wave_plot.setLabel("left", "wavelength λ (positions)")
        self.phase_plot.setLabel("left", "phase (rad)")
        self.phase_plot.setLabel("bottom", "component i (pair of dimensions)")
        self.phase_key.setText(themed_text(PHASE_KEY))
        self.scatter: dict[str, pg.PlotDataItem] = {}
        for category in CATEGORIES:
            colour = CATEGORY_COLOURS[category]
            self.scatter[category] = self.wave_plot.plot(
                pen=None, symbol="o", symbolSize=5, symbolBrush=colour, symbolPen=None)
        self.seq_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(SEQ_COLOUR, width=1.5, style=Qt.PenStyle.DashLine),
                                        label="N = {value}", labelOpts={"color": SEQ_COLOUR, "position": 0.08})
        self.wave_plot.addItem(self.seq_line)
        self.crossing_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(SEQ_COLOUR, width=1, style=Qt.PenStyle.DotLine))
        self.wave_plot.addItem(self.crossing_line)
        self.step_curve = self.phase_plot.plot(pen=pg.mkPen(BLUE, width=2), antialias=True)
        self.total_curve = self.phase_plot.plot(pen=pg.mkPen(ORANGE, width=2), antialias=True)
        # The 2π label sits above its line and the 0.1 rad label below its own, so the two never
        # meet between the lines however short the plot is (the y range leaves room for both).
        self.static_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(ORANGE, width=1, style=Qt.PenStyle.DotLine),
                                           label="0.1 rad", labelOpts={"color": ORANGE, "position": 0.97,
                                                                       "anchors": [(1, 0), (1, 0)]})
        self.wrap_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(SEQ_COLOUR, width=1, style=Qt.PenStyle.DotLine),
                                         label="2π (one full turn)", labelOpts={"color": SEQ_COLOUR, "position": 0.97,
                                                                                "anchors": [(1, 1), (1, 1)]})
        self.phase_plot.addItem(self.static_line)
        self.phase_plot.addItem(self.wrap_line)
        self.body.addWidget(self.canvas, 1)
        #: The component of each dimension of the data shown (its pair: 2i and 2i+1 interleaved, i and i + d/2 halves).
        self._component_of: dict[int, int] = {}
        self.link_cursor(self.canvas, [CursorAxis(plot, "x", "dimension", self._component, self._first_dimension)
                                       for plot in (self.wave_plot, self.phase_plot)])
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def _component(self, dimension: int) -> float | None:
        """The component (x) of the cursor's dimension in the data shown; None before data or for a dimension
        the spectrum has no component of."""
        component = self._component_of.get(dimension)
        return None if component is None else float(component)

    def _first_dimension(self, component: float) -> int:
        """The first dimension of the component under the mouse (the nearest one that exists)."""
        if self.data is None or not self.data.component_dims:
            return 0
        index = min(max(int(round(component)), 0), self.data.n_components - 1)
        return self.data.component_dims[index][0]

    def show_data(self, data: Spectrum) -> None:
        self._component_of = {dim: i for i, dims in enumerate(data.component_dims) for dim in dims}
        self.redraw_cursor()  # the cursor's dimension in the new components
        set_canvas_title(self.figure_title, data.params.title())
        self.wave_plot.setVisible(data.periodic)
        self.phase_plot.setVisible(data.periodic)
        if not data.periodic:
            self._show_not_periodic(data)
            return
        self.phase_key.setText(themed_text(PHASE_KEY))
        params = data.params
        # Thousands of components: draw about one point per pixel (smooth curves, exact at any
        # zoom). That re-plots every item on each change of the x range, once more per update
        # here; a few hundred components are drawn whole anyway.
        many = data.n_components > MAX_MARKERS
        for item in (self.step_curve, self.total_curve, *self.scatter.values()):
            item.setDownsampling(auto=many, method="peak")
            item.setClipToView(many)
        x = np.arange(data.n_components, dtype=np.float64)
        periodic = np.isfinite(data.wavelength)
        names = {key: html.escape(text) for key, text in data.category_names().items()}
        outline = data.n_components <= MAX_OUTLINED
        for category, item in self.scatter.items():
            mask = periodic & (data.category == category)
            if data.n_components <= MAX_MARKERS:
                item.setData(x[mask], data.wavelength[mask], pen=None, symbol="o",
                             symbolPen=pg.mkPen("w", width=0.5) if outline else None)
            else:
                # Thousands of markers (all-sine, harmonic at d = 8192) are slow to draw, and
                # markers a pixel apart read as a line anyway, so draw the line.
                item.setData(x, np.where(mask, data.wavelength, np.nan), symbol=None, connect="finite",
                             pen=pg.mkPen(CATEGORY_COLOURS[category], width=3))
        keys = [f'<span style="color:{CATEGORY_COLOURS[c]}">● {names[c]}</span>'
                for c in CATEGORIES if np.any(periodic & (data.category == c))]
        keys.append(f'<span style="color:{SEQ_COLOUR}">╌ sequence length N</span>')
        if math.isfinite(data.seq_len_crossing):
            keys.append(f'<span style="color:{SEQ_COLOUR}">┊ where λ = N</span>')
        key = " &nbsp; ".join(keys)
        key = themed_text(key)  # the current theme's colours for the grey
        if key != self.wave_key.text:  # a new text lays the whole plot out again
            self.wave_key.setText(key)
        self.seq_line.setValue(math.log10(max(params.seq_len, 1)))
        self.seq_line.label.setFormat(f"N = {params.seq_len:,}")
        crossing = data.seq_len_crossing
        self.crossing_line.setVisible(math.isfinite(crossing))
        if math.isfinite(crossing):
            self.crossing_line.setValue(crossing)
        positive = data.omega > 0
        few = data.n_components <= MAX_SYMBOLS
        symbols = {"symbol": "o", "symbolSize": 6, "symbolPen": None} if few else {"symbol": None}
        self.step_curve.setData(x[positive], data.omega[positive], symbolBrush=BLUE, **symbols)
        total_ok = positive & (data.total_phase > 0)
        self.total_curve.setData(x[total_ok], data.total_phase[total_ok], symbolBrush=ORANGE, **symbols)
        self.static_line.setValue(math.log10(data.static_tol))
        self.wrap_line.setValue(math.log10(2 * math.pi))
        # ranges snap to round values: a d_model or base step keeps the axes as laid out
        self.wave_plot.setXRange(-1.0 if data.n_components < 3 else -0.5,
                                 max(nice_bounds(0.0, data.n_components - 0.5)[1], 1.0), padding=0.02)
        if periodic.any():
            low = math.log10(max(min(float(data.wavelength[periodic].min()), params.seq_len), 1e-12))
            high = math.log10(max(float(data.wavelength[periodic].max()), params.seq_len))
        else:
            low, high = 0.0, math.log10(max(params.seq_len, 10))
        span = snap_log_span(*_log_span(low, high))
        self.wave_plot.setYRange(*span, padding=0)
        set_ticks(self.wave_plot.getAxis("left"), decade_ticks(*span))
        phases = np.concatenate([data.omega[positive], data.total_phase[total_ok], [data.static_tol, 2 * math.pi]])
        # room for the 2π label above its line and the 0.1 rad label below its line
        span = snap_log_span(*_log_span(min(math.log10(phases.min()), math.log10(data.static_tol) - LABEL_ROOM),
                                        max(math.log10(phases.max()), math.log10(2 * math.pi) + LABEL_ROOM)))
        self.phase_plot.setYRange(*span, padding=0)
        set_ticks(self.phase_plot.getAxis("left"), decade_ticks(*span))
        set_integer_ticks(self.phase_plot.getAxis("bottom"), 0, data.n_components - 1)
        set_integer_ticks(self.wave_plot.getAxis("bottom"), 0, data.n_components - 1)
        paired = all(kind == "sin+cos" for kind in data.kinds)
        set_axis_label(self.phase_plot.getAxis("bottom"), "component i (pair of dimensions)" if paired
                       else "component i (one frequency: its sin/cos pair or single column)")
        self.summary_label.setText(html.escape(data.summary()))  # plain text in a rich-text label
        self.show_message("")
        prepare_for_paint(self.canvas)

    def _show_not_periodic(self, data: Spectrum) -> None:
        """A scheme without periodic columns: say in the figure that it has no wavelength, and draw nothing."""
        params = data.params
        self.wave_key.setText('<span style="font-size:14pt"><b>This scheme is not periodic: no wavelength</b>'
                              f"</span><br>{html.escape(data.no_wavelength_reason())}")
        self.phase_key.setText("")
        self.summary_label.setText(html.escape(data.summary()))  # plain text in a rich-text label
        self.show_message(f"The {params.scheme} scheme has no periodic columns: the spectrum does not apply.", "info")
        prepare_for_paint(self.canvas)

    def figure_caption(self) -> str:
        """The headline numbers: how many components resolve neighbours, are coarse, barely move, wrap."""
        return self.data.summary() if self.data is not None and self.data.periodic else ""

    def data_export(self, data: Spectrum) -> tuple[dict[str, Any], dict[str, Any]]:
        """One row per component: wavelength, ω, step chord, total phase, category code."""
        codes = np.array([CATEGORIES.index(c) for c in data.category.tolist()], dtype=np.float64)
        table = np.column_stack([np.arange(data.n_components), data.wavelength, data.omega, data.step_chord,
                                 data.total_phase, codes, data.wraps.astype(np.float64)])
        arrays = {"spectrum": table}
        return arrays, {
            "columns": ["component", "wavelength", "omega", "step_chord", "total_phase", "category", "wraps"],
            "categories": list(CATEGORIES),
            "component_dims": [list(d) for d in data.component_dims],
            "step_tol": data.step_tol,
            "static_tol": data.static_tol,
            "summary": data.summary(),
        }

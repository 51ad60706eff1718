"""Positions (PCA): the positions of a table projected on its first principal components, coloured by position."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from ..model.analyses.table_spectra import PCAData, pca_data
from .base import Panel
from .plotkit import (
    FOREGROUND, NO_PEN, add_canvas_title, colorbar_ticks, get_colormap, new_plot, prepare_for_paint, set_axis_label,
    set_canvas_title, set_ticks, shared_brush, show_grid, style_axis, style_plot,
)
from .plotkit.pgcompat import ColorBarWithoutMenu
from .plotkit.theme import colormap_for
from .registry import PanelOption

#: The pairs of components the view can show: the option's value, its label, the components (0-based).
PAIRS = (("1,2", "PC1 vs PC2", (0, 1)), ("1,3", "PC1 vs PC3", (0, 2)), ("2,3", "PC2 vs PC3", (1, 2)))
#: Colours of the position scale (points share one brush per colour: see ``shared_brush``).
COLOUR_STEPS = 256
#: The line joining consecutive sampled positions, under the points.
PATH_PEN = pg.mkPen((120, 120, 120, 90), width=1)


class PCAPanel(Panel):
    """Scatter of the positions on two of the table's first three principal components."""

    panel_id = "pca"
    title = "Positions (PCA)"
    model_function = pca_data
    cli_options = (PanelOption("--components", "principal components the PCA panel plots", choices=tuple(
        value for value, _, _ in PAIRS), metavar="I,J", default="1,2", example="1,3"),)
    help_text = (
        "Each position's vector PE(p) is a point in d_model dimensions; this is the view of those points that "
        "keeps the most of their spread. The table (its mean over positions removed) is decomposed into "
        "principal components, the directions of largest variance; each point is a position, placed at its "
        "coordinates on two of the first three components (equal scales: distances are true distances within "
        "the plane) and coloured by position, with a grey line joining consecutive positions. The axis labels "
        "say what share of the variance each component explains. A (sin, cos) pair alone traces a circle; in "
        "the sinusoidal encoding the first components mix pairs of neighbouring frequencies, so the positions "
        "trace arcs, circles and spirals in their order (Lissajous figures), and its d_model/2 pairs of equal "
        "weight leave each component a small share. A learned table as initialised (random) is a cloud with "
        "no order; a trained one shows whatever order it learned. Up to 4,096 evenly spaced positions (1,024 "
        "above d_model 1,024) are used, said below the plot."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Show:"))
        self.pair_box = QComboBox(self)
        for value, label, _ in PAIRS:
            self.pair_box.addItem(label, value)
        self.pair_box.currentIndexChanged.connect(self._pair_changed)
        self.header.addWidget(self.pair_box)
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.plot: pg.PlotItem = new_plot(self.canvas, row=1, col=0)
        style_plot(self.plot)
        show_grid(self.plot)
        self.plot.hideButtons()
        self.plot.setAspectLocked(True)
        self.path = self.plot.plot(pen=PATH_PEN)
        self.points = pg.ScatterPlotItem(size=6, pen=NO_PEN)
        self.plot.addItem(self.points)
        self.colormap = get_colormap(colormap_for("sequential"))
        self.colorbar = ColorBarWithoutMenu(values=(0, 1), colorMap=self.colormap, interactive=False,
                                            label="position", width=18, pen=FOREGROUND)
        self.colorbar.axis.setWidth(None)  # as wide as its labels (pyqtgraph fixes 45 px)
        for axis_name in ("left", "right", "top", "bottom"):  # top, bottom: the ends of the bar
            style_axis(self.colorbar.getAxis(axis_name), cached=False)
        self.canvas.addItem(self.colorbar, row=1, col=1)
        self.body.addWidget(self.canvas, 1)
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    def brushes(self) -> list:
        """One brush per colour step of the sequential map now chosen (the colour bar follows the choice itself)."""
        name = colormap_for("sequential")
        if name != self.colormap.name:
            self.colormap = get_colormap(name)
        return [shared_brush(colour.name()) for colour in
                self.colormap.getLookupTable(nPts=COLOUR_STEPS, mode=pg.ColorMap.QCOLOR)]

    # --------------------------------------------------------------- options
    @property
    def pair(self) -> tuple[int, int]:
        """The two components shown (0-based)."""
        return PAIRS[self.pair_box.currentIndex()][2]

    def apply_options(self, components: str | None = None) -> None:
        """Choose the components shown: ``"1,2"``, ``"1,3"`` or ``"2,3"``."""
        if components is not None:
            values = [value for value, _, _ in PAIRS]
            if components not in values:
                raise ValueError(f"components must be one of {', '.join(values)}, got {components!r}")
            self.pair_box.setCurrentIndex(values.index(components))

    def current_options(self) -> dict[str, str]:
        """The components shown."""
        return {"components": PAIRS[self.pair_box.currentIndex()][0]}

    def _pair_changed(self) -> None:
        if self.data is not None:
            self.show_data(self.data)

    # ------------------------------------------------------------------ data
    def show_data(self, data: PCAData) -> None:
        first, second = self.pair
        x, y = data.coordinates[:, first], data.coordinates[:, second]
        positions = data.positions.indices()
        last = max(data.params.seq_len - 1, 1)
        steps = np.minimum((positions * COLOUR_STEPS) // last, COLOUR_STEPS - 1)  # 0 … N − 1 onto the bar
        brushes = self.brushes()
        self.points.setData(x, y, brush=[brushes[step] for step in steps.tolist()])
        self.path.setData(x, y)
        self.colorbar.setLevels((0, last))
        set_ticks(self.colorbar.axis, colorbar_ticks(0, last, max(self.colorbar.axis.height(), 60)))
        for axis, component in (("bottom", first), ("left", second)):
            share = data.explained[component]
            set_axis_label(self.plot.getAxis(axis), f"PC{component + 1} ({share:.1%} of the variance)" if share > 0
                           else f"PC{component + 1} (no variance)")
        self._fit_range(x, y)
        set_canvas_title(self.figure_title, data.params.title())
        self.summary_label.setText(html.escape(data.summary()))
        prepare_for_paint(self.canvas)

    def _fit_range(self, x: np.ndarray, y: np.ndarray) -> None:
        """Show every point (a span of 0 gets the other's, or 1), padded; the locked aspect widens one side."""
        spans = [float(values.max() - values.min()) for values in (x, y)]
        widest = max(spans) or 1.0
        ranges = []
        for values, span in zip((x, y), spans):
            middle, half = float(values.max() + values.min()) / 2, 0.55 * (span or widest)
            ranges.append((middle - half, middle + half))
        self.plot.setRange(xRange=ranges[0], yRange=ranges[1], padding=0)

    # ---------------------------------------------------------------- export
    def data_export(self, data: PCAData) -> tuple[dict[str, Any], dict[str, Any]]:
        """Each sampled position with its coordinates; the explained variance and loadings of each component."""
        components = data.components
        arrays = {
            "coordinates": np.column_stack([data.positions.indices(), data.coordinates]),
            "explained": data.explained,
            "loadings": data.loadings,
        }
        return arrays, {
            "columns": ["position"] + [f"pc{c + 1}" for c in range(components)],
            "position_stride": data.positions.stride,
            "positions_used": data.positions.count,
            "total_variance": data.total_variance,
            "shown": list(self.pair),
            "summary": data.summary(),
        }

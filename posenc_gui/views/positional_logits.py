"""Positional logits: RoPE's q·R(n − m)·k (xPos's with its scale), a table's PE(m)·PE(n) or a bias, by position and distance."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QMenu, QSpinBox, QTableWidgetItem, QToolButton, QWidget

from ..compute import ModelJob
from ..model import EncodingParams, ParamSpec, limits
from ..model.analyses.compare import ShownMatrix
from ..model.attention.logit_properties import (
    MAX_COMPARED, PROPERTY_HELP, PROPERTY_NAMES, SCAN_WORK, ComparedSetup, LogitProperties, compared_profiles,
    continue_pinned, continue_table, finish_table, pinned_comparison, properties_caption, properties_table,
    table_pending,
)
from ..model.attention.logits import (
    DEFAULT_SEEDS, DENSE_OFFSETS, LOG_OFFSETS, MAX_SEEDS, MIN_SEEDS, VECTORS, LogitProfileData, logit_profile_data,
)
from .base import Panel
from .compare import ROLE_COLOURS
from .cursor import CursorAxis
from .labels import clipped_levels, clipping_text, plain_text
from .logit_axes import distance_coordinates, linear_distance, profile_plot, set_distance_axis
from .logit_summary import profile_summary
from .logit_table import PropertiesTable
from .plotkit import (
    BLUE, FOREGROUND, GREEN, MatrixPlot, ORANGE, PALETTE, PINK, add_canvas_title, decade_ticks, fit_y_range,
    prepare_for_paint, set_axis_label, set_canvas_title, set_ticks, snap_log_span,
)
from .registry import PanelOption

GREY = "#555555"
VECTOR_LABELS = {"ones": "q = k = 1", "random": "random q, k (seed 0)"}
#: The random pairs' mean ± one standard deviation: their curve's colour, translucent.
BAND_BRUSH = pg.mkBrush(pg.mkColor(ORANGE).red(), pg.mkColor(ORANGE).green(), pg.mkColor(ORANGE).blue(), 60)
BOUND_PEN = pg.mkPen(GREY, width=2, style=Qt.PenStyle.DashLine)
EDGE_PEN = pg.mkPen((0, 0, 0, 0))


def _set_key(plot: pg.PlotItem, key: str) -> None:
    """Show ``key`` as the plot's title, unless it does already (a new title lays the plot out again)."""
    if plot.titleLabel.text != key or not plot.titleLabel.isVisible():
        plot.setTitle(key, size="9pt")


def _key(items: list[tuple[str, str]]) -> str:
    """A plot's key in its title: ``(colour, "━ text")`` entries side by side."""
    return " &nbsp; ".join(f'<span style="color:{colour}">{text}</span>' for colour, text in items)


#: The profile plots' keys for a rotation.
ROTATION_KEY = _key([(BLUE, "━ q = k = 1"), (ORANGE, "━ random q, k: mean ± std")])
ROTATION_SIZE_KEY = _key([(BLUE, "━ |q = k = 1|"), (ORANGE, "╍ random: std"), (GREY, "╍ eq. 37 bound, q = k = 1")])
XPOS_SIZE_KEY = _key([(BLUE, "━ |q = k = 1|"), (ORANGE, "╍ random: std"), (GREY, "╍ scale alone: 2Σ ζ<sub>i</sub><sup>r/B</sup>")])
#: The compared schemes' profile colours, in the order they are chosen (the setup's own is blue).
COMPARED_COLOURS = (GREEN, PINK, PALETTE[5])
#: Setup A of the window's A/B comparison, dashed, in the colour its strip has (views.compare.ROLE_COLOURS).
PINNED_COLOUR = ROLE_COLOURS["A"]
#: Pause after the last parameter change before the properties are measured (a drag measures once, at its end).
PROPERTIES_DELAY_MS = 250
#: Setups whose measured properties the panel keeps: switching back to one shows its table at once.
MEASURED_KEPT = 8
#: A bias's keys after the query (dashed: it may lie on the keys before, a symmetric bias).
AFTER_PEN = pg.mkPen(ORANGE, width=2, style=Qt.PenStyle.DashLine)
DISTANCE_LABEL = "distance r = m − n (key before query)"
#: The distance axis when a bias's keys after the query are drawn too.
BOTH_SIDES_LABEL = "distance r: key n = m − r before the query, n = m + r after"
HOVER_PROMPT = "Hover over the matrix for the logit of a query and a key."
#: What each family's logit is called in the hover line.
#: The figure's least height (pixels): its two stacked profiles, each with its legend and distance axis, keep
#: about 160 px of plot.
MIN_CANVAS_HEIGHT = 540
LOGIT_NAMES = {"table": "PE(m)·PE(n)", "rotation": "logit", "bias": "bias"}


class PositionalLogitsPanel(Panel):
    """The positional logit (RoPE's q·R(n − m)·k, a table's PE(m)·PE(n), a bias) over positions and by distance."""

    panel_id = "logits"
    title = "Positional logits"
    #: A table, a bias, or a rotation (see :meth:`shows`).
    requires = frozenset({"table"})
    model_function = logit_profile_data
    keeps_results = True  # a scheme switched back to shows its last view at once
    model_functions = (compared_profiles, properties_table, continue_table, pinned_comparison, continue_pinned)
    compares_matrix = True
    cursor_axes = ("position",)
    cli_options = (
        PanelOption("--vectors", "query and key vectors of the matrix: ones (q = k = 1) or random (seed 0's "
                    "N(0, 1) pair)", choices=VECTORS, default="ones", example="random"),
        PanelOption("--seeds", "random query–key pairs of the profile's mean and spread",
                    spec=ParamSpec("seeds", "int", DEFAULT_SEEDS, "random pairs", "Random query–key pairs of the "
                                   "profile's mean and spread.", low=MIN_SEEDS, high=MAX_SEEDS), example=8),
        PanelOption("--compare", f"up to {MAX_COMPARED} more schemes, comma-separated, in the profile and the "
                    "properties table (same N and d_model, their own options at defaults)", metavar="SCHEMES",
                    example="sinusoidal"),
    )
    help_text = (
        "RoPE rotates query and key pairs by their positions, so the logit of a query at m and a key at n is "
        "q·R(n − m)·k = af²·Σ<sub>i</sub> [(a<sub>i</sub>c<sub>i</sub> + b<sub>i</sub>d<sub>i</sub>) "
        "cos(rθ<sub>i</sub>) + (a<sub>i</sub>d<sub>i</sub> − b<sub>i</sub>c<sub>i</sub>) sin(rθ<sub>i</sub>)] + the unrotated "
        "channels' q·k, with r = m − n the distance back to the key, (a, b) and (c, d) the pairs of q and k. "
        "<b>Left</b>: that logit for every query m (row) and key n (column) — constant along diagonals. "
        "<b>Top right</b>: against the distance r (log scale, linear for ALiBi's linear bias; r = 0 is in the line "
        "above): for q = k = 1 (blue) "
        "it is af²·2Σ cos(rθ<sub>i</sub>); for independent random q, k ~ N(0, 1) the mean over the seeds "
        "(orange) and ± one standard deviation (band), which stays √(af⁴·rotary_dim + unrotated) at every "
        "distance: the decay is of correlated q and k. "
        "<b>Bottom right</b>: the same in size, log scale, with RoFormer's long-term decay bound (§3.4.3, "
        "eq. 37) in logit units: |rotated part| ≤ af²·max<sub>i</sub>|h<sub>i+1</sub> − h<sub>i</sub>|·Σ<sub>j</sub>"
        "|S<sub>j</sub>(r)|, S<sub>j</sub> = Σ<sub>k&lt;j</sub> e<sup>irθ<sub>k</sub></sup>; for q = k = 1 "
        "the largest step is 2, so the bound is af²·rotary_dim·B(r) with RoFormer's B(r) = "
        "mean<sub>j</sub>|S<sub>j</sub>|, (d/2 + 1)/2 times the logit at r = 0. "
        "The attention factor af (YaRN's mscale) multiplies cos and sin of q and of k: the rotated part of every "
        "logit is scaled by af². "
        "<b>xPos</b> (torchscale): the same rotation with pairs interleaved and no attention factor, each pair's "
        "term multiplied by ζ<sub>i</sub><sup>r/B</sup>, ζ<sub>i</sub> = (2i/d + γ)/(1 + γ), B = scale_base: the "
        "query is scaled by ζ<sup>m/B</sup>, the key by ζ<sup>−n/B</sup> (at positions centred on the block, whose "
        "centre cancels). The heatmap and waveforms show only the rotation; this panel shows the scale: the "
        "matrix keeps keys up to their query (after it the scale grows), and the bottom plot draws the scale alone, "
        "2Σ ζ<sub>i</sub><sup>r/B</sup> (grey), which bounds |q = k = 1|. Even independent random q, k decay: their "
        "spread is √(2Σ ζ<sub>i</sub><sup>2r/B</sup>). "
        "<b>An added table</b>: its positional logit is the p·p term of the four-term split, PE(m)·PE(n), and the "
        "profile is PE(m)·PE(m − r) from the last query position m = N − 1 (a table's need not depend on r alone). "
        "<b>A bias</b> (ALiBi, T5): its positional logit is the bias itself, added to q·k; keys it masks (a causal "
        "bias's keys after the query, −inf) are grey. The profile: the bias of the key r before the query m = N − 1 "
        "(blue) and of the key r after the query m = 0 (orange, dashed), unless those are all masked."
    )

    @classmethod
    def shows(cls, info) -> bool:
        """Added tables (PE(m)·PE(n)), biases, and the rotations that declare theirs (q·R(n − m)·k: RoPE, xPos),
        whose logits the model computes."""
        return info.family in ("table", "bias") or info.rotation is not None

    def unavailable_reason(self, params) -> str | None:
        if self.shows(params.info):
            return None
        return (f"{params.info.label} is a rotation whose logits are not computed: of the rotations, only "
                "RoPE's and xPos's are.")

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("Vectors:"))
        self.vectors_box = QComboBox(self)
        for name in VECTORS:
            self.vectors_box.addItem(VECTOR_LABELS[name], name)
        self.vectors_box.currentIndexChanged.connect(lambda _: self.schedule_update())
        self.header.addWidget(self.vectors_box)
        self.header.addWidget(QLabel("Seeds:"))
        self.seeds_box = QSpinBox(self)
        self.seeds_box.setRange(MIN_SEEDS, MAX_SEEDS)
        self.seeds_box.setValue(DEFAULT_SEEDS)
        self.seeds_box.setToolTip("Random query–key pairs (seeds 0 … S − 1) of the profile's mean and spread")
        self.seeds_box.valueChanged.connect(lambda _: self.schedule_update())
        self.header.addWidget(self.seeds_box)
        self.compare_button = QToolButton(self)
        self.compare_button.setText("Compare")
        self.compare_button.setToolTip(f"Up to {MAX_COMPARED} more schemes in the profile and the properties table, "
                                       "at the same N and d_model with their own options at their defaults")
        self.compare_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.compare_menu = QMenu(self.compare_button)
        self.compare_menu.aboutToShow.connect(self._fill_compare_menu)
        self.compare_button.setMenu(self.compare_menu)
        self.header.addWidget(self.compare_button)
        self._compared: tuple[str, ...] = ()
        self.add_headline_and_canvas()
        self.figure_title = add_canvas_title(self.canvas, columns=2)
        self.matrix = MatrixPlot(self.canvas.ci, "key position n (column)", "query position m (row)", "logit",
                                 row=1, col=0)
        profiles = self.canvas.ci.addLayout(row=1, col=1)
        self.logit_plot = profile_plot(profiles, 0, "logit", DISTANCE_LABEL, log_y=False)
        self.size_plot = profile_plot(profiles, 1, "|logit|", DISTANCE_LABEL, log_y=True)
        self.size_plot.setXLink(self.logit_plot)
        self.logit_plot.addItem(pg.InfiniteLine(angle=0, pos=0, pen=pg.mkPen(FOREGROUND, width=1)))
        # The band's edges: curves with an invisible pen (with no pen a PlotDataItem keeps no curve to fill).
        self.band_low = self.logit_plot.plot(pen=EDGE_PEN)
        self.band_high = self.logit_plot.plot(pen=EDGE_PEN)
        self.band = pg.FillBetweenItem(self.band_low, self.band_high, brush=BAND_BRUSH)
        self.logit_plot.addItem(self.band)
        self.random_curve = self.logit_plot.plot(pen=pg.mkPen(ORANGE, width=2))
        self.ones_curve = self.logit_plot.plot(pen=pg.mkPen(BLUE, width=2))
        self.after_curve = self.logit_plot.plot(pen=AFTER_PEN, connect="finite")
        self.ones_size = self.size_plot.plot(pen=pg.mkPen(BLUE, width=1.5), connect="finite")
        self.random_size = self.size_plot.plot(pen=pg.mkPen(ORANGE, width=2, style=Qt.PenStyle.DashLine))
        self.after_size = self.size_plot.plot(pen=AFTER_PEN, connect="finite")
        self.bound_curve = self.size_plot.plot(pen=BOUND_PEN)
        self.compared_curves = [self.logit_plot.plot(pen=pg.mkPen(colour, width=2)) for colour in COMPARED_COLOURS]
        self.pinned_curve = self.logit_plot.plot(pen=pg.mkPen(PINNED_COLOUR, width=2, style=Qt.PenStyle.DashLine))
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 3)
        self.canvas.setMinimumHeight(MIN_CANVAS_HEIGHT)  # a short dock scrolls rather than squeeze the profiles
        self.body.addWidget(self.canvas, 1)
        self.hover = self.add_hover_line(HOVER_PROMPT, self.matrix.cell_at, lambda cell: self.describe_cell(*cell),
                                         self._in_matrix)  # cells are (query m, key n)
        self.properties = PropertiesTable(self)  # one row per setup, one column per property
        self.body.addWidget(self.properties)
        self.compared: tuple[ComparedSetup, ...] = ()
        #: The window's pinned setup A, and its profile and properties once measured (pinned_comparison).
        self.pinned: EncodingParams | None = None
        self.pinned_result: tuple[ComparedSetup, LogitProperties | str] | None = None
        self.measured: tuple[tuple[str, LogitProperties | str], ...] = ()
        self._measured_key: tuple | None = None
        #: The finished tables of the last :data:`MEASURED_KEPT` setups measured, by their properties key.
        self._measured_before: dict[tuple, tuple[tuple[str, LogitProperties | str], ...]] = {}
        self._properties_timer = self.debounce(self._request_properties, delay_ms=PROPERTIES_DELAY_MS)
        # the cursor's query row m and key column n
        self.link_cursor(self.canvas, [CursorAxis(self.matrix.plot, "y", "position"),
                                       CursorAxis(self.matrix.plot, "x", "position")])
        state.paramsChanged.connect(self.schedule_update)
        self.schedule_update()

    # --------------------------------------------------------------- options
    @property
    def vectors(self) -> str:
        return self.vectors_box.currentData()

    @property
    def seeds(self) -> int:
        return self.seeds_box.value()

    @property
    def compare(self) -> tuple[str, ...]:
        """The schemes compared with the setup (at most :data:`MAX_COMPARED`), in the order chosen."""
        return self._compared

    def comparable_schemes(self) -> list[str]:
        """The schemes this panel can compare: those whose positional logit it shows."""
        from ..model.schemes import SCHEMES

        return [key for key, info in SCHEMES.items() if self.shows(info)]

    def _fill_compare_menu(self) -> None:
        from ..model.schemes import SCHEMES

        self.compare_menu.clear()
        full = len(self._compared) >= MAX_COMPARED
        for key in self.comparable_schemes():
            action = self.compare_menu.addAction(SCHEMES[key].label)
            action.setCheckable(True)
            action.setChecked(key in self._compared)
            action.setEnabled(key in self._compared or not full)
            action.toggled.connect(lambda on, key=key: self._toggle_compared(key, on))

    def _toggle_compared(self, key: str, on: bool) -> None:
        chosen = [k for k in self._compared if k != key] + ([key] if on else [])
        self.apply_options(compare=",".join(chosen))

    def apply_options(self, vectors: str | None = None, seeds: int | None = None,
                      compare: str | tuple[str, ...] | list[str] | None = None) -> None:
        """The matrix's vectors (:data:`VECTORS`), the profile's number of random pairs, the compared schemes.

        ``compare`` is a list of scheme names or one string of them separated by commas ("" for none).
        """
        if compare is not None:
            names = [name.strip() for name in compare.split(",")] if isinstance(compare, str) else list(compare)
            names = [name for name in names if name]
            comparable = self.comparable_schemes()
            for name in names:
                if not isinstance(name, str) or name not in comparable:
                    raise ValueError(f"compare: {limits.shown(name)} is not a scheme whose positional logits are "
                                     f"shown (one of {', '.join(comparable)})")
            names = list(dict.fromkeys(names))
            if len(names) > MAX_COMPARED:
                raise ValueError(f"compare takes at most {MAX_COMPARED} schemes, got {len(names)}")
            if tuple(names) != self._compared:
                self._compared = tuple(names)
                self.compare_button.setText(f"Compare ({len(names)})" if names else "Compare")
                self.schedule_update()
        if vectors is not None:
            if vectors not in VECTORS:
                raise ValueError(f"vectors must be one of {', '.join(VECTORS)}; got {limits.shown(vectors)}")
            self.vectors_box.setCurrentIndex(self.vectors_box.findData(vectors))
        if seeds is not None:
            self.seeds_box.setValue(limits.check_int("seeds", seeds, MIN_SEEDS, MAX_SEEDS))

    def current_options(self) -> dict[str, Any]:
        """The vectors and the number of seeds, as :meth:`apply_options` takes them."""
        return {"vectors": self.vectors, "seeds": self.seeds, "compare": ",".join(self._compared)}

    # ------------------------------------------------------------------ data
    def model_arguments(self) -> tuple:
        """The parameters, the matrix's vectors and the profile's number of random pairs."""
        return self.state.params, self.vectors, self.seeds

    def request_update(self) -> None:
        """Recompute the profile, the compared schemes' and (after a pause) the properties; the newest wins."""
        super().request_update()
        if self._compared:
            self.compute.submit((self, "compared"), ModelJob(compared_profiles, (self.state.params, self._compared)),
                                self._show_compared, self.show_error)
        elif self.compared:  # none any more: their curves go (nothing to redraw when there were none)
            self._show_compared(())
        key = self._properties_key()
        if self._measured_key != key:
            kept = self._measured_before.get(key)
            if kept is None:
                self._mark_properties_pending()
                self._properties_timer.start()
            else:  # a setup measured before (a scheme switched back to): its table at once, nothing measured
                self._properties_timer.stop()
                self.compute.cancel((self, "properties"))
                self._show_properties(key, kept)

    def set_pinned(self, params: EncodingParams | None) -> None:
        """Draw setup A's profile in the logit plot (dashed) and give it a row of the properties table."""
        if params == self.pinned:
            return
        self.pinned, self.pinned_result = params, None
        if params is None:
            self.compute.cancel_owner((self, "A"))
            self._pinned_arrived(None, None)
        else:
            self._submit_pinned(params, ModelJob(pinned_comparison, (params, SCAN_WORK)))

    def _submit_pinned(self, pinned: EncodingParams, job: ModelJob) -> None:
        self.compute.submit((self, "A"), job, lambda result, pinned=pinned: self._pinned_arrived(pinned, result),
                            self.show_error)

    def _pinned_arrived(self, pinned: EncodingParams | None, result) -> None:
        if pinned != self.pinned:
            return
        self.pinned_result = result
        if result is not None and getattr(result[1], "pending", False):  # A's scan over every offset, in steps
            self._submit_pinned(pinned, ModelJob(continue_pinned, (result, SCAN_WORK)))
        if self.data is not None:
            self._show_profile(self.data)
            prepare_for_paint(self.canvas)
        if self._measured_key is not None:
            self._show_properties(self._measured_key, self.measured)

    def _properties_key(self) -> tuple:
        return (self.state.params, self._compared)

    def _request_properties(self) -> None:
        """Measure the properties of the setup and the compared schemes (after a pause: see PROPERTIES_DELAY_MS)."""
        key = self._properties_key()
        if key == self._measured_key or self.unavailable_message() is not None:
            return
        self._submit_properties(key, ModelJob(properties_table, (*key, SCAN_WORK)))

    def _submit_properties(self, key: tuple, job: ModelJob) -> None:
        """Measure (or continue the scans over every offset) in steps: the decay cell shows how far it is."""
        self.compute.submit((self, "properties"), job, lambda measured, key=key: self._show_properties(key, measured),
                            self.show_error)

    def _mark_properties_pending(self) -> None:
        self.properties.setToolTip("Measuring… (the table shows the last setup measured until then)")
        header = self.properties.verticalHeaderItem(0)
        if header is not None and not header.text().endswith("(measuring…)"):
            header.setText(f"{header.text()} (measuring…)")

    def _show_properties(self, key: tuple, measured: tuple[tuple[str, LogitProperties | str], ...]) -> None:
        from ..model.schemes import SCHEMES

        self._measured_key, self.measured = key, measured
        if table_pending(measured):
            self._submit_properties(key, ModelJob(continue_table, (measured, SCAN_WORK)))
        else:
            self._measured_before.pop(key, None)
            self._measured_before[key] = measured  # the newest last
            while len(self._measured_before) > MEASURED_KEPT:
                del self._measured_before[next(iter(self._measured_before))]
        rows = list(measured)
        labels = [SCHEMES[scheme].label + ("" if row else " (this setup)") for row, (scheme, _) in enumerate(rows)]
        if self.pinned is not None and self.pinned_result is not None:  # A heads the table, and this setup is B
            labels = [f"A: {SCHEMES[self.pinned.scheme].label} (pinned)", "B: " + labels[0], *labels[1:]]
            rows.insert(0, (self.pinned.scheme, self.pinned_result[1]))
        self.properties.setRowCount(len(rows))
        for row, (scheme, result) in enumerate(rows):
            verdicts = result.verdicts() if isinstance(result, LogitProperties) else {}
            short = result.short_cells() if verdicts else {}
            for column, name in enumerate(PROPERTY_NAMES):
                text = verdicts.get(name, "not measured")
                item = QTableWidgetItem(short.get(name, text))
                detail = "" if verdicts else str(result)  # a verdict's text has its witness and coverage
                item.setToolTip("\n\n".join(part for part in (text, detail, PROPERTY_HELP[name]) if part))
                self.properties.setItem(row, column, item)
        self.properties.setVerticalHeaderLabels(labels)
        self.properties.setToolTip(f"Measured at N = {key[0].seq_len:,}, d_model {key[0].d_model:,} "
                                   "(hover a title or a cell for its definition)")
        self.properties.fit_height()

    def show_data(self, data: LogitProfileData) -> None:
        rotation = data.rotation is not None
        for widget in (self.vectors_box, self.seeds_box):
            widget.setEnabled(rotation)  # a table's logit, or a bias, has no query and key vectors
        for item in (self.band, self.random_curve, self.random_size, self.bound_curve):
            item.setVisible(rotation)
        after = data.bias is not None and data.bias.after is not None
        for item in (self.after_curve, self.after_size):
            item.setVisible(after)
        self._show_matrix(data)
        self._show_profile(data)
        self.summary_label.setText(profile_summary(data))
        self.hover.refresh()
        set_canvas_title(self.figure_title, data.params.title())
        prepare_for_paint(self.canvas)

    def _show_matrix(self, data: LogitProfileData) -> None:
        low, high = data.positions.extent
        self.matrix.set_matrix(data.matrix, QRectF(low, low, high - low, high - low), signed=True,
                               masked=data.bias is not None, levels=clipped_levels(data.colour_bound))
        self.matrix.set_colorbar_label("logit" if data.colour_bound is None else "logit (clipped)")
        self.matrix.set_full_range((low, high), (low, high))
        rotation = data.rotation
        if data.bias is not None:
            self.matrix.set_title("bias added to the logit" + (", grey: masked" if data.bias.masked else ""))
        elif rotation is None:
            self.matrix.set_title("PE(m)·PE(n)")
        elif rotation.xpos is None:
            self.matrix.set_title(f"q·R(n − m)·k, {VECTOR_LABELS[rotation.vectors]}")
        else:
            self.matrix.set_title(f"ζ<sup>(m − n)/B</sup>·q·R(n − m)·k, {VECTOR_LABELS[rotation.vectors]}, keys n ≤ m")

    def _show_profile(self, data: LogitProfileData) -> None:
        distances = data.distances[1:].astype(np.float64)  # a log axis has no 0
        linear = linear_distance(data.params.info)
        x = distance_coordinates(distances, linear)
        shown = distances.size > 0
        for plot in (self.logit_plot, self.size_plot):
            plot.setVisible(shown)
        if not shown:
            return
        rotation, bias = data.rotation, data.bias
        both_sides = bias is not None and bias.after is not None
        for plot in (self.logit_plot, self.size_plot):
            set_axis_label(plot.getAxis("bottom"), BOTH_SIDES_LABEL if both_sides else DISTANCE_LABEL)
        compared = self._draw_compared(linear)
        self.ones_curve.setData(x, data.profile[1:])
        size = np.abs(data.profile[1:])
        self.ones_size.setData(x, np.where(size > 0, size, np.nan))
        if bias is not None:
            low, high = self._show_bias_profile(data, x, size, compared)
        elif rotation is None:
            _set_key(self.logit_plot, _key([(BLUE, f"━ PE(m)·PE(m − r), m = {data.query_position:,}")]
                                           + self._compared_key()))
            _set_key(self.size_plot, _key([(BLUE, "━ |PE(m)·PE(m − r)|")]))
            fit_y_range(self.logit_plot, data.profile, np.zeros(1), *compared)
            positive = size[size > 0]
            low, high = (float(positive.min()), float(positive.max())) if positive.size else (0.1, 10.0)
        else:
            _set_key(self.logit_plot, ROTATION_KEY + (" &nbsp; " + _key(self._compared_key()) if compared else ""))
            _set_key(self.size_plot, ROTATION_SIZE_KEY if rotation.xpos is None else XPOS_SIZE_KEY)
            mean, std = rotation.random_mean[1:], rotation.random_std[1:]
            self.random_curve.setData(x, mean)
            self.band_low.setData(x, mean - std)
            self.band_high.setData(x, mean + std)
            bound = rotation.ones_bound if rotation.xpos is None else rotation.xpos.envelope
            # xPos's scale underflows to 0 far enough back: off a log axis
            self.random_size.setData(x, np.where(std > 0, std, np.nan))
            self.bound_curve.setData(x, np.where(bound[1:] > 0, bound[1:], np.nan))
            fit_y_range(self.logit_plot, data.profile, mean - std, mean + std, *compared)
            # down to a tenth of the random spread and of the smallest bound: |q = k = 1| dips to 0 below
            positive = np.concatenate([std[std > 0], bound[1:][bound[1:] > 0]])
            low = float(positive.min()) if positive.size else float(bound.max()) / 10
            high = float(bound.max())
        set_distance_axis([self.logit_plot, self.size_plot], distances[-1], linear)
        y_span = snap_log_span(math.log10(low) - 1, math.log10(high) + 0.2)
        self.size_plot.setYRange(*y_span, padding=0)
        set_ticks(self.size_plot.getAxis("left"), decade_ticks(*y_span))

    def _show_compared(self, compared: tuple[ComparedSetup, ...]) -> None:
        """The compared schemes' profiles (q = k = 1; a table's from the last query) in the logit plot."""
        self.compared = compared
        if self.data is not None:
            self._show_profile(self.data)
            prepare_for_paint(self.canvas)
        missing = [f"{setup.key}: {setup.error}" for setup in compared if setup.profile is None]
        if missing:
            self.show_message("Not compared — " + "; ".join(missing), "warning")

    def _drawn_pinned(self) -> ComparedSetup | None:
        """Setup A's profile while the window compares (at A's own length), else None."""
        if self.pinned is None or self.pinned_result is None or self.pinned_result[0].profile is None:
            return None
        return self.pinned_result[0]

    def _compared_key(self) -> list[tuple[str, str]]:
        # the schemes' keys, not their labels: four labels do not fit a plot's title
        pinned = [(PINNED_COLOUR, "┅ A (pinned)")] if self._drawn_pinned() is not None else []
        return pinned + [(colour, f"━ {setup.key}") for colour, setup in zip(COMPARED_COLOURS, self._drawn())]

    def _drawn(self) -> list[ComparedSetup]:
        """The compared setups with a profile at the shown length (an older N's wait for their new result)."""
        n = None if self.data is None else self.data.params.seq_len
        return [setup for setup in self.compared if setup.profile is not None and setup.params.seq_len == n]

    def _draw_compared(self, linear: bool) -> list[np.ndarray]:
        """Draw the compared profiles (on a linear distance axis or a log one); returns their values (for the y
        range)."""
        drawn = self._drawn()
        for index, curve in enumerate(self.compared_curves):
            setup = drawn[index] if index < len(drawn) else None
            curve.setVisible(setup is not None)
            if setup is None:
                curve.setData([], [])
            else:
                curve.setData(distance_coordinates(setup.distances[1:].astype(np.float64), linear), setup.profile[1:])
        pinned = self._drawn_pinned()
        self.pinned_curve.setVisible(pinned is not None)
        if pinned is None:
            self.pinned_curve.setData([], [])
            return [setup.profile for setup in drawn]
        self.pinned_curve.setData(distance_coordinates(pinned.distances[1:].astype(np.float64), linear),
                                  pinned.profile[1:])
        return [pinned.profile] + [setup.profile for setup in drawn]

    def _show_bias_profile(self, data: LogitProfileData, x: np.ndarray, size: np.ndarray,
                           compared: list[np.ndarray]) -> tuple[float, float]:
        """The keys after the query beside the keys before (at ``x``, the distances on the axis's scale); the range
        of the sizes shown."""
        after = data.bias.after
        before_key = f"━ key r before m = {data.query_position:,}"
        if after is None:
            _set_key(self.logit_plot, _key([(BLUE, before_key)] + self._compared_key()))
            _set_key(self.size_plot, _key([(BLUE, "━ |bias|, key before")]))
            sizes = size
            fit_y_range(self.logit_plot, data.profile, np.zeros(1), *compared)
        else:
            _set_key(self.logit_plot, _key([(BLUE, before_key), (ORANGE, "╍ key r after m = 0")]
                                           + self._compared_key()))
            _set_key(self.size_plot, _key([(BLUE, "━ |bias|, key before"), (ORANGE, "╍ key after")]))
            after_size = np.abs(after[1:])
            self.after_curve.setData(x, after[1:])
            self.after_size.setData(x, np.where(after_size > 0, after_size, np.nan))
            sizes = np.concatenate([size, after_size])
            fit_y_range(self.logit_plot, data.profile, after, np.zeros(1), *compared)
        positive = sizes[(sizes > 0) & np.isfinite(sizes)]
        return (float(positive.min()), float(positive.max())) if positive.size else (0.1, 10.0)

    # ----------------------------------------------------------------- hover
    def _sample(self, position: int) -> int:
        """The matrix's sampled position whose cell holds ``position`` (the position itself unless sampled)."""
        sample = self.data.positions
        index = min(max((position - sample.start) // sample.stride, 0), sample.count - 1)
        return sample.start + index * sample.stride

    def _in_matrix(self, cell: tuple[int, int]) -> bool:
        length = self.data.params.seq_len if self.data is not None else 0
        return 0 <= cell[0] < length and 0 <= cell[1] < length

    def describe_cell(self, query: int, key: int) -> str:
        """``"query m 5, key n 7 (m − n = −2): bias masked (−inf)"``: the matrix's value at the sampled cell."""
        data = self.data
        m, n = self._sample(query), self._sample(key)
        value = data.matrix[(m - data.positions.start) // data.positions.stride,
                            (n - data.positions.start) // data.positions.stride]
        shown = "masked (−inf)" if np.isneginf(value) else f"{value:.10g}"
        sampled = " (the sampled cell's positions)" if data.positions.stride > 1 else ""
        return (f"query m {m:,}, key n {n:,}{sampled} (m − n = {m - n:,}): "
                f"{LOGIT_NAMES[data.params.info.family]} {shown}")

    # --------------------------------------------------------------- compare
    def shown_matrix(self) -> ShownMatrix | None:
        """The shown logits at their query positions (rows) and key positions (columns)."""
        if self.data is None:
            return None
        positions = self.data.positions.indices()
        return ShownMatrix(self.data.matrix, positions, positions, "query position m", "key position n")

    def linked_view_boxes(self) -> list:
        return [self.matrix.view_box]

    # ---------------------------------------------------------------- export
    def _sampling(self) -> str:
        data = self.data
        parts = []
        if data.positions.stride > 1:
            parts.append(f"Matrix: {data.positions.describe('position')} in both directions.")
        if data.distances[-1] > data.dense_until:
            parts.append(f"Profile: every distance to {data.dense_until:,}, then "
                         f"{data.distances.size - data.dense_until - 1:,} log-spaced ones to {data.distances[-1]:,}.")
        return " ".join(parts + (["Exact values at the positions shown."] if parts else []))

    def figure_caption(self) -> str:
        """The headline numbers, and how the matrix and the profile are sampled."""
        if self.data is None:
            return ""
        clipped = clipping_text(self.data.colour_bound) if self.data.colour_bound is not None else ""
        return " ".join(part for part in (plain_text(self.summary_label.text()), self._sampling(), clipped,
                                          self._properties_caption()) if part)

    def _properties_caption(self) -> str:
        """The measured properties of each setup, when they are the current parameters'."""
        if self._measured_key != self._properties_key():
            return ""
        self.measured = finish_table(self.measured)  # an export while a scan runs: finish it here
        return properties_caption(self.measured)

    def data_export(self, data: LogitProfileData) -> tuple[dict[str, Any], dict[str, Any]]:
        """The matrix, its positions, and the profile (with a rotation's random pairs and decay bound) per distance."""
        rotation = data.rotation
        meta: dict[str, Any] = {
            "rows": "query position m", "columns": "key position n",
            "profile_query_position": data.query_position,
            "half_distance": data.half_distance,
            "dense_until": data.dense_until,
            "sampled_distances": {"dense": DENSE_OFFSETS, "log_spaced": LOG_OFFSETS},
        }
        columns = [data.distances, data.profile]
        if data.bias is not None:
            meta["profile_columns"] = ["distance m - n", "bias of the key r before m = N - 1"]
            if data.bias.after is None:
                meta["keys_after_the_query"] = "masked (-inf)"
            else:
                columns.append(data.bias.after)
                meta["profile_columns"].append("bias of the key r after m = 0")
            meta["masked_cells"] = data.bias.masked
        elif rotation is None:
            meta["profile_columns"] = ["distance m - n", "PE(m)·PE(m - r)"]
        elif rotation.xpos is not None:
            scale = rotation.xpos
            columns += [rotation.random_mean, rotation.random_std, scale.expected_std, scale.envelope]
            meta["profile_columns"] = ["distance m - n", "logit q = k = 1", "random mean", "random std",
                                       "expected random std", "scale alone 2·sum zeta_i^(r/scale_base)"]
            meta.update(vectors=rotation.vectors, seeds=rotation.seeds, rotary_dim=rotation.rotary_dim,
                        head_dim=rotation.head_dim, zeta=scale.zeta, scale_base=scale.scale_base,
                        matrix_keys="n <= m (keys after their query are null)")
        else:
            columns += [rotation.random_mean, rotation.random_std, rotation.decay_bound, rotation.ones_bound]
            meta["profile_columns"] = ["distance m - n", "logit q = k = 1", "random mean", "random std",
                                       "RoFormer B(r)", "eq. 37 bound for q = k = 1 (logit units)"]
            meta.update(vectors=rotation.vectors, seeds=rotation.seeds, attention_factor=rotation.attention_factor,
                        logit_scale=rotation.attention_factor ** 2, rotary_dim=rotation.rotary_dim,
                        head_dim=rotation.head_dim)
        arrays = {"matrix": data.matrix, "positions": data.positions.indices(), "profile": np.column_stack(columns)}
        for setup in self._drawn():
            arrays[f"compared_{setup.key}"] = np.column_stack([setup.distances, setup.profile])
        meta["compared"] = {setup.key: setup.params.as_dict() if setup.params else setup.error
                            for setup in self.compared}
        if self._measured_key == self._properties_key():
            self.measured = finish_table(self.measured)
            meta["properties"] = {scheme: result.as_dict() if isinstance(result, LogitProperties) else result
                                  for scheme, result in self.measured}
        return arrays, meta

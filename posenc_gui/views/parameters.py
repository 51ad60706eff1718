"""Parameters: scheme, sizes and the options of the chosen scheme; applied while dragging."""

from __future__ import annotations

import json
import math
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSlider,
    QSpinBox,
    QWidget,
)

from .. import resources_path
from ..model import SCHEMES, EncodingParams, limits
from .base import Panel
from .labels import encoding_title
from .plotkit import FOREGROUND

ERROR_STYLE = "color:#b00020;"
#: Slider ticks per doubling of the logarithmic size sliders.
TICKS_PER_OCTAVE = 8
#: Width of the exported figure (the parameters and the formula), in logical pixels.
FIGURE_WIDTH = 640
#: How each layout reads in the figure.
LAYOUT_WORDS = {"interleaved": "interleaved: sin, cos, sin, cos … (the paper)",
                "halves": "halves: [sin … | cos …] (TensorFlow tutorial)"}


def parameters_html(params: EncodingParams) -> str:
    """The chosen scheme, its parameters (only those it has), its formula and what it does, as a small table."""
    info = SCHEMES[params.scheme]
    applies = info.parameters
    rows = [("scheme", f"{info.label} ({params.scheme})"), ("positions N", f"{params.seq_len:,}"),
            ("d_model", f"{params.d_model:,}")]
    if "base" in applies:
        rows.append(("base", f"{params.base:g}"))
    if "layout" in applies:
        rows.append(("layout", LAYOUT_WORDS.get(params.layout, params.layout)))
    if "length" in applies:
        rows.append(("normalization length", f"N = {params.seq_len:,}, the number of positions"))
    cells = "".join(f'<tr><td style="padding-right:14px"><b>{escape(name)}</b></td><td>{escape(value)}</td></tr>'
                    for name, value in rows)
    return (f'<div style="font-size:11pt"><b>{escape(encoding_title(params))}</b></div>'
            f'<table cellspacing="0" cellpadding="2" style="margin-top:6px">{cells}</table>'
            f'<p style="font-family:monospace; margin-top:8px">{escape(info.formula)}</p>'
            f"<p>{escape(info.summary)}</p>")


class ParametersFigure(QLabel):
    """The exported figure of the Parameters panel: the parameters and the formula on white, no controls.

    A screenshot of the controls (sliders, drop-down arrows) is no figure;
    this is made only for an export, from the parameters of that moment.
    """

    PADDING_PX = 12

    def __init__(self, params: EncodingParams) -> None:
        super().__init__()
        self.setObjectName("parameters-figure")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setStyleSheet(f"QLabel#parameters-figure {{ background: white; color: {FOREGROUND}; "
                           f"padding: {self.PADDING_PX}px; }}")
        self.setText(parameters_html(params))
        self.setFixedWidth(FIGURE_WIDTH)
        self.setFixedHeight(self.heightForWidth(FIGURE_WIDTH))


def load_presets() -> list[tuple[str, EncodingParams]]:
    """The presets shipped in ``resources/presets``; unreadable ones are skipped."""
    presets = []
    for path in sorted(resources_path("presets").glob("*.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            presets.append((str(raw["label"]), EncodingParams.validated(**raw["params"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return presets


def base_text(base: float) -> str:
    """``base`` as the shortest text that reads back as the same float ("10000", "36591432", "1.0000001")."""
    text = repr(float(base))
    return text[:-2] if text.endswith(".0") else text


class LogSlider(QSlider):
    """A horizontal slider over ``low … high`` on a log2 scale (integers)."""

    def __init__(self, low: int, high: int, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.low, self.high = low, high
        self.setRange(0, round(math.log2(high / low) * TICKS_PER_OCTAVE))

    def to_value(self, tick: int) -> int:
        return min(self.high, max(self.low, round(self.low * 2 ** (tick / TICKS_PER_OCTAVE))))

    def set_value_silently(self, value: float) -> None:
        self.blockSignals(True)
        self.setValue(round(math.log2(max(value, self.low) / self.low) * TICKS_PER_OCTAVE))
        self.blockSignals(False)


class ParametersPanel(Panel):
    """Controls bound to :class:`AppState`; an invalid value shows the model's message."""

    panel_id = "parameters"
    title = "Parameters"
    help_text = (
        "Choose the encoding scheme and its sizes; every view updates while you drag. "
        "Only the options that the chosen scheme uses are shown. An invalid value is refused with "
        "the reason next to the control, and the views keep showing the last valid choice."
    )

    def __init__(self, state, compute, parent: QWidget | None = None) -> None:
        super().__init__(state, compute, parent)
        self.header.addWidget(QLabel("<b>Encoding</b>"))
        self.finish_header()
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.body.addLayout(form)
        self.errors: dict[str, QLabel] = {}
        #: Why the text in the base field is not the base ("" when it is).
        self._base_refusal = ""

        self.presets = QComboBox(self)
        self.presets.addItem("Choose a preset…", None)
        for label, params in load_presets():
            self.presets.addItem(label, params)
        self.presets.activated.connect(self._apply_preset)
        form.addRow("Preset", self.presets)

        self.scheme = QComboBox(self)
        for key, info in SCHEMES.items():
            self.scheme.addItem(info.label, key)
        self.scheme.currentIndexChanged.connect(lambda _: self._set(scheme=self.scheme.currentData()))
        form.addRow("Scheme", self.scheme)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.formula = QLabel(self)
        self.formula.setWordWrap(True)
        self.formula.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formula.setStyleSheet("font-family: monospace;")
        form.addRow(self.summary)
        form.addRow(self.formula)

        self.seq_len, self.seq_slider = self._int_control(
            form, "seq_len", "Positions", limits.MIN_SEQ_LEN, limits.MAX_SEQ_LEN)
        self.d_model, self.d_slider = self._int_control(
            form, "d_model", "d_model", limits.MIN_D_MODEL, limits.MAX_D_MODEL)

        self.base_row = QWidget(self)
        base_layout = QHBoxLayout(self.base_row)
        base_layout.setContentsMargins(0, 0, 0, 0)
        self.base = QLineEdit(self.base_row)
        self.base.setToolTip("Wavelength base: sinusoidal wavelengths run from 2π to 2π·base^((d−2)/d) at "
                             "even d (2π·base^((d−1)/d) at odd d), just under 2π·base for a large d. Must be > 1.")
        self.base.setMaximumWidth(110)
        self.base.textEdited.connect(self._base_edited)
        self.base_slider = LogSlider(2, 10**8, self.base_row)
        self.base_slider.setToolTip("Drag to change the base on a log scale (2 … 10⁸); type any value > 1.")
        self.base_slider.valueChanged.connect(lambda t: self._set(base=float(self.base_slider.to_value(t))))
        base_layout.addWidget(self.base)
        base_layout.addWidget(self.base_slider, 1)
        self.base_label = QLabel("base", self)
        form.addRow(self.base_label, self.base_row)
        form.addRow(self._error_label("base"))

        self.layout_box = QComboBox(self)
        self.layout_box.addItem("interleaved — sin, cos, sin, cos … (paper)", "interleaved")
        self.layout_box.addItem("halves — [sin … | cos …] (TensorFlow tutorial)", "halves")
        self.layout_box.currentIndexChanged.connect(lambda _: self._set(layout=self.layout_box.currentData()))
        self.layout_label = QLabel("layout", self)
        form.addRow(self.layout_label, self.layout_box)
        self.length_note = QLabel("N (normalization length) = number of positions.", self)
        self.length_note.setWordWrap(True)
        form.addRow(self.length_note)
        self.general_error = self._error_label("")
        form.addRow(self.general_error)
        self.body.addStretch(1)

        state.paramsChanged.connect(self.sync_from_state)
        state.paramError.connect(self._show_error)
        self.sync_from_state(state.params)

    def _error_label(self, field: str) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setStyleSheet(ERROR_STYLE)
        label.hide()
        self.errors[field] = label
        return label

    def _int_control(self, form: QFormLayout, field: str, text: str, low: int, high: int):
        row = QWidget(self)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        spin = QSpinBox(row)
        spin.setRange(low, high)
        spin.setGroupSeparatorShown(True)
        spin.setKeyboardTracking(True)
        spin.setMinimumWidth(100)
        slider = LogSlider(low, high, row)
        slider.setToolTip(f"Drag to change {text} on a log scale ({low:,} … {high:,}).")
        spin.valueChanged.connect(lambda v: self._set(**{field: v}))
        slider.valueChanged.connect(lambda t: self._set(**{field: slider.to_value(t)}))
        layout.addWidget(spin)
        layout.addWidget(slider, 1)
        form.addRow(text, row)
        form.addRow(self._error_label(field))
        return spin, slider

    # ------------------------------------------------------------ behaviour
    def _set(self, **changes: Any) -> None:
        self.state.update(**changes)

    def _base_edited(self, text: str) -> None:
        self._base_refusal = ""
        try:
            value = float(text)
        except ValueError:
            self._base_refusal = f"base must be a number > 1 and ≤ {limits.MAX_BASE:g}, got {text!r}"
            self._show_error("base", self._base_refusal)
            return
        self._base_refusal = self.state.update(base=value) or ""

    def _apply_preset(self, index: int) -> None:
        params = self.presets.itemData(index)
        if isinstance(params, EncodingParams):
            self.state.set_params(params)

    def _show_error(self, field: str, message: str) -> None:
        for name, label in self.errors.items():
            label.hide()
        if message:
            label = self.errors.get(field, self.general_error)
            label.setText(message)
            label.show()
        if self._base_refusal and field != "base":  # the field still holds the text it refused
            self.errors["base"].setText(self._base_refusal)
            self.errors["base"].show()

    def sync_from_state(self, params: EncodingParams) -> None:
        """Show ``params`` in the controls without feeding them back."""
        widgets = (self.scheme, self.seq_len, self.seq_slider, self.d_model, self.d_slider, self.layout_box)
        for widget in widgets:
            widget.blockSignals(True)
        self.scheme.setCurrentIndex(self.scheme.findData(params.scheme))
        self.seq_len.setValue(params.seq_len)
        self.seq_slider.set_value_silently(params.seq_len)
        self.d_model.setValue(params.d_model)
        self.d_slider.set_value_silently(params.d_model)
        self.layout_box.setCurrentIndex(self.layout_box.findData(params.layout))
        for widget in widgets:
            widget.blockSignals(False)
        if not self.base.hasFocus() or self._base_value() != params.base:
            self.base.setText(base_text(params.base))
            self._base_refusal = ""
            self.errors["base"].hide()
        self.base_slider.set_value_silently(params.base)
        info = SCHEMES[params.scheme]
        self.summary.setText(info.summary)
        self.formula.setText(info.formula)
        applies = set(info.parameters)
        for widget in (self.base_row, self.base_label):
            widget.setVisible("base" in applies)
        for widget in (self.layout_box, self.layout_label):
            widget.setVisible("layout" in applies)
        self.length_note.setVisible("length" in applies)

    def _base_value(self) -> float | None:
        try:
            return float(self.base.text())
        except ValueError:
            return None

    def figure_widget(self) -> QWidget:
        """The parameters and the formula as a small figure (:class:`ParametersFigure`), made for this export."""
        self._figure = ParametersFigure(self.state.params)  # kept until the next export
        return self._figure

    def export_data(self) -> dict[str, Any]:
        return {"arrays": {}, "meta": {"panel": self.panel_id, "params": self.state.params.__dict__.copy()}}

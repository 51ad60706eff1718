"""A widget for each declared parameter (:class:`~posenc_gui.model.ParamSpec`), built from its spec alone.

As napari's layer controls are built from a layer's attributes: the kind of
a spec picks the editor (a spin box, a text field, a drop-down, a check
box), its range bounds it, its ``log`` adds a log-scale slider, its ``help``
is the tooltip. A control never checks a value itself: it hands what the
user chose to ``apply`` and shows the refusal it gets back. A ``path`` is a
read-only field with an "Open…" button (the window's way of opening the
file); a ``name`` is a drop-down of the names its spec offers for the
other options (:meth:`ParamControl.set_choices`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QSlider, QSpinBox, QWidget)

from ..model import ParamSpec

#: The colour of a refusal (the same in every theme).
ERROR_STYLE = "color:#b00020;"
#: Slider ticks per doubling of the logarithmic sliders.
TICKS_PER_OCTAVE = 8
#: Significant digits of a real value picked with a slider (a tick stands for a round number).
SLIDER_DIGITS = 4


def value_text(value: float) -> str:
    """A float as the shortest text that reads back as the same float ("10000", "36591432", "1.0000001")."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


class ErrorLabel(QLabel):
    """A refusal's line, hidden until there is one: in :data:`ERROR_STYLE` once first shown.

    A style sheet costs its widget a re-polish (a parse and a style of its
    own): the Parameters panel's thirty-odd hidden error lines each paid it
    at start-up, for a refusal most sessions never see.
    """

    def setVisible(self, visible: bool) -> None:  # noqa: N802 (Qt override; show() and hide() come here)
        if visible and not self.styleSheet():
            self.setStyleSheet(ERROR_STYLE)
        super().setVisible(visible)


class LogSlider(QSlider):
    """A horizontal slider over ``low … high`` on a log2 scale, :data:`TICKS_PER_OCTAVE` ticks per doubling."""

    def __init__(self, low: float, high: float, integer: bool, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.low, self.integer = low, integer
        self.set_high(high)

    def set_high(self, high: float) -> None:
        """Make ``high`` the right end (the value it shows may move; no signal is emitted)."""
        self.high = high
        top = round(math.log2(high / self.low) * TICKS_PER_OCTAVE)
        if self.maximum() != top or self.minimum() != 0:
            self.blockSignals(True)
            self.setRange(0, top)
            self.blockSignals(False)

    def to_value(self, tick: int) -> float:
        """The value of ``tick``: an integer, or a real rounded to :data:`SLIDER_DIGITS` significant digits."""
        exact = min(self.high, max(self.low, self.low * 2 ** (tick / TICKS_PER_OCTAVE)))
        return round(exact) if self.integer else float(f"{exact:.{SLIDER_DIGITS}g}")

    def set_value_silently(self, value: float) -> None:
        self.blockSignals(True)
        self.setValue(round(math.log2(max(value, self.low) / self.low) * TICKS_PER_OCTAVE))
        self.blockSignals(False)


class ParamControl:
    """The row of one parameter: its label, editor, optional slider and the line for its refusal.

    Parameters
    ----------
    spec : ParamSpec
    apply : callable
        ``apply(name, value) -> str | None``: set the parameter; the refusal's text, or None.
    parent : QWidget
    open_path : callable, optional
        For a ``path``: what its "Open…" button does (ask for a file and open it).
    """

    def __init__(self, spec: ParamSpec, apply: Callable[[str, Any], str | None], parent: QWidget,
                 open_path: Callable[[], None] | None = None) -> None:
        self.spec, self._apply = spec, apply
        #: Why the text in a text field is not the parameter's value ("" when it is).
        self.refusal = ""
        #: Counts of slider presses and of finished editings (Return, or the focus leaving the field):
        #: each names one gesture (:meth:`gesture`).
        self._presses = self._editings = 0
        self.label = QLabel(spec.label, parent)
        self.row = QWidget(parent)
        self._shown: bool | None = None  # as set_visible last set the row
        layout = QHBoxLayout(self.row)
        layout.setContentsMargins(0, 0, 0, 0)
        self.editor = self._editor()
        self.editor.setToolTip(spec.help)
        self.label.setToolTip(spec.help)
        layout.addWidget(self.editor, 0 if self.slider_range() else 1)
        self.open_button: QPushButton | None = None
        if spec.kind == "path":
            self.open_button = QPushButton("Open…", self.row)
            self.open_button.setToolTip("Choose a model folder or file (File ▸ Open model…)")
            if open_path is not None:
                self.open_button.clicked.connect(open_path)
            layout.addWidget(self.open_button)
        if isinstance(self.editor, (QSpinBox, QLineEdit)):
            self.editor.editingFinished.connect(self._count_editing)
        self.slider: LogSlider | None = None
        if self.slider_range():
            low, high = self.slider_range()
            self.slider = LogSlider(low, high, spec.kind == "int", self.row)
            self.slider.setToolTip(f"Drag to change {spec.label} on a log scale ({spec.text(low)} … {spec.text(high)})"
                                   + ("." if spec.kind == "int" else "; type any value."))
            self.slider.valueChanged.connect(lambda tick: self._set(self.slider.to_value(tick)))
            self.slider.sliderPressed.connect(self._count_press)
            layout.addWidget(self.slider, 1)
        self.error = ErrorLabel(parent)
        self.error.setWordWrap(True)
        self.error.hide()

    def slider_range(self) -> tuple[float, float] | None:
        if not self.spec.log:
            return None
        return self.spec.slider or (self.spec.low, self.spec.high)

    def _editor(self) -> QWidget:
        spec = self.spec
        if spec.kind == "int":
            spin = QSpinBox(self.row)
            spin.setRange(int(spec.low), int(spec.high))
            spin.setGroupSeparatorShown(True)
            spin.setKeyboardTracking(True)
            spin.setMinimumWidth(100)
            spin.valueChanged.connect(self._set)
            return spin
        if spec.kind in ("real", "reals"):
            edit = QLineEdit(self.row)
            if spec.kind == "real":
                edit.setMaximumWidth(110)
            else:
                edit.setPlaceholderText("numbers separated by commas")
            edit.textEdited.connect(self._text_edited)
            return edit
        if spec.kind == "path":  # set by opening a file, never typed: the field shows it and can be copied
            edit = QLineEdit(self.row)
            edit.setReadOnly(True)
            edit.setPlaceholderText("no model file open")
            return edit
        if spec.kind == "bool":
            box = QCheckBox(self.row)
            box.toggled.connect(self._set)
            return box
        combo = QComboBox(self.row)
        # Long choice labels (RoPE's pairings) elide rather than widen the Parameters panel past its dock.
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(16)
        for value, label in spec.choices:
            combo.addItem(label, value)
        combo.currentIndexChanged.connect(lambda _: self._set(combo.currentData()))
        return combo

    def set_choices(self, choices: tuple[tuple[Any, str], ...]) -> None:
        """Offer ``choices`` ((value, label), …) in a ``name``'s drop-down, without applying any."""
        combo = self.editor
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        for value, label in choices:
            combo.addItem(label, value)
        combo.setCurrentIndex(combo.findData(current))
        combo.blockSignals(False)

    def set_fixed(self, why: str) -> None:
        """Let the user change the value (``why`` empty), or not: its widgets disabled, ``why`` as their tooltip."""
        for widget in self.widgets():
            widget.setEnabled(not why)
        self.editor.setToolTip(why or self.spec.help)

    def set_high(self, high: int | float) -> None:
        """Let an ``int`` go no higher than ``high`` (the positions of a table read from a file).

        Nothing is touched when ``high`` is the limit already: Qt re-lays out a spin
        box's panel on every ``setMaximum``, and the panel asks this on every step.
        """
        if isinstance(self.editor, QSpinBox) and self.editor.maximum() != int(high):
            self.editor.blockSignals(True)
            self.editor.setMaximum(int(high))
            self.editor.blockSignals(False)
        if self.slider is not None:
            self.slider.set_high(min(high, self.slider_range()[1]))

    def gesture(self) -> Hashable | None:
        """The gesture a change of this control now belongs to (see :meth:`AppState.gesture`), or None for its own step.

        While the slider is held down, every value is part of one drag; while
        the field has the focus, every keystroke (a digit, a spin box's step)
        is part of one editing, which ends with Return or the focus leaving.
        """
        if self.slider is not None and self.slider.isSliderDown():
            return ("drag", self.spec.name, self._presses)
        if isinstance(self.editor, (QSpinBox, QLineEdit)) and self.editor.hasFocus():
            return ("editing", self.spec.name, self._editings)
        return None

    def _count_press(self) -> None:
        self._presses += 1

    def _count_editing(self) -> None:
        self._editings += 1

    def widgets(self) -> tuple[QWidget, ...]:
        """Every widget whose signals :meth:`show` blocks."""
        return (self.editor,) if self.slider is None else (self.editor, self.slider)

    def _set(self, value: Any) -> None:
        refusal = self._apply(self.spec.name, value)
        if refusal and self.slider is not None:
            self._show_refused(value, refusal)

    def _show_refused(self, value: float, refusal: str) -> None:
        """Show a refused ``value`` in the spin box and on the slider alike (its reason is shown beside them).

        Two controls of one parameter never disagree: as a text field keeps the
        text it refused, both keep the number, until a value in use replaces it.
        """
        for widget in self.widgets():
            widget.blockSignals(True)
        if isinstance(self.editor, QSpinBox):
            self.editor.setValue(value)
        else:
            self.editor.setText(value_text(value))
            self.refusal = refusal
        if self.slider.to_value(self.slider.value()) != value:  # the slider stays under the hand that moved it
            self.slider.set_value_silently(value)
        for widget in self.widgets():
            widget.blockSignals(False)

    def _text_edited(self, text: str) -> None:
        try:
            value = self.spec.parse(text)
        except ValueError as error:
            self.refusal = str(error)
            self.show_error(self.refusal)
            return
        self.refusal = ""
        self.refusal = self._apply(self.spec.name, value) or ""

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def show(self, value: Any) -> None:
        """Show ``value`` without feeding it back; a text field being typed in keeps text that reads as ``value``."""
        for widget in self.widgets():
            widget.blockSignals(True)
        editor = self.editor
        if isinstance(editor, QSpinBox):
            editor.setValue(value)
        elif isinstance(editor, QCheckBox):
            editor.setChecked(value)
        elif isinstance(editor, QComboBox):
            if editor.findData(value) < 0 and self.spec.kind == "name":  # a name not offered (yet) still shows
                editor.addItem(value or "(the position table)", value)
            editor.setCurrentIndex(editor.findData(value))
        elif self.spec.kind == "path":
            editor.setText(value)
            editor.setToolTip(value or self.spec.help)
            editor.setCursorPosition(len(value))  # the end of a long path names the model
        elif not editor.hasFocus() or self._typed_value() != value:
            editor.setText(self.spec.text(value) if self.spec.kind == "reals" else value_text(value))
            self.refusal = ""
            self.error.hide()
        if self.slider is not None:
            self.slider.set_value_silently(value)
        for widget in self.widgets():
            widget.blockSignals(False)

    def _typed_value(self) -> Any:
        try:
            return self.spec.parse(self.editor.text())
        except ValueError:
            return None

    def set_visible(self, visible: bool) -> None:
        """Show or hide the whole row (the panel asks on every parameter change: nothing is done when it is so)."""
        if visible is self._shown:
            return
        self._shown = visible
        self.label.setVisible(visible)
        self.row.setVisible(visible)
        if not visible:
            self.error.hide()


class ViewSpinBox(QObject):
    """A spin box bound to one shared view setting of :class:`~posenc_gui.state.AppState` (``state.view``).

    Every panel showing the setting has one; a change in any of them is the
    state's, and every other box follows it without feeding it back.

    Parameters
    ----------
    state : AppState
    name : str
        A key of :data:`~posenc_gui.state.VIEW_SPECS`.
    parent : QWidget
        The spin box's parent.

    The binding is a child of its spin box: it goes (and its connection to
    the state with it) when the box does.
    """

    def __init__(self, state, name: str, parent: QWidget) -> None:
        from ..state import VIEW_SPECS

        spec = VIEW_SPECS[name]
        if spec.kind == "real":
            box: QSpinBox | QDoubleSpinBox = QDoubleSpinBox(parent)
            box.setDecimals(3)
            box.setSingleStep(0.1)
            box.setRange(spec.low, spec.high)
        else:
            box = QSpinBox(parent)
            box.setGroupSeparatorShown(True)
            box.setKeyboardTracking(True)
            box.setRange(int(spec.low), int(spec.high))
        super().__init__(box)
        self.state, self.name, self.box = state, name, box
        box.setToolTip(spec.help)
        box.setAccessibleName(spec.label)
        box.setValue(state.view[name])
        box.valueChanged.connect(lambda value: state.set_view(**{name: value}))
        state.viewChanged.connect(self._follow)

    def value(self):
        return self.state.view[self.name]

    def set_range(self, low: float, high: float) -> None:
        """Narrow what the box offers (the range clamps the value, and a clamped value is the state's)."""
        self.box.setRange(low, high)

    def _follow(self, name: str, value) -> None:
        if name == self.name and self.box.value() != value:
            self.box.blockSignals(True)
            self.box.setValue(value)
            self.box.blockSignals(False)

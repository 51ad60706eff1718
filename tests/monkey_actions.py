"""The monkey's user input: good and bad texts for the fields, real mouse and wheel events, and the actions that
type into the panels' controls and act on their plot canvases (mixins of :class:`monkey.Monkey`).
"""

from __future__ import annotations

import math
import random
from typing import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QMenu,
    QSlider,
    QWidget,
)



# ------------------------------------------------------------- inputs
BAD_NUMBERS = ("", " ", "abc", "-5", "0", "1e9", "99999999999", "12.5", "1,5", "0x10", "nan", "inf", "٣",
               "9" * 40, "--1", "+", "1 2")


BASE_TEXTS = ("1", "1.0", "0", "-3", "abc", "", "inf", "-inf", "nan", "1e300", "1e13", "1e12", "1,5", "0x10",
              "  ", "1.0000001", "2", "10000", "1e4", "500", "1e8", "3.5", "1e-3", "٣")


SENTENCES = ("dog bites man", "man bites dog", "the cat sat on the mat", "mat the on sat cat the", "dog",
             "", "   ", "!!! ??? ...", "Dog, bites; man!", "日本 語 テキスト", "a b c d e f g h i j k l",
             "x" * 300, " ".join(["word"] * 513), " ".join(f"w{i}" for i in range(60)), "the the the")


GARBAGE = ("", "abc", "0", "-1", "1e400", "\t", "ünïcödé", "9" * 60)


def dims_texts(d_model: int) -> tuple[str, ...]:
    """Good and bad dimension lists for the waveforms panel at ``d_model``."""
    last = d_model - 1
    return ("0, 1, 100-101", "abc", "99999", "0", "0, 1", f"{last}", f"{last - 1}-{last}", f"0-{min(11, last)}",
            "0-12", "", " ", "5-3", "1 2 3", "0,,1", "-1", "1e3", "٣", f"{d_model}", "0–3", "2, 2, 2",
            f"0-{last}", "4-7, 0")


def log_uniform_int(rng: random.Random, low: int, high: int) -> int:
    """An integer in ``low … high``, as likely in every octave."""
    if high <= low:
        return low
    value = math.exp(rng.uniform(math.log(max(low, 1)), math.log(high + 1)))
    return min(high, max(low, int(value)))


# ------------------------------------------------------------ mouse and wheel
def _mouse(widget: QWidget, kind: QEvent.Type, pos: QPointF, button: Qt.MouseButton,
           buttons: Qt.MouseButton) -> None:
    event = QMouseEvent(kind, pos, QPointF(widget.mapToGlobal(pos.toPoint())), button, buttons,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def wheel(widget: QWidget, pos: QPointF, steps: int) -> None:
    """Turn the wheel ``steps`` notches (positive: away from the user) at ``pos``."""
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                        False)
    QApplication.sendEvent(widget, event)


def drag(widget: QWidget, start: QPointF, end: QPointF, button: Qt.MouseButton, moves: int = 6) -> None:
    """Press at ``start``, move to ``end`` in ``moves`` steps with the button held, release."""
    _mouse(widget, QEvent.Type.MouseButtonPress, start, button, button)
    for i in range(1, moves + 1):
        _mouse(widget, QEvent.Type.MouseMove, start + (end - start) * (i / moves), Qt.MouseButton.NoButton, button)
        QApplication.processEvents()
    _mouse(widget, QEvent.Type.MouseButtonRelease, end, button, Qt.MouseButton.NoButton)


def hover(widget: QWidget, points: list[QPointF]) -> None:
    """Move the mouse (no button) through ``points``."""
    for point in points:
        _mouse(widget, QEvent.Type.MouseMove, point, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton)
        QApplication.processEvents()


class FieldActions:
    """Typing into the spin boxes, sliders, combo boxes and line edits of the panels on screen.

    A mixin of :class:`monkey.Monkey`: it uses its ``window``, ``rng``, ``sizes``, ``_widgets``, ``_pick``,
    ``_name`` and ``_describe``.
    """

    def _size_field(self, widget: QWidget) -> str | None:
        """``"seq_len"``/``"d_model"`` for the Parameters panel's size controls, whose good values are bounded."""
        parameters = self.window.panels.built().get("parameters")
        if parameters is None:
            return None
        for field in ("seq_len", "d_model"):
            if widget in parameters.controls[field].widgets():
                return field
        return None

    def _bound(self, field: str) -> int:
        return self.sizes.max_seq_len if field == "seq_len" else self.sizes.max_d_model

    def _focus(self, widget: QWidget) -> None:
        self.window.activateWindow()
        widget.setFocus(Qt.FocusReason.MouseFocusReason)

    def _type(self, widget: QWidget, text: str) -> None:
        """Replace the widget's text as a user does: select all, then type (short) or paste (long).

        QTest types ASCII only (other characters abort it): the rest is pasted.
        """
        self._focus(widget)
        widget.selectAll()
        if len(text) > 40 or not text.isascii() or self.rng.random() < 0.25:
            QApplication.clipboard().setText(text)
            if text:
                QTest.keyClick(widget, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
            else:
                QTest.keyClick(widget, Qt.Key.Key_Backspace)
        elif text:
            QTest.keyClicks(widget, text)
        else:
            QTest.keyClick(widget, Qt.Key.Key_Backspace)
        ending = self.rng.random()
        if ending < 0.3:
            QTest.keyClick(widget, Qt.Key.Key_Return)
        elif ending < 0.5:
            widget.clearFocus()  # leaving the field: a spin box fixes up what it holds

    def act_spin(self) -> None:
        spin = self._pick(self._widgets(QAbstractSpinBox))
        if spin is None:
            return
        field = self._size_field(spin)
        if self.rng.random() < 0.35:
            text = self.rng.choice(BAD_NUMBERS)
            if field is not None and text.isdigit() and int(text) > self._bound(field):
                # typed key by key, its first digits would be a good (and unbounded) value
                QApplication.clipboard().setText(text)
                self._focus(spin)
                spin.selectAll()
                QTest.keyClick(spin, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
                self._describe(f"{self._name(spin)} pasted {text!r}")
                return
        elif isinstance(spin, QDoubleSpinBox):
            value = math.exp(self.rng.uniform(math.log(spin.minimum()), math.log(spin.maximum())))
            text = f"{value:.{spin.decimals()}f}"
        else:
            high = spin.maximum() if field is None else min(spin.maximum(), self._bound(field))
            text = str(log_uniform_int(self.rng, spin.minimum(), high))
            if field is not None:
                # typed digit by digit, every prefix is applied too: keep them within the bound
                text = text if int(text) <= self._bound(field) else str(self._bound(field))
        self._describe(f"{self._name(spin)} ← {text!r}")
        self._type(spin, text)

    def act_spin_step(self) -> None:
        spin = self._pick(self._widgets(QAbstractSpinBox))
        if spin is None:
            return
        keys = [Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown]
        field = self._size_field(spin)
        if field is not None and spin.value() >= self._bound(field) - 10:
            keys = [Qt.Key.Key_Down, Qt.Key.Key_PageDown]
        key = self.rng.choice(keys)
        presses = self.rng.randint(1, 5)
        self._describe(f"{self._name(spin)} {key.name} ×{presses}")
        self._focus(spin)
        for _ in range(presses):
            QTest.keyClick(spin, key)

    def act_slider(self) -> None:
        slider = self._pick(self._widgets(QSlider))
        if slider is None:
            return
        field = self._size_field(slider)
        top = slider.maximum()
        if field is not None:
            top = min(top, int(math.log2(self._bound(field) / slider.low) * 8))
        if self.rng.random() < 0.5:
            keys = [Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Home]
            if top == slider.maximum():
                keys.append(Qt.Key.Key_End)
            if slider.value() + slider.pageStep() > top:
                keys = [Qt.Key.Key_Left, Qt.Key.Key_PageDown, Qt.Key.Key_Home]
            key = self.rng.choice(keys)
            self._describe(f"{self._name(slider)} {key.name}")
            self._focus(slider)
            QTest.keyClick(slider, key)
            return
        target = self.rng.randint(slider.minimum(), top)
        self._describe(f"{self._name(slider)} dragged {slider.value()} → {target}")
        slider.setSliderDown(True)
        step = 1 if target >= slider.value() else -1
        for tick in range(slider.value() + step, target + step, step):
            slider.setValue(tick)
            if self.rng.random() < 0.3:
                QApplication.processEvents()
        slider.setSliderDown(False)

    def act_combo(self) -> None:
        combo = self._pick(self._widgets(QComboBox))
        if combo is None:
            return
        key = self.rng.choice([Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home, Qt.Key.Key_End,
                               Qt.Key.Key_PageUp, Qt.Key.Key_PageDown])
        presses = self.rng.randint(1, 3)
        self._describe(f"{self._name(combo)} {key.name} ×{presses}")
        self._focus(combo)
        for _ in range(presses):
            QTest.keyClick(combo, key)

    def _line_edits(self) -> list[QLineEdit]:
        return [edit for edit in self._widgets(QLineEdit)
                if not isinstance(edit.parentWidget(), (QAbstractSpinBox, QComboBox))]

    def act_line_edit(self) -> None:
        edit = self._pick(self._line_edits())
        if edit is None:
            return
        built = self.window.panels.built()
        texts: tuple[str, ...] = GARBAGE
        if "parameters" in built and edit is built["parameters"].controls["base"].editor:
            texts = BASE_TEXTS + (f"{math.exp(self.rng.uniform(0.01, math.log(1e12))):.6g}",)
        elif "waveforms" in built and edit is built["waveforms"].dims_edit:
            texts = dims_texts(self.window.state.params.d_model)
        elif "permutation" in built and edit in (built["permutation"].sentence_a_edit,
                                                 built["permutation"].sentence_b_edit):
            texts = SENTENCES
        text = self.rng.choice(texts)
        self._describe(f"{self._name(edit)} ← {text[:60]!r}{'…' if len(text) > 60 else ''}")
        self._type(edit, text)


class CanvasActions:
    """Zooming, panning, hovering and clicking on the plot canvases on screen (and their context menus).

    A mixin of :class:`monkey.Monkey`: it uses its ``rng``, ``_panels_on_screen``, ``_pick``, ``_describe`` and
    ``_close_popups``.
    """

    def _on_a_canvas(self, act: Callable[[str, QWidget], None]) -> Callable[[], None]:
        """An action on the viewport of a plot canvas on screen: ``act(panel_id, viewport)``."""
        def on_canvas() -> None:
            canvases = [(panel.panel_id, view.viewport()) for panel in self._panels_on_screen()
                        for view in panel.findChildren(pg.GraphicsView)
                        if view.isVisible() and not view.viewport().visibleRegion().isEmpty()]
            if canvases:
                act(*self.rng.choice(canvases))
        return on_canvas

    def _point(self, widget: QWidget) -> QPointF:
        return QPointF(self.rng.uniform(0, widget.width() - 1), self.rng.uniform(0, widget.height() - 1))

    def act_zoom(self, panel_id: str, viewport: QWidget) -> None:
        at, steps = self._point(viewport), self.rng.choice([-3, -2, -1, -1, 1, 1, 2, 3, 6])
        self._describe(f"{panel_id} wheel {steps:+d} at ({at.x():.0f}, {at.y():.0f})")
        for _ in range(self.rng.randint(1, 4)):
            wheel(viewport, at, steps)
            QApplication.processEvents()

    def act_pan(self, panel_id: str, viewport: QWidget) -> None:
        start, end = self._point(viewport), self._point(viewport)
        button = self.rng.choice([Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton])
        self._describe(f"{panel_id} {button.name} drag ({start.x():.0f}, {start.y():.0f}) → "
                       f"({end.x():.0f}, {end.y():.0f})")
        drag(viewport, start, end, button)

    def act_hover(self, panel_id: str, viewport: QWidget) -> None:
        points = [self._point(viewport) for _ in range(self.rng.randint(1, 8))]
        self._describe(f"{panel_id} through {len(points)} points")
        hover(viewport, points)

    def act_click(self, panel_id: str, viewport: QWidget) -> None:
        at = self._point(viewport)
        button = self.rng.choice([Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton])
        self._describe(f"{panel_id} {button.name} click at ({at.x():.0f}, {at.y():.0f})")
        if self.rng.random() < 0.3:
            QTest.mouseDClick(viewport, button, pos=at.toPoint())
        else:
            QTest.mouseClick(viewport, button, pos=at.toPoint())
        QApplication.processEvents()
        popup = QApplication.activePopupWidget()
        if isinstance(popup, QMenu) and self.rng.random() < 0.7:
            self._choose_from(popup)

    def _choose_from(self, menu: QMenu) -> None:
        """Pick an entry of a context menu (pyqtgraph's, such as a colour bar's colormaps), as a user would."""
        menu.aboutToShow.emit()  # menus that fill themselves when opened
        entries = [a for a in menu.actions() if not a.isSeparator() and a.isEnabled()]
        entry = self._pick(entries)
        if entry is None:
            return
        if entry.menu() is not None:
            self._describe(f"menu {entry.text()!r} ▸")
            return self._choose_from(entry.menu())
        self._describe(f"chose {entry.text()!r} in the {type(menu).__name__}")
        entry.trigger()
        self._close_popups()

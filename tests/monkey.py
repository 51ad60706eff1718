"""A monkey for the main window: seeded random user actions, then a check that every view is current.

Each action is something a user can do in the real :class:`MainWindow`:
type good and bad values into every spin box, line edit and combo box of
the panels on screen, drag sliders, click buttons (the walkthrough's
Next/Back among them), trigger every menu action but Quit, press the undo
and redo keys (a step of the window, or a field's own text undo), show, hide,
raise, float and re-dock docks, reset the layout, zoom and pan the plots
with real wheel and mouse events, hover over them, and export every panel
in every format to good and bad paths. Dialogs are replaced (the file
dialog answers with the path the monkey chose, error boxes are recorded)
so nothing blocks.

Checked on every action: no exception reaches ``sys.excepthook`` (or
pyqtgraph's handler that only prints), Qt logs no warning, a bad export
path gives a message and writes nothing, a good one writes the file or
says why not, and a refused parameter leaves the parameters as they were.
Whenever the monkey waits for the window to settle, and at the end, every
built panel on screen must show the current parameters (then, at the end,
every panel in turn is raised and checked).

A failure raises :class:`MonkeyFailure` with the seed and the last actions.
The same seed makes the same choices as long as the window is in the same
state; the timing of results may still differ from run to run.

Run it outside pytest for a long run (offscreen, full parameter ranges)::

    python tests/monkey.py --actions 2000 --seed 1
"""

from __future__ import annotations

import argparse
import contextlib
import html
import math
import os
import random
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer, qInstallMessageHandler, QtMsgType
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QLineEdit,
    QMenu,
    QMessageBox,
    QSlider,
    QTabBar,
    QSpinBox,
    QToolButton,
    QWidget,
)
from pyqtgraph import debug

from posenc_gui import panel_navigation, prepare_qt_environment
from posenc_gui.export import FORMATS
from posenc_gui.mainwindow import MainWindow
from posenc_gui.model import limits
from posenc_gui.model.attention import head_rotation, tokenize
from posenc_gui.views import export_ui, model_open
from posenc_gui.window import sessions
from posenc_gui.views import handout_ui
from posenc_gui.views.export_ui import ExportDialog, copy_panel_figure
from posenc_gui.views.param_controls import TICKS_PER_OCTAVE
from posenc_gui.model.panels.panel_data import parse_dims

#: What the offscreen platform says it cannot do: pyproject.toml's ``qt_log_ignore``, and the keyboard
#: grab of a popup menu (tests/test_monkey.py ignores it too).
QT_NOISE = re.compile(r"This plugin does not support (propagateSizeHints|raise|grabbing the keyboard)")
#: How many of the last actions a failure report lists.
REPORT_ACTIONS = 20
#: The longest the window may stay busy after an action before the run counts as hung.
IDLE_TIMEOUT_S = 120.0


class MonkeyFailure(AssertionError):
    """Something broke: the message holds the seed, the failing action and the ones before it."""


@dataclass(frozen=True)
class Sizes:
    """The largest sequence length and d_model the monkey chooses as a good value.

    Bad values (refused by the controls or the model) go beyond these
    bounds whatever they are.
    """

    max_seq_len: int
    max_d_model: int


#: For the test in the suite: each action's views take milliseconds.
MODERATE = Sizes(max_seq_len=4096, max_d_model=512)


#: The model's whole range (the long run).
FULL = Sizes(limits.MAX_SEQ_LEN, limits.MAX_D_MODEL)


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


# ----------------------------------------------------------------- settling
def settle(window: Any, timeout: float = IDLE_TIMEOUT_S) -> None:
    """Let every pending parameter change, debounced re-sample and computation finish.

    Raises
    ------
    MonkeyFailure
        When the window is still busy after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        QApplication.processEvents()
        window.state.flush()
        for panel in window.panels.built().values():
            panel.run_debounced()
        if not window.compute.wait_idle(max(0.1, deadline - time.monotonic())):
            raise MonkeyFailure(f"the window was still computing after {timeout:g} s")
        QApplication.processEvents()
        # the panels' own delays (a scorecard's re-measure, a note that follows the curves)
        waiting = {timer: panel_id for panel_id, panel in window.panels.built().items()
                   for timer in panel.findChildren(QTimer) if timer.isActive() and timer.isSingleShot()}
        if window.compute.is_idle() and not waiting:
            return
        if time.monotonic() > deadline:
            timers = ", ".join(f"{panel_id}: {timer.parent().metaObject().className()}'s {timer.interval()} ms timer"
                               for timer, panel_id in waiting.items())
            raise MonkeyFailure(f"the window kept re-sampling for {timeout:g} s (still waiting: "
                                f"{timers or 'no timer'}; computing: {sorted(map(str, window.compute._pending))})")
        QTest.qWait(max(timer.remainingTime() for timer in waiting) + 1 if waiting else 1)


# ----------------------------------------------------------- view checks
def _title(plot: Any) -> str:
    return plot.titleLabel.item.toPlainText()


def _message(panel: Any) -> str:
    """The error in the panel's message bar ("" for none; notes and warnings are not errors)."""
    text, level = panel._message
    return text if level == "error" and not panel.message_label.isHidden() else ""


def _check_parameters(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    problems = []
    in_use = {spec.name for spec in p.info.options_in_use(p.options)}
    values = {"seq_len": p.seq_len, "d_model": p.d_model, **{k: v for k, v in p.options.items() if k in in_use}}
    if panel.scheme.currentData() != p.scheme:
        problems.append(f"parameters: the scheme control shows {panel.scheme.currentData()!r}, the parameters hold "
                        f"{p.scheme!r}")
    for name, control in panel.controls.items():
        if control.row.isHidden() != (name not in values):
            problems.append(f"parameters: the {name} control is {'hidden' if control.row.isHidden() else 'shown'} "
                            f"for {p.scheme}")
        if name not in values:
            continue
        value, editor, slider = values[name], control.editor, control.slider
        shown = {QSpinBox: lambda: editor.value(), QComboBox: lambda: editor.currentData()}.get(type(editor))
        # a spin box keeps a number it refused (a d_model the scheme's other options do not take), as a text
        # field keeps refused text: then its reason is shown beside it
        refused = isinstance(editor, QSpinBox) and not control.error.isHidden()
        if shown is not None and shown() != value and not refused:
            problems.append(f"parameters: the {name} control shows {shown()!r}, the parameters hold {value!r}")
        if slider is not None:
            # the slider shows the value in use, or (its reason beside it) the number refused in the field
            held = [value]
            if refused or control.refusal:
                held.append(editor.value() if isinstance(editor, QSpinBox) else control._typed_value())
            ticks = [min(slider.maximum(), max(0.0, math.log2(max(v, slider.low) / slider.low) * TICKS_PER_OCTAVE))
                     for v in held if v is not None]
            # a tick stands for a rounded value; several ticks, for the same small integer
            if slider.to_value(slider.value()) not in held and all(abs(slider.value() - t) > 0.5 + 1e-9 for t in ticks):
                problems.append(f"parameters: the {name} slider is at tick {slider.value()}, "
                                f"{value} is tick {ticks[0]:.2f}")
        if isinstance(editor, QLineEdit):  # a real, or a list of reals (LongRoPE's factors): read as the spec does
            try:
                typed = control.spec.parse(editor.text())
            except ValueError:
                typed = None
            if typed != value and control.error.isHidden():
                problems.append(f"parameters: {name} shows {editor.text()!r} with no error, the parameters hold "
                                f"{control.spec.text(value)}")
    label = window.params_label.text()
    for part in (p.scheme, f"{p.seq_len:,} position", f"d_model {p.d_model:,}"):
        if part not in label:
            problems.append(f"status bar: {label!r} lacks {part!r}")
    return problems


def _check_heatmap(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or data.params != p:
        return [f"heatmap: shows {data and data.params}, the parameters are {p}"]
    problems = []
    shape = (data.positions.count, data.dims.count)
    if data.values.shape != shape or panel.matrix.image.image is None or panel.matrix.image.image.shape != shape:
        problems.append(f"heatmap: values {data.values.shape}, image "
                        f"{None if panel.matrix.image.image is None else panel.matrix.image.image.shape}, samples {shape}")
    if not (0 < data.positions.count <= p.seq_len and 0 < data.dims.count <= p.d_model
            and data.positions.indices().max() < p.seq_len and data.dims.indices().max() < p.d_model):
        problems.append(f"heatmap: samples {data.positions} × {data.dims} outside {p.seq_len} × {p.d_model}")
    title = p.title()
    if not _title(panel.matrix.plot).startswith(title):
        problems.append(f"heatmap: title {_title(panel.matrix.plot)!r}, expected {title!r}…")
    problems += _check_hover(panel)
    if _message(panel):
        problems.append(f"heatmap: an error stays on screen with current data: {_message(panel)!r}")
    return problems


def _check_hover(panel: Any) -> list[str]:
    """A panel's hover line describes its remembered cell from the current data."""
    readout = getattr(panel, "hover", None)
    if readout is None or readout.cell is None:
        return []
    cell, shown = readout.cell, readout._label.text()
    expected = readout._describe(cell) if readout._valid(cell) else readout._prompt
    return [] if shown == expected else [
        f"{panel.panel_id}: hover line {shown!r} for {cell}, the current data say {expected!r}"]


def _check_waveforms(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or data.params != p:
        return [f"waveforms: shows {data and data.params}, the parameters are {p}"]
    problems = []
    try:
        typed = parse_dims(panel.dims_edit.text(), p.d_model)
    except ValueError as error:
        if not _message(panel):
            problems.append(f"waveforms: dims {panel.dims_edit.text()!r} are refused ({error}) with no message")
    else:
        if typed != data.dims:
            problems.append(f"waveforms: the dims field says {typed}, the curves are {data.dims}")
        if _message(panel):
            problems.append(f"waveforms: valid dims, yet the message {_message(panel)!r}")
    if any(d >= p.d_model for d in data.dims):
        problems.append(f"waveforms: dims {data.dims} beyond d_model {p.d_model}")
    title = p.title()
    if _title(panel.plot) != title:
        problems.append(f"waveforms: title {_title(panel.plot)!r}, expected {title!r}")
    return problems


def _check_similarity(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    problems = []
    for part, data in (("matrix", panel.matrix_data), ("profile", panel.profile_data)):
        if data is None or data.params != p or data.metric != panel.metric:
            return [f"similarity: the {part} shows {data and (data.params, data.metric)}, "
                    f"the parameters are {p} with {panel.metric}"]
    reference = panel.reference_box.value()
    if panel.profile_data.reference != reference or not 0 <= reference < p.seq_len:
        problems.append(f"similarity: profile from {panel.profile_data.reference}, the box says {reference}")
    title = p.title()
    if panel.figure_title.item.toPlainText() != title:
        problems.append(f"similarity: title {panel.figure_title.item.toPlainText()!r}, expected {title!r}")
    if _title(panel.profile_plot) != f"from p = {reference:,} (dashed)":
        problems.append(f"similarity: profile title {_title(panel.profile_plot)!r} for reference {reference}")
    problems += _check_hover(panel)
    if _message(panel):
        problems.append(f"similarity: an error stays on screen with current data: {_message(panel)!r}")
    return problems


def _check_permutation(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    sentences = (panel.sentence_a_edit.text(), panel.sentence_b_edit.text())
    refusals = []
    for name, sentence in zip(("sentence_a", "sentence_b"), sentences):
        try:
            tokenize(sentence, name)
        except ValueError as error:
            refusals.append(str(error))
    if not refusals and p.info.rotation is not None:  # RoPE refuses a demo d_k with odd rotated channels
        try:
            head_rotation(1, panel.d_model_spin.value(), p.scheme, p.scheme_kwargs())
        except ValueError as error:
            refusals.append(str(error))
    if refusals:
        shown = _message(panel)
        if not any(refusal in shown for refusal in refusals):
            return [f"permutation: {refusals} refused, the message bar says {shown!r}"]
        return []
    demo, used = panel.demo, panel._params_used
    problems = []
    if demo is None or used is None:
        return ["permutation: valid sentences, no demo shown"]
    if (demo.tokens_a, demo.tokens_b) != tuple(tokenize(s) for s in sentences):
        problems.append(f"permutation: shows {demo.tokens_a} / {demo.tokens_b} for {sentences}")
    if demo.d_model != panel.d_model_spin.value():
        problems.append(f"permutation: demo d_model {demo.d_model}, the box says {panel.d_model_spin.value()}")
    if (used.scheme, used.scheme_kwargs()) != (p.scheme, p.scheme_kwargs()):
        problems.append(f"permutation: encoded with {used}, the parameters are {p}")
    if _message(panel):
        problems.append(f"permutation: valid input, yet the message {_message(panel)!r}")
    return problems


def _check_scorecard(window: Any, panel: Any) -> list[str]:
    p, data = window.state.params, panel.data
    if data is None or panel.is_stale():
        return [f"scorecard: measured {data and data.params}, the parameters are {p}"]
    return []


def _check_walkthrough(window: Any, panel: Any) -> list[str]:
    p = window.state.params
    if panel.index < 0:
        return []
    text = panel.measured_label.text()
    from posenc_gui.model.analyses.scorecard import scoreable_schemes

    # the Scorecard scores tables and rotations (RoPE's angles); a bias has no row of table criteria
    not_scored = None if p.scheme in scoreable_schemes() else p.info.lacks(frozenset({"table"}))
    if not_scored is not None:
        return [] if html.escape(not_scored) in text else [f"walkthrough: 'measured now' is {text[:120]!r} for "
                                                            f"{p.scheme}, which the scorecard does not measure"]
    if panel.score is None or panel.score.scheme != p.scheme or f"N = {p.seq_len:,}, d = {p.d_model:,}" not in text:
        return [f"walkthrough: 'measured now' is {text[:120]!r} for {panel.score and panel.score.scheme}, "
                f"the parameters are {p}"]
    return []


def _refused_now(window: Any, panel: Any) -> bool:
    """Whether the panel's error is its answer to the current parameters: asked again, it says it again.

    A panel that cannot show some parameters keeps its last good view under
    the message; a message left over from earlier parameters is not that.
    """
    message = _message(panel)
    if not message:
        return False
    panel.request_update()
    settle(window)
    return _message(panel) == message


def _check_data(window: Any, panel: Any) -> list[str]:
    """Panels whose ``data.params`` are what they show."""
    p, data = window.state.params, getattr(panel, "data", None)
    if (data is None or data.params != p) and _refused_now(window, panel):
        return []
    data = getattr(panel, "data", None)
    if data is None or data.params != p:
        return [f"{panel.panel_id}: shows {data and data.params}, the parameters are {p}"
                + (f" (message: {_message(panel)!r})" if _message(panel) else "")]
    if _message(panel):
        return [f"{panel.panel_id}: an error stays on screen with current data: {_message(panel)!r}"]
    return _check_hover(panel)


def _check_periodogram(window: Any, panel: Any) -> list[str]:
    """The table's periodogram, and the chosen dimension's spectrum, of the current parameters."""
    problems = _check_data(window, panel)
    dim = panel.dim_data
    if not problems and (dim is None or dim.params != window.state.params or dim.dim != panel.dim_box.value()):
        problems.append(f"periodogram: the line plot shows {dim and (dim.params, dim.dim)}, the parameters are "
                        f"{window.state.params} and dimension {panel.dim_box.value()}")
    return problems


def _check_decoder(window: Any, panel: Any) -> list[str]:
    """The decoder's trace is of the model and text the panel names (the scheme does not matter to it)."""
    run, wanted = panel.run, (panel.model_path(), panel.text_edit.text())
    if (run is None or (run.path, run.text) != wanted) and _refused_now(window, panel):
        return []
    if run is None or (run.path, run.text) != wanted:
        return [f"decoder: shows {run and (run.path, run.text)}, the panel names {wanted}"]
    return []


CHECKS: dict[str, Callable[[Any, Any], list[str]]] = {
    "decoder": _check_decoder,
    "parameters": _check_parameters,
    "heatmap": _check_heatmap,
    "waveforms": _check_waveforms,
    "similarity": _check_similarity,
    "permutation": _check_permutation,
    "scorecard": _check_scorecard,
    "walkthrough": _check_walkthrough,
    "periodogram": _check_periodogram,
    **{panel_id: _check_data for panel_id in
       ("uniqueness", "magnitude", "linear_relation", "relative", "addition", "spectrum", "frequencies", "precision",
        "context", "logits", "bias", "pca")},
}


def _check(panel_id: str, window: Any, panel: Any) -> list[str]:
    """The panel's check, or, for a panel that does not apply to the scheme, that it says so instead of a plot."""
    message = panel.unavailable_message()
    if message is not None:
        shown = panel.unavailable_label.isVisible() and panel.unavailable_label.text() == message
        return [] if shown else [f"{panel_id}: does not apply to {window.state.params.scheme} and does not say so"]
    return CHECKS[panel_id](window, panel)


def stale_views(window: Any) -> list[str]:
    """What the docks on screen show that differs from the current parameters (call after :func:`settle`)."""
    built = window.panels.built()
    problems = [f"{panel_id}: its dock is on screen without its panel (never built)"
                for panel_id, dock in window.docks.items()
                if panel_id not in built and dock.isVisible() and not dock.visibleRegion().isEmpty()]
    for panel_id, panel in built.items():
        if panel_id not in CHECKS:
            problems.append(f"{panel_id}: the monkey has no check for this panel")
        elif panel.on_screen():
            problems += _check(panel_id, window, panel)
    return problems


def check_every_view(window: Any) -> list[str]:
    """Settle, check the panels on screen, then raise every panel in turn and check it."""
    settle(window)
    problems = stale_views(window)
    for panel_id in window.panels:
        window.raise_panel(panel_id)
        settle(window)
        if panel_id not in window.panels.built():
            problems.append(f"{panel_id}: raised, its dock shows no panel (never built)")
            continue
        panel = window.panels[panel_id]
        if not panel.on_screen():
            problems.append(f"{panel_id}: not on screen after raise_panel")
        elif panel_id in CHECKS:
            problems += [f"{problem} (after raising it)" for problem in _check(panel_id, window, panel)]
    return problems


# ------------------------------------------------------------------ exports
@dataclass(frozen=True)
class Target:
    """Where the file dialog answers that an export should go, and whether that should work."""

    kind: str
    path: str | None  # None: the dialog was cancelled

    @property
    def good(self) -> bool:
        return self.kind in ("new", "overwrite", "no extension")


MAGIC = {"png": b"\x89PNG", "pdf": b"%PDF", "npy": b"\x93NUMPY"}


# -------------------------------------------------------------------- monkey
class Monkey:
    """Random user actions on ``window``, chosen by ``random.Random(seed)``.

    Parameters
    ----------
    window : MainWindow
        Shown; its dialogs are replaced while :meth:`run` runs.
    seed : int
    folder : Path
        Where exports go (sub-folders for the good and bad targets are made here).
    sizes : Sizes
        Bounds of the good sequence lengths and d_model values.
    """

    def __init__(self, window: Any, seed: int, folder: Path, sizes: Sizes = MODERATE) -> None:
        self.window = window
        self.seed = seed
        self.rng = random.Random(seed)
        self.sizes = sizes
        self.folder = Path(folder)
        self.out = self.folder / "out"
        self.out.mkdir(parents=True, exist_ok=True)
        self.as_folder = self.out / "a-folder"
        self.unwritable = self._unwritable_folder()
        self.log: list[str] = []
        self.counts: Counter = Counter()
        self.export_messages: list[str] = []
        self.refused_good: list[str] = []  # messages for good targets (the export refused, saying why)
        self._target_kinds = ["new", "new", "overwrite", "no extension", "cancel", "missing folder",
                              "folder as target", "unknown extension"] + ["read-only folder"] * bool(self.unwritable)
        self._exports = [(panel_id, fmt) for panel_id in window.docks for fmt in FORMATS]
        self._cycles: dict[int, list] = {}
        self._answer: Target | None = None
        self._asked = 0
        self.session_messages: list[str] = []
        self._session_answer: Path | None = None
        self._sessions: list[Path] = []
        self._handouts: list[Path] = []
        self._hostile_session = self.out / "hostile-session.json"
        self._hostile_session.write_text("[" * 100_000, encoding="utf-8")
        self._files = 0
        self._problems: list[str] = []
        self.actions: list[tuple[int, str, Callable[[], None]]] = [
            (14, "spin", self.act_spin),
            (5, "spin step", self.act_spin_step),
            (8, "slider", self.act_slider),
            (8, "combo", self.act_combo),
            (10, "line edit", self.act_line_edit),
            (6, "button", self.act_button),
            (3, "walkthrough", self.act_walkthrough),
            (3, "script update", self.act_script_update),
            (6, "dock", self.act_dock),
            (3, "tab", self.act_tab),
            (4, "menu", self.act_menu),
            (3, "undo keys", self.act_undo_keys),
            (8, "zoom", self._on_a_canvas(self.act_zoom)),
            (5, "pan", self._on_a_canvas(self.act_pan)),
            (7, "hover", self._on_a_canvas(self.act_hover)),
            (2, "click", self._on_a_canvas(self.act_click)),
            (7, "export", self.act_export),
            (2, "export window", self.act_export_window),
            (2, "export dialog", self.act_export_dialog),
            (1, "copy", self.act_copy),
            (2, "resize", self.act_resize),
            (4, "wait", self.act_wait),
            (3, "settle", self.act_settle),
        ]

    # ------------------------------------------------------------- running
    def run(self, count: int) -> list[str]:
        """Do ``count`` actions, then check every view; return the log.

        Raises
        ------
        MonkeyFailure
            On an exception, a Qt warning, a broken export contract or a
            stale view, with the seed and the last actions.
        """
        weights = [w for w, _, _ in self.actions]
        # every kind of action once (in a random order), then as the weights say
        first = self.rng.sample(self.actions, len(self.actions))
        with self._watching(), self._dialogs_replaced():
            for index in range(count):
                _, name, action = first[index] if index < len(first) else self.rng.choices(self.actions, weights)[0]
                self.counts[name] += 1
                self._note(f"{index}: {name}")
                try:
                    action()
                    QApplication.processEvents()
                except MonkeyFailure as failure:
                    raise self._failure(str(failure)) from None
                except Exception:
                    raise self._failure(traceback.format_exc()) from None
                self._raise_problems()
                self._close_popups()
            self._note("final check")
            try:
                problems = check_every_view(self.window)
            except MonkeyFailure as failure:
                raise self._failure(str(failure)) from None
            self._raise_problems()
            if problems:
                raise self._failure("views out of date:\n  " + "\n  ".join(problems))
        return list(self.log)

    def _note(self, text: str) -> None:
        self.log.append(text)

    def _describe(self, text: str) -> None:
        """Add detail to the current action's log line."""
        self.log[-1] += f" — {text}"

    def _failure(self, reason: str) -> MonkeyFailure:
        recent = "\n  ".join(self.log[-REPORT_ACTIONS:])
        return MonkeyFailure(f"monkey seed {self.seed}, after {len(self.log)} log lines: {reason}\n"
                             f"last actions:\n  {recent}")

    def _raise_problems(self) -> None:
        if self._problems:
            problems, self._problems = self._problems, []
            raise self._failure("\n".join(problems))

    @contextlib.contextmanager
    def _watching(self) -> Iterator[None]:
        """Record exceptions that reach ``sys.excepthook`` or pyqtgraph's printer, and Qt warnings.

        The previous hook and message handler (pytest-qt's, in the suite) still get them.
        """
        previous_hook = sys.excepthook

        def hook(kind, value, tb) -> None:
            self._problems.append("exception in a Qt callback:\n" + "".join(traceback.format_exception(kind, value, tb)))
            previous_hook(kind, value, tb)

        def messages(kind: QtMsgType, context: Any, text: str) -> None:
            if kind != QtMsgType.QtDebugMsg and kind != QtMsgType.QtInfoMsg and not QT_NOISE.search(text):
                self._problems.append(f"Qt {kind.name}: {text}")
            if previous_handler is not None:
                previous_handler(kind, context, text)


        printer = debug.printExc

        def print_exc(message: str = "", *args, **kwargs) -> None:
            self._problems.append(f"pyqtgraph caught an exception ({message}):\n{traceback.format_exc()}")
            printer(message, *args, **kwargs)

        sys.excepthook = hook
        previous_handler = qInstallMessageHandler(messages)
        debug.printExc = print_exc
        try:
            yield
        finally:
            debug.printExc = printer
            qInstallMessageHandler(previous_handler)
            sys.excepthook = previous_hook

    @contextlib.contextmanager
    def _dialogs_replaced(self) -> Iterator[None]:
        """The export hooks answer for the user; any other modal dialog is a failure (it would block)."""
        def ask_save_path(parent, title, proposed, fmt) -> str | None:
            self._asked += 1
            return None if self._answer is None else self._answer.path

        def show_error(parent, message: str) -> None:
            self.export_messages.append(message)

        def about(parent, title: str, text: str) -> None:
            self._describe(f"About box: {title}")

        def unexpected(name: str) -> Callable[..., Any]:
            def dialog(*args, **kwargs) -> Any:
                self._problems.append(f"a modal {name} was opened: {args[1:3]}")
                return QMessageBox.StandardButton.Cancel if name != "file dialog" else ("", "")
            return dialog

        def ask_session_path(parent, title, proposed, save) -> str | None:
            return None if self._session_answer is None else str(self._session_answer)

        def show_session_problem(parent, title: str, message: str) -> None:
            self.session_messages.append(message)

        def no_model(*args) -> None:  # File ▸ Open model… and the Parameters' Open…: the user cancels
            self._describe("cancelled a model dialog")

        def ask_panel_name(parent, titles: list[str]) -> str | None:  # View ▸ Go to panel…: a name, a part or none
            title = self.rng.choice(titles)
            answer = self.rng.choice([title, title[:3], title.lower(), None])
            self._describe(f"go to panel: {answer!r}")
            return answer

        replaced = [(model_open, name, no_model) for name in ("ask_model_file", "ask_model_folder")]
        replaced += [(panel_navigation, "ask_panel_name", ask_panel_name)]
        replaced += [(export_ui, "ask_save_path", ask_save_path), (export_ui, "show_error", show_error),
                     (handout_ui, "show_error", show_error),
                    (QMessageBox, "about", about), (sessions, "ask_session_path", ask_session_path),
                    (sessions, "show_session_problem", show_session_problem)]
        replaced += [(QMessageBox, name, unexpected(f"message box ({name})"))
                     for name in ("critical", "warning", "information", "question")]
        replaced += [(QFileDialog, name, unexpected("file dialog"))
                     for name in ("getSaveFileName", "getOpenFileName", "getExistingDirectory")]
        saved = [(owner, name, owner.__dict__.get(name, getattr(owner, name))) for owner, name, _ in replaced]
        for owner, name, function in replaced:
            setattr(owner, name, staticmethod(function) if isinstance(owner, type) else function)
        try:
            yield
        finally:
            for owner, name, original in saved:
                setattr(owner, name, original)

    def _close_popups(self) -> None:
        while (popup := QApplication.activePopupWidget()) is not None:
            self._describe(f"closed the popup {type(popup).__name__}")
            popup.close()
            QApplication.processEvents()
        # A click that opened a popup has its release swallowed when the popup
        # closes first; Qt would then hold the button down for every later event.
        for button in (Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton, Qt.MouseButton.MiddleButton):
            if QApplication.mouseButtons() & button:
                QTest.mouseRelease(self.window, button)

    # ------------------------------------------------------------- targets
    def _unwritable_folder(self) -> Path | None:
        """A folder this process cannot create files in (chmod does not stop root: then /sys or /proc)."""
        folder = self.folder / "read-only"
        folder.mkdir(exist_ok=True)
        folder.chmod(0o555)
        for candidate in (folder, Path("/sys"), Path("/proc/self")):
            try:
                probe = tempfile.NamedTemporaryFile(dir=candidate)
            except OSError:
                return candidate
            probe.close()
        return None

    def _target(self, fmt: str) -> Target:
        self._files += 1
        name = f"export{self._files}"
        kind = self._next(self._target_kinds)
        paths = {
            "new": self.out / f"{name}.{fmt}",
            "overwrite": self.out / f"existing.{fmt}",
            "no extension": self.out / name,
            "missing folder": self.folder / "missing" / f"{name}.{fmt}",
            "folder as target": self.as_folder.with_suffix(f".{fmt}"),
            "unknown extension": self.out / f"{name}.bmp",
            "read-only folder": (self.unwritable or self.out) / f"{name}.{fmt}",
        }
        if kind == "overwrite":
            paths[kind].write_bytes(b"old")
        if kind == "folder as target":
            paths[kind].mkdir(exist_ok=True)
        return Target(kind, None if kind == "cancel" else str(paths[kind]))

    def _export(self, fmt: str, target: Target, export: Callable[[], Any], asks: bool = True) -> None:
        """Run ``export`` with the file dialog answering ``target``; check the outcome."""
        self._describe(f"{target.kind} {target.path}")
        self._answer = target
        messages, asked = len(self.export_messages), self._asked
        export()
        self._answer = None
        new = self.export_messages[messages:]
        if asks and self._asked == asked:
            self._problems.append("the export did not ask for a file name")
        written = Path(target.path + (f".{fmt}" if target.kind == "no extension" else "")) if target.path else None
        if target.kind == "cancel":
            if new:
                self._problems.append(f"a cancelled export said {new}")
            return
        if target.good:
            if new:  # refused, saying why (a matrix too large for a data file, …)
                self.refused_good.append(new[-1])
                self._describe(f"refused: {new[-1]}")
            elif not written.is_file() or written.stat().st_size == 0 or written.read_bytes() == b"old":
                self._problems.append(f"a good export to {written} wrote nothing and said nothing")
            elif not written.read_bytes().startswith(MAGIC.get(fmt, b"")):
                self._problems.append(f"{written} does not start like a .{fmt} file")
            return
        if not new:
            self._problems.append(f"an export to a bad target ({target.kind}: {target.path}) gave no message")
        elif written is not None and written.is_file():
            self._problems.append(f"an export to a bad target ({target.kind}) wrote {written}")
        self._describe(f"said: {new[-1][:100]}")

    # ------------------------------------------------------------- finding
    def _panels_on_screen(self) -> list[Any]:
        built = self.window.panels.built()
        return [built[pid] for pid in self.window.panels if pid in built and built[pid].on_screen()]

    def _widgets(self, kind: type) -> list[QWidget]:
        """Enabled, visible widgets of ``kind`` in the panels on screen, in a stable order."""
        found = []
        for panel in self._panels_on_screen():
            for widget in panel.findChildren(kind):
                if widget.isVisible() and widget.isEnabled() and not widget.visibleRegion().isEmpty():
                    found.append(widget)
        return found

    def _next(self, choices: list) -> Any:
        """The next of ``choices`` in a shuffled cycle: each comes once before any comes again."""
        cycle = self._cycles.setdefault(id(choices), [])
        if not cycle:
            cycle.extend(self.rng.sample(choices, len(choices)))
        return cycle.pop()

    def _pick(self, items: list) -> Any | None:
        return self.rng.choice(items) if items else None

    def _name(self, widget: QWidget) -> str:
        panel = widget
        while panel is not None and not panel.objectName().startswith("panel-"):
            panel = panel.parentWidget()
        owner = panel.objectName()[len("panel-"):] if panel is not None else "?"
        label = widget.accessibleName() or getattr(widget, "text", lambda: "")() or widget.toolTip()[:30]
        return f"{owner}/{type(widget).__name__}({label!r})"

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

    # ------------------------------------------------------------- actions
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

    def act_button(self) -> None:
        buttons = [b for b in self._widgets(QAbstractButton)
                   if not (isinstance(b, QToolButton) and b.menu() is not None)]  # its menu would block
        button = self._pick(buttons)
        if button is None:
            return
        self._describe(self._name(button))
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    def act_walkthrough(self) -> None:
        panel = self.window.panels["walkthrough"]
        if not panel.on_screen():
            self.window.raise_panel("walkthrough")
            QApplication.processEvents()
        button = self.rng.choice([panel.next_button, panel.next_button, panel.back_button, panel.reapply_button])
        self._describe(f"{button.text()} at step {panel.index + 1}")
        if button.isEnabled():
            QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    def act_script_update(self) -> None:
        """A script's ``state.update`` with a value the model refuses: a message, and nothing changes."""
        state = self.window.state
        field, value = self.rng.choice([
            ("seq_len", 10**9), ("seq_len", 0), ("seq_len", -1), ("seq_len", 12.5), ("seq_len", "12"),
            ("seq_len", True), ("seq_len", None), ("d_model", 1), ("d_model", 10**6), ("d_model", float("nan")),
            ("base", float("nan")), ("base", float("inf")), ("base", 1.0), ("base", -2.0), ("base", "abc"),
            ("base", 1e300), ("scheme", "no-such-scheme"), ("scheme", None), ("layout", "diagonal"),
        ])
        self._describe(f"state.update({field}={value!r})")
        before = state.params
        message = state.update(**{field: value})
        if message is None or state.params != before:
            self._problems.append(f"state.update({field}={value!r}) was accepted: {state.params}")
        elif field not in message:
            self._problems.append(f"the refusal of {field}={value!r} does not name {field}: {message!r}")

    def act_undo_keys(self) -> None:
        """Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y where the focus is: a text field undoes its own text, elsewhere the window a step."""
        control, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
        key, modifiers, name, step = self.rng.choice([(Qt.Key.Key_Z, control, "Ctrl+Z", -1),
                                                      (Qt.Key.Key_Z, control | shift, "Ctrl+Shift+Z", 1),
                                                      (Qt.Key.Key_Y, control, "Ctrl+Y", 1)])
        self.window.activateWindow()
        active = QTest.qWaitForWindowActive(self.window)  # the window's shortcuts work in the active window only
        target = QApplication.focusWidget() or self.window
        history = self.window.state.history
        index, possible = history.index(), history.canUndo() if step < 0 else history.canRedo()
        self._describe(f"{name} on {type(target).__name__} (step {index} of {history.count()}"
                       f"{'' if active else ', window not active'})")
        QTest.keyClick(target, key, modifiers)
        if isinstance(target, (QLineEdit, QAbstractSpinBox)) or not possible or not active:
            return
        command = history.command(index - 1 if step < 0 else index)
        expected = command.before.params if step < 0 else command.after.params
        if history.index() != index + step or self.window.state.params != expected:
            self._problems.append(f"{name} went to step {history.index()} with {self.window.state.params}, "
                                  f"not to step {index + step} with {expected}")

    def act_dock(self) -> None:
        """The View menu's toggles (any dock), or what the mouse does to a dock on screen.

        Float, move, re-dock and tabify take only a dock the user can grab:
        one on screen (not behind another's tab, not closed) or floating.
        """
        window = self.window
        what = self.rng.choice(["toggle", "toggle", "raise", "float", "float", "move", "area", "tabify",
                                "reset layout"])
        if what in ("toggle", "raise", "reset layout"):
            panel_id = self.rng.choice(list(window.docks))
        else:
            grabbable = [pid for pid, dock in window.docks.items()
                         if dock.isVisible() and (dock.isFloating() or not dock.visibleRegion().isEmpty())]
            if not grabbable:
                return
            panel_id = self.rng.choice(grabbable)
        dock = window.docks[panel_id]
        self._describe(f"{what} {panel_id}")
        if what == "toggle":
            dock.toggleViewAction().trigger()
        elif what == "raise":
            window.raise_panel(panel_id)
        elif what == "float":  # its title bar's float button, or a double click on it
            dock.setFloating(not dock.isFloating())
        elif what == "move" and dock.isFloating():
            dock.setGeometry(self.rng.randint(0, 600), self.rng.randint(0, 400),
                             self.rng.randint(200, 900), self.rng.randint(150, 700))
        elif what == "area":  # dragged to an edge of the window
            area = self.rng.choice([Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                                    Qt.DockWidgetArea.TopDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea])
            window.addDockWidget(area, dock)
        elif what == "tabify":  # dropped onto another docked dock
            others = [pid for pid in window.docks if pid != panel_id and not window.docks[pid].isFloating()]
            window.tabifyDockWidget(window.docks[self.rng.choice(others)], dock)
        elif what == "reset layout":
            window.reset_layout_action.trigger()

    def act_tab(self) -> None:
        """Click a tab of a group of tabbed docks."""
        bars = [bar for bar in self.window.findChildren(QTabBar) if bar.isVisible() and bar.count()]
        bar = self._pick(bars)
        if bar is None:
            return
        index = self.rng.randrange(bar.count())
        self._describe(f"tab {bar.tabText(index)!r}")
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())

    def _menu_actions(self) -> list:
        found = []
        for top in self.window.menuBar().actions():
            menu = top.menu()
            for action in menu.actions() if menu is not None else []:
                if not action.isSeparator() and action.menu() is None and action.text().replace("&", "") != "Quit":
                    found.append(action)
        return found

    def act_menu(self) -> None:
        action = self.rng.choice(self._menu_actions())
        text = action.text().replace("&", "")
        if text.startswith("Export window"):
            return self.act_export_window()
        if text.startswith("Export handout"):
            return self.act_handout(action)
        if text.startswith("Export"):
            return self.act_export_dialog(action)
        if text.startswith(("Save session", "Open session")):
            return self.act_session(action, saving=text.startswith("Save"))
        self._describe(text)
        action.trigger()
        self._close_dialogs()

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

    def act_export(self) -> None:
        """A panel's Export button or its dock's right-click menu: one format, the dialog answering."""
        window = self.window
        panel_id, fmt = self._next(self._exports)
        sources = [window.docks[panel_id].actions()]
        if panel_id in window.export_buttons:
            sources.append(window.export_buttons[panel_id].menu().actions())
        actions = self.rng.choice(sources)
        action = next(a for a in actions if a.objectName() == f"export-{panel_id}-{fmt}")
        self._describe(f"{panel_id} as {fmt}")
        self._export(fmt, self._target(fmt), action.trigger)

    def act_export_window(self) -> None:
        """File ▸ Export window as PNG…"""
        action = next(a for a in self._menu_actions() if a.text().replace("&", "").startswith("Export window"))
        fmt = "png"
        target = self._target(fmt)
        if target.kind == "unknown extension":
            target = Target(target.kind, str(Path(target.path).with_suffix(".svg")))  # a window is PNG only
        self._describe("window as PNG")
        self._export(fmt, target, action.trigger)

    def act_export_dialog(self, action: Any = None) -> None:
        """File ▸ Export…: choose the panel, format, size and file, then Export (or Cancel)."""
        if action is None:
            action = next(a for a in self._menu_actions() if a.text().replace("&", "") == "Export…")
        action.trigger()
        QApplication.processEvents()
        dialogs = [d for d in self.window.findChildren(ExportDialog) if d.isVisible()]
        if len(dialogs) != 1:
            self._problems.append(f"File ▸ Export… showed {len(dialogs)} dialogs")
            return
        dialog = dialogs[0]
        try:
            dialog.panel_box.setCurrentIndex(self.rng.randrange(dialog.panel_box.count()))
            dialog.format_box.setCurrentIndex(self.rng.randrange(dialog.format_box.count()))
            if dialog.fmt == "png" and self.rng.random() < 0.5:
                spin = self.rng.choice([dialog.scale_spin, dialog.width_spin])
                text = self.rng.choice(["1", "2.5", "0.5", "abc", "", "99999", "16", "640"])
                self._type(spin, text)
            fmt, panel_id = dialog.fmt, dialog.panel_id
            target = self._target(fmt)
            self._describe(f"{panel_id} as {fmt}")
            if target.kind == "cancel":
                cancel = next(b for b in dialog.findChildren(QAbstractButton) if b.text().replace("&", "") == "Cancel")
                QTest.mouseClick(cancel, Qt.MouseButton.LeftButton)
                if dialog.isVisible():
                    self._problems.append("Cancel left the export dialog open")
                return
            if self.rng.random() < 0.5:  # Browse… (the file dialog) or typing the path
                browse = next(b for b in dialog.findChildren(QAbstractButton) if b.text() == "Browse…")
                self._answer = target
                QTest.mouseClick(browse, Qt.MouseButton.LeftButton)
                self._answer = None
            else:
                dialog.path_edit.setFocus()
                dialog.path_edit.selectAll()
                QApplication.clipboard().setText(target.path)
                QTest.keyClick(dialog.path_edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
            if not dialog.export_button.isEnabled():  # a size past the memory budget: said where it is chosen
                if not dialog.size_label.text():
                    self._problems.append("the export dialog greys Export and says no reason")
                self._describe(f"Export greyed: {dialog.size_label.text()[:100]}")
                return
            self._export(dialog.fmt, target, lambda: QTest.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton),
                         asks=False)
        finally:
            if dialog.isVisible():
                dialog.reject()
            dialog.deleteLater()

    def act_handout(self, action: Any) -> None:
        """File ▸ Export handout…: cancel, or write two ticked panels as a PDF or a folder (checked)."""
        action.trigger()
        QApplication.processEvents()
        dialogs = [d for d in self.window.findChildren(handout_ui.HandoutDialog) if d.isVisible()]
        if len(dialogs) != 1:
            self._problems.append(f"File ▸ Export handout… showed {len(dialogs)} dialogs")
            return
        dialog = dialogs[0]
        try:
            if self.rng.random() < 0.3:
                self._describe("handout — cancel")
                dialog.reject()
                return
            for row in range(dialog.panel_list.count()):  # two panels: a handout of all takes too long here
                item = dialog.panel_list.item(row)
                item.setCheckState(Qt.CheckState.Checked if row in (0, 4) else Qt.CheckState.Unchecked)
            form = self.rng.choice(list(handout_ui.FORMS))
            dialog.form_box.setCurrentIndex(dialog.form_box.findData(form))
            count = len(self._handouts)
            target = self.out / (f"handout{count}.pdf" if form == "pdf" else f"handout{count}/")
            dialog.path_edit.setText(str(target))
            messages = len(self.export_messages)
            dialog._save()
            new = self.export_messages[messages:]
            self._describe(f"handout — {form} {target.name}" + (f" — said: {new[-1][:100]}" if new else ""))
            written = target if form == "pdf" else target / "index.html"
            if not new and not (written.is_file() and written.stat().st_size > 0):
                self._problems.append(f"a handout to {target} wrote nothing and said nothing")
            if form == "pdf" and written.is_file() and not written.read_bytes().startswith(b"%PDF"):
                self._problems.append(f"{written} is no PDF")
            self._handouts.append(target)
        finally:
            if dialog.isVisible():
                dialog.reject()
            dialog.deleteLater()

    def act_session(self, action: Any, saving: bool) -> None:
        """Save a session file, or open a saved one, a hostile one, a folder or a missing one (nothing may change)."""
        if saving:
            target = self.out / f"session{len(self._sessions)}.json"
        else:
            target = self.rng.choice([*self._sessions, self._hostile_session, self.as_folder, self.out / "none.json"])
        before = self.window.current_session()
        messages = len(self.session_messages)
        self._session_answer = target
        try:
            action.trigger()
        finally:
            self._session_answer = None
        refused = self.session_messages[messages:]
        self._describe(f"{'save' if saving else 'open'} {target.name}" + (f" — said: {refused[-1]}" if refused else ""))
        if saving and not refused:
            self._sessions.append(target)
        if refused and not saving and self.window.current_session() != before:
            self._problems.append(f"opening {target.name} was refused but changed the window: {refused[-1]}")
        if not refused and target not in self._sessions:
            self._problems.append(f"{target.name} was opened without a word")

    def act_copy(self) -> None:
        panel_id = self.rng.choice([None, *self.window.docks])
        self._describe(f"copy {panel_id or 'the current panel'}")
        messages = len(self.export_messages)
        copy_panel_figure(self.window, panel_id)
        if len(self.export_messages) > messages:
            self._describe(f"refused: {self.export_messages[-1]}")

    def act_resize(self) -> None:
        width, height = self.rng.randint(700, 1900), self.rng.randint(500, 1200)
        self._describe(f"{width} × {height}")
        self.window.resize(width, height)

    def act_wait(self) -> None:
        ms = self.rng.choice([0, 5, 20, 50, 150, 400])
        self._describe(f"{ms} ms")
        QTest.qWait(ms)

    def act_settle(self) -> None:
        """Wait for every result; then the panels on screen show the current parameters."""
        settle(self.window)
        problems = stale_views(self.window)
        self._describe(f"{len(self._panels_on_screen())} panels on screen checked")
        if problems:
            raise MonkeyFailure("views out of date:\n  " + "\n  ".join(problems))

    def _close_dialogs(self) -> None:
        for dialog in self.window.findChildren(QDialog):
            if dialog.isVisible():
                dialog.reject()


def run(window: Any, actions: int, seed: int, folder: Path, sizes: Sizes = MODERATE) -> Monkey:
    """Do ``actions`` random actions on ``window`` and check every view; return the monkey (its log, counts).

    Raises
    ------
    MonkeyFailure
        With the seed and the last actions.
    """
    monkey = Monkey(window, seed, folder, sizes)
    monkey.run(actions)
    return monkey


# -------------------------------------------------------------------- script
def _print_message(kind: QtMsgType, context: Any, text: str) -> None:
    """Qt's messages on stderr, but for the offscreen platform's :data:`QT_NOISE`."""
    if not QT_NOISE.search(text):
        print(f"Qt {kind.name}: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """``python tests/monkey.py --actions 2000 --seed 1 [--seed 2 …] [--moderate]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=2000, help="actions per seed (default 2000)")
    parser.add_argument("--seed", type=int, action="append", help="a seed; repeat for several runs (default 1)")
    parser.add_argument("--moderate", action="store_true",
                        help=f"keep good sizes within {MODERATE.max_seq_len} positions × d_model "
                             f"{MODERATE.max_d_model}, as the test in the suite does")
    parser.add_argument("--log", action="store_true", help="print every action")
    options = parser.parse_args(argv)
    warnings.simplefilter("error")  # as pyproject's filterwarnings for the suite
    qInstallMessageHandler(_print_message)
    prepare_qt_environment()
    app = QApplication.instance() or QApplication([])
    sizes = MODERATE if options.moderate else FULL
    failed = 0
    for seed in options.seed or [1]:
        with tempfile.TemporaryDirectory(prefix="posenc-monkey-") as folder:
            os.environ["POSENC_GUI_SETTINGS"] = os.path.join(folder, "settings.ini")  # never the user's

            window = MainWindow(restore=False)
            window.show()
            QTest.qWaitForWindowExposed(window)
            started = time.monotonic()
            monkey = Monkey(window, seed, Path(folder), sizes)
            try:
                monkey.run(options.actions)
            except MonkeyFailure as failure:
                failed += 1
                print(failure, file=sys.stderr)
            else:
                print(f"seed {seed}: {options.actions} actions, no problem "
                      f"({time.monotonic() - started:.0f} s; {len(monkey.export_messages)} export messages, "
                      f"{len(monkey.refused_good)} of them for good paths)")
            finally:
                os.chmod(Path(folder) / "read-only", 0o755)
                if options.log:
                    print("\n".join(monkey.log))
                print("  " + ", ".join(f"{name} {count}" for name, count in sorted(monkey.counts.items())))
                for message in sorted(set(monkey.refused_good)):
                    print(f"  good path refused: {message}")
                window.close()
                app.processEvents()
                window.deleteLater()
                app.processEvents()
    app.clipboard().clear()  # see tests/conftest.py: Qt's clipboard outlives the interpreter
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

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

The parts live beside it: the view checks and the settling wait in monkey_checks.py, the
inputs, field and canvas actions in monkey_actions.py, the exports, handouts and sessions in
monkey_exports.py.

Run it outside pytest for a long run (offscreen, full parameter ranges)::

    python tests/monkey.py --actions 2000 --seed 1
"""

from __future__ import annotations

import argparse
import contextlib
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

from PySide6.QtCore import Qt, qInstallMessageHandler, QtMsgType
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QDialog,
    QFileDialog,
    QLineEdit,
    QMessageBox,
    QTabBar,
    QToolButton,
    QWidget,
)
from pyqtgraph import debug

from posenc_gui import prepare_qt_environment
from posenc_gui.window import navigation as panel_navigation
from posenc_gui.export import FORMATS
from posenc_gui.mainwindow import MainWindow
from posenc_gui.model import limits
from posenc_gui.views import export_ui, model_open
from posenc_gui.window import sessions
from posenc_gui.views import handout_ui
from monkey_actions import CanvasActions, FieldActions
from monkey_checks import MonkeyFailure, check_every_view, settle, stale_views
from monkey_exports import ExportActions, Target

#: What the offscreen platform says it cannot do: pyproject.toml's ``qt_log_ignore``, and the keyboard
#: grab of a popup menu (tests/test_monkey.py ignores it too).
QT_NOISE = re.compile(r"This plugin does not support (propagateSizeHints|raise|grabbing the keyboard)")
#: How many of the last actions a failure report lists.
REPORT_ACTIONS = 20


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


# -------------------------------------------------------------------- monkey
class Monkey(FieldActions, CanvasActions, ExportActions):
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


    # ------------------------------------------------------------- actions


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

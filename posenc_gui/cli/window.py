"""The window's command line: ``posenc-gui [FILE.json | --session FILE] [--preset NAME | --model PATH]
[parameters] [panel options]`` launches the window with a session file's setup, a preset's or a model's
table or RoPE set-up, the flags on top, each panel option set on its panel.

The whole command line is checked (:func:`prepare_launch`) before any window opens: a bad one is one line
on stderr and exit status 2, nothing shown.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from .. import __version__, prepare_qt_environment, resume_garbage_collection, tune_memory_allocator
from ..display import ADVICE, EXIT_NO_DISPLAY, display_problem, qt_start_guard
from ..model import EncodingParams
from .parameters import (EXIT_USAGE, OneLineParser, UsageError, add_panel_flags, add_parameter_flags,
                         apply_panel_flags, chosen_options, launch_overrides, needs_panel_flags)

if TYPE_CHECKING:
    from ..mainwindow import MainWindow
    from ..session import Session
    from ..views.registry import PanelOption


#: The window's usage line (argparse's own would list every flag).
USAGE = ("posenc-gui [FILE.json | --session FILE] [--preset NAME | --model PATH] [--scheme NAME] [--seq-len N] "
         "[--d-model N] [scheme options] [panel options] [--theme light|dark|print] [--no-restore]\n"
         "       posenc-gui export --help")


def build_parser(classes: Sequence[type] | None = None) -> argparse.ArgumentParser:
    """The window's command line: its own flags, the encoding parameters' and every panel's options.

    The parameter and panel flags are made by the same functions as ``export``'s
    (:func:`~posenc_gui.cli.parameters.add_parameter_flags`, :func:`~posenc_gui.cli.parameters.add_panel_flags`),
    from the panels in ``classes`` (default: every registered panel). A bad command line raises
    :class:`~posenc_gui.cli.parameters.UsageError` (one line); ``--help`` and ``--version`` exit.
    """
    from ..views.plotkit.theme import THEME_NAMES
    from ..views.registry import panel_classes

    parser = OneLineParser(
        prog="posenc-gui",
        usage=USAGE,
        description="A desktop lab for transformer positional encodings. "
        "Run without arguments to open the window with the last session's parameters; the flags given "
        "override them (the defaults below are each parameter's own). A panel option sets that panel and "
        "brings its dock forward. 'posenc-gui export --help' writes figures and data without a window.",
        epilog="Exit status 2, with one line naming the flag and its range, for a bad command line or session "
        "file; nothing is shown then.",
    )
    parser.add_argument("--version", action="version", version=f"posenc-gui {__version__}")
    parser.add_argument(
        "--no-restore", action="store_true", help="start with the default layout and parameters"
    )
    parser.add_argument(
        "--quit-after-first-paint",
        action="store_true",
        help=argparse.SUPPRESS,  # smoke tests and the start-up benchmark
    )
    parser.add_argument("session_file", nargs="?", metavar="FILE.json",
                        help="open this session file (File ▸ Save session writes one); the flags given override it")
    parser.add_argument("--session", metavar="FILE", help="the same as giving FILE.json")
    parser.add_argument("--theme", choices=THEME_NAMES, metavar="|".join(THEME_NAMES),
                        help="the window's colours: light, dark, or print (white, black text); "
                        "View ▸ Theme changes them, and the last one is remembered")
    add_parameter_flags(parser)
    add_panel_flags(parser, panel_classes() if classes is None else classes)
    return parser


@dataclass(frozen=True)
class Launch:
    """A checked command line of the window: what it opens with."""

    args: argparse.Namespace
    #: The session file's checked content (None when none is given).
    session: Session | None
    #: The parameters given, flat, on those of ``--preset`` or ``--model`` (``MainWindow(overrides=…)``).
    overrides: dict[str, Any]
    #: What ``--model`` is shown as, for the status bar (None without it).
    notice: str | None
    #: The panel options given, ``{panel_id: [(option, value), …]}``, for every panel that declares them.
    panel_options: dict[str, list[tuple[PanelOption, Any]]]


def _read_session_arg(args: argparse.Namespace) -> Session | None:
    """The session file named on the command line, checked (None when none is); SessionError naming the file."""
    from ..session import SessionError, read_session

    path = args.session or args.session_file
    if path is None:
        return None
    try:
        return read_session(path)
    except SessionError as error:
        raise SessionError(f"{path}: {error}") from None


def prepare_launch(argv: Sequence[str]) -> Launch:
    """Parse and check the window's command line without opening a window.

    Raises
    ------
    UsageError
        One line naming the flag (and its range) or the file: an unknown flag, a bad value, a parameter the
        scheme does not take, a session file or model that does not open.
    SystemExit
        For ``--help`` and ``--version``, once printed.
    """
    from ..session import SessionError
    from ..views.registry import panel_classes

    argv = list(argv)
    parser = build_parser(classes=())
    if needs_panel_flags(parser, argv):
        classes = panel_classes()
        parser = build_parser(classes)
    else:  # no panel's module is imported to make flags that are not given
        classes = []
    args = parser.parse_args(argv)
    if args.session and args.session_file:
        raise UsageError("give the session file once: FILE.json or --session FILE")
    try:
        session = _read_session_arg(args)
    except SessionError as error:
        raise UsageError(" ".join(str(error).split())) from None
    try:
        overrides, notice = launch_overrides(args)
        if session is None:
            EncodingParams().replaced(fit_sizes=True, **overrides)
        else:
            session.params.replaced(session.remembered, fit_sizes=True, **overrides)
    except ValueError as error:
        raise UsageError(" ".join(str(error).split())) from None
    return Launch(args, session, overrides, notice, chosen_options(args, classes, [cls.panel_id for cls in classes]))


def main(argv: Sequence[str]) -> int:
    """Check the window's command line ``argv`` (without the program's name), then open the window and run
    until it closes; the exit status (:data:`EXIT_USAGE`, one line on stderr, for a bad command line)."""
    prepare_qt_environment()  # before the panels' modules load Qt to make their flags
    try:  # before any window opens: one line, nothing shown
        launch = prepare_launch(argv)
    except UsageError as error:
        print(f"posenc-gui: error: {error}", file=sys.stderr)
        resume_garbage_collection()  # no window: nothing takes collection over
        return EXIT_USAGE
    problem = display_problem()
    if problem is not None:
        print(f"posenc-gui: {problem}. {ADVICE}", file=sys.stderr)
        resume_garbage_collection()
        return EXIT_NO_DISPLAY
    tune_memory_allocator()  # the workers' large arrays: no page faults, no GIL held for the kernel
    from PySide6.QtCore import QEvent, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        with qt_start_guard():  # Qt aborts when it cannot open a display: one line and exit 2 instead
            app = QApplication(sys.argv[:1])
    app.setApplicationName("posenc-gui")
    app.setOrganizationName("posenc_gui")
    app.setApplicationVersion(__version__)
    try:  # a panel option the panel refuses (--dims 40 at d_model 32): one line, the window is never shown
        window = build_window(launch)
    except UsageError as error:
        print(f"posenc-gui: error: {error}", file=sys.stderr)
        status = EXIT_USAGE
    else:
        window.show()
        # The ~70,000 objects of start-up live as long as the window: moved out
        # of the collector's view, a full collection no longer visits them (it
        # would be a visible hitch while dragging a slider).
        QTimer.singleShot(0, gc.freeze)
        if launch.args.quit_after_first_paint:
            QTimer.singleShot(0, functools.partial(_report_first_paint, window, app))
        status = app.exec()
        # Tear Qt down in order while Python is still whole: the window and its
        # scenes first, then the application. Left to interpreter shutdown, the
        # objects die in arbitrary order and Qt intermittently segfaults at exit.
        from ..views.plotkit import close_canvases

        close_canvases(window)
        window.deleteLater()
        del window
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    app.shutdown()
    return status


def build_window(launch: Launch) -> MainWindow:
    """The window of a checked command line (not shown yet): its parameters, session and theme, and each
    panel option given set on its panel (after a session's: the flags win), that panel's dock brought forward.

    Raises
    ------
    UsageError
        Naming the flag, for a value a panel refuses; the window is then discarded unshown (its worker
        stopped, its settings not saved).
    """
    from ..mainwindow import MainWindow
    from ..views.plotkit import close_canvases

    window = MainWindow(overrides=launch.overrides, restore=not launch.args.no_restore, session=launch.session,
                        notice=launch.notice, theme_name=launch.args.theme)
    if launch.args.model is not None:  # the Decoder panel traces it (a decoder's RoPE set-up is what the window shows)
        window.state.note_model_opened(os.path.abspath(launch.args.model))
    try:
        for panel_id, given in launch.panel_options.items():
            if given:
                apply_panel_flags(window.panels[panel_id], given)
                window.raise_panel(panel_id)
    except UsageError:
        window.compute.shutdown()  # not closed: closing would save the refused command line's parameters
        close_canvases(window)
        window.deleteLater()
        raise
    return window


def _report_first_paint(window, app) -> None:
    """Wait until every panel drew its first data and the window is exposed (Qt paints it then; before, a
    repaint paints nothing), paint, print a line, quit."""
    from PySide6.QtCore import QEventLoop

    window.compute.wait_idle()
    while not window.windowHandle().isExposed():
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    window.repaint()
    print(f"first paint: {len(window.panels)} panels, {window.state.params.slug()}", flush=True)
    window.close()  # saves the settings, as a user's close would
    app.quit()

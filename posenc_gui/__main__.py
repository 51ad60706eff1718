"""Command line: ``posenc-gui [FILE.json | --session FILE] [--model PATH] [parameters]`` launches the
window (with a session file's setup, a model's table or RoPE set-up, the flags on top);
``posenc-gui export PANEL -o FILE [parameters]`` writes a figure or its data without showing a window,
``posenc-gui export session -o FILE [parameters]`` a session file.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from typing import Callable, Sequence

from . import __version__, prepare_qt_environment, tune_memory_allocator
from .display import ADVICE, EXIT_NO_DISPLAY, display_problem, qt_start_guard
from .model import OPTION_SPECS, SCHEMES, EncodingParams, ParamSpec
from .model.params import SIZE_SPECS


def _flag_type(spec: ParamSpec) -> Callable[[str], object]:
    """An argparse type that reports the spec's own message (parameter name and range)."""

    def parse(text: str) -> object:
        try:
            return spec.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = spec.name
    return parse


def _flag_help(spec: ParamSpec) -> str:
    users = [key for key, info in SCHEMES.items() if info.spec(spec.name) is not None]
    where = "" if spec in SIZE_SPECS else f" [{', '.join(users)}]"
    default = spec.default if spec.kind == "choice" else (spec.text(spec.default) or "none")
    return f"{spec.help} Values: {spec.range_text()}; default {default}.{where}"


def add_parameter_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The encoding flags shared by the launch and ``export`` commands, by destination (``"seq_len"``).

    One flag per size and per scheme parameter (:data:`~posenc_gui.model.OPTION_SPECS`), from its spec.
    """
    group = parser.add_argument_group("encoding parameters")
    group.add_argument("--model", metavar="PATH",
                       help="show a model from disk: a Hugging Face folder (config.json and model.safetensors or "
                       "its shards), a .safetensors, .gguf, .npy or .npz file. Its learned position table becomes "
                       "the learned_file scheme (N its length, d_model its width), its RoPE set-up the rope "
                       "scheme (d_model the head dimension); --scheme learned_file or rope chooses when it has "
                       "both, --tensor NAME shows another 2-D tensor as the table; other flags apply on top")
    actions = [group.add_argument("--scheme", choices=list(SCHEMES), help="encoding scheme (default: sinusoidal)")]
    for spec in (*SIZE_SPECS, *OPTION_SPECS.values()):
        choices = [value for value, _ in spec.choices] or None
        actions.append(group.add_argument(spec.flag, dest=spec.name, type=_flag_type(spec), choices=choices,
                                          metavar=spec.name.upper(), help=_flag_help(spec)))
    return {action.dest: action for action in actions}


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The encoding parameters given on the command line, as name → value."""
    names = ("scheme", *(spec.name for spec in SIZE_SPECS), *OPTION_SPECS)
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def model_values(path: str, scheme: str | None = None, tensor: str | None = None) -> tuple[dict, str]:
    """The parameters that show the model at ``path`` (as flat name → value) and what they show, in words.

    ``scheme`` (``learned_file`` or ``rope``) chooses between a model's table
    and its RoPE set-up; ``tensor`` makes that tensor the table.

    Raises
    ------
    ValueError
        One line: the file does not open (naming it and why), or has nothing to show.
    """
    from .model.model_setup import model_setups, one_line

    try:
        opened = model_setups(path)
        setup = opened.setup(scheme if scheme in ("learned_file", "rope") else None, tensor or None)
    except ValueError as error:  # ModelFileError is one
        raise ValueError(f"--model {path}: {one_line(error)}") from None
    return setup.params.as_dict(), opened.summary(setup)


def launch_overrides(args: argparse.Namespace) -> tuple[dict, str | None]:
    """The command line's parameters, on those of ``--model`` when it is given, and what the model is shown as.

    Raises
    ------
    ValueError
        One line, for a model that does not open or has nothing to show.
    """
    given = overrides_from_args(args)
    if getattr(args, "model", None) is None:
        return given, None
    values, summary = model_values(args.model, given.get("scheme"), given.get("tensor"))
    return {**values, **given}, summary


def params_from_args(args: argparse.Namespace, start: EncodingParams | None = None) -> EncodingParams:
    """``start`` (defaults if omitted) with the command line's parameters applied.

    Raises
    ------
    ValueError
        With the model's message for an out-of-range value or a parameter the scheme does not take.
    """
    return (start or EncodingParams()).replaced(fit_sizes=True, **launch_overrides(args)[0])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="posenc-gui",
        description="A desktop lab for transformer positional encodings. "
        "Run without arguments to open the window with the last session's parameters; "
        "'posenc-gui export --help' writes figures and data without a window.",
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
    parser.add_argument("--theme", choices=THEMES, metavar="|".join(THEMES),
                        help="the window's colours: light, dark, or print (white, black text); "
                        "View ▸ Theme changes them, and the last one is remembered")
    add_parameter_flags(parser)
    return parser


#: The themes ``--theme`` takes: ``views.plotkit.theme.THEME_NAMES`` (not imported here: the parser is built
#: before Qt is loaded, which a missing display must not prevent).
THEMES = ("light", "dark", "print")


#: Exit status of a bad command line or session file (as argparse's).
EXIT_USAGE = 2


def _read_session_arg(args: argparse.Namespace):
    """The session file named on the command line, checked (None when none is); SessionError naming the file."""
    from .session import SessionError, read_session

    path = args.session or args.session_file
    if path is None:
        return None
    try:
        return read_session(path)
    except SessionError as error:
        raise SessionError(f"{path}: {error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``posenc-gui`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "export":
        from .export_cli import main as export_main

        return export_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.session and args.session_file:
        parser.error("give the session file once: FILE.json or --session FILE")
    prepare_qt_environment()
    from .session import SessionError

    try:
        session = _read_session_arg(args)  # before any window opens: one line, nothing shown
    except SessionError as error:
        print(f"posenc-gui: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    try:  # a model file that does not open: one line, nothing shown
        overrides, notice = launch_overrides(args)
    except ValueError as error:
        print(f"posenc-gui: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:  # report a bad flag here, before any window opens
        if session is None:
            EncodingParams().replaced(fit_sizes=True, **overrides)
        else:
            session.params.replaced(session.remembered, fit_sizes=True, **overrides)
    except ValueError as error:
        parser.error(str(error))

    problem = display_problem()
    if problem is not None:
        print(f"posenc-gui: {problem}. {ADVICE}", file=sys.stderr)
        return EXIT_NO_DISPLAY
    tune_memory_allocator()  # the workers' large arrays: no page faults, no GIL held for the kernel
    from PySide6.QtCore import QEvent, QTimer
    from PySide6.QtWidgets import QApplication

    from .mainwindow import MainWindow

    app = QApplication.instance()
    if app is None:
        with qt_start_guard():  # Qt aborts when it cannot open a display: one line and exit 2 instead
            app = QApplication(sys.argv[:1])
    app.setApplicationName("posenc-gui")
    app.setOrganizationName("posenc_gui")
    app.setApplicationVersion(__version__)
    window = MainWindow(overrides=overrides, restore=not args.no_restore, session=session, notice=notice,
                        theme_name=args.theme)
    if args.model is not None:  # the Decoder panel traces it (a decoder's RoPE set-up is what the window shows)
        window.state.note_model_opened(os.path.abspath(args.model))
    window.show()
    # The ~70,000 objects of start-up live as long as the window: moved out
    # of the collector's view, a full collection no longer visits them (it
    # would be a visible hitch while dragging a slider).
    QTimer.singleShot(0, gc.freeze)
    if args.quit_after_first_paint:
        QTimer.singleShot(0, functools.partial(_report_first_paint, window, app))
    status = app.exec()
    # Tear Qt down in order while Python is still whole: the window and its
    # scenes first, then the application. Left to interpreter shutdown, the
    # objects die in arbitrary order and Qt intermittently segfaults at exit.
    window.deleteLater()
    del window
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    app.shutdown()
    return status


def _report_first_paint(window, app) -> None:
    """Wait until every panel drew its first data, paint, print a line, quit."""
    window.compute.wait_idle()
    window.repaint()
    print(f"first paint: {len(window.panels)} panels, {window.state.params.slug()}", flush=True)
    window.close()  # saves the settings, as a user's close would
    app.quit()


if __name__ == "__main__":
    sys.exit(main())

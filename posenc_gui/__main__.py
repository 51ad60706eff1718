"""Command line: ``posenc-gui [FILE.json | --session FILE] [--preset NAME | --model PATH] [parameters]
[panel options]`` launches the window (with a session file's setup, a preset's or a model's table or RoPE
set-up, the flags on top; each panel option set on its panel);
``posenc-gui export PANEL -o FILE [parameters]`` writes a figure or its data without showing a window,
``posenc-gui export session -o FILE [parameters]`` a session file.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import __version__, prepare_qt_environment, tune_memory_allocator
from .display import ADVICE, EXIT_NO_DISPLAY, display_problem, qt_start_guard
from .model import OPTION_SPECS, SCHEMES, EncodingParams, ParamSpec, find_preset, presets
from .model.schemes import scheme as scheme_info
from .model.core.params import SIZE_SPECS

if TYPE_CHECKING:
    from .mainwindow import MainWindow
    from .session import Session
    from .views.registry import PanelOption


def _flag_type(spec: ParamSpec) -> Callable[[str], object]:
    """An argparse type that reports the spec's own message (parameter name and range)."""

    def parse(text: str) -> object:
        try:
            return spec.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = spec.name
    return parse


def _scheme_key(text: str) -> str:
    """An argparse type: a scheme's key, or the model's message naming the schemes."""
    try:
        return scheme_info(text.strip()).key
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _preset_name(text: str) -> str:
    """An argparse type: a preset's name (:attr:`~posenc_gui.model.Preset.name`), or the message naming them."""
    try:
        return find_preset(text)[1].name
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def spec_flag(spec: ParamSpec, help_text: str | None = None) -> dict[str, Any]:
    """``add_argument`` keywords of a flag whose value follows ``spec``: its type (refusing a value with the
    spec's message), metavar, and help (``help_text``, default the spec's own) with its range and default."""
    help_text = spec.help if help_text is None else help_text
    return {"type": _flag_type(spec), "metavar": spec.metavar,
            "help": f"{help_text.rstrip('.')}. Values: {spec.range_text()}. Default: {spec.default_text()}."}


def _parameter_flag(spec: ParamSpec) -> dict[str, Any]:
    """:func:`spec_flag` of a size or a scheme's parameter, naming the schemes that take it."""
    flag = spec_flag(spec)
    if spec not in SIZE_SPECS:
        users = [key for key, info in SCHEMES.items() if info.spec(spec.name) is not None]
        flag["help"] += f" Schemes: {', '.join(users)}."
    return flag


def _preset_help() -> str:
    names = ", ".join(f"'{preset.name}'" for _, preset in presets())
    return (f"start from a real model's or a textbook setup: its scheme, sizes and options (the others at their "
            f"defaults); the flags given override it. NAME is one of {names} (case ignored; the Parameters "
            "panel's Preset box lists them with their sources)")


def add_parameter_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The encoding flags shared by the launch and ``export`` commands; those of a parameter by destination.

    ``--model`` and ``--preset``, then one flag per size and per scheme parameter
    (:data:`~posenc_gui.model.OPTION_SPECS`), its metavar, help, range and default from its spec.
    The returned actions are ``--scheme`` and the parameters' (``"seq_len"`` …), not ``--model`` or ``--preset``.
    """
    group = parser.add_argument_group("encoding parameters")
    group.add_argument("--model", metavar="PATH",
                       help="show a model from disk: a Hugging Face folder (config.json and model.safetensors or "
                       "its shards), a .safetensors, .gguf, .npy or .npz file. Its learned position table becomes "
                       "the learned_file scheme (N its length, d_model its width), its RoPE set-up the rope "
                       "scheme (d_model the head dimension); --scheme learned_file or rope chooses when it has "
                       "both, --tensor NAME shows another 2-D tensor as the table; other flags apply on top")
    group.add_argument("--preset", metavar="NAME", type=_preset_name, help=_preset_help())
    actions = [group.add_argument("--scheme", type=_scheme_key, metavar="NAME",
                                  help=f"encoding scheme: {', '.join(SCHEMES)}. Default: sinusoidal.")]
    for spec in (*SIZE_SPECS, *OPTION_SPECS.values()):
        actions.append(group.add_argument(spec.flag, dest=spec.name, **_parameter_flag(spec)))
    return {action.dest: action for action in actions}


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The encoding parameters given on the command line, as name → value."""
    names = ("scheme", *(spec.name for spec in SIZE_SPECS), *OPTION_SPECS)
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def base_values(args: argparse.Namespace, scheme: str | None = None,
                tensor: str | None = None) -> tuple[dict, str | None]:
    """The parameters ``--preset`` or ``--model`` set (flat name → value; the flags given go on top), and what
    the model is shown as (None without ``--model``); ``({}, None)`` when neither is given.

    ``scheme`` and ``tensor`` are those given: they choose what a model shows (see :func:`model_values`);
    a preset of another scheme than ``scheme`` is refused.

    Raises
    ------
    ValueError
        One line: both given, a preset of another scheme, or a model that does not open.
    """
    model, preset = getattr(args, "model", None), getattr(args, "preset", None)
    if model is not None and preset is not None:
        raise ValueError("give --preset or --model, not both: each sets the scheme and its options")
    if preset is not None:
        params = EncodingParams.from_preset(preset)
        if scheme is not None and scheme != params.scheme:
            raise ValueError(f"--preset {preset} is a setup of the {params.scheme} scheme, not of --scheme {scheme}")
        return params.as_dict(), None
    if model is not None:
        return model_values(model, scheme, tensor)
    return {}, None


def model_values(path: str, scheme: str | None = None, tensor: str | None = None) -> tuple[dict, str]:
    """The parameters that show the model at ``path`` (as flat name → value) and what they show, in words.

    ``scheme`` (``learned_file`` or ``rope``) chooses between a model's table
    and its RoPE set-up; ``tensor`` makes that tensor the table.

    Raises
    ------
    ValueError
        One line: the file does not open (naming it and why), or has nothing to show.
    """
    from .model.files.model_setup import model_setups, one_line

    try:
        opened = model_setups(path)
        setup = opened.setup(scheme if scheme in ("learned_file", "rope") else None, tensor or None)
    except ValueError as error:  # ModelFileError is one
        raise ValueError(f"--model {path}: {one_line(error)}") from None
    return setup.params.as_dict(), opened.summary(setup)


def launch_overrides(args: argparse.Namespace) -> tuple[dict, str | None]:
    """The command line's parameters, on those of ``--preset`` or ``--model`` when one is given, and what the
    model is shown as.

    Raises
    ------
    ValueError
        One line, for a model that does not open or has nothing to show, or a preset that does not fit.
    """
    given = overrides_from_args(args)
    values, summary = base_values(args, given.get("scheme"), given.get("tensor"))
    return {**values, **given}, summary


def params_from_args(args: argparse.Namespace, start: EncodingParams | None = None) -> EncodingParams:
    """``start`` (defaults if omitted) with the command line's parameters applied.

    Raises
    ------
    ValueError
        With the model's message for an out-of-range value or a parameter the scheme does not take.
    """
    return (start or EncodingParams()).replaced(fit_sizes=True, **launch_overrides(args)[0])


#: The window's usage line (argparse's own would list every flag).
USAGE = ("posenc-gui [FILE.json | --session FILE] [--preset NAME | --model PATH] [--scheme NAME] [--seq-len N] "
         "[--d-model N] [scheme options] [panel options] [--theme light|dark|print] [--no-restore]\n"
         "       posenc-gui export --help")


def build_parser(classes: Sequence[type] | None = None) -> argparse.ArgumentParser:
    """The window's command line: its own flags, the encoding parameters' and every panel's options.

    The parameter and panel flags are made by the same functions as ``export``'s
    (:func:`add_parameter_flags`, :func:`~posenc_gui.export_plan.add_panel_flags`), from the panels in
    ``classes`` (default: every registered panel). A bad command line raises
    :class:`~posenc_gui.export_plan.UsageError` (one line); ``--help`` and ``--version`` exit.
    """
    from .export_plan import OneLineParser, add_panel_flags
    from .views.plotkit.theme import THEME_NAMES
    from .views.registry import panel_classes

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


#: Exit status of a bad command line or session file (as argparse's).
EXIT_USAGE = 2


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
    from .session import SessionError, read_session

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
    from .export_plan import UsageError, chosen_options
    from .session import SessionError
    from .views.registry import panel_classes

    classes = panel_classes()
    args = build_parser(classes).parse_args(list(argv))
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``posenc-gui`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "export":
        from .export_cli import main as export_main

        return export_main(argv[1:])
    from .export_plan import UsageError

    prepare_qt_environment()  # before the panels' modules load Qt to make their flags
    try:  # before any window opens: one line, nothing shown
        launch = prepare_launch(argv)
    except UsageError as error:
        print(f"posenc-gui: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    problem = display_problem()
    if problem is not None:
        print(f"posenc-gui: {problem}. {ADVICE}", file=sys.stderr)
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
    from .export_plan import UsageError, apply_panel_flags
    from .mainwindow import MainWindow

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
        window.deleteLater()
        raise
    return window


def _report_first_paint(window, app) -> None:
    """Wait until every panel drew its first data, paint, print a line, quit."""
    window.compute.wait_idle()
    window.repaint()
    print(f"first paint: {len(window.panels)} panels, {window.state.params.slug()}", flush=True)
    window.close()  # saves the settings, as a user's close would
    app.quit()


if __name__ == "__main__":
    sys.exit(main())

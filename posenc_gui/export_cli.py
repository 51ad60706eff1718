"""``posenc-gui export``: write a panel's figure or numbers without showing a window.

Examples::

    posenc-gui export --list
    posenc-gui export heatmap -o pe.png --seq-len 64 --d-model 128 --width 2400
    posenc-gui export similarity -o sim.svg --metric cosine --reference 20
    posenc-gui export permutation -o demo.json --sentence-a "the cat sat" --sentence-b "sat the cat"

The format comes from the output file's extension (.png .svg .pdf .csv .npy
.json). Exit status: 0 on success; 2 for a usage error (unknown flag, bad
parameter, unknown extension); 1 when the export itself failed (unwritable
folder, full disk, a panel refusing the size). Errors are one line on stderr.

Panel options
-------------
Built-in flags cover the panels of the app (waveforms ``--dims``,
similarity ``--metric``/``--reference``, permutation ``--sentence-a``,
``--sentence-b``, ``--position``/``--no-position``, ``--demo-d-model``).
Any panel can add its own without touching this module: give the class a
``cli_options`` tuple of dicts (``flag``, ``help`` and optionally ``type``,
``choices``, ``metavar``) and an ``apply_options(**values)`` method that
raises ``ValueError`` for a bad value. ``values`` is keyed by the flag's name
without dashes, with ``-`` replaced by ``_``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from . import prepare_qt_environment

#: Exit codes.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PROG = "posenc-gui export"
#: How long to wait for a panel's computation before giving up.
COMPUTE_TIMEOUT_S = 120.0


class UsageError(Exception):
    """A bad command line; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


@dataclass(frozen=True)
class PanelOption:
    """A command-line flag that sets an option of one or more panels."""

    flag: str
    help: str
    type: Callable[[str], Any] | None = str
    choices: tuple | None = None
    metavar: str | None = None
    boolean: bool = False

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


# ------------------------------------------------------------ built-in options
def _waveform_dims(panel: Any, value: str) -> None:
    from .views.waveforms import parse_dims

    parse_dims(value, panel.state.params.d_model)  # raises with the allowed range
    panel.set_dims(value)


def _similarity(panel: Any, **values: Any) -> None:
    panel.set_options(**values)


def _demo_d_model(panel: Any, value: int) -> None:
    from .model import limits
    from .model.attention import MAX_DEMO_D_MODEL, MIN_DEMO_D_MODEL

    panel.set_demo_d_model(limits.check_int("demo_d_model", value, MIN_DEMO_D_MODEL, MAX_DEMO_D_MODEL))


def _metrics() -> tuple:
    from .model import METRICS

    return tuple(METRICS)


def builtin_options() -> dict[str, list[tuple[PanelOption, Callable[..., None]]]]:
    """Flags for the panels that predate the ``cli_options`` convention, by panel id."""
    return {
        "waveforms": [
            (PanelOption("--dims", "dimensions to plot, e.g. '0,1,6-7' (at most 12)", metavar="LIST"),
             _waveform_dims),
        ],
        "similarity": [
            (PanelOption("--metric", "similarity measure", choices=_metrics()),
             lambda panel, value: _similarity(panel, metric=value)),
            (PanelOption("--reference", "reference position of the offset profile", type=int, metavar="P"),
             lambda panel, value: _similarity(panel, reference=value)),
        ],
        "permutation": [
            (PanelOption("--sentence-a", "first sentence (words separated by spaces)", metavar="TEXT"),
             lambda panel, value: panel.set_sentences(sentence_a=value)),
            (PanelOption("--sentence-b", "second sentence, e.g. the same words reordered", metavar="TEXT"),
             lambda panel, value: panel.set_sentences(sentence_b=value)),
            (PanelOption("--position", "add the positional encoding (--no-position: X = E)", boolean=True),
             lambda panel, value: panel.set_with_position(value)),
            (PanelOption("--demo-d-model", "embedding size of the toy attention head", type=int, metavar="D"),
             _demo_d_model),
        ],
    }


def _convention_options(panel_class: type) -> list[tuple[PanelOption, Callable[..., None]]]:
    specs = getattr(panel_class, "cli_options", None) or ()
    if not hasattr(panel_class, "apply_options"):
        return []
    options = []
    for spec in specs:
        option = PanelOption(
            flag=spec["flag"], help=spec.get("help", ""), type=spec.get("type", str),
            choices=tuple(spec["choices"]) if spec.get("choices") else None, metavar=spec.get("metavar"),
            boolean=bool(spec.get("boolean", False)),
        )
        options.append((option, lambda panel, value, _d=option.dest: panel.apply_options(**{_d: value})))
    return options


def panel_options(classes: Sequence[type]) -> dict[str, dict[str, tuple[PanelOption, Callable[..., None]]]]:
    """``{flag: {panel_id: (option, apply)}}`` for every panel in ``classes``."""
    builtin = builtin_options()
    table: dict[str, dict[str, tuple[PanelOption, Callable[..., None]]]] = {}
    for cls in classes:
        entries = _convention_options(cls) or builtin.get(cls.panel_id, [])
        for option, apply in entries:
            table.setdefault(option.flag, {})[cls.panel_id] = (option, apply)
    return table


# --------------------------------------------------------------------- parser
#: Smallest figure layout (logical pixels) and largest.
MIN_LAYOUT_WIDTH, MIN_LAYOUT_HEIGHT, MAX_LAYOUT_SIDE = 200, 150, 8000


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().replace("×", "x").split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 960x640, got {text!r}") from None
    if not (MIN_LAYOUT_WIDTH <= w <= MAX_LAYOUT_SIDE and MIN_LAYOUT_HEIGHT <= h <= MAX_LAYOUT_SIDE):
        raise argparse.ArgumentTypeError(f"size must be {MIN_LAYOUT_WIDTH}…{MAX_LAYOUT_SIDE} x "
                                         f"{MIN_LAYOUT_HEIGHT}…{MAX_LAYOUT_SIDE} logical pixels, got {text!r}")
    return w, h


def layout_size(size: tuple[int, int] | None, png_width: int | None) -> tuple[int, int]:
    """The figure's layout size: ``--size``, else the default, narrowed to a narrower ``--width``.

    A PNG narrower than the default figure is laid out at its own width
    (aspect ratio kept) and drawn at scale 1: scaled down from the default
    960 px, a 460 px figure had text 4 px tall.
    """
    from .export import DEFAULT_FIGURE_SIZE

    if size is not None:
        return size
    width, height = DEFAULT_FIGURE_SIZE.width(), DEFAULT_FIGURE_SIZE.height()
    if png_width is None or png_width >= width:
        return width, height
    narrow = max(MIN_LAYOUT_WIDTH, png_width)
    return narrow, max(MIN_LAYOUT_HEIGHT, round(narrow * height / width))


def build_parser(classes: Sequence[type]) -> argparse.ArgumentParser:
    from .__main__ import add_parameter_flags
    from .export import DEFAULT_FIGURE_SIZE, DEFAULT_PNG_SCALE, FORMATS

    ids = [cls.panel_id for cls in classes]
    parser = _Parser(
        prog=PROG,
        description="Write a panel's figure (.png .svg .pdf) or its numbers (.csv .npy .json) without "
        "showing a window. The format is taken from the output file's extension.",
        epilog="Exit status: 0 written, 1 export failed, 2 usage error. Panels: " + ", ".join(ids),
    )
    parser.add_argument("panel", nargs="?", metavar="PANEL", help="panel to export (see --list)")
    parser.add_argument("-o", "--output", metavar="FILE", help=f"output file: {' '.join('.' + f for f in FORMATS)}")
    parser.add_argument("--list", action="store_true", help="name the panels and exit")
    image = parser.add_argument_group("image options")
    image.add_argument("--width", type=int, metavar="PX", help="PNG width in pixels (default: "
                       f"{DEFAULT_PNG_SCALE:g} × the figure size); narrower than the default figure, "
                       "the figure is laid out at that width so its text keeps its size")
    image.add_argument("--scale", type=float, metavar="S", help="PNG scale factor instead of --width")
    image.add_argument("--size", type=_size, metavar="WxH",
                       help=f"figure layout size in logical pixels (default "
                       f"{DEFAULT_FIGURE_SIZE.width()}x{DEFAULT_FIGURE_SIZE.height()})")
    add_parameter_flags(parser)
    table = panel_options(classes)
    groups: dict[str, argparse._ArgumentGroup] = {}
    for flag, by_panel in table.items():
        option, _ = next(iter(by_panel.values()))
        owners = ", ".join(by_panel)
        key = owners
        if key not in groups:
            groups[key] = parser.add_argument_group(f"options of the {owners} panel" + ("s" if len(by_panel) > 1 else ""))
        if option.boolean:
            groups[key].add_argument(flag, dest=option.dest, action=argparse.BooleanOptionalAction, default=None,
                                     help=option.help)
        else:
            groups[key].add_argument(flag, dest=option.dest, type=option.type, choices=option.choices,
                                     metavar=option.metavar, default=None, help=option.help)
    return parser


# ----------------------------------------------------------------------- run
def _ensure_platform() -> None:
    """Render on Qt's offscreen platform unless the caller chose one.

    No window is ever shown, so a display server is not needed; not
    connecting to one also keeps a stale ``DISPLAY`` (e.g. over SSH) from
    failing the export, and makes the output independent of the screen.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _quiet_qt() -> None:
    """Keep stderr to our one line: drop Qt's own diagnostics in the headless run."""
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(lambda *_args: None)


def _wait(seconds: float) -> None:
    from PySide6.QtCore import QCoreApplication

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        QCoreApplication.processEvents()
        time.sleep(0.002)


def _settle(panel: Any, compute: Any) -> None:
    """Process layout, resize-triggered re-sampling timers and compute results."""
    for _ in range(3):
        _wait(0.06)
        if not compute.wait_idle(COMPUTE_TIMEOUT_S):
            raise RuntimeError(f"the {panel.title} panel did not finish computing in {COMPUTE_TIMEOUT_S:g} s")
    _wait(0.02)


def _panel_error(panel: Any) -> str | None:
    """The panel's error message, if it refused the inputs (it then shows the last good view)."""
    from .views.base import MESSAGE_STYLES

    label = getattr(panel, "message_label", None)
    if label is not None and label.isVisibleTo(panel) and label.styleSheet() == MESSAGE_STYLES["error"]:
        return " ".join(label.text().split())
    return None


def _fit_figure(panel: Any, size: tuple[int, int]) -> None:
    """Resize ``panel`` so its figure widget gets ``size`` (as closely as the layout allows)."""
    from PySide6.QtCore import QSize

    figure = panel.figure_widget()
    for _ in range(3):
        dw, dh = size[0] - figure.width(), size[1] - figure.height()
        if abs(dw) <= 1 and abs(dh) <= 1:
            return
        panel.resize(QSize(max(200, panel.width() + dw), max(150, panel.height() + dh)))
        _wait(0.02)


def _dispose(panel: Any, compute: Any) -> None:
    """Delete the panel and its scenes now, while Qt is fully alive.

    Left to interpreter shutdown, pyqtgraph items of a panel that rebuilt
    its plots can be destroyed after their scene and crash the process
    after the file was written.
    """
    from PySide6.QtCore import QCoreApplication, QEvent

    compute.shutdown()
    panel.hide()
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


def run(args: argparse.Namespace, classes: Sequence[type], parser: argparse.ArgumentParser) -> int:
    from .__main__ import params_from_args
    from .export import (
        IMAGE_FORMATS,
        MAX_PNG_SIDE,
        MAX_SCALE,
        MIN_PNG_WIDTH,
        MIN_SCALE,
        check_target,
        export_panel,
        format_for_path,
    )

    by_id = {cls.panel_id: cls for cls in classes}
    if args.list:
        width = max(len(i) for i in by_id)
        for cls in classes:
            print(f"{cls.panel_id:<{width}}  {cls.title}")
        return EXIT_OK
    if not args.panel:
        raise UsageError("name a panel to export (posenc-gui export --list names them)")
    if args.panel not in by_id:
        raise UsageError(f"unknown panel {args.panel!r}; choose one of {', '.join(by_id)}")
    if not args.output:
        raise UsageError("give the output file with -o FILE (.png .svg .pdf .csv .npy .json)")
    from .export import ExportError

    try:
        fmt = format_for_path(args.output)
    except ExportError as error:
        raise UsageError(str(error)) from None
    if args.width is not None and args.scale is not None:
        raise UsageError("give either --width or --scale, not both")
    if (args.width is not None or args.scale is not None) and fmt != "png":
        raise UsageError(f"--width and --scale apply to .png output, not .{fmt}")
    if args.width is not None and not MIN_PNG_WIDTH <= args.width <= MAX_PNG_SIDE:
        raise UsageError(f"--width must be in {MIN_PNG_WIDTH}…{MAX_PNG_SIDE} pixels, got {args.width}")
    if args.scale is not None and not MIN_SCALE <= args.scale <= MAX_SCALE:
        raise UsageError(f"--scale must be in {MIN_SCALE:g}…{MAX_SCALE:g}, got {args.scale:g}")
    if args.size is not None and fmt not in IMAGE_FORMATS:
        raise UsageError(f"--size applies to figure output (.png .svg .pdf), not .{fmt}")
    try:
        params = params_from_args(args)
    except ValueError as error:
        raise UsageError(str(error)) from None
    table = panel_options(classes)
    chosen = []
    for flag, by_panel in table.items():
        option = next(iter(by_panel.values()))[0]
        value = getattr(args, option.dest, None)
        if value is None:
            continue
        if args.panel not in by_panel:
            raise UsageError(f"{flag} is an option of the {', '.join(by_panel)} panel, not of {args.panel}")
        chosen.append((flag, value, by_panel[args.panel][1]))
    target = check_target(args.output)  # fail before any rendering

    _ensure_platform()
    prepare_qt_environment()
    _quiet_qt()
    from PySide6.QtCore import QSize, Qt
    from PySide6.QtWidgets import QApplication

    from . import __version__
    from .compute import ComputeService
    from .state import AppState

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "posenc-gui"])
    app.setApplicationName("posenc-gui")
    app.setApplicationVersion(__version__)
    state = AppState(params)
    # One figure: starting the worker process (about 0.3 s) would cost more than it saves.
    compute = ComputeService(processes=False)
    panel = by_id[args.panel](state, compute)
    try:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        size = layout_size(args.size, args.width)
        panel.resize(QSize(size[0] + 40, size[1] + 120))
        panel.show()
        _settle(panel, compute)
        for flag, value, apply in chosen:
            try:
                apply(panel, value)
            except (ValueError, TypeError) as error:
                raise UsageError(f"{flag}: {error}") from None
        state.flush()
        _settle(panel, compute)
        if fmt in IMAGE_FORMATS:
            _fit_figure(panel, size)
            _settle(panel, compute)
        problem = _panel_error(panel)
        if problem:
            raise UsageError(f"{args.panel}: {problem}")
        written = export_panel(panel, target, fmt=fmt, width=args.width, scale=args.scale)
        print(f"wrote {written} ({written.stat().st_size:,} bytes)")
        return EXIT_OK
    finally:
        _dispose(panel, compute)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``posenc-gui export``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    warnings.simplefilter("ignore")  # stderr carries one line at most
    try:
        from .export import ExportError
        from .views import panel_classes

        classes = panel_classes()
        parser = build_parser(classes)
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:  # --help
            return int(done.code or 0)
        return run(args, classes, parser)
    except UsageError as error:
        print(f"{PROG}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except ExportError as error:
        print(f"{PROG}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - the contract is one line, never a traceback
        print(f"{PROG}: error: {type(error).__name__}: {_one_line(error)}", file=sys.stderr)
        return EXIT_FAILED


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


if __name__ == "__main__":
    sys.exit(main())

"""``posenc-gui export``: write panels' figures or numbers without showing a window.

Examples::

    posenc-gui export --list
    posenc-gui export heatmap -o pe.png --seq-len 64 --d-model 128 --width 2400
    posenc-gui export similarity -o sim.svg --metric cosine --reference 20
    posenc-gui export permutation -o demo.json --sentence-a "the cat sat" --sentence-b "sat the cat"
    posenc-gui export heatmap similarity waveforms -o figures/ --format png,svg --d-model 64,128,512

One file: ``-o FILE``, its format from the extension (.png .svg .pdf .csv
.npy .json); a line ``wrote FILE (N bytes)`` is printed.

Batch: several panels, ``--format`` with a comma list (default ``png``),
a folder ending in ``/`` as ``-o``, or a comma list of values for one
encoding parameter (any one of ``--scheme``, ``--seq-len``, ``--d-model``,
``--base``, ``--layout``; two lists are refused) write one file per panel ×
value × format into the folder ``-o DIR`` (created if missing; its parent
must exist), named as the window's export dialog proposes
(:func:`posenc_gui.export.suggested_name`), and print each file's path on
a line of its own as it is written. Every input is checked before anything
is rendered. A file that fails (a panel refusing its inputs, a file that
cannot be written) is named on a line of stderr and the batch goes on with
the next; the exit status is then 1.

A figure is written once its panel has drawn its data at the figure's
size (:func:`until_drawn`): no fixed waits.

Exit status: 0 on success; 2 for a usage error (unknown flag or panel, bad
parameter, unknown extension or format; nothing is written); 1 when an
export failed (unwritable folder, full disk, a panel refusing the size).
Errors are one line each on stderr.

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
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from . import prepare_qt_environment

if TYPE_CHECKING:
    from .model import EncodingParams

#: Exit codes.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PROG = "posenc-gui export"
#: How long to wait for a panel's computation before giving up.
COMPUTE_TIMEOUT_S = 120.0


class UsageError(Exception):
    """A bad command line; the message is one line."""


class StillComputing(RuntimeError):
    """A panel that had not drawn its data after :data:`COMPUTE_TIMEOUT_S` (a hang)."""


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


def _comma_list(convert: Callable[[str], Any], choices: Sequence[Any] | None) -> Callable[[str], tuple]:
    """An argparse type: ``"64,128"`` → ``(64, 128)``, each item converted and checked against ``choices``."""

    def parse(text: str) -> tuple:
        values = []
        for item in (part.strip() for part in text.split(",")):
            if not item:
                raise argparse.ArgumentTypeError(f"an empty value in {text!r}: separate values by single commas")
            try:
                value = convert(item)
            except ValueError:
                raise argparse.ArgumentTypeError(f"invalid value {item!r}") from None
            if choices is not None and value not in choices:
                raise argparse.ArgumentTypeError(f"invalid choice {item!r} (choose from {', '.join(choices)})")
            values.append(value)
        return tuple(values)

    return parse


def _accept_lists(actions: dict[str, argparse.Action]) -> None:
    """Let each encoding parameter flag take a comma-separated list of values (a batch sweeps one of them)."""
    for action in actions.values():
        action.type = _comma_list(action.type or str, action.choices)
        if action.choices is not None:
            action.choices = None
        action.metavar = f"{action.metavar}[,{action.metavar}…]"
        action.help = f"{action.help}; a comma list writes a file for each value"


def build_parser(classes: Sequence[type]) -> argparse.ArgumentParser:
    from .__main__ import add_parameter_flags
    from .export import DEFAULT_FIGURE_SIZE, DEFAULT_PNG_SCALE, FORMATS

    ids = [cls.panel_id for cls in classes]
    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} PANEL [PANEL ...] -o FILE|DIR/ [--format LIST] [options]\n       {PROG} --list",
        description="Write panels' figures (.png .svg .pdf) or their numbers (.csv .npy .json) without "
        "showing a window. One panel to -o FILE: the format is taken from the file's extension. "
        "Several panels, a --format list, a comma list of values for one encoding parameter "
        "(e.g. --d-model 64,128,512) or -o ending in / write one file per panel, value and format into "
        "the folder -o DIR (created if missing), named like sinusoidal_n128_d512_b10000_heatmap.png, "
        "and print each file's path as it is written. A file that fails in a batch is named on stderr "
        "and the others are still written.",
        epilog="Exit status: 0 written, 1 an export failed, 2 usage error (nothing written). "
        "Panels: " + ", ".join(ids),
    )
    parser.add_argument("panels", nargs="*", metavar="PANEL", help="panels to export (see --list)")
    parser.add_argument("-o", "--output", metavar="FILE|DIR/",
                        help=f"output file ({' '.join('.' + f for f in FORMATS)}), or the folder of a batch")
    parser.add_argument("--format", dest="formats", type=_comma_list(str.lower, FORMATS), metavar="LIST",
                        help=f"formats of a batch, comma-separated ({','.join(FORMATS)}; default png)")
    parser.add_argument("--list", action="store_true", help="name the panels and exit")
    image = parser.add_argument_group("image options")
    image.add_argument("--width", type=int, metavar="PX", help="PNG width in pixels (default: "
                       f"{DEFAULT_PNG_SCALE:g} × the figure size); narrower than the default figure, "
                       "the figure is laid out at that width so its text keeps its size")
    image.add_argument("--scale", type=float, metavar="S", help="PNG scale factor instead of --width")
    image.add_argument("--size", type=_size, metavar="WxH",
                       help=f"figure layout size in logical pixels (default "
                       f"{DEFAULT_FIGURE_SIZE.width()}x{DEFAULT_FIGURE_SIZE.height()})")
    _accept_lists(add_parameter_flags(parser))
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


# ---------------------------------------------------------------------- plan
@dataclass(frozen=True)
class Job:
    """One panel at one parameter set, and the files to write from it: ``(format, path)`` in order."""

    params: EncodingParams
    panel_class: type
    files: tuple[tuple[str, Path], ...]


@dataclass(frozen=True)
class Plan:
    """A checked command line: what to render and write, and how."""

    jobs: tuple[Job, ...]
    #: ``{panel_id: [(flag, value, apply), ...]}`` for the panel options given.
    options: dict[str, list[tuple[str, Any, Callable[..., None]]]]
    #: The figures' layout size (logical pixels), and ``--width`` and ``--scale`` for PNGs.
    size: tuple[int, int]
    width: int | None
    scale: float | None
    #: The folder of a batch (created when missing), None for one ``-o FILE``.
    folder: Path | None


def _parameter_sets(args: argparse.Namespace) -> list[EncodingParams]:
    """The validated parameters of each value of the (at most one) parameter given as a list."""
    from .__main__ import overrides_from_args, params_from_args

    given = overrides_from_args(args)
    swept = [field for field, values in given.items() if len(values) > 1]
    if len(swept) > 1:
        flags = " and ".join("--" + field.replace("_", "-") for field in swept)
        raise UsageError(f"a list of values for one parameter at a time; {flags} both have several")
    single = argparse.Namespace(**{field: values[0] for field, values in given.items()})
    values = given[swept[0]] if swept else (None,)
    sets = []
    for value in values:
        if swept:
            setattr(single, swept[0], value)
        try:
            sets.append(params_from_args(single))
        except ValueError as error:
            raise UsageError(str(error)) from None
    return sets


def _is_folder_name(output: str) -> bool:
    return output.endswith(("/", os.sep))


def _batch_folder(output: str) -> Path:
    """``-o`` of a batch as a folder; a name that looks like a file is refused."""
    from .export import FORMATS

    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"several files go into a folder, and -o {output} is a file")
    if not folder.exists() and not _is_folder_name(output) and folder.suffix.lower().lstrip(".") in FORMATS:
        raise UsageError(f"several files go into a folder, and -o {output} names a file "
                         "(end a folder's name with /)")
    return folder


def _chosen_options(args: argparse.Namespace, classes: Sequence[type],
                    panel_ids: Sequence[str]) -> dict[str, list[tuple[str, Any, Callable[..., None]]]]:
    """The panel options given, for each of ``panel_ids`` that has them; a flag none of them has is refused."""
    chosen: dict[str, list[tuple[str, Any, Callable[..., None]]]] = {panel_id: [] for panel_id in panel_ids}
    for flag, by_panel in panel_options(classes).items():
        option = next(iter(by_panel.values()))[0]
        value = getattr(args, option.dest, None)
        if value is None:
            continue
        owners = [panel_id for panel_id in panel_ids if panel_id in by_panel]
        if not owners:
            raise UsageError(f"{flag} is an option of the {', '.join(by_panel)} panel, not of {', '.join(panel_ids)}")
        for panel_id in owners:
            chosen[panel_id].append((flag, value, by_panel[panel_id][1]))
    return chosen


def plan(args: argparse.Namespace, classes: Sequence[type]) -> Plan:
    """Check the command line and say what to write; :class:`UsageError` for a bad one (nothing written)."""
    from .export import (
        IMAGE_FORMATS,
        MAX_PNG_SIDE,
        MAX_SCALE,
        MIN_PNG_WIDTH,
        MIN_SCALE,
        ExportError,
        format_for_path,
        suggested_name,
    )

    by_id = {cls.panel_id: cls for cls in classes}
    if not args.panels:
        raise UsageError("name a panel to export (posenc-gui export --list names them)")
    for panel_id in args.panels:
        if panel_id not in by_id:
            raise UsageError(f"unknown panel {panel_id!r}; choose one of {', '.join(by_id)}")
    if not args.output:
        raise UsageError("give the output file with -o FILE (.png .svg .pdf .csv .npy .json), "
                         "or the folder of several with -o DIR/")
    parameter_sets = _parameter_sets(args)
    batch = (len(args.panels) > 1 or args.formats is not None or len(parameter_sets) > 1
             or _is_folder_name(args.output))
    if batch:
        folder = _batch_folder(args.output)
        formats = list(dict.fromkeys(args.formats or ("png",)))
    else:
        folder = None
        try:
            formats = [format_for_path(args.output)]
        except ExportError as error:
            raise UsageError(str(error)) from None
    shown = ", ".join(f".{fmt}" for fmt in formats)
    if args.width is not None and args.scale is not None:
        raise UsageError("give either --width or --scale, not both")
    if (args.width is not None or args.scale is not None) and "png" not in formats:
        raise UsageError(f"--width and --scale apply to .png output, not {shown}")
    if args.width is not None and not MIN_PNG_WIDTH <= args.width <= MAX_PNG_SIDE:
        raise UsageError(f"--width must be in {MIN_PNG_WIDTH}…{MAX_PNG_SIDE} pixels, got {args.width}")
    if args.scale is not None and not MIN_SCALE <= args.scale <= MAX_SCALE:
        raise UsageError(f"--scale must be in {MIN_SCALE:g}…{MAX_SCALE:g}, got {args.scale:g}")
    if args.size is not None and not any(fmt in IMAGE_FORMATS for fmt in formats):
        raise UsageError(f"--size applies to figure output (.png .svg .pdf), not {shown}")
    options = _chosen_options(args, classes, args.panels)

    jobs, names = [], set()
    for params in parameter_sets:
        for panel_id in args.panels:
            if folder is None:
                files = ((formats[0], Path(args.output)),)
            else:
                files = tuple((fmt, folder / suggested_name(params, panel_id, fmt)) for fmt in formats)
            for _, path in files:
                if path.name in names:
                    raise UsageError(f"two files would be named {path.name}: give each panel, format and value once")
                names.add(path.name)
            jobs.append(Job(params, by_id[panel_id], files))
    return Plan(tuple(jobs), options, layout_size(args.size, args.width), args.width, args.scale, folder)


# ----------------------------------------------------------------------- run
def _ensure_platform() -> None:
    """Render on Qt's offscreen platform unless the caller chose one.

    No window is ever shown, so a display server is not needed; not
    connecting to one also keeps a stale ``DISPLAY`` (e.g. over SSH) from
    failing the export, and makes the output independent of the screen.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@contextmanager
def _quiet_qt() -> Iterator[None]:
    """Keep stderr to our own lines: drop Qt's diagnostics while exporting (the previous handler comes back)."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = qInstallMessageHandler(lambda *_args: None)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


#: Passes of the event loop in a row that start no new work before a panel counts as settled.
QUIET_PASSES = 2
#: Paints after which a layout that still changes is exported as it is.
MAX_PAINTS = 5


def _settle(panel: Any, deadline: float | None = None) -> None:
    """Process events until ``panel`` computed and shows its current data at its current size.

    Layout and resize events run; a re-sampling waiting for its debounce
    runs at once; while a request computes in a worker the loop sleeps in
    Qt's event dispatcher until the result arrives. It returns after
    :data:`QUIET_PASSES` passes in a row that found nothing to do (a pass
    can post layout events for the next). ``deadline`` (``time.monotonic()``,
    default :data:`COMPUTE_TIMEOUT_S` from now) only bounds a hang.

    Raises
    ------
    StillComputing
        When the panel is still computing at the deadline.
    """
    from PySide6.QtCore import QCoreApplication

    deadline = time.monotonic() + COMPUTE_TIMEOUT_S if deadline is None else deadline
    quiet = 0
    while quiet < QUIET_PASSES:
        QCoreApplication.processEvents()
        panel.state.flush()
        if panel.shows_current_data():
            quiet += 1
            continue
        quiet = 0
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise StillComputing(f"the {panel.title} panel did not finish computing in {COMPUTE_TIMEOUT_S:g} s")
        panel.ensure_current()
        if panel.run_debounced() or panel.compute.is_idle():
            continue
        panel.compute.wait_idle(remaining)


def _layout(panel: Any) -> tuple:
    """The geometry of the panel's widgets and of its plots' layout items (axes, view boxes, titles)."""
    from PySide6.QtWidgets import QGraphicsView, QGraphicsWidget, QWidget

    widgets = tuple(child.geometry().getRect() for child in panel.findChildren(QWidget))
    items = tuple(item.geometry().getRect() for view in panel.findChildren(QGraphicsView) if view.scene()
                  for item in view.scene().items() if isinstance(item, QGraphicsWidget))
    return widgets, items


def until_drawn(panel: Any) -> None:
    """Process events and paint until ``panel`` shows its current data in a layout that no longer changes.

    pyqtgraph fits an axis to its tick labels while painting it, which
    can move the plot and re-sample it: the panel is painted (at once, not
    after the window system's next frame) and settled again until a paint
    leaves the layout as it was. :data:`COMPUTE_TIMEOUT_S` only bounds a hang.

    Raises
    ------
    StillComputing
        When the panel is still computing after :data:`COMPUTE_TIMEOUT_S`.
    """
    deadline = time.monotonic() + COMPUTE_TIMEOUT_S
    _settle(panel, deadline)
    for _ in range(MAX_PAINTS):
        before = _layout(panel)
        panel.repaint()
        _settle(panel, deadline)
        if _layout(panel) == before:
            return


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
        _settle(panel)


def _dispose(panel: Any) -> None:
    """Delete the panel and its scenes now, while Qt is fully alive.

    Left to interpreter shutdown, pyqtgraph items of a panel that rebuilt
    its plots can be destroyed after their scene and crash the process
    after the file was written.
    """
    from PySide6.QtCore import QCoreApplication, QEvent

    panel.hide()
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


def _apply_options(panel: Any, options: list[tuple[str, Any, Callable[..., None]]]) -> None:
    for flag, value, apply in options:
        try:
            apply(panel, value)
        except (ValueError, TypeError) as error:
            raise UsageError(f"{flag}: {error}") from None


def _check_options(plan: Plan, compute: Any) -> None:
    """Apply each job's panel options to a panel that is never shown: a value a panel refuses stops here.

    A value can be right for one parameter set and wrong for another
    (``--dims 40`` at d_model 32): found before the first file is written.
    """
    from .state import AppState

    for job in plan.jobs:
        if plan.options[job.panel_class.panel_id]:
            panel = job.panel_class(AppState(job.params), compute)
            try:
                _apply_options(panel, plan.options[job.panel_class.panel_id])
            finally:
                _dispose(panel)


@contextmanager
def _drawn_panel(job: Job, plan: Plan, compute: Any) -> Iterator[Any]:
    """``job``'s panel built off screen with its options, laid out for the figure size and drawn."""
    from PySide6.QtCore import QSize, Qt

    from .export import IMAGE_FORMATS
    from .state import AppState

    panel = job.panel_class(AppState(job.params), compute)
    try:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        # Painted only at the figure size: pyqtgraph keeps an axis as wide as the widest labels it
        # has painted, so paints at the first, provisional size would leave their width behind.
        panel.setUpdatesEnabled(False)
        _apply_options(panel, plan.options[job.panel_class.panel_id])
        panel.resize(QSize(plan.size[0] + 40, plan.size[1] + 120))
        panel.show()
        _settle(panel)
        if any(fmt in IMAGE_FORMATS for fmt, _ in job.files):
            _fit_figure(panel, plan.size)
            # Kept at that size while its formats are written: a label of the panel outside the
            # figure that changes later (a delayed note) would otherwise take the figure's height.
            figure = panel.figure_widget()
            figure.setFixedSize(figure.size())
        panel.setUpdatesEnabled(True)
        until_drawn(panel)
        yield panel
    finally:
        _dispose(panel)


def _write(panel: Any, fmt: str, path: Path, plan: Plan) -> Path:
    from .export import export_panel

    png = fmt == "png"
    return export_panel(panel, path, fmt=fmt, width=plan.width if png else None, scale=plan.scale if png else None)


def _export_one(plan: Plan, compute: Any) -> int:
    """The single-file form: errors raise (a panel refusing its inputs is a usage error)."""
    (job,) = plan.jobs
    ((fmt, path),) = job.files
    with _drawn_panel(job, plan, compute) as panel:
        problem = _panel_error(panel)
        if problem:
            raise UsageError(f"{job.panel_class.panel_id}: {problem}")
        written = _write(panel, fmt, path, plan)
    print(f"wrote {written} ({written.stat().st_size:,} bytes)")
    return EXIT_OK


class _BatchWriter:
    """Writes a batch's files in a thread, in order, while the GUI thread renders the next figure.

    Encoding a PNG costs about as much as drawing it. At most one file
    waits to be written (a rendered image can be large). Each file's path
    is printed once written, each failure named on stderr.
    """

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="posenc-export-write")
        self._pending: tuple[Path, Future] | None = None
        self.failures = 0

    def submit(self, path: Path, finish: Callable[[], bytes]) -> None:
        """Write ``finish()`` (the file's bytes) to ``path`` once the file before it is written."""
        from .export import atomic_write

        self.wait()
        self._pending = (path, self._executor.submit(lambda: atomic_write(path, finish())))

    def wait(self) -> None:
        """Wait for the file being written and report it."""
        if self._pending is None:
            return
        (path, future), self._pending = self._pending, None
        try:
            print(future.result(), flush=True)
        except Exception as error:  # noqa: BLE001 - reported on its line, the batch goes on
            self.fail(path, error)

    def fail(self, path: Path, error: BaseException) -> None:
        """Report that ``path`` was not written (after the file before it)."""
        from .export import ExportError

        self.wait()
        self.failures += 1
        reason = _one_line(error) if isinstance(error, ExportError) else f"{type(error).__name__}: {_one_line(error)}"
        print(f"{PROG}: error: {path}: {reason}", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.wait()
        self._executor.shutdown()


def _export_batch(plan: Plan, compute: Any) -> int:
    """Every job's files into the folder, one printed path each; a failed file is reported and skipped."""
    from .export import ExportError, check_target, render_export

    folder = plan.folder
    if not folder.is_dir():
        try:
            folder.mkdir()
        except OSError as error:
            raise ExportError(f"Cannot create the folder {folder}: {error.strerror or error}") from None
    writer = _BatchWriter()
    try:
        for job in plan.jobs:
            try:
                with _drawn_panel(job, plan, compute) as panel:
                    problem = _panel_error(panel)
                    for fmt, path in job.files:
                        if problem:
                            writer.fail(path, ExportError(f"{job.panel_class.panel_id}: {problem}"))
                            continue
                        png = fmt == "png"
                        try:
                            check_target(path)
                            finish = render_export(panel, fmt, width=plan.width if png else None,
                                                   scale=plan.scale if png else None)
                        except ExportError as error:
                            writer.fail(path, error)
                            continue
                        writer.submit(path, finish)
            except (ExportError, StillComputing) as error:  # the panel could not be drawn
                for _, path in job.files:
                    writer.fail(path, error)
    finally:
        writer.close()
    return EXIT_FAILED if writer.failures else EXIT_OK


def run(args: argparse.Namespace, classes: Sequence[type]) -> int:
    """Carry out a parsed command line; returns the exit status (errors raise, see :func:`main`)."""
    if args.list:
        width = max(len(cls.panel_id) for cls in classes)
        for cls in classes:
            print(f"{cls.panel_id:<{width}}  {cls.title}")
        return EXIT_OK
    checked = plan(args, classes)
    if checked.folder is None:
        from .export import check_target

        check_target(checked.jobs[0].files[0][1])  # fail before any rendering
    _ensure_platform()
    prepare_qt_environment()
    from PySide6.QtWidgets import QApplication

    from . import __version__
    from .compute import ComputeService

    with _quiet_qt():
        if QApplication.instance() is None:  # run in-process (tests, scripts), the caller's stays as it is
            app = QApplication([sys.argv[0] if sys.argv else "posenc-gui"])
            app.setApplicationName("posenc-gui")
            app.setApplicationVersion(__version__)
        # Threads only: starting the worker process (about 0.3 s) costs more than it saves here.
        compute = ComputeService(processes=False)
        try:
            if checked.folder is None:
                return _export_one(checked, compute)
            if len(checked.jobs) > 1:
                _check_options(checked, compute)
            return _export_batch(checked, compute)
        finally:
            compute.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``posenc-gui export``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stderr carries our error lines only
        try:
            from .export import ExportError
            from .views import panel_classes

            classes = panel_classes()
            parser = build_parser(classes)
            try:
                args = parser.parse_args(argv)
            except SystemExit as done:  # --help
                return int(done.code or 0)
            return run(args, classes)
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

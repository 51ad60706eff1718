"""``posenc-gui export``'s command line: its parser, made from the panel registry, and its checked plan.

:func:`build_parser` adds the encoding parameters' flags and each registered
panel's ``cli_options`` (:class:`~posenc_gui.views.registry.PanelOption`),
both from :mod:`posenc_gui.cli.parameters`; :func:`plan` checks a parsed
command line and says what to render and write, raising :class:`UsageError`
(one line) before anything is written. :mod:`posenc_gui.cli.export` carries
the plan out.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .parameters import (OneLineParser, UsageError, add_panel_flags, add_parameter_flags, base_values,
                         chosen_options, overrides_from_args)

if TYPE_CHECKING:
    from ..model import EncodingParams
    from ..session import Session
    from ..views.registry import PanelOption

PROG = "posenc-gui export"


# --------------------------------------------------------------------- parser
#: Smallest figure layout (logical pixels) and largest.
MIN_LAYOUT_WIDTH, MIN_LAYOUT_HEIGHT, MAX_LAYOUT_SIDE = 200, 150, 8000
#: Most logical pixels a figure's layout may have in all (width × height; each side's of an A/B figure).
#: The panel is laid out and painted at that size, and its PNG at the default scale (2) has 4 times as many
#: pixels: the PNG's memory budget (export.MAX_PNG_PIXELS, 2**26). --size 8000x8000 took 3.2–3.8 GB.
MAX_LAYOUT_PIXELS = 2**24


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().replace("×", "x").split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 960x640, got {text!r}") from None
    if not (MIN_LAYOUT_WIDTH <= w <= MAX_LAYOUT_SIDE and MIN_LAYOUT_HEIGHT <= h <= MAX_LAYOUT_SIDE):
        raise argparse.ArgumentTypeError(f"size must be {MIN_LAYOUT_WIDTH}…{MAX_LAYOUT_SIDE} x "
                                         f"{MIN_LAYOUT_HEIGHT}…{MAX_LAYOUT_SIDE} logical pixels, got {text!r}")
    if w * h > MAX_LAYOUT_PIXELS:
        raise argparse.ArgumentTypeError(f"size {text} is {w * h:,} logical pixels; a figure may have at most "
                                         f"{MAX_LAYOUT_PIXELS:,} (e.g. 4096x4096), which bounds the memory an "
                                         "export takes")
    return w, h


def layout_size(size: tuple[int, int] | None, png_width: int | None) -> tuple[int, int]:
    """The figure's layout size: ``--size``, else the default, narrowed to a narrower ``--width``.

    A PNG narrower than the default figure is laid out at its own width
    (aspect ratio kept) and drawn at scale 1: scaled down from the default
    960 px, a 460 px figure had text 4 px tall.
    """
    from ..export import DEFAULT_FIGURE_SIZE

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


def _one_value(convert: Callable[[str], Any]) -> Callable[[str], tuple]:
    """An argparse type: the value ``convert`` reads, as the one value of a (not swept) list."""

    def parse(text: str) -> tuple:
        return (convert(text),)

    return parse


def _accept_lists(actions: dict[str, argparse.Action]) -> None:
    """Let each encoding parameter flag take a comma-separated list of values (a batch sweeps one of them).

    A parameter that is itself a list of numbers (LongRoPE's factors), a path or a name (a tensor's) keeps
    its commas: it is one value.
    """
    from ..model import OPTION_SPECS

    for action in actions.values():
        spec = OPTION_SPECS.get(action.dest)
        if spec is not None and spec.kind in ("reals", "path", "name"):
            action.type = _one_value(action.type)
            continue
        action.type = _comma_list(action.type or str, action.choices)
        action.choices = None  # checked by each value's type (its spec)
        action.metavar = f"{action.metavar}[,{action.metavar}…]"
        action.help = f"{action.help} A comma list writes a file for each value."


def build_parser(classes: Sequence[type]) -> argparse.ArgumentParser:
    """``posenc-gui export``'s parser: its own flags, the encoding parameters' (each taking a comma list, a
    batch) and the options of the panels in ``classes``; a bad command line raises :class:`UsageError`."""
    from ..export import DEFAULT_FIGURE_SIZE, DEFAULT_PNG_SCALE, FORMATS, MAX_PNG_PIXELS
    from ..views.plotkit.theme import THEME_NAMES

    ids = [cls.panel_id for cls in classes]
    parser = OneLineParser(
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
    parser.add_argument("--session", metavar="FILE", help="start from this session file's parameters, view "
                        "settings and panel options (the flags given override them)")
    image = parser.add_argument_group("image options")
    image.add_argument("--width", type=int, metavar="PX", help="PNG width in pixels (default: "
                       f"{DEFAULT_PNG_SCALE:g} × the figure size); narrower than the default figure, "
                       "the figure is laid out at that width so its text keeps its size; a PNG has at most "
                       f"{MAX_PNG_PIXELS:,} pixels in all (its memory)")
    image.add_argument("--scale", type=float, metavar="S", help="PNG scale factor instead of --width")
    image.add_argument("--theme", choices=THEME_NAMES, metavar="|".join(THEME_NAMES),
                       help="colours of the figures: light (default), dark, or print (white, black text, "
                       "heavier lines)")
    image.add_argument("--size", type=_size, metavar="WxH",
                       help=f"figure layout size in logical pixels (default "
                       f"{DEFAULT_FIGURE_SIZE.width()}x{DEFAULT_FIGURE_SIZE.height()}; at most "
                       f"{MAX_LAYOUT_SIDE} a side and {MAX_LAYOUT_PIXELS:,} in all); of each side when a "
                       "--session compares A and B")
    _accept_lists(add_parameter_flags(parser))
    add_panel_flags(parser, classes)
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
    #: ``{panel_id: [(option, value), ...]}`` for the panel options given.
    options: dict[str, list[tuple[PanelOption, Any]]]
    #: The figures' layout size (logical pixels), and ``--width`` and ``--scale`` for PNGs.
    size: tuple[int, int]
    width: int | None
    scale: float | None
    #: The folder of a batch (created when missing), None for one ``-o FILE``.
    folder: Path | None
    #: The shared view settings (``AppState.set_view``) of ``--session``, set before the panel options.
    view: dict[str, Any] = field(default_factory=dict)
    #: The pinned setup A of ``--session`` (its figures show A beside each job's parameters), and how.
    pinned: EncodingParams | None = None
    compare_mode: str = "side_by_side"
    #: The theme of the figures (``--theme``; None: light).
    theme: str | None = None
    #: ``--model``'s path, made absolute: opened in each panel's state as the window opens it (the Decoder
    #: panel traces it); None without ``--model``.
    model: str | None = None


def _parameter_sets(args: argparse.Namespace, session: Session | None) -> list[EncodingParams]:
    """The validated parameters of each value of the (at most one) parameter given as a list, on the session's."""
    from ..model import EncodingParams

    given = overrides_from_args(args)
    if args.model is not None or args.preset is not None:  # a model's or preset's parameters, under the flags given
        schemes, tensors = given.get("scheme", (None,)), given.get("tensor", (None,))
        if len(schemes) > 1:
            source = "--model" if args.model is not None else "--preset"
            raise UsageError(f"{source} shows one scheme at a time; give one --scheme")
        try:
            values, _ = base_values(args, schemes[0], tensors[0])
        except ValueError as error:
            raise UsageError(str(error)) from None
        given = {**{name: (value,) for name, value in values.items()}, **given}
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
            if session is None:
                sets.append(EncodingParams().replaced(fit_sizes=True, **overrides_from_args(single)))
            else:
                sets.append(session.params.replaced(session.remembered, fit_sizes=True,
                                                    **overrides_from_args(single)))
        except ValueError as error:
            raise UsageError(str(error)) from None
    return sets


def _is_folder_name(output: str) -> bool:
    return output.endswith(("/", os.sep))


def _batch_folder(output: str) -> Path:
    """``-o`` of a batch as a folder; a name that looks like a file is refused."""
    from ..export import FORMATS

    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"several files go into a folder, and -o {output} is a file")
    if not folder.exists() and not _is_folder_name(output) and folder.suffix.lower().lstrip(".") in FORMATS:
        raise UsageError(f"several files go into a folder, and -o {output} names a file "
                         "(end a folder's name with /)")
    return folder


def _session(path: str) -> Session:
    """The checked session file of ``--session``; :class:`UsageError` naming the file and what is wrong."""
    from ..session import SessionError, read_session

    try:
        return read_session(path)
    except SessionError as error:
        raise UsageError(f"--session {path}: {error}") from None


def _with_session_options(chosen: dict[str, list[tuple[PanelOption, Any]]], session: Session,
                          by_id: dict[str, type]) -> dict[str, list[tuple[PanelOption, Any]]]:
    """The session's options of each panel, before those given as flags (which win; a flag's value replaces it)."""
    merged = {}
    for panel_id, given in chosen.items():
        flagged = {option.dest for option, _ in given}
        declared = {option.dest: option for option in by_id[panel_id].cli_options}
        saved = [(declared[dest], value) for dest, value in session.panels.get(panel_id, {}).items()
                 if dest not in flagged]
        merged[panel_id] = saved + given
    return merged


def plan(args: argparse.Namespace, classes: Sequence[type]) -> Plan:
    """Check the command line and say what to write; :class:`UsageError` for a bad one (nothing written)."""
    from ..export import (
        DEFAULT_PNG_SCALE,
        IMAGE_FORMATS,
        MAX_PNG_SIDE,
        MAX_SCALE,
        MIN_PNG_WIDTH,
        MIN_SCALE,
        ExportError,
        format_for_path,
        png_size_problem,
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
    session = _session(args.session) if args.session is not None else None
    parameter_sets = _parameter_sets(args, session)
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
    size = layout_size(args.size, args.width)
    if "png" in formats:  # the PNG's memory budget, checked on the figure without its caption (which adds rows)
        factor = args.width / size[0] if args.width is not None else args.scale or DEFAULT_PNG_SCALE
        problem = png_size_problem(round(size[0] * factor), round(size[1] * factor))
        if problem:
            raise UsageError(f"{problem} (the figure is laid out at {size[0]}x{size[1]})")
    options = chosen_options(args, classes, args.panels)
    if session is not None:
        options = _with_session_options(options, session, by_id)
    for panel_id in args.panels:
        refused = [fmt for fmt in formats if fmt not in by_id[panel_id].export_formats]
        if refused:
            raise UsageError(f"the {panel_id} panel exports {', '.join(by_id[panel_id].export_formats)}, "
                             f"not {', '.join(refused)}")

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
    return Plan(tuple(jobs), options, size, args.width, args.scale, folder,
                dict(session.view) if session is not None else {},
                session.pinned if session is not None else None,
                session.compare_mode if session is not None else "side_by_side", getattr(args, "theme", None),
                os.path.abspath(args.model) if getattr(args, "model", None) is not None else None)

"""``posenc-gui export``: write panels' figures or numbers without showing a window.

Examples::

    posenc-gui export --list
    posenc-gui export heatmap -o pe.png --seq-len 64 --d-model 128 --width 2400
    posenc-gui export similarity -o sim.svg --metric cosine --reference 20
    posenc-gui export permutation -o demo.json --sentence-a "the cat sat" --sentence-b "sat the cat"
    posenc-gui export heatmap similarity waveforms -o figures/ --format png,svg --d-model 64,128,512
    posenc-gui export heatmap -o pe.png --session lesson.json --d-model 64
    posenc-gui export session -o lesson.json --scheme rope --d-model 64
    posenc-gui export context frequencies -o llama/ --preset "Llama 3.1" --seq-len 32768,131072

``--session FILE`` starts from a session file's parameters, view settings
and panel options; the flags given override them. ``export session``
writes a session file of the parameters given (and the defaults of the
rest), without rendering anything.

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
size (:func:`posenc_gui.export.readiness.until_drawn`): no fixed waits.

Exit status: 0 on success; 2 for a usage error (unknown flag or panel, bad
parameter, unknown extension or format; nothing is written); 1 when an
export failed (unwritable folder, full disk, a panel refusing the size).
Errors are one line each on stderr.

Panel options
-------------
Each panel declares its flags (``cli_options``, see
:mod:`posenc_gui.views.registry`), e.g. waveforms ``--dims``, similarity
``--metric``/``--reference``, permutation ``--sentence-a``, ``--sentence-b``,
``--position``/``--no-position``, ``--demo-d-model``; a value reaches the
panel as ``panel.apply_options(**{dest: value})``, which raises ValueError
for a bad one. The parser and the checked plan are in :mod:`posenc_gui.cli.plan`.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .. import prepare_qt_environment
from .parameters import (EXIT_FAILED, EXIT_OK, EXIT_USAGE, OneLineParser, UsageError, add_parameter_flags,
                         apply_panel_flags, needs_panel_flags, params_from_args)
from .plan import PROG, Job, Plan, build_parser, plan


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


def _panel_error(panel: Any) -> str | None:
    """Why the panel does not apply to its parameters, or its error message if it refused the inputs
    (it then shows the last good view); None when neither."""
    from ..views.base import MESSAGE_STYLES
    from ..views.plotkit.theme import themed_text

    unavailable = panel.unavailable_message()
    if unavailable:
        return unavailable
    label = getattr(panel, "message_label", None)
    if label is not None and label.isVisibleTo(panel) and label.styleSheet() in (MESSAGE_STYLES["error"],
                                                                    themed_text(MESSAGE_STYLES["error"])):
        return " ".join(label.text().split())
    return None


def _fit_figure(panel: Any, size: tuple[int, int]) -> None:
    """Resize ``panel`` so its figure widget gets ``size`` (as closely as the layout allows)."""
    from PySide6.QtCore import QSize

    from ..export import readiness

    figure = panel.figure_widget()
    for _ in range(3):
        dw, dh = size[0] - figure.width(), size[1] - figure.height()
        if abs(dw) <= 1 and abs(dh) <= 1:
            return
        panel.resize(QSize(max(200, panel.width() + dw), max(150, panel.height() + dh)))
        readiness.settle(panel)


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


def _check_options(plan: Plan, compute: Any) -> None:
    """Apply each job's panel options to a panel that is never shown: a value a panel refuses stops here.

    A value can be right for one parameter set and wrong for another
    (``--dims 40`` at d_model 32): found before the first file is written.
    """
    for job in plan.jobs:
        if plan.options[job.panel_class.panel_id]:
            panel = job.panel_class(_state(job, plan), compute)
            try:
                apply_panel_flags(panel, plan.options[job.panel_class.panel_id])
            finally:
                _dispose(panel)


def _state(job: Job, plan: Plan) -> Any:
    """The :class:`~posenc_gui.state.AppState` of ``job``'s panel: its parameters and the plan's view settings."""
    from ..state import AppState

    state = AppState(job.params)
    state.set_view(**plan.view)
    if plan.model is not None:
        state.note_model_opened(plan.model)  # as the window's --model: the Decoder panel traces it
    return state


@contextmanager
def _drawn_panel(job: Job, plan: Plan, compute: Any) -> Iterator[Any]:
    """``job``'s panel built off screen with its options, laid out for the figure size and drawn."""
    from PySide6.QtCore import QSize, Qt

    from ..export import IMAGE_FORMATS, readiness

    panel = job.panel_class(_state(job, plan), compute)
    size = plan.size
    if plan.pinned is not None and job.panel_class.comparable:  # a session's A beside the job's parameters (B)
        from ..views.compare import ComparedPanel, PinnedState

        panel = ComparedPanel(panel, PinnedState(plan.pinned, panel.state), plan.compare_mode)
        size = (size[0] * panel.sides, size[1])  # the figure size is each side's
    if plan.pinned is not None:  # a panel that compares A and B in its own figure (the Scorecard's row A)
        (panel.b if job.panel_class.comparable else panel).set_pinned(plan.pinned)
    try:
        panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        # Painted only at the figure size: pyqtgraph keeps an axis as wide as the widest labels it
        # has painted, so paints at the first, provisional size would leave their width behind.
        panel.setUpdatesEnabled(False)
        apply_panel_flags(panel, plan.options[job.panel_class.panel_id])
        panel.resize(QSize(size[0] + 40, size[1] + 120))
        panel.show()
        readiness.settle(panel)
        if any(fmt in IMAGE_FORMATS for fmt, _ in job.files):
            _fit_figure(panel, size)
            # Kept at that size while its formats are written: a label of the panel outside the
            # figure that changes later (a delayed note) would otherwise take the figure's height.
            figure = panel.figure_widget()
            figure.setFixedSize(figure.size())
        panel.setUpdatesEnabled(True)
        readiness.until_drawn(panel)
        yield panel
    finally:
        _dispose(panel)


def _write(panel: Any, fmt: str, path: Path, plan: Plan) -> Path:
    from ..export import export_panel

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
        from ..export import atomic_write

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
        from ..export import ExportError

        self.wait()
        self.failures += 1
        reason = _one_line(error) if isinstance(error, ExportError) else f"{type(error).__name__}: {_one_line(error)}"
        print(f"{PROG}: error: {path}: {reason}", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.wait()
        self._executor.shutdown()


def _export_batch(plan: Plan, compute: Any) -> int:
    """Every job's files into the folder, one printed path each; a failed file is reported and skipped."""
    from ..export import ExportError, check_target, render_export
    from ..export.readiness import StillComputing

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
        from ..export import check_target

        check_target(checked.jobs[0].files[0][1])  # fail before any rendering
    _ensure_platform()
    prepare_qt_environment()
    from PySide6.QtWidgets import QApplication

    from .. import __version__
    from ..compute import ComputeService

    with _quiet_qt():
        if QApplication.instance() is None:  # run in-process (tests, scripts), the caller's stays as it is
            app = QApplication([sys.argv[0] if sys.argv else "posenc-gui"])
            app.setApplicationName("posenc-gui")
            app.setApplicationVersion(__version__)
        from ..views.plotkit import theme

        previous_theme = theme.current().name  # run in-process, the caller's theme comes back afterwards
        theme.set_theme(checked.theme or previous_theme)
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
            theme.set_theme(previous_theme)


def write_session_file(argv: Sequence[str]) -> int:
    """``posenc-gui export session -o FILE [parameters]``: write a session file; errors raise (see :func:`main`)."""
    from ..session import Session, write_session

    parser = OneLineParser(prog=f"{PROG} session", description="Write a session file of the parameters given (the "
                     "defaults for the rest), for posenc-gui FILE.json or --session FILE.")
    parser.add_argument("-o", "--output", metavar="FILE", required=True, help="the session file to write (.json)")
    add_parameter_flags(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    try:
        params = params_from_args(args)  # --model too: a session of a model's table or RoPE set-up
    except ValueError as error:
        raise UsageError(str(error)) from None
    written = write_session(args.output, Session(params))
    print(f"wrote {written} ({written.stat().st_size:,} bytes)")
    return EXIT_OK


def handout_plan(argv: Sequence[str]) -> tuple[argparse.Namespace, Plan, list[Job], tuple[str, ...]]:
    """Check ``posenc-gui export handout``'s command line: its arguments, its plan, the jobs of the figures
    it draws and their formats (for a folder). Nothing is rendered or written.

    Raises
    ------
    UsageError
        One line, for a bad command line.
    SystemExit
        For ``--help``, once printed.
    """
    import tempfile

    from ..export.handout import DEFAULT_PAGE, PAGE_SIZES
    from ..views.registry import panel_classes

    classes = panel_classes()
    parser = build_parser(classes)
    parser.prog = f"{PROG} handout"
    parser.usage = f"{PROG} handout -o FILE.pdf|DIR/ [PANEL ...] [--format png,svg] [--page a4|letter] [options]"
    parser.description = ("Write a handout: the figures of the panels named (by default every panel that shows "
                          "the scheme) with the parameters and each panel's headline numbers, as one multi-page "
                          "PDF (-o NAME.pdf) or as a folder of PNG/SVG figures with an index.html (-o DIR/).")
    parser.add_argument("--page", choices=list(PAGE_SIZES), metavar="|".join(PAGE_SIZES),
                        help=f"a PDF handout's paper, every page landscape (default: {DEFAULT_PAGE})")
    args = parser.parse_args(argv)
    if not args.output:
        raise UsageError("give the handout's file with -o NAME.pdf, or its folder with -o DIR/")
    if args.output.lower().endswith(".pdf") and args.formats is not None:
        raise UsageError("--format chooses a handout folder's figure formats; a .pdf handout is all PDF")
    if not args.output.lower().endswith(".pdf") and args.page is not None:
        raise UsageError("--page chooses a PDF handout's paper; a folder of figures has no pages")
    formats = tuple(args.formats or ("png",))
    named = list(args.panels)
    with tempfile.TemporaryDirectory() as scratch:  # only for the plan's file names: nothing is written there
        figures = argparse.Namespace(**{**vars(args), "panels": named or [cls.panel_id for cls in classes
                                                                             if cls.in_handout],
                                        "output": f"{scratch}/figures/", "formats": ["png"]})
        checked = plan(figures, classes)
    if len({job.params for job in checked.jobs}) > 1:
        raise UsageError("a handout shows one setup: give each parameter one value")
    params = checked.jobs[0].params
    jobs = [job for job in checked.jobs if named or job.panel_class.shows(params.info)]
    return args, checked, jobs, formats


def write_handout(argv: Sequence[str]) -> int:
    """``posenc-gui export handout -o FILE.pdf|DIR/ [PANEL ...] [options]``: several figures in one PDF or folder.

    Without panels, every panel that makes a figure of the parameters' scheme (a handout's default set);
    errors raise (see :func:`main`); a panel named that cannot be drawn is reported and left out (exit 1).
    """
    from ..export import ExportError
    from ..export.handout import DEFAULT_PAGE, Handout
    from ..export.readiness import StillComputing

    try:
        args, checked, jobs, formats = handout_plan(argv)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    params = checked.jobs[0].params
    _ensure_platform()
    prepare_qt_environment()
    from PySide6.QtWidgets import QApplication

    from .. import __version__
    from ..compute import ComputeService

    setup = [f"Setup: {params.title()}"]
    if checked.pinned is not None:
        setup = [f"A (pinned): {checked.pinned.title()}", f"B: {params.title()}"]
    failures = 0
    with _quiet_qt():
        if QApplication.instance() is None:
            app = QApplication([sys.argv[0] if sys.argv else "posenc-gui"])
            app.setApplicationName("posenc-gui")
            app.setApplicationVersion(__version__)
        compute = ComputeService(processes=False)
        from ..views.plotkit import theme

        previous_theme = theme.current().name  # run in-process, the caller's theme comes back afterwards
        theme.set_theme(checked.theme or previous_theme)
        try:
            handout = Handout(args.output, f"Positional encodings — {params.info.label}", setup,
                              [job.panel_class.title for job in jobs], formats, args.width,
                              page=args.page or DEFAULT_PAGE)
            try:
                for job in jobs:
                    try:
                        with _drawn_panel(job, checked, compute) as panel:
                            problem = _panel_error(panel)
                            if problem:
                                raise ExportError(problem)
                            handout.add(panel)
                    except (ExportError, StillComputing) as error:
                        failures += 1
                        print(f"{PROG}: error: {job.panel_class.panel_id}: {_one_line(error)} (left out)",
                              file=sys.stderr, flush=True)
                written = handout.finish()
            except BaseException:
                handout.abandon()
                raise
        finally:
            theme.set_theme(previous_theme)
            compute.shutdown()
    print(f"wrote {written} ({len(handout.entries)} figures)")
    return EXIT_FAILED if failures else EXIT_OK


def named_panel_classes(args: argparse.Namespace) -> list[type]:
    """The classes of the panels ``args`` (read without any panel's options) names, importing their modules
    only; every panel's for ``--list``, or when a name is no panel's (:func:`~.plan.plan` names them all then).

    Why: the other twenty panel modules cost an export about 75 ms of imports.
    """
    from ..views.registry import declarations, panel_classes

    declared = {declaration.panel_id: declaration for declaration in declarations()}
    if args.list or not args.panels or not set(args.panels) <= declared.keys():
        return panel_classes()
    return [declared[panel_id].load() for panel_id in dict.fromkeys(args.panels)]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``posenc-gui export``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stderr carries our error lines only
        try:
            from ..export import ExportError
            from ..views.registry import panel_classes

            if argv[:1] == ["session"]:
                return write_session_file(argv[1:])
            if argv[:1] == ["handout"]:
                return write_handout(argv[1:])
            classes = None  # the named panels' (their options are not given)
            parser = build_parser(())
            if needs_panel_flags(parser, argv):  # a panel's option may be given, or --help lists them all
                classes = panel_classes()
                parser = build_parser(classes)
            try:
                args = parser.parse_args(argv)
            except SystemExit as done:  # --help
                return int(done.code or 0)
            return run(args, named_panel_classes(args) if classes is None else classes)
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


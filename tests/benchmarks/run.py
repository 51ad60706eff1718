"""Benchmarks of the speed and memory budgets in DESIGN.md. Run from the repository root:

    python tests/benchmarks/run.py            # all sizes, prints a table, checks the budgets
    python tests/benchmarks/run.py --quick    # default size and the largest only
    python tests/benchmarks/run.py --default-steps   # one line: default-size steps (A/B runs)
    python tests/benchmarks/run.py --front spectrum  # one line: the same with a panel in the heatmap's place
    python tests/benchmarks/run.py --switch   # one line: scheme switches into each family (A/B runs)
    python tests/benchmarks/run.py --export   # only the headless export measurements (A/B runs)
    python tests/benchmarks/run.py --scheme rope --quick   # the same with RoPE (Llama 3.1's options)
    python tests/benchmarks/run.py --ab 1d281c6 --default-steps   # alternating A/B against a commit (ab.py)

For each size it builds the real main window (offscreen, 1500×950), then:

- parameter change → repaint: ``state.update`` of d_model to a value the
  window has not had (as in a slider drag, see :class:`Drag`: no step is
  served from the model's caches), wait for every visible panel's result,
  then process the pending paint events; the median over
  :data:`STEP_BLOCKS` blocks of ``--repeats`` consecutive steps with the
  window idle for :data:`BLOCK_PAUSE_S` between blocks (this shared VM's
  speed changes from second to second; the slowest block's median is
  printed beside it). A second table gives each core panel's time, from the
  change to the end of its canvas's last repaint. Base steps are printed
  for information;
- the same default-size steps (d_model and base; the larger median counts)
  with each panel that shares the heatmap's place brought to the front in turn;
- zoom → repaint of each core panel, through the panel's own zoom path;
- GUI stall: the longest gap seen by a 2 ms timer on the GUI thread while
  the same updates run, the GUI thread's CPU time within it, and the 99th
  percentile of the gaps;
- VM steal (Linux ``/proc/stat``), tracemalloc's NumPy peak and the
  process's peak RSS growth;
- start-up (this and the export's measurements: ``fresh_processes.py``):
  launching ``posenc-gui --quit-after-first-paint`` in a fresh
  process to its report of the first fully drawn window, alternating with
  ``bare_window.py`` (PySide6 + pyqtgraph alone, no project code), median
  of 5 and the median ratio;
- headless export: ``posenc-gui export heatmap -o tmp.png`` at 128 × 512 and
  ``bare_export.py`` (pyqtgraph alone writing the same plot as PNG), each in
  a fresh process, alternating, :data:`EXPORT_RUNS` pairs; the median of the
  pairs' ratios. Then :data:`BATCH_FIGURES` figures (four panels at five
  d_model) written by one ``posenc-gui export`` call against one call per
  figure, alternating, :data:`BATCH_RUNS` rounds. The processes cache their
  bytecode (in a folder of their own, after an untimed warm-up run), as an
  installed package does;
- machine check (no budget): a fixed NumPy task of about 3 ms run for 10 s
  without Qt; its median says how fast the machine was during the run.

Budgets (DESIGN.md): at the default size (128 × 512) a parameter change
repaints within :data:`DEFAULT_LAYOUT_BUDGET_MS` median in the default
layout and within :data:`FRONT_BUDGET_MS` with any other panel in the
heatmap's place; 1,048,576 × 8192 within 100 ms median and < 1 GiB peak;
1,048,576 positions within 3× of 1,024; GUI stall ≤ 50 ms; start-up ≤ 1.5 s and
≤ :data:`STARTUP_RATIO_BUDGET` × the bare window;
one headless export within :data:`EXPORT_RATIO_BUDGET` × the bare pyqtgraph
export, and a batch of 20 figures at least :data:`BATCH_SPEEDUP_BUDGET` ×
faster than 20 calls (issue #24).
Exit status 0 when every budget is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

if str(Path(__file__).parent) not in sys.path:  # loaded by the tests: its sibling modules after everything else
    sys.path.append(str(Path(__file__).parent))
from fresh_processes import OFFSCREEN_DESKTOP, STARTUP_RATIO_BUDGET, bench_startup, export_lines  # noqa: E402

if os.environ.setdefault("QT_QPA_PLATFORM", OFFSCREEN_DESKTOP) == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = OFFSCREEN_DESKTOP  # the budgets are for the default, desktop-sized window
from posenc_gui import prepare_qt_environment, tune_memory_allocator  # noqa: E402

prepare_qt_environment()  # as posenc-gui does before its first window
tune_memory_allocator()

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from posenc_gui.mainwindow import PRIMARY_PANELS, MainWindow  # noqa: E402
from posenc_gui.compute import ModelJob  # noqa: E402
from posenc_gui.model import EncodingParams  # noqa: E402
from posenc_gui.model import clear_caches as clear_model_caches  # noqa: E402
from posenc_gui.model import limits  # noqa: E402
from switching import SWITCH_ROUNDS, switch_line, switches, timed_switch  # noqa: E402 (beside this file)

SIZES = [(128, 512), (1024, 512), (8192, 512), (1_048_576, 512),
         (128, 8192), (1024, 8192), (8192, 8192), (1_048_576, 8192)]
QUICK_SIZES = [(128, 512), (1024, 8192), (1_048_576, 8192)]
#: A parameter change at the default size, default layout: one 60 Hz frame (median, ms).
DEFAULT_LAYOUT_BUDGET_MS = 16
#: The same with any other panel in the heatmap's place: two 60 Hz frames (median, ms).
FRONT_BUDGET_MS = 33


class StallMonitor:
    """Intervals between ticks of a 2 ms timer on the GUI thread, and the thread's CPU time in each."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setInterval(2)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[tuple[float, float]] = []
        self._cpu = 0.0

    def start(self) -> None:
        self.gaps = []
        self.clock.start()
        self._cpu = time.thread_time()
        self.timer.start()

    def _tick(self) -> None:
        cpu = time.thread_time()
        self.gaps.append((self.clock.restart() / 1000.0, cpu - self._cpu))
        self._cpu = cpu

    def stop(self) -> tuple[float, float, float]:
        """The longest gap, the GUI thread's CPU time within it, and the 99th percentile of the gaps (s)."""
        self.timer.stop()
        if not self.gaps:
            return 0.0, 0.0, 0.0
        ordered = sorted(self.gaps)
        longest, cpu = ordered[-1]
        return longest, cpu, ordered[int(0.99 * (len(ordered) - 1))][0]


class CanvasPaints:
    """When each panel's canvas last finished a repaint (``time.perf_counter``).

    Wraps pyqtgraph's ``GraphicsView.paintEvent`` until :meth:`close`; the
    wrapper costs a few microseconds per repaint.
    """

    def __init__(self) -> None:
        from pyqtgraph.widgets.GraphicsView import GraphicsView

        self.finished: dict[str, float] = {}
        self._paint = paint = GraphicsView.paintEvent
        finished = self.finished

        def timed_paint(view, event) -> None:
            paint(view, event)
            panel = view.parentWidget()
            while panel is not None and not panel.objectName().startswith("panel-"):
                panel = panel.parentWidget()
            if panel is not None:
                finished[panel.objectName().removeprefix("panel-")] = time.perf_counter()

        GraphicsView.paintEvent = timed_paint

    def close(self) -> None:
        """Put pyqtgraph's own paint back."""
        from pyqtgraph.widgets.GraphicsView import GraphicsView

        GraphicsView.paintEvent = self._paint


CANVAS_PAINTS: CanvasPaints | None = None


class Drag:
    """Parameter values as slider drags pass them: runs of steps in one direction, no value twice.

    The model keeps results by their parameters (the encoded grid that the
    heatmap and similarity share, the Addition panel's samples per d, …), as
    it should for a user who goes back to a value. Steps that alternate
    between two values therefore measured those caches from the third step
    on, not a parameter change: in one process, blocks alternating the two
    ways gave medians of 13.0 against 14.0 ms in the default layout and
    36.7 against 45.2 ms with the Addition panel in front. Here each run of
    ``run_length`` steps is one drag (d_model by 2, base by 0.1 % a step),
    upwards from the highest value so far, then downwards from the lowest,
    and so on: the values stay centred on the window's starting value and a
    range that a drag crosses changes as often as in a real one.
    """

    def __init__(self, window: MainWindow, run_length: int) -> None:
        self.window = window
        self._run_length = run_length
        start = window.state.params
        self._d_model = self._walk(start.d_model, lambda d, k: d + 2 * k,
                                   lambda d: limits.MIN_D_MODEL <= d <= limits.MAX_D_MODEL)
        #: The base the drags step: the sinusoidal ``base``, or RoPE's ``rope_theta``.
        self.base_name = "base" if "base" in start.options else "rope_theta"
        self._base = self._walk(start.options[self.base_name], lambda b, k: b * (1 + 0.001 * k), lambda b: b > 1)

    def _walk(self, start, value_at, allowed):
        """Values ``value_at(start, k)`` for k = 1 … run, −1 … −run, run + 1 …: each run goes on from its side's end."""
        up = down = 0
        while True:
            for direction in (1, -1):
                for _ in range(self._run_length):
                    if direction > 0:
                        up = k = up + 1
                    else:
                        down = k = down - 1
                    value = value_at(start, k)
                    if allowed(value):
                        yield value

    def next_d_model(self) -> int:
        """The next d_model of the drags."""
        return next(self._d_model)

    def next_base(self) -> float:
        """The next base of the drags."""
        return next(self._base)

    def d_model_step(self, _i: int = 0) -> None:
        """Change the window's d_model to the next value (a ``change`` for :func:`step_blocks`)."""
        self.window.state.update(d_model=self.next_d_model())

    def base_step(self, _i: int = 0) -> None:
        """Change the window's base to the next value."""
        self.window.state.update(**{self.base_name: self.next_base()})


def cpu_times() -> list[int] | None:
    """The machine's CPU time counters (Linux ``/proc/stat``), or None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            return [int(field) for field in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


def steal_percent(before: list[int] | None, after: list[int] | None) -> float | None:
    """Share of CPU time the hypervisor took from this virtual machine between two readings."""
    if before is None or after is None:
        return None
    spent = [b - a for a, b in zip(before, after)]
    return 100.0 * spent[7] / max(sum(spent), 1)


def settle(window: MainWindow) -> None:
    """Let the window finish what it started: a pending change, requests, repaints and re-samples.

    A plot whose view range changed (the first layout of a new window sizes
    every plot) re-samples after a pause of its own (:meth:`Panel.debounce`);
    those waiting are run now, or they landed in the first timed step.
    """
    window.state.flush()
    window.compute.wait_idle(120)
    QApplication.processEvents()
    for panel in window.panels.built().values():
        panel.run_debounced()
    window.compute.wait_idle(120)
    QApplication.processEvents()


def timed_update(window: MainWindow, change, per_panel: dict[str, list[float]] | None = None) -> float:
    """Seconds from a change to the repainted window with every visible panel's new data.

    With ``per_panel``, each primary panel's time to the end of its canvas's
    last repaint is appended to ``per_panel[name]``.
    """
    if CANVAS_PAINTS is not None:
        CANVAS_PAINTS.finished.clear()
    start = time.perf_counter()
    change()
    window.state.flush()
    window.compute.wait_idle(120)
    QApplication.processEvents()  # the repaints that the new data scheduled
    end = time.perf_counter()
    if per_panel is not None and CANVAS_PAINTS is not None:
        for name in PRIMARY_PANELS:
            if name in CANVAS_PAINTS.finished:
                per_panel.setdefault(name, []).append(CANVAS_PAINTS.finished[name] - start)
    return end - start


#: ``--scheme rope``: Llama 3.1's frequencies (its scaling type and context) at the sizes measured.
ROPE_OPTIONS = {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
#: The scheme the window opens with (``--scheme``).
SCHEME = "sinusoidal"


def open_window(seq_len: int, d_model: int) -> MainWindow:
    """The real main window at this size and :data:`SCHEME`, shown, settled, its start-up objects frozen."""
    params = EncodingParams(seq_len=seq_len, d_model=d_model)
    if SCHEME == "rope":
        params = params.replaced(scheme="rope", **ROPE_OPTIONS)
    window = MainWindow(params=params, restore=False)
    window.resize(1500, 950)
    window.show()
    for _ in range(3):
        settle(window)
    gc.freeze()  # as posenc-gui does once its window is up (see __main__)
    return window


#: Blocks of consecutive parameter steps per size, and the idle pause between two blocks.
STEP_BLOCKS = 6
BLOCK_PAUSE_S = 0.3


def idle(seconds: float) -> None:
    """Let the window sit idle (its timers and events run) for ``seconds``.

    The objects deleted later (``deleteLater``) go too, as the app's event
    loop deletes them: ``processEvents`` alone never does, and a dock layout
    restored at each scheme switch left a dozen tab bars behind, which every
    later switch laid out again (restoreState 18 → 27 ms in five rounds).
    """
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        QApplication.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        time.sleep(0.005)


def step_blocks(window: MainWindow, change, repeats: int, blocks: int,
                per_panel: dict[str, list[float]] | None = None) -> list[list[float]]:
    """Seconds per step, in ``blocks`` blocks of ``repeats`` steps, idle :data:`BLOCK_PAUSE_S` between blocks.

    ``change(i)`` makes step ``i``, counted from 1 across the blocks (the
    methods of :class:`Drag` ignore ``i``: each of their steps is new).
    """
    times = []
    for block in range(blocks):
        if block:
            idle(BLOCK_PAUSE_S)
        first = block * repeats + 1
        times.append([timed_update(window, lambda i=i: change(i), per_panel) for i in range(first, first + repeats)])
    return times


def zoom_range(windows: list[tuple[int, int]], step: int) -> tuple[int, int]:
    """The view range of zoom ``step``: the windows in turn, each round a little narrower than the last.

    A view range seen before would measure the model's cache, not a zoom:
    the first 45 steps (the timed pass: three panels, 15 zooms each) are all
    different ranges, even for a window given twice in a round (the second
    is narrowed half a step more). Later rounds start wide again before a
    window would shrink to nothing.
    """
    low, high = windows[step % len(windows)]
    narrowing = 2 * (step // len(windows)) + (windows.index((low, high)) != step % len(windows))
    inset = narrowing * max(1, (high - low) // 194) % max(1, (high - low) // 2 - 1)
    return low + inset, high - inset


def base_steps(drag: Drag, repeats: int, blocks: int = 1) -> list[list[float]]:
    """Seconds per base step of ``drag``'s window, in blocks (see :func:`step_blocks`); a base step keeps the matrix shapes."""
    return step_blocks(drag.window, drag.base_step, repeats, blocks)


def all_steps(blocks: list[list[float]]) -> list[float]:
    """The steps of every block, in order."""
    return [seconds for block in blocks for seconds in block]


def bench_size(app: QApplication, seq_len: int, d_model: int, repeats: int) -> dict:
    window = open_window(seq_len, d_model)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    last = seq_len - 1
    windows = [(max(0, last - 50), last), (0, last), (last // 2, last // 2 + 300), (0, last)]
    drag = Drag(window, repeats)
    # What each panel zooms: the heatmap's positions, the waveforms' positions,
    # the similarity matrix's positions in both directions.
    zoomed = {"heatmap": (window.panels["heatmap"].matrix.view_box, ("yRange",)),
              "waveforms": (window.panels["waveforms"].plot.getViewBox(), ("xRange",)),
              "similarity": (window.panels["similarity"].matrix.view_box, ("xRange", "yRange"))}

    zoom_steps = itertools.count()

    def zoom(name, _i):
        view_box, axes = zoomed[name]
        view_box.setRange(**{axis: zoom_range(windows, next(zoom_steps)) for axis in axes}, padding=0)
        view_box.sigRangeChangedManually.emit(["xRange" in axes, "yRange" in axes])  # as the mouse does
        window.panels[name].run_debounced()  # now, not after the panel's 30 ms pause

    def run_all(per_panel=None, blocks=1):
        params = step_blocks(window, drag.d_model_step, repeats, blocks, per_panel)
        zooms = {name: [timed_update(window, lambda i=i: zoom(name, i)) for i in range(repeats)]
                 for name in PRIMARY_PANELS}
        return params, zooms

    cpu_before = cpu_times()
    per_panel: dict[str, list[float]] = {}
    param_blocks, zoom_times = run_all(per_panel, STEP_BLOCKS)  # timing pass: nothing else running
    base_times = all_steps(base_steps(drag, repeats))
    monitor = StallMonitor()
    monitor.start()
    run_all()
    stall, stall_cpu, stall_p99 = monitor.stop()
    steal = steal_percent(cpu_before, cpu_times())
    tracemalloc.start()
    run_all()
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before  # KiB on Linux
    window.close()
    window.deleteLater()
    QApplication.processEvents()
    gc.unfreeze()  # let the next size's run start clean
    gc.collect()
    return {
        "size": f"{seq_len:,} × {d_model:,}",
        "seq_len": seq_len,
        "d_model": d_model,
        "param_ms": 1000 * statistics.median(all_steps(param_blocks)),
        "slowest_block_ms": 1000 * max(statistics.median(block) for block in param_blocks),
        # Every step repaints every primary panel; a panel missing from some steps would be a bug shown here.
        "panel_ms": {name: (1000 * statistics.median(times), len(times)) for name, times in per_panel.items()},
        "base_ms": 1000 * statistics.median(base_times),
        "zoom_ms": {name: 1000 * statistics.median(times) for name, times in zoom_times.items()},
        "stall_ms": 1000 * stall,
        "stall_cpu_ms": 1000 * stall_cpu,
        "stall_p99_ms": 1000 * stall_p99,
        "steal_percent": steal,
        "traced_mib": traced_peak / 2**20,
        "rss_growth_mib": rss_growth / 1024,
    }


def clear_caches(window: MainWindow) -> None:
    """Forget the model's kept results, in this process and in the worker process."""
    clear_model_caches()
    window.compute.submit("clear caches", ModelJob(clear_model_caches), lambda _: None)
    window.compute.wait_idle(120)


#: Blocks of steps per panel brought to the front (fewer than for the sizes: eight panels take their turn).
FRONT_BLOCKS = 3


def bench_fronts(window: MainWindow, repeats: int, blocks: int = FRONT_BLOCKS,
                 only: str | None = None, base_blocks: int = 1) -> dict[str, tuple[float, float, float]]:
    """Each panel that shares the heatmap's place brought to the front in turn, and d_model and base steps.

    Returns, per panel: the median and the slowest block's median (ms) of
    the d_model steps while it is the visible panel there, with the
    waveforms and the similarity panel beside it, as a user sees it after
    clicking its tab, and the median of one block of base steps. Both
    count for the budget: a panel may not depend on d_model (the
    permutation demo has its own), and then a d_model step leaves it as it
    is. With ``only``, that panel alone (``ValueError`` naming the choices
    if it does not share the heatmap's place); ``base_blocks`` blocks of
    base steps.
    """
    fronts = {}
    tabbed = window.tabifiedDockWidgets(window.docks["heatmap"])
    names = [name for name, dock in window.docks.items() if dock in tabbed]
    if only is not None and only not in names:
        raise ValueError(f"--front must be one of {', '.join(names)}; got {only!r}")
    start = window.state.params
    for name in names if only is None else [only]:
        dock = window.docks[name]
        dock.raise_()
        window.state.set_params(start)
        for _ in range(3):
            settle(window)
        # Each panel drags through the same values, computed afresh: none kept from another panel's turn.
        clear_caches(window)
        drag = Drag(window, repeats)
        times = step_blocks(window, drag.d_model_step, repeats, blocks)
        base_times = base_steps(drag, repeats, base_blocks)
        fronts[name] = (1000 * statistics.median(all_steps(times)), 1000 * max(map(statistics.median, times)),
                        1000 * statistics.median(all_steps(base_times)))
    window.state.set_params(start)
    settle(window)
    window.docks["heatmap"].raise_()
    return fronts


def machine_check(seconds: float = 10.0) -> list[tuple[float, float]]:
    """Wall and thread CPU seconds per run of a fixed NumPy task (no Qt, no workers), with 4 ms pauses.

    The task is the colour mapping the heatmap does at a worker size, three
    times: a control measurement for the benchmark's figures, not part of
    the app. A run whose CPU time falls short of its wall time waited for the
    CPU: nothing else of this process runs meanwhile, so another process or
    the hypervisor held it.
    """
    values = np.random.default_rng(0).random((249, 911))
    palette = np.arange(256, dtype=np.uint32)
    durations = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start, cpu_start = time.perf_counter(), time.thread_time()
        for _ in range(3):
            scaled = np.subtract(values, -1.0)
            scaled *= 128.0
            np.clip(scaled, 0, 255, out=scaled)
            palette[scaled.astype(np.uint8)]
        durations.append((time.perf_counter() - start, time.thread_time() - cpu_start))
        time.sleep(0.004)
    return durations


def default_steps(app: QApplication, repeats: int) -> str:
    """One line for A/B comparisons: median d_model and base step at the default size."""
    window = open_window(128, 512)
    drag = Drag(window, repeats)
    cpu_before = cpu_times()
    d_blocks = step_blocks(window, drag.d_model_step, repeats, STEP_BLOCKS)
    b_blocks = base_steps(drag, repeats, STEP_BLOCKS)
    steal = steal_percent(cpu_before, cpu_times())
    window.close()
    return (f"128 × 512: d_model step {1000 * statistics.median(all_steps(d_blocks)):.2f} ms "
            f"(slowest block {1000 * max(map(statistics.median, d_blocks)):.2f}), "
            f"base step {1000 * statistics.median(all_steps(b_blocks)):.2f} ms, VM steal "
            + ("n/a" if steal is None else f"{steal:.1f} %"))


def switch_steps(app: QApplication, rounds: int = SWITCH_ROUNDS) -> str:
    """One line for A/B comparisons: the median scheme switch into each family, the slowest first.

    The window opens at the default size as :func:`open_window` does, visits
    each family's layout once (untimed: the first visit builds its panels),
    then switches through :func:`switching.switches` ``rounds`` times, idle
    :data:`BLOCK_PAUSE_S` before each switch (a user does not switch twice
    in one frame); see :func:`switching.timed_switch`.
    """
    window = open_window(128, 512)
    plan = switches(ROPE_OPTIONS)
    for scheme, options in plan:
        window.state.update(scheme=scheme, **options)
        for _ in range(3):
            settle(window)
    times: dict[str, list[tuple[float, float]]] = {scheme: [] for scheme, _ in plan}
    cpu_before = cpu_times()
    for _ in range(rounds):
        for scheme, options in plan:
            idle(BLOCK_PAUSE_S)
            times[scheme].append(timed_switch(window, scheme, options, CANVAS_PAINTS))
    steal = steal_percent(cpu_before, cpu_times())
    window.close()
    return switch_line(times, rounds, steal)


def front_steps(app: QApplication, name: str, repeats: int) -> str:
    """One line for A/B comparisons: median d_model and base step at the default size with ``name`` in front."""
    window = open_window(128, 512)
    try:
        (median, slowest, base), = bench_fronts(window, repeats, STEP_BLOCKS, only=name,
                                                base_blocks=STEP_BLOCKS).values()
    finally:
        window.close()
    return (f"128 × 512, {name} in front: d_model step {median:.2f} ms (slowest block {slowest:.2f}), "
            f"base step {base:.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer sizes")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--default-steps", action="store_true",
                        help="only the default-size steps, one line (for alternating two versions)")
    parser.add_argument("--front", metavar="PANEL",
                        help="only the default-size steps with PANEL (e.g. spectrum) in the heatmap's place, one line")
    parser.add_argument("--switch", action="store_true",
                        help="only the scheme switches at the default size, one line: the median switch into each "
                             "family (rope, alibi, t5, sinusoidal), the slowest first (for A/B runs)")
    parser.add_argument("--scheme", choices=("sinusoidal", "rope"), default="sinusoidal",
                        help="the scheme of the window measured (rope: Llama 3.1's options; the drags step rope_theta)")
    parser.add_argument("--export", action="store_true",
                        help="only the headless export measurements: one figure, and a batch (checks their budgets)")
    parser.add_argument("--ab", metavar="REV",
                        help="alternate fresh processes of REV (its own worktree and install) and this checkout "
                             "over the line the other options ask for (default --default-steps); see ab.py")
    args, rest = parser.parse_known_args()
    if args.ab:
        import ab  # beside this file; imports nothing of posenc_gui

        return ab.main([args.ab, "--", *[a for a in sys.argv[1:] if a not in ("--ab", args.ab)]])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    global SCHEME
    SCHEME = args.scheme
    if args.export:
        lines, failures = export_lines()
        print("\n".join(lines))
        print("budgets: all met" if not failures else "budgets missed:\n  " + "\n  ".join(failures))
        return 1 if failures else 0
    app = QApplication.instance() or QApplication([])
    global CANVAS_PAINTS
    CANVAS_PAINTS = CanvasPaints()
    if args.default_steps:
        print(default_steps(app, args.repeats))
        return 0
    if args.switch:
        print(switch_steps(app))
        return 0
    if args.front:
        try:
            print(front_steps(app, args.front, args.repeats))
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        return 0
    rows = [bench_size(app, n, d, args.repeats) for n, d in (QUICK_SIZES if args.quick else SIZES)]
    print(f"{'size (positions × d_model)':>28} {'param→paint ms':>15} {'(slowest block)':>16} {'(base step)':>12} {'zoom→paint ms':>14} "
          f"{'GUI stall ms':>13} {'(its CPU)':>10} {'(99th pct)':>11} {'numpy peak MiB':>15} {'RSS growth MiB':>15} {'VM steal %':>11}")
    for r in rows:
        steal = "n/a" if r["steal_percent"] is None else f"{r['steal_percent']:.1f}"
        print(f"{r['size']:>28} {r['param_ms']:>15.1f} {r['slowest_block_ms']:>16.1f} {r['base_ms']:>12.1f} {max(r['zoom_ms'].values()):>14.1f} {r['stall_ms']:>13.1f} "
              f"{r['stall_cpu_ms']:>10.1f} {r['stall_p99_ms']:>11.1f} {r['traced_mib']:>15.1f} {r['rss_growth_mib']:>15.1f} {steal:>11}")
    print(f"\neach panel, median ms: parameter change → its repaint (steps that repainted it, of {args.repeats * STEP_BLOCKS})"
          " | zoom of that panel → its repaint")
    print(f"{'size (positions × d_model)':>28}" + "".join(f"{name:>22}" for name in PRIMARY_PANELS))
    for r in rows:
        cells = []
        for name in PRIMARY_PANELS:
            change = r["panel_ms"].get(name)
            shown = "-" if change is None else f"{change[0]:.1f} ({change[1]})"
            cells.append(f"{shown} | {r['zoom_ms'][name]:.1f}")
        print(f"{r['size']:>28}" + "".join(f"{cell:>22}" for cell in cells))
    window = open_window(128, 512)
    fronts = bench_fronts(window, args.repeats)
    window.close()
    print(f"\ndefault size, another panel in front of the heatmap (as after clicking its tab), "
          f"d_model step median ms over {args.repeats * FRONT_BLOCKS} steps (slowest block; "
          f"base step median over {args.repeats}):")
    print("  " + "; ".join(f"{name} {median:.1f} ({slowest:.1f}; base {base:.1f})"
                           for name, (median, slowest, base) in fronts.items()))
    startup, exit_time, bare_startup, startup_ratio = bench_startup()
    print(f"start-up to first painted window: {startup:.2f} s (process exit after it: {exit_time:.2f} s); "
          f"bare PySide6 + pyqtgraph window {bare_startup:.2f} s; median ratio {startup_ratio:.2f} "
          f"(budget {STARTUP_RATIO_BUDGET:g})")
    export_report, export_failures = export_lines()
    print("\n".join(export_report))
    runs = sorted(machine_check())
    walls = [wall for wall, _ in runs]
    median, longest = statistics.median(walls), walls[-1]
    slowest = runs[int(0.99 * (len(runs) - 1)):]
    cpu_share = sum(cpu for _, cpu in slowest) / sum(wall for wall, _ in slowest)
    print(f"machine check (no budget; a fixed NumPy task, no Qt, no workers): {len(runs):,} runs, "
          f"median {1000 * median:.1f} ms, 99th percentile {1000 * walls[int(0.99 * (len(walls) - 1))]:.1f} ms, "
          f"longest {1000 * longest:.1f} ms ({longest / median:.1f}× the median); "
          f"the slowest 1 % had the CPU {100 * cpu_share:.0f} % of their time")

    failures = []
    by_size = {(r["seq_len"], r["d_model"]): r for r in rows}
    default = by_size.get((128, 512))
    if default and default["param_ms"] > DEFAULT_LAYOUT_BUDGET_MS:
        failures.append(f"default size: {default['param_ms']:.1f} ms > {DEFAULT_LAYOUT_BUDGET_MS} ms")
    for name, (median, _, base) in fronts.items():
        if max(median, base) > FRONT_BUDGET_MS:
            failures.append(f"default size with {name} in front: {max(median, base):.1f} ms > {FRONT_BUDGET_MS} ms "
                            f"({'d_model' if median >= base else 'base'} step)")
    largest = by_size.get((1_048_576, 8192))
    if largest:
        slowest_zoom = max(largest["zoom_ms"].values())
        if largest["param_ms"] > 100 or slowest_zoom > 100:
            failures.append(f"1,048,576 × 8192: {largest['param_ms']:.1f} / {slowest_zoom:.1f} ms > 100 ms")
        if largest["rss_growth_mib"] > 1024:
            failures.append(f"1,048,576 × 8192: peak memory growth {largest['rss_growth_mib']:.0f} MiB > 1 GiB")
    for d in (512, 8192):
        small, big = by_size.get((1024, d)), by_size.get((1_048_576, d))
        if small and big and big["param_ms"] > 3 * max(small["param_ms"], 1.0):
            failures.append(f"d_model {d}: 1,048,576 positions {big['param_ms']:.1f} ms > 3 × "
                            f"1,024 positions {small['param_ms']:.1f} ms")
    for r in rows:
        if r["stall_ms"] > 50:
            failures.append(f"{r['size']}: GUI thread stalled {r['stall_ms']:.0f} ms > 50 ms")
    if startup > 1.5:
        failures.append(f"start-up {startup:.2f} s > 1.5 s")
    if startup_ratio > STARTUP_RATIO_BUDGET:
        failures.append(f"start-up {startup_ratio:.2f} × the bare window > {STARTUP_RATIO_BUDGET:g}")
    failures += export_failures
    print("budgets: all met" if not failures else "budgets missed:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

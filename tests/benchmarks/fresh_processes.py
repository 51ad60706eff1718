"""The benchmarks that time fresh processes: start-up to the first painted window, and headless export.

Each runs the app (``python -m posenc_gui``) and a bare PySide6 + pyqtgraph
counterpart (``bare_window.py``, ``bare_export.py``) alternately in fresh
processes and compares them pair by pair, so a change of the machine's
speed between pairs cancels out. Used by ``run.py``; this module imports
nothing of posenc_gui or Qt (the processes it starts do).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ab import OFFSCREEN_DESKTOP, first_paint_seconds  # beside this file

#: Start-up to the first painted window within this many times the bare PySide6 + pyqtgraph window's.
STARTUP_RATIO_BUDGET = 1.3
BARE_WINDOW = Path(__file__).with_name("bare_window.py")


def bench_startup(repeats: int = 5) -> tuple[float, float, float, float]:
    """Median wall times of a fresh ``posenc-gui`` process: to its first fully drawn window, and to its exit;
    the bare window's (``bare_window.py``) to its first paint; and the median ratio of alternating pairs.

    The process prints a line once every visible panel has drawn its data
    and the window has been painted; that moment is the start-up time. The
    exit (saving settings, tearing Qt down) is reported beside it.
    """
    with tempfile.TemporaryDirectory(prefix="posenc-bench-startup-") as folder:
        env = {**export_env(os.path.join(folder, "bytecode")), "QT_QPA_PLATFORM": OFFSCREEN_DESKTOP,
               "POSENC_GUI_SETTINGS": os.path.join(folder, "settings.ini")}
        app = [sys.executable, "-m", "posenc_gui", "--no-restore", "--quit-after-first-paint"]
        bare = [sys.executable, str(BARE_WINDOW)]
        first_paint_seconds(app, env), first_paint_seconds(bare, env)  # warm-up: bytecode and page cache
        pairs = [(first_paint_seconds(app, env), first_paint_seconds(bare, env)[0]) for _ in range(repeats)]
    return (statistics.median(a[0] for a, _ in pairs), statistics.median(a[1] for a, _ in pairs),
            statistics.median(b for _, b in pairs), statistics.median(a[0] / b for a, b in pairs))


#: One figure exported headless within this many times a bare pyqtgraph export of the same plot.
EXPORT_RATIO_BUDGET = 1.25
#: Pairs of fresh processes (posenc-gui export, bare pyqtgraph) timed alternately.
EXPORT_RUNS = 5
#: The batch: these panels at these d_model, one figure each.
BATCH_PANELS = ("heatmap", "similarity", "waveforms", "magnitude")
BATCH_D_MODELS = (32, 64, 128, 256, 512)
BATCH_FIGURES = len(BATCH_PANELS) * len(BATCH_D_MODELS)
#: The batch in one call at least this many times faster than one call per figure.
BATCH_SPEEDUP_BUDGET = 4.0
#: Rounds of (one batch call, one call per figure), alternating.
BATCH_RUNS = 3
BARE_EXPORT = Path(__file__).with_name("bare_export.py")


def export_env(bytecode: str) -> dict[str, str]:
    """A fresh process's environment as a user's: offscreen, no display, bytecode cached in ``bytecode``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONDONTWRITEBYTECODE")}
    return {**env, "QT_QPA_PLATFORM": "offscreen", "PYTHONPYCACHEPREFIX": bytecode}


def timed_process(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of ``command`` in a fresh process; RuntimeError if it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}): {done.stderr.strip()}")
    return elapsed


def export_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "posenc_gui", "export", *args]


def bench_export(runs: int = EXPORT_RUNS) -> tuple[float, float, float]:
    """Median seconds of one headless heatmap export and of the bare pyqtgraph export, and the median ratio.

    Each pair runs the two one after the other in fresh processes; the
    ratio of each pair is taken before the median, so a change of the
    machine's speed between pairs cancels out.
    """
    with tempfile.TemporaryDirectory(prefix="posenc-bench-export-") as folder:
        env = export_env(os.path.join(folder, "bytecode"))
        app = export_command("heatmap", "-o", os.path.join(folder, "app.png"))
        bare = [sys.executable, str(BARE_EXPORT), os.path.join(folder, "bare.png")]
        timed_process(app, env), timed_process(bare, env)  # warm-up: bytecode written
        pairs = [(timed_process(app, env), timed_process(bare, env)) for _ in range(runs)]
    return (statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
            statistics.median(a / b for a, b in pairs))


def bench_batch(runs: int = BATCH_RUNS) -> tuple[float, float, float]:
    """Median seconds of :data:`BATCH_FIGURES` PNGs in one call and in one call each, and the median speed-up."""
    d_models = ",".join(map(str, BATCH_D_MODELS))
    with tempfile.TemporaryDirectory(prefix="posenc-bench-batch-") as folder:
        env = export_env(os.path.join(folder, "bytecode"))
        timed_process(export_command("heatmap", "-o", os.path.join(folder, "warm-up.png")), env)
        rounds = []
        for run in range(runs):
            batch = os.path.join(folder, f"batch{run}") + os.sep
            one_call = timed_process(export_command(*BATCH_PANELS, "-o", batch, "--d-model", d_models), env)
            if len(os.listdir(batch)) != BATCH_FIGURES:
                raise RuntimeError(f"the batch wrote {len(os.listdir(batch))} files, not {BATCH_FIGURES}")
            calls = sum(timed_process(export_command(panel, "-o", os.path.join(folder, f"{panel}{d}.png"),
                                                     "--d-model", str(d)), env)
                        for d in BATCH_D_MODELS for panel in BATCH_PANELS)
            rounds.append((one_call, calls))
    return (statistics.median(one for one, _ in rounds), statistics.median(calls for _, calls in rounds),
            statistics.median(calls / one for one, calls in rounds))


def export_lines() -> tuple[list[str], list[str]]:
    """The export measurements' lines and their missed budgets."""
    app, bare, ratio = bench_export()
    one_call, calls, speedup = bench_batch()
    lines = [f"headless export, heatmap 128 × 512 PNG: {app:.2f} s; bare pyqtgraph export of the same plot "
             f"{bare:.2f} s; median ratio {ratio:.2f} (budget {EXPORT_RATIO_BUDGET:g})",
             f"batch export, {BATCH_FIGURES} PNGs: one call {one_call:.2f} s, {BATCH_FIGURES} calls {calls:.2f} s; "
             f"median speed-up {speedup:.1f}× (budget {BATCH_SPEEDUP_BUDGET:g}×)"]
    failures = []
    if ratio > EXPORT_RATIO_BUDGET:
        failures.append(f"headless export {ratio:.2f} × the bare pyqtgraph export > {EXPORT_RATIO_BUDGET:g}")
    if speedup < BATCH_SPEEDUP_BUDGET:
        failures.append(f"batch export of {BATCH_FIGURES} figures only {speedup:.1f}× faster than "
                        f"{BATCH_FIGURES} calls < {BATCH_SPEEDUP_BUDGET:g}×")
    return lines, failures

"""The benchmark script's measurements record what they claim (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).parent / "benchmarks" / "run.py"


@pytest.fixture
def bench(qapp):
    spec = importlib.util.spec_from_file_location("posenc_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.CANVAS_PAINTS = module.CanvasPaints()
    yield module
    module.CANVAS_PAINTS.close()


def test_a_timed_step_records_each_primary_panels_repaint(make_window, bench):
    from posenc_gui.mainwindow import PRIMARY_PANELS
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    per_panel: dict[str, list[float]] = {}
    total = bench.timed_update(window, lambda: window.state.update(d_model=62), per_panel)
    assert window.panels["similarity"].matrix_data.params.d_model == 62
    assert set(per_panel) == set(PRIMARY_PANELS)
    for name, (seconds,) in per_panel.items():
        assert 0 < seconds <= total, name
    # A step that changes nothing repaints no canvas and records nothing (once the first step's
    # late work, e.g. a re-sample after its range change, is done: it belongs to that step).
    bench.settle(window)
    per_panel.clear()
    bench.timed_update(window, lambda: None, per_panel)
    assert per_panel == {}


def test_a_settled_window_has_no_re_sample_waiting(make_window, bench):
    # A new window's first layout changes its plots' view ranges, and each such plot
    # re-samples after a 30 ms pause: still waiting, that landed in the first timed step
    # (a no-change step then recorded a waveforms repaint, 1 run in 100 on a loaded machine).
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    waveforms = window.panels["waveforms"]
    waveforms.plot.getViewBox().setXRange(4, 12, padding=0)  # as a zoom does: the re-sample waits 30 ms
    bench.settle(window)
    waiting = [(name, slot) for name, panel in window.panels.built().items()
               for timer, slot in panel._debounced if timer.isActive()]
    assert waiting == []
    assert waveforms.data.curve_x[0] >= 3 and waveforms.data.curve_x[-1] <= 13  # sampled for the new view


def test_step_blocks_pause_idle_between_blocks_of_consecutive_steps(make_window, bench, monkeypatch):
    from PySide6.QtCore import QTimer

    from posenc_gui.mainwindow import PRIMARY_PANELS
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    monkeypatch.setattr(bench, "BLOCK_PAUSE_S", 0.1)
    steps, timer_fired_before_step, fired, pauses = [], [], [], []
    timed_update, idle = bench.timed_update, bench.idle

    def change(i):
        steps.append(i)
        timer_fired_before_step.append(bool(fired))
        window.state.update(d_model=64 - 2 * (i % 2))

    def timed_then_post(*args):
        seconds = timed_update(*args)
        if len(steps) == 3:  # the first block's last step is over: only the pause can run this timer
            QTimer.singleShot(0, lambda: fired.append(True))
        return seconds

    def counted_idle(seconds):
        pauses.append((len(steps), seconds))
        idle(seconds)

    monkeypatch.setattr(bench, "timed_update", timed_then_post)
    monkeypatch.setattr(bench, "idle", counted_idle)
    per_panel: dict[str, list[float]] = {}
    blocks = bench.step_blocks(window, change, repeats=3, blocks=2, per_panel=per_panel)
    assert [len(block) for block in blocks] == [3, 3]
    # Every step changed d_model, the first of a block too, so every step repainted every panel.
    assert {name: len(times) for name, times in per_panel.items()} == {name: 6 for name in PRIMARY_PANELS}
    assert all(seconds > 0 for block in blocks for seconds in block)
    assert steps == [1, 2, 3, 4, 5, 6]
    assert pauses == [(3, 0.1)]  # one pause of BLOCK_PAUSE_S, between the blocks
    # The window's events ran during the pause: the timer fired before the second block began.
    assert timer_fired_before_step == [False, False, False, True, True, True]


def test_each_panel_sharing_the_heatmaps_place_is_measured_in_front(make_window, bench, monkeypatch):
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    tabbed = {name for name, dock in window.docks.items()
              if dock in window.tabifiedDockWidgets(window.docks["heatmap"])}
    in_front, changes_per_block = [], []
    measure = bench.step_blocks
    start = window.state.params
    emitted = []
    window.state.paramsChanged.connect(emitted.append)

    def step_blocks(*args, **kwargs):
        in_front.append({name for name in tabbed | {"heatmap"} if window.panels[name].on_screen()})
        before = len(emitted)
        result = measure(*args, **kwargs)
        changes_per_block.append(len(emitted) - before)
        return result

    cleared_at = []  # how many changes had been made when the model's caches were cleared
    monkeypatch.setattr(bench, "step_blocks", step_blocks)
    monkeypatch.setattr(bench, "clear_caches", lambda _window: cleared_at.append(len(emitted)))
    fronts = bench.bench_fronts(window, repeats=3, blocks=1)
    assert "spectrum" in tabbed and set(fronts) == tabbed
    assert changes_per_block == [3] * len(in_front)  # every step changed a parameter
    # Each panel's turn starts from the starting parameters with the caches
    # cleared, and none of its steps goes back to parameters it had before.
    turns = [emitted[at:at + 6] for at in cleared_at]
    assert len(turns) == len(fronts)
    for turn in turns:
        assert len(turn) == 6 and len(set(turn)) == 6 and start not in turn
        assert [p.d_model for p in turn[:3]] == [64 + 2, 64 + 4, 64 + 6]  # one upward drag
        assert {p.d_model for p in turn[3:]} == {64 + 6}  # then base steps
    # While a panel's steps ran, it was the one panel on screen in the heatmap's place.
    # (two blocks per panel: d_model steps, then base steps)
    assert [shown for shown in in_front] == [{name} for name in fronts for _ in range(2)]
    assert all(0 < slowest and 0 < median <= slowest and 0 < base for median, slowest, base in fronts.values())
    assert window.panels["heatmap"].on_screen()
    assert window.state.params == start  # put back as it was


def test_drags_run_one_way_then_the_other_never_returning_to_a_value(make_window, bench):
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams.validated(seq_len=32, d_model=64, base=10000.0),
                         restore=False)
    drag = bench.Drag(window, run_length=3)
    d_models = [drag.next_d_model() for _ in range(12)]
    assert d_models == [66, 68, 70, 62, 60, 58, 72, 74, 76, 56, 54, 52]
    bases = [drag.next_base() for _ in range(6)]
    assert bases == pytest.approx([10010.0, 10020.0, 10030.0, 9990.0, 9980.0, 9970.0], rel=1e-12)
    # At the edge of the allowed range the drags go one way only.
    edge = bench.Drag(make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=8190),
                                  restore=False), run_length=2)
    assert [edge.next_d_model() for _ in range(5)] == [8192, 8188, 8186, 8184, 8182]
    # The steps change the window to the drags' next values.
    drag.d_model_step()
    drag.base_step()
    window.state.flush()
    assert (window.state.params.d_model, window.state.params.options["base"]) == (78, pytest.approx(10040.0, rel=1e-12))


@pytest.mark.parametrize("length", [128, 1024, 8192, 1_048_576])
def test_zooms_never_return_to_a_view_range_in_the_timed_pass(bench, length):
    last = length - 1
    windows = [(max(0, last - 50), last), (0, last), (last // 2, last // 2 + 300), (0, last)]
    ranges = [bench.zoom_range(windows, step) for step in range(3 * 3 * 15)]
    assert len(set(ranges[:45])) == 45
    assert all(low < high for low, high in ranges)
    # each a window of the list, narrowed evenly at both ends
    assert all((low + high) == sum(windows[step % 4]) for step, (low, high) in enumerate(ranges))


def test_one_panel_can_be_measured_in_front_alone(make_window, bench, monkeypatch):
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    measured = []
    measure = bench.step_blocks

    def step_blocks(window, change, repeats, blocks, per_panel=None):
        measured.append(({name for name in window.panels.built() if window.panels[name].on_screen()},
                         change.__name__, blocks))
        return measure(window, change, repeats, blocks, per_panel)

    monkeypatch.setattr(bench, "step_blocks", step_blocks)
    fronts = bench.bench_fronts(window, repeats=2, blocks=2, only="spectrum", base_blocks=3)
    assert list(fronts) == ["spectrum"]
    shown = {"spectrum", "waveforms", "similarity", "parameters", "walkthrough"}
    assert measured == [(shown, "d_model_step", 2), (shown, "base_step", 3)]
    with pytest.raises(ValueError, match="--front must be one of .*spectrum.*; got 'heatmap'"):
        bench.bench_fronts(window, repeats=2, only="heatmap")


@pytest.mark.parametrize("anchor", ["bare_export.py", "bare_window.py", "ab.py"])
def test_an_anchor_script_imports_nothing_of_posenc_gui(anchor):
    """An anchor measures the libraries alone: importing the project would put its cost on both sides."""
    import ast

    tree = ast.parse((BENCHMARK.parent / anchor).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported, "the parse found no imports at all"
    assert not {name for name in imported if name.split(".")[0] == "posenc_gui"}


def test_the_ab_tool_takes_the_first_step_figure_of_a_benchmark_line():
    spec = importlib.util.spec_from_file_location("posenc_ab", BENCHMARK.parent / "ab.py")
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    line = "128 × 512: d_model step 21.40 ms (slowest block 25.00), base step 19.10 ms, VM steal 0.0 %"
    assert float(ab.FIRST_MS.search(line).group(1)) == 21.40
    front = "128 × 512, spectrum in front: d_model step 30.5 ms (slowest block 31.00), base step 29.00 ms"
    assert float(ab.FIRST_MS.search(front).group(1)) == 30.5


def test_the_ab_tool_starts_its_processes_on_a_desktop_sized_screen(tmp_path):
    """Qt's own offscreen screen is 800 × 800: the app's window opened at that size with the waveforms and
    similarity docks hidden, and ``--startup`` timed a window with two core panels fewer than a user's."""
    import subprocess

    from waiting import TIMEOUT_S

    spec = importlib.util.spec_from_file_location("posenc_ab", BENCHMARK.parent / "ab.py")
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    screen = ("from PySide6.QtWidgets import QApplication; app = QApplication([]); "
              "size = app.primaryScreen().size(); print(size.width(), size.height())")
    done = subprocess.run([sys.executable, "-I", "-c", screen], capture_output=True, text=True,
                          env=ab.environment(tmp_path), timeout=TIMEOUT_S)
    assert done.stdout.split() == ["1920", "1200"], done.stdout + done.stderr


#: Runs an anchor or the app to its ``first paint`` line, counting the paints of its plot canvases before it.
PAINTED_BEFORE_REPORT = """
import builtins, json, runpy, sys
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QGraphicsView

class Paints(QObject):
    count = 0
    def eventFilter(self, watched, event):
        parent = watched.parent()
        if event.type() == QEvent.Type.Paint and isinstance(parent, QGraphicsView) and parent.viewport() is watched:
            Paints.count += 1
        return False

paints = Paints()
print_ = builtins.print
def reporting(*args, **kwargs):
    if args and str(args[0]).startswith("first paint"):
        print_(json.dumps({"canvas paints": Paints.count}), flush=True)
    print_(*args, **kwargs)
builtins.print = reporting
app = QApplication([])
app.installEventFilter(paints)
sys.argv = sys.argv[1:]
if sys.argv[0] == "posenc-gui":
    from posenc_gui.cli import main
    main(sys.argv[1:])
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("command", [["bare_window.py"], ["posenc-gui", "--no-restore", "--quit-after-first-paint"]])
def test_the_start_up_benchmark_s_first_paint_has_painted_the_plots(tmp_path, command):
    """Both sides of ``ab.py --startup`` report once their plots are drawn: a window is exposed a few event-loop
    passes after ``show()``, and a repaint before that draws nothing (the anchor once reported then, ~16 ms early)."""
    import json
    import os
    import subprocess
    import sys

    from waiting import TIMEOUT_S

    if command[0].endswith(".py"):
        command = [str(BENCHMARK.parent / command[0])]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    done = subprocess.run([sys.executable, "-I", "-c", PAINTED_BEFORE_REPORT, *command], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT_S)
    lines = done.stdout.splitlines()
    assert len(lines) >= 2 and lines[1].startswith("first paint"), done.stdout + done.stderr
    assert json.loads(lines[0])["canvas paints"] >= 1


def test_the_ab_tool_starts_each_side_in_its_own_tree(tmp_path, monkeypatch):
    """``python -m posenc_gui`` imports the package of the folder it starts in: the reference side, started
    from this checkout, ran this checkout's code (both sides of ``--startup`` timed the same code)."""
    spec = importlib.util.spec_from_file_location("posenc_ab", BENCHMARK.parent / "ab.py")
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    reference = tmp_path / "reference"
    (reference / "posenc_gui").mkdir(parents=True)
    (reference / "posenc_gui" / "__init__.py").write_text("")
    (reference / "posenc_gui" / "__main__.py").write_text("print('first paint: the reference tree', flush=True)\n")
    seen = []

    def first_paint(command, env, cwd=None):
        import subprocess

        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
        seen.append(done.stdout.strip())
        return 0.1, 0.2

    monkeypatch.setattr(ab, "first_paint_seconds", first_paint)
    monkeypatch.setattr(ab, "reference_python", lambda rev: (reference, sys.executable))
    monkeypatch.chdir(ab.CHECKOUT)  # where the tool is run from
    assert ab.main(["HEAD", "--startup", "--rounds", "1"]) in (0, None)
    assert "first paint: the reference tree" in seen

"""The benchmark script's measurements record what they claim (no timing is asserted)."""

from __future__ import annotations

import importlib.util
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
    # A step that changes nothing repaints no canvas and records nothing.
    per_panel.clear()
    bench.timed_update(window, lambda: None, per_panel)
    assert per_panel == {}


def test_step_blocks_pause_idle_between_blocks_of_consecutive_steps(make_window, bench, monkeypatch):
    import time

    from PySide6.QtCore import QTimer

    from posenc_gui.mainwindow import PRIMARY_PANELS
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64), restore=False)
    bench.settle(window)
    monkeypatch.setattr(bench, "BLOCK_PAUSE_S", 0.1)
    steps, started, timer_fired_before_step, fired = [], [], [], []

    def change(i):
        steps.append(i)
        started.append(time.perf_counter())
        timer_fired_before_step.append(bool(fired))
        window.state.update(d_model=64 - 2 * (i % 2))
        if len(steps) == 3:  # the first block's last step: due after the step, within the pause
            QTimer.singleShot(40, lambda: fired.append(True))

    per_panel: dict[str, list[float]] = {}
    blocks = bench.step_blocks(window, change, repeats=3, blocks=2, per_panel=per_panel)
    assert [len(block) for block in blocks] == [3, 3]
    # Every step changed d_model, the first of a block too, so every step repainted every panel.
    assert {name: len(times) for name, times in per_panel.items()} == {name: 6 for name in PRIMARY_PANELS}
    assert all(seconds > 0 for block in blocks for seconds in block)
    assert steps == [1, 2, 3, 4, 5, 6]
    assert started[3] - started[2] >= 0.1
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

    monkeypatch.setattr(bench, "step_blocks", step_blocks)
    fronts = bench.bench_fronts(window, repeats=3, blocks=1)
    assert "spectrum" in tabbed and set(fronts) == tabbed
    assert changes_per_block == [3] * len(in_front)  # every step changed a parameter
    # No step went back to parameters an earlier one had: the model's caches could serve it.
    stepped = [params for params in emitted[:sum(changes_per_block)]]
    assert len(set(stepped)) == len(stepped) and start not in stepped
    # While a panel's steps ran, it was the one panel on screen in the heatmap's place.
    # (two blocks per panel: d_model steps, then base steps)
    assert [shown for shown in in_front] == [{name} for name in fronts for _ in range(2)]
    assert all(0 < slowest and 0 < median <= slowest and 0 < base for median, slowest, base in fronts.values())
    assert window.panels["heatmap"].on_screen()
    assert window.state.params == start  # put back as it was


def test_a_drag_never_returns_to_a_value_and_stays_centred(make_window, bench):
    from posenc_gui.model import EncodingParams

    window = make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=64, base=10000.0),
                         restore=False)
    drag = bench.Drag(window)
    d_models = [drag.next_d_model() for _ in range(20)]
    bases = [drag.next_base() for _ in range(20)]
    assert len(set(d_models + [64])) == 21 and len(set(bases + [10000.0])) == 21
    assert sum(d_models) / 20 == 64 and max(abs(d - 64) for d in d_models) == 20
    assert all(d % 2 == 0 for d in d_models)
    assert abs(sum(bases) / 20 - 10000.0) < 1e-6 and max(abs(b - 10000.0) for b in bases) <= 100.0 + 1e-6
    # At the edge of the allowed range the drag goes one way only.
    edge = bench.Drag(make_window(size=(1200, 800), params=EncodingParams(seq_len=32, d_model=8192), restore=False))
    assert [edge.next_d_model() for _ in range(3)] == [8190, 8188, 8186]
    # The steps change the window to the drag's next values: d − 2·11, base · (1 − 0.011).
    drag.d_model_step()
    drag.base_step()
    window.state.flush()
    assert (window.state.params.d_model, window.state.params.base) == (42, 10000.0 * (1 - 0.011))

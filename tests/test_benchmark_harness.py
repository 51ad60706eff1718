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

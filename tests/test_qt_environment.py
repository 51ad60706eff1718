"""posenc-gui paints without Qt's GUI thread pool (see ``prepare_qt_environment``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import TIMEOUT_S

# Paints a plot with a grid, then lists the process's threads that Qt's pool started.
PAINT_A_GRID = """
import os, sys
from pathlib import Path
os.environ["QT_QPA_PLATFORM"] = "offscreen"
if sys.argv[1] == "prepared":
    from posenc_gui import prepare_qt_environment
    prepare_qt_environment()
from PySide6.QtWidgets import QApplication
app = QApplication([])
from posenc_gui.views.plotkit import new_layout_widget, show_grid
canvas = new_layout_widget()
plot = canvas.addPlot()
show_grid(plot)
plot.plot(range(100), [i % 7 for i in range(100)])
canvas.resize(800, 600)
canvas.show()
for _ in range(5):
    app.processEvents()
canvas.grab()
threads = [(task / "comm").read_text().strip() for task in Path("/proc/self/task").iterdir()]
print(sum(name == "Thread (pooled)" for name in threads))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="lists threads through Linux /proc")
@pytest.mark.parametrize("prepared", [True, False])
def test_a_plot_with_a_grid_paints_without_qt_pool_threads(prepared):
    # Unprepared is the control: Qt fills the translucent grid lines through
    # its pool, so the check does see pool threads when there are any.
    env = {key: value for key, value in os.environ.items() if key != "QT_NO_GUI_THREADPOOL"}
    result = subprocess.run([sys.executable, "-c", PAINT_A_GRID, "prepared" if prepared else "plain"],
                            capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    pool_threads = int(result.stdout.strip().splitlines()[-1])
    assert (pool_threads == 0) == prepared, pool_threads

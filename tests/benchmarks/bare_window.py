"""The reference for the start-up benchmark: a bare PySide6 + pyqtgraph window to its first paint.

    python tests/benchmarks/bare_window.py

A main window holding one pyqtgraph plot of the default 128 × 512
sinusoidal table, shown and painted once (exposed, so that the plot is
drawn); prints ``first paint`` and exits.
What a short script with the same libraries costs to show a plot, start-up
included. It imports nothing of posenc_gui, so the ratio measures the app's
own cost.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402


def report_first_paint(window: QMainWindow, app: QApplication) -> None:
    """Once the window is exposed (Qt paints it then), paint it, print a line, quit: as
    ``posenc-gui --quit-after-first-paint`` does.

    Shown is not painted: the platform exposes the window a few event-loop
    passes after ``show()``, and before that ``repaint()`` paints nothing.
    """
    while not window.windowHandle().isExposed():
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    window.repaint()
    print("first paint", flush=True)
    window.close()
    app.quit()


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    angles = np.arange(128.0)[:, None] * 10000.0 ** (-np.arange(0, 512, 2) / 512.0)
    values = np.empty((128, 512))
    values[:, 0::2], values[:, 1::2] = np.sin(angles), np.cos(angles)
    window = QMainWindow()
    plot = pg.PlotWidget(title="sinusoidal: 128 positions × d_model 512")
    plot.addItem(pg.ImageItem(values, axisOrder="row-major"))
    window.setCentralWidget(plot)
    window.resize(1500, 950)
    window.show()
    QTimer.singleShot(0, lambda: report_first_paint(window, app))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())

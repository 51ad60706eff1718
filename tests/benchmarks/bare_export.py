"""The reference for the export benchmark: pyqtgraph alone exporting the default heatmap as PNG.

    python tests/benchmarks/bare_export.py OUT.png

A plot of the same 128 × 512 encoding with a colour bar, laid out at the app's default
figure size and written at its default PNG width by pyqtgraph's
``ImageExporter``: what a short script with the plotting library costs,
start-up included. An anchor imports nothing of posenc_gui (only PySide6,
pyqtgraph and NumPy), so the project's import cost is not on both sides of
the ratio; the table is the sinusoidal formula written out.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pyqtgraph.exporters  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

#: The app's default figure (960 × 640 logical pixels) at its default PNG scale (2).
FIGURE_WIDTH, FIGURE_HEIGHT, PNG_WIDTH = 960, 640, 1920


def main(path: str) -> int:
    app = QApplication.instance() or QApplication([])
    pg.setConfigOptions(background="w", foreground="k")
    angles = np.arange(128.0)[:, None] * 10000.0 ** (-np.arange(0, 512, 2) / 512.0)
    values = np.empty((128, 512))
    values[:, 0::2], values[:, 1::2] = np.sin(angles), np.cos(angles)
    plot = pg.PlotWidget()
    plot.resize(FIGURE_WIDTH, FIGURE_HEIGHT)
    image = pg.ImageItem(values.T)
    plot.addItem(image)
    colour_bar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=pg.colormap.get("CET-D1"), interactive=False)
    colour_bar.setImageItem(image, insert_in=plot.plotItem)
    plot.invertY(True)
    plot.setTitle("sinusoidal: 128 positions × d_model 512, base 10000, interleaved")
    plot.setLabel("bottom", "dimension (column)")
    plot.setLabel("left", "position (row)")
    plot.show()
    app.processEvents()
    exporter = pg.exporters.ImageExporter(plot.plotItem)
    exporter.parameters()["width"] = PNG_WIDTH
    if not exporter.export(path):
        print(f"bare_export: could not write {path}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""posenc_gui: a desktop lab for transformer positional encodings."""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"


def resources_path(*parts: str) -> Path:
    """Path of a file under the installed ``resources/`` folder.

    After ``pip install`` the folder is the subpackage ``posenc_gui.resources``;
    in a source checkout run without installing, it is the repository's
    top-level ``resources/``.
    """
    installed = Path(__file__).resolve().parent / "resources"
    base = installed if installed.is_dir() else Path(__file__).resolve().parent.parent / "resources"
    return base.joinpath(*parts)


def prepare_qt_environment() -> None:
    """Set what Qt reads from the environment; call before the first window paints.

    ``QT_NO_GUI_THREADPOOL``: Qt's raster engine splits a fill of many
    spans across a thread pool and waits for the pool. A line drawn with a
    translucent pen is filled one pixel-wide span at a time, so each grid
    line of every plot went through the pool: 16 grid lines took 2.4-3.4 ms
    with it and 0.08-0.13 ms without (the same pixels), even with nothing
    else running, and longer while the workers held both cores. The canvases
    are far too small for parallel filling to pay. A value the user set wins.
    """
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")

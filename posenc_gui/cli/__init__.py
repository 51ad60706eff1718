"""The command line: ``posenc-gui`` opens the window (:mod:`.window`), ``posenc-gui export …`` writes figures,
data, session files and handouts without one (:mod:`.export`, its checked plan in :mod:`.plan`); the flags
both share are made in :mod:`.parameters`.

Only the entry point (``posenc_gui.__main__``, the ``posenc-gui`` script) calls :func:`main`; nothing in the
package imports ``__main__`` (``tests/test_import_graph.py``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Sequence

#: Loaded before Qt by the window's start: PySide6's import hook (for its ``__feature__`` imports) reads the
#: source of every module imported after PySide6, ~0.1 ms a module, and NumPy and the model layer (NumPy only,
#: the default layout's data included) are ~140 of them. :func:`skip_pyside_source_scan` stops the reads for
#: every later module; this order still spares these where it cannot (a PySide6 without the hook's function).
LOADED_BEFORE_QT = ("numpy", "posenc_gui.model", "posenc_gui.model.panels.table_data")


def skip_pyside_source_scan() -> bool:
    """Stop PySide6's import hook reading the source of each module imported after it; True when it was stopped.

    The hook asks, of every new module, whether its source mentions PySide6
    (``inspect.getsource``): a module that does not is left out of PySide's
    ``__feature__`` switching (``snake_case``, ``true_property``). This app
    selects no feature, so every module has Qt's default API either way;
    counting each one as a PySide module skips the read. Why: after NumPy
    and the model layer (:data:`LOADED_BEFORE_QT`), ~280 modules still came
    after PySide6 (pyqtgraph, the views, the standard library's), ~30 ms of
    the window's start-up.

    PySide's private API (``shibokensupport.feature._mod_uses_pyside``): when
    it is not there (another PySide version), nothing changes and False is
    returned.
    """
    importlib.import_module("PySide6.QtCore")  # installs the hook and loads its module
    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = _default_features
    return True


def _default_features(module: object) -> bool:
    """Every module as a PySide module with the default feature selection (see :func:`skip_pyside_source_scan`)."""
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``posenc-gui`` command (``argv`` default: ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["export"]:
        from .export import main as export_main

        return export_main(argv[1:])
    from .. import pause_garbage_collection
    from ..blas import start_blas_with_one_thread

    pause_garbage_collection()  # the window's start-up makes no garbage worth a collection
    start_blas_with_one_thread()  # before NumPy loads
    for name in LOADED_BEFORE_QT:
        importlib.import_module(name)
    skip_pyside_source_scan()
    from .window import main as window_main

    return window_main(argv)

"""The command line: ``posenc-gui`` opens the window (:mod:`.window`), ``posenc-gui export …`` writes figures,
data, session files and handouts without one (:mod:`.export`, its checked plan in :mod:`.plan`); the flags
both share are made in :mod:`.parameters`.

Only the entry point (``posenc_gui.__main__``, the ``posenc-gui`` script) calls :func:`main`; nothing in the
package imports ``__main__`` (``tests/test_import_graph.py``).
"""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``posenc-gui`` command (``argv`` default: ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["export"]:
        from .export import main as export_main

        return export_main(argv[1:])
    from .. import pause_garbage_collection
    from ..worker_threads import start_blas_with_one_thread

    pause_garbage_collection()  # the window's start-up makes no garbage worth a collection
    start_blas_with_one_thread()  # before NumPy loads
    from .window import main as window_main

    return window_main(argv)

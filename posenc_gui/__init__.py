"""posenc_gui: a desktop lab for transformer positional encodings."""

from __future__ import annotations

import ctypes
import gc
import os
import sys
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

    ``QT_NO_GUI_THREADPOOL=1`` (unless the user set it): Qt's raster engine
    otherwise fills each translucent grid line span by span through a thread
    pool, many times slower on canvases this small.
    """
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


#: Whether :func:`pause_garbage_collection` turned automatic collection off (and nothing has turned it back on).
_collection_paused = False


def pause_garbage_collection() -> None:
    """Turn Python's automatic cyclic garbage collection off for the window's start-up.

    Why: start-up imports the app's modules and builds the window, some
    70,000 objects that live as long as it, and next to no cyclic garbage;
    Python ran about 150 collections over them before the first paint (40 ms
    or more, each slower as the objects pile up) and freed nothing. The
    window's compute service then takes collection over, on a timer on the GUI
    thread (pyqtgraph's ``GarbageCollector``, which keeps automatic collection
    off: see :mod:`posenc_gui.compute`); a command line refused before any
    window is built turns it back on with :func:`resume_garbage_collection`.
    """
    global _collection_paused
    if gc.isenabled():
        gc.disable()
        _collection_paused = True


def resume_garbage_collection() -> None:
    """Turn automatic collection back on if :func:`pause_garbage_collection` turned it off."""
    global _collection_paused
    if _collection_paused:
        gc.enable()
        _collection_paused = False


#: glibc's malloc serves blocks up to this size from its arenas instead of a fresh mapping each
#: (its upper limit for the setting).
ARENA_BLOCK_LIMIT = 32 * 2**20
#: Freed memory glibc keeps at the top of an arena for the next blocks, instead of unmapping it.
ARENA_KEEP = 512 * 2**20


def tune_memory_allocator() -> bool:
    """Let glibc's malloc keep the memory of large arrays for reuse (Linux with glibc; elsewhere a no-op).

    Why: at d_model 8192 the workers allocate and free blocks of about 16 MB
    on every update; by default glibc maps and unmaps each one, faulting its
    pages in again while the worker holds Python's GIL, which stalls the GUI
    thread. Served from the arenas and kept when freed, the blocks are
    reused without system calls; the memory kept is bounded by the workers'
    peak.

    Returns
    -------
    bool
        True when glibc accepted both settings.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    return bool(mallopt(m_mmap_threshold, ARENA_BLOCK_LIMIT)) and bool(mallopt(m_trim_threshold, ARENA_KEEP))

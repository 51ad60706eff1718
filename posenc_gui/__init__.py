"""posenc_gui: a desktop lab for transformer positional encodings."""

from __future__ import annotations

import ctypes
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

    ``QT_NO_GUI_THREADPOOL``: Qt's raster engine splits a fill of many
    spans across a thread pool and waits for the pool. A line drawn with a
    translucent pen is filled one pixel-wide span at a time, so each grid
    line of every plot went through the pool: 16 grid lines took 2.4-3.4 ms
    with it and 0.08-0.13 ms without (the same pixels), even with nothing
    else running, and longer while the workers held both cores. The canvases
    are far too small for parallel filling to pay. A value the user set wins.
    """
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


#: glibc's malloc serves blocks up to this size from its arenas instead of a fresh mapping each
#: (its upper limit for the setting).
ARENA_BLOCK_LIMIT = 32 * 2**20
#: Freed memory glibc keeps at the top of an arena for the next blocks, instead of unmapping it.
ARENA_KEEP = 512 * 2**20


def tune_memory_allocator() -> bool:
    """Let glibc's malloc keep the memory of large arrays for reuse (Linux with glibc; elsewhere a no-op).

    At d_model 8192 a worker allocates and frees arrays of about 16 MB
    several times per update (encoding 250 sampled positions in every
    dimension). By default glibc maps each such block from the kernel and
    unmaps it when freed: every page is faulted in again, and mapping and
    unmapping, done while the worker holds Python's GIL, took up to 11 ms
    on this virtual machine. The GUI thread waited that long for the GIL
    (traced with uprobes on the interpreter's take_gil/drop_gil, stall pass
    at 1,048,576 and 1,024 × 8192: workers held the GIL for more than 2 ms
    3–14 times per run, up to 8–11 ms; with this setting 0–2 times, up to
    4.7 ms). Served from the arenas and kept when freed, the blocks are
    reused without system calls or page faults. In the benchmark (three
    runs each way, alternated, at 1,024 and 1,048,576 × 8192) the longest
    GUI stall went from 32–104 ms to 21–39 ms, all of it the GUI thread's
    own CPU time, and an update got 3–10 % faster. The memory kept is
    bounded by what the workers used at their peak (RSS 20 MiB above the
    untuned run's 0–12 MiB).

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

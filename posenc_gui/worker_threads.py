"""The scheduling of the window's worker threads: below the GUI thread's priority, started once the GUI thread is
back in its event loop (their BLAS has one thread: :mod:`posenc_gui.blas`).

(Used by :mod:`posenc_gui.compute`.)
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from PySide6.QtCore import QObject, Qt, Signal

#: How much lower than the GUI thread's the workers' scheduling priority is (Linux nice levels).
WORKER_NICENESS = 10


def lower_worker_priority(niceness: int = WORKER_NICENESS) -> None:
    """Put this thread ``niceness`` levels below the GUI thread: the GUI thread goes first when it and a
    worker want the same core (Linux; elsewhere a no-op).

    Why: on 2 cores the workers otherwise keep the GUI thread waiting in the
    run queue in the middle of a repaint. A worker still gets every cycle
    the GUI thread leaves. With autogroups (the Linux desktop
    default) thread niceness orders only this program's own threads, so
    other programs do not starve the workers.
    """
    if not sys.platform.startswith("linux"):
        return  # setpriority with a thread id is Linux's; elsewhere it would name a process
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + niceness))
    except OSError:
        pass  # a sandbox that forbids it: the workers run at the GUI thread's priority, as before


class ThreadsAfterTheEvent(QObject):
    """A pool of worker threads whose jobs start when the GUI thread is back in its event loop.

    Why: a parameter change is a chain of slots on the GUI thread (each panel
    asks for its data, then the parameter panel, titles and cursor follow).
    PySide lets the GIL go around its calls into Qt, and a worker started in
    the middle of the chain takes it each time, so the chain waits for the
    worker's Python. Started after the chain, the jobs run while the GUI
    thread waits for their results (the default d_model step, alternating
    in-process blocks: wall −0.2 to −0.6 ms, the GUI thread's CPU −0.2 to −0.4).
    Submitted from the GUI thread only; jobs start in the order submitted.
    """

    _submitted = Signal()

    def __init__(self, workers: int, thread_name_prefix: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name_prefix,
                                        initializer=lambda: lower_worker_priority(WORKER_NICENESS))
        self._waiting: list[Callable[[], None]] = []
        #: Whether a job starts when submitted rather than when the event loop next runs.
        self.at_once = False
        self._submitted.connect(self._start_waiting, Qt.ConnectionType.QueuedConnection)

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job()`` in a worker thread once the event loop next runs (now, while :attr:`at_once`)."""
        if self.at_once:
            self._pool.submit(job)
            return
        if not self._waiting:
            self._submitted.emit()
        self._waiting.append(job)

    def _start_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        for job in waiting:
            self._pool.submit(job)

    def shutdown(self) -> None:
        """Drop the jobs not started yet and stop the threads, without waiting for a job that is running."""
        self._waiting.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

"""The scheduling of the window's worker threads: below the GUI thread's priority, started once the GUI thread is
back in its event loop, one job at a time unless it is long (their BLAS has one thread: :mod:`posenc_gui.blas`).

(Used by :mod:`posenc_gui.compute`.)
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
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


#: A job runs alone until it has run this long; then a free thread may start the next one beside it.
SOLO_MS = 10.0


class ThreadsAfterTheEvent(QObject):
    """A pool of worker threads whose jobs start when the GUI thread is back in its event loop, one at a time
    unless the one running is long.

    Why after the event: a parameter change is a chain of slots on the GUI
    thread (each panel asks for its data, then the parameter panel, titles
    and cursor follow). PySide lets the GIL go around its calls into Qt, and
    a worker started in the middle of the chain takes it each time, so the
    chain waits for the worker's Python. Started after the chain, the jobs
    run while the GUI thread waits for their results (the default d_model
    step, alternating in-process blocks: wall −0.2 to −0.6 ms, the GUI
    thread's CPU −0.2 to −0.4).

    Why one at a time: a step's requests are a few jobs of about a
    millisecond, and the GUI thread draws each result as it arrives. Two
    threads computing them side by side waited for each other's GIL: their
    wall time added up to twice their CPU time, and the first result came
    later (the default d_model step, alternating in-process blocks: wall
    −0.5 ms with one job at a time). A job that runs longer than
    :data:`SOLO_MS` (an analysis at a large size) no longer holds the
    others: a free thread starts the next beside it.

    Submitted from the GUI thread only; jobs start in the order submitted.
    """

    _submitted = Signal()

    def __init__(self, workers: int, thread_name_prefix: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name_prefix,
                                        initializer=lambda: lower_worker_priority(WORKER_NICENESS))
        self._waiting: list[Callable[[], None]] = []
        #: Whether a job starts when submitted rather than when the event loop next runs.
        self.at_once = False
        self._submitted.connect(self._start_waiting, Qt.ConnectionType.QueuedConnection)
        self._lock = threading.Condition()
        self._queue: deque[Callable[[], None]] = deque()  # handed to the threads, not started yet
        self._started_at: dict[int, float] = {}  # thread ident → when its running job started (monotonic s)
        self._runners = 0  # pool threads taking jobs from the queue
        self._closed = False

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job()`` in a worker thread once the event loop next runs (now, while :attr:`at_once`)."""
        if self.at_once:
            self._hand_over([job])
            return
        if not self._waiting:
            self._submitted.emit()
        self._waiting.append(job)

    def _start_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        self._hand_over(waiting)

    def _hand_over(self, jobs: list[Callable[[], None]]) -> None:
        with self._lock:
            if self._closed:
                return
            self._queue.extend(jobs)
            new_runners = min(self._workers - self._runners, len(self._queue))
            self._runners += new_runners
            self._lock.notify_all()
        for _ in range(new_runners):
            self._pool.submit(self._run_queue)

    def _run_queue(self) -> None:
        """A pool thread's loop: run the queue's jobs while there are any (see :meth:`_next_job`)."""
        me = threading.get_ident()
        while (job := self._next_job(me)) is not None:
            try:
                job()
            except BaseException:  # noqa: BLE001 - compute's jobs deliver their own errors; one that raises
                # anyway is reported as any thread's and loses only itself, not the jobs queued after it
                threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), threading.current_thread())))
            finally:
                del job  # what it holds goes now, not when the next job is taken
                with self._lock:  # no one is woken: this thread takes the next job itself
                    del self._started_at[me]

    def _next_job(self, me: int) -> Callable[[], None] | None:
        """The next job, once no other has been running for less than :data:`SOLO_MS`; None when there is none
        left (this thread then stops taking jobs)."""
        with self._lock:
            while True:
                if self._closed or not self._queue:
                    self._runners -= 1
                    return None
                now = time.monotonic()
                youngest = max(self._started_at.values(), default=None)
                if youngest is None or now - youngest >= SOLO_MS / 1000:
                    self._started_at[me] = now
                    return self._queue.popleft()
                self._lock.wait(youngest + SOLO_MS / 1000 - now)

    def shutdown(self) -> None:
        """Drop the jobs not started yet and stop the threads, without waiting for a job that is running."""
        self._waiting.clear()
        with self._lock:
            self._closed = True
            self._queue.clear()
            self._lock.notify_all()
        self._pool.shutdown(wait=False, cancel_futures=True)

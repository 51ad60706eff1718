"""Run model calls off the GUI thread; the newest request per key wins.

Modelled on napari's layer slicer: a small executor, each request tagged
with a generation number; a request that is superseded before it starts is
skipped, and a result that arrives after a newer request is dropped.
"""

from __future__ import annotations

import itertools
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

#: An update that takes longer than this shows the busy indicator.
BUSY_DELAY_MS = 100
#: Requests whose declared cost (about the number of values computed) is at
#: most this run at once on the GUI thread: a few milliseconds, less than the
#: round trip through a worker, and all panels then repaint in one frame.
INLINE_COST = 2**18


class _Relay(QObject):
    """Carries results from worker threads to the GUI thread.

    Workers never emit on a :class:`ComputeService` itself: a window may
    delete its service (a Qt child) while a job is still running, and a
    signal emitted on a deleted QObject crashes the process. The relay lives
    as long as the module; results for a service that is gone are dropped.
    """

    done = Signal(object, object, int, object, object)

    @Slot(object, object, int, object, object)
    def deliver(self, service_ref: weakref.ref, key: Any, generation: int, result: Any, error: Any) -> None:
        service = service_ref()
        if service is not None and shiboken6.isValid(service) and not service._closed:
            service._deliver(key, generation, result, error)


_relay: _Relay | None = None


def _get_relay() -> _Relay:
    global _relay
    if _relay is None:
        _relay = _Relay()
        _relay.done.connect(_relay.deliver)
    return _relay


class ComputeService(QObject):
    """Executes callables in worker threads and delivers results on the GUI thread.

    Signals
    -------
    busyChanged(bool)
        True when some request has been running for more than
        :data:`BUSY_DELAY_MS`; False when all are done.
    """

    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, workers: int = 2) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="posenc-compute")
        self._latest: dict[Any, int] = {}
        self._callbacks: dict[Any, tuple[Callable, Callable | None]] = {}
        self._pending: set[Any] = set()
        self._counter = itertools.count(1)
        self._busy = False
        self._closed = False
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(self._show_busy)
        self._relay = _get_relay()

    def submit(
        self,
        key: Any,
        function: Callable[[], Any],
        on_result: Callable[[Any], None],
        on_error: Callable[[Exception], None] | None = None,
        cost: int | None = None,
    ) -> None:
        """Run ``function()`` in a worker; call ``on_result`` with its value on the GUI thread.

        A later ``submit`` with the same ``key`` supersedes this one: its
        result (or error) is never delivered. A request declaring a ``cost``
        of at most :data:`INLINE_COST` runs at once, before this returns.
        After :meth:`shutdown` this does nothing (a closing window may still
        ask for a redraw).
        """
        if self._closed:
            return
        generation = next(self._counter)
        if cost is not None and cost <= INLINE_COST:
            self._latest[key] = generation  # supersedes any request still in a worker
            self._pending.discard(key)
            self._callbacks.pop(key, None)
            self._update_busy()
            try:
                result = function()
            except Exception as error:
                if on_error is None:
                    raise
                on_error(error)
            else:
                on_result(result)
            return
        self._latest[key] = generation
        self._callbacks[key] = (on_result, on_error)
        self._pending.add(key)
        if not self._busy_timer.isActive() and not self._busy:
            self._busy_timer.start()

        service_ref, relay, latest = weakref.ref(self), self._relay, self._latest

        def job() -> None:
            if latest.get(key) != generation:
                return  # superseded before it started
            try:
                result, error = function(), None
            except Exception as exc:  # delivered to on_error on the GUI thread
                result, error = None, exc
            relay.done.emit(service_ref, key, generation, result, error)

        self._executor.submit(job)

    def cancel(self, key: Any) -> None:
        """Forget any request under ``key``; its result will not be delivered."""
        self._latest.pop(key, None)
        self._callbacks.pop(key, None)
        self._pending.discard(key)
        self._update_busy()

    def is_idle(self) -> bool:
        """True when no request is waiting to be delivered."""
        return not self._pending

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Process events until every request is delivered (tests, benchmarks, export)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            QCoreApplication.processEvents()  # may deliver results, or start new requests
            if not self._pending:
                return True
            time.sleep(0.0005)
        return False

    def shutdown(self) -> None:
        """Drop pending requests and stop the workers."""
        self._closed = True
        self._latest.clear()
        self._pending.clear()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _deliver(self, key: Any, generation: int, result: Any, error: Any) -> None:
        if self._latest.get(key) != generation:
            return
        self._pending.discard(key)
        on_result, on_error = self._callbacks.pop(key, (None, None))
        self._update_busy()
        if error is not None:
            if on_error is not None:
                on_error(error)
            else:
                raise error
        elif on_result is not None:
            on_result(result)

    def _show_busy(self) -> None:
        if self._pending and not self._busy:
            self._busy = True
            self.busyChanged.emit(True)

    def _update_busy(self) -> None:
        if not self._pending:
            self._busy_timer.stop()
            if self._busy:
                self._busy = False
                self.busyChanged.emit(False)

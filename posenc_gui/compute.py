"""Run model calls off the GUI thread, on one path; the newest request per key wins.

Every request (:meth:`ComputeService.submit`) is a key and a callable,
usually a :class:`ModelJob` (a model function and its arguments). Where it
runs, in this order:

1. the shared worker process (:mod:`posenc_gui.worker_process`): a
   :class:`ModelJob` of the model layer whose arguments pickle, while the
   process is free for it (see :meth:`_WorkerProcess.submit`);
2. otherwise a worker thread of the service: any other callable, a job
   that does not pickle, another panel's request while the process is busy,
   or no process at all (turned off, could not start, kept stopping).

Every request is answered, with its result or an error for ``on_error``:
whatever it raises (a BaseException such as tokenizers' ``PanicException``
too), and whatever happens to the worker process (killed, crashed). A
process that stops is replaced at once and its requests run again in the
replacement; one that a request was running in twice is reported to the
panel instead of being run a third time (see :meth:`_WorkerProcess._stopped`).

A request may report progress: with ``on_progress``, its callable is
given a ``progress(done, total)`` keyword; each call reaches ``on_progress``
on the GUI thread (from the worker process too, as a frame before its
reply), and it returns False once the request is superseded or cancelled,
so that a long job stops early (in the worker process, the window sends
it a cancel frame: see :meth:`_WorkerProcess.cancel_superseded`).

Never on the GUI thread. Each request is tagged with a generation number
(modelled on napari's layer slicer): one superseded by a newer request of
its key before it starts is skipped, and a superseded result is dropped.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pickle
import subprocess
import sys
import threading
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import shiboken6
from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QElapsedTimer, QEventLoop, QObject, QTimer, Signal, Slot

from . import worker_process as protocol
from .job_match import same_request
from .blas import limit_blas_threads
from .worker_threads import WORKER_NICENESS, ThreadsAfterTheEvent

#: An update that takes longer than this shows the busy indicator.
BUSY_DELAY_MS = 100


class _Relay(QObject):
    """Carries results from worker threads to the GUI thread.

    Two rules keep Qt objects out of harm's way:

    - workers never emit on a :class:`ComputeService`: a window may delete
      its service (a Qt child) while a job runs, and emitting on a deleted
      QObject crashes; the relay lives as long as the module;
    - a worker never drops the last reference to anything the request
      carried (its key and callable may hold a panel): it parks them in the
      outbox and emits only a ticket, so they are released on the GUI
      thread. A widget freed from a worker thread crashes Qt.
    """

    done = Signal(int)
    progressed = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._outbox: dict[int, tuple] = {}
        self._tickets = itertools.count(1)

    def post(self, parcel: list) -> None:
        """Called by a worker: take everything out of ``parcel`` and signal the GUI thread."""
        with self._lock:
            ticket = next(self._tickets)
            self._outbox[ticket] = tuple(parcel)
        parcel.clear()
        self.done.emit(ticket)

    def post_progress(self, service_ref: Any, key: Any, generation: int, done: int, total: int) -> None:
        """Called by a worker: a request's progress, for the GUI thread."""
        with self._lock:
            ticket = next(self._tickets)
            self._outbox[ticket] = (service_ref, key, generation, done, total)
        self.progressed.emit(ticket)

    @Slot(int)
    def deliver_progress(self, ticket: int) -> None:
        with self._lock:
            service_ref, key, generation, done, total = self._outbox.pop(ticket)
        service = service_ref()
        if service is not None and shiboken6.isValid(service) and not service._closed:
            service._progressed(key, generation, done, total)

    @Slot(int)
    def deliver(self, ticket: int) -> None:
        with self._lock:
            service_ref, key, generation, result, error, _function = self._outbox.pop(ticket)
        service = service_ref()
        if result is _SUPERSEDED:
            return
        if service is not None and shiboken6.isValid(service) and not service._closed:
            service._deliver(key, generation, result, error)


_SUPERSEDED = object()
_relay: _Relay | None = None
_collector: GarbageCollector | None = None


def _get_relay() -> _Relay:
    """The relay, created on first use (on the GUI thread, like the first service).

    Creating it also moves Python's cyclic garbage collection to the GUI
    thread (pyqtgraph's GarbageCollector: automatic collection off, a timer
    collects). Otherwise a collection triggered by an allocation in a worker
    frees unreachable Qt wrappers there, and a QObject destroyed off its
    thread leaves dangling timers that crash Qt later (seen in the tests).
    """
    global _relay, _collector
    if _relay is None:
        _relay = _Relay()
        _relay.done.connect(_relay.deliver)
        _relay.progressed.connect(_relay.deliver_progress)
        _collector = GarbageCollector(interval=0.5)
        limit_blas_threads()
    return _relay


#: Set to 0 to run every request in this process's worker threads (no worker process).
WORKER_PROCESS_ENV = "POSENC_GUI_WORKER_PROCESS"
#: A worker process that stops by itself (killed, out of memory) is replaced at most this many times per run.
MAX_PROCESS_REPLACEMENTS = 3
#: A request runs in at most this many worker processes that stop while running it; then the panel is told.
MAX_PROCESS_TRIES = 2
#: The worker's working folder: the package's own, not the launch folder.
WORKER_FOLDER = os.path.dirname(os.path.abspath(protocol.__file__))
#: The worker's first Python code (``python -I -c``): its module path is the folders given as arguments.
_WORKER_BOOTSTRAP = "import sys; sys.path[:] = sys.argv[1:]; from posenc_gui.worker_process import main; main()"


def worker_command() -> list[str]:
    """The command line that starts the worker process, isolated from the folder the app was launched in.

    ``-I`` keeps the launch folder (and ``PYTHONPATH``, and the user's
    site-packages) off the child's module path, so no ``struct.py`` or
    ``numpy.py`` that someone left there is imported. The child is given
    this process's module path instead, without the launch folder and
    without relative entries (which name it too): it imports the same
    posenc_gui and NumPy as the window. The folder holding this posenc_gui
    comes last in any case, after the standard library and site-packages:
    a source checkout run without installing is itself the launch folder.
    Python 3.10 has no ``-P``; ``-I`` works on every supported version.
    """
    launch_folder = os.path.realpath(os.getcwd())
    folders = [entry for entry in sys.path
               if os.path.isabs(entry) and os.path.realpath(entry) != launch_folder]
    package_root = os.path.dirname(WORKER_FOLDER)
    if package_root not in folders:
        folders.append(package_root)
    return [sys.executable, "-I", "-c", _WORKER_BOOTSTRAP, *folders]


@dataclass(frozen=True)
class ModelJob:
    """A request the worker process can run: a model function and its arguments.

    ``function`` is a module-level function of ``posenc_gui.model`` (NumPy
    only) and ``args`` pickle; then it runs in the worker process. Called,
    it runs here, in the calling thread: a worker thread when the process
    is not available, its arguments do not pickle, or the function is from
    elsewhere (a test's stand-in).
    """

    function: Callable[..., Any]
    args: tuple = ()

    def __call__(self, **keywords: Any) -> Any:
        return self.function(*self.args, **keywords)

    def in_process(self) -> bool:
        """True if the worker process may run it: a function of the model layer."""
        return protocol.serves(getattr(self.function, "__module__", "") or "")

    def request(self, request_id: int | None = None) -> bytes:
        """The pickled request the worker process reads (with ``request_id``: one that reports progress)."""
        message = (self.function.__module__, self.function.__qualname__, self.args)
        return pickle.dumps(message if request_id is None else (*message, request_id),
                            protocol=pickle.HIGHEST_PROTOCOL)


class _Sent(NamedTuple):
    """A request for the worker process, with what it takes to finish it elsewhere.

    ``tries`` counts the worker processes that stopped while running it;
    ``request_id`` is set for a request that reports progress.
    """

    request: bytes
    job: ModelJob
    parcel: list
    latest: dict
    tries: int = 0
    request_id: int | None = None


class _WorkerProcess:
    """One worker process (:mod:`posenc_gui.worker_process`), shared by the ComputeServices of this process.

    It runs one job at a time; newer requests of the same key wait and a
    job superseded while it waits is skipped, as in the threads (see
    :meth:`submit` for other keys' requests). A reader thread waits on the
    child's replies (blocked in ``read``, it does not hold the interpreter
    lock) and hands each result to the relay, like a worker thread. If the
    child stops, the reader starts a replacement and hands it the job in
    flight and the waiting ones (see :meth:`_stopped`); after :meth:`close`
    they are dropped. ``started`` tells whether the child ever said it was
    ready (:data:`worker_process.READY`).
    """

    def __init__(self) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   POSENC_GUI_WORKER_NICENESS=str(WORKER_NICENESS))
        self._child = subprocess.Popen(worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                       cwd=WORKER_FOLDER)
        self._lock = threading.Lock()
        self._running: _Sent | None = None
        self._waiting: deque[_Sent] = deque()
        self._closing = False
        self._cancelled: int | None = None  # the request id a cancel frame was sent for
        self.alive = True
        self.started = False
        self._reader = threading.Thread(target=self._read_replies, name="posenc-worker-process", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._child.pid

    def submit(self, request: bytes, job: ModelJob, parcel: list, latest: dict,
               request_id: int | None = None) -> bool:
        """Run or queue ``request`` (``job`` pickled); False if it should run in a worker thread instead.

        ``parcel`` is ``[service_ref, key, generation]``; the result is posted
        to the relay with it, unless ``latest[key]`` has moved on by the time
        the job would start. A newer request of the key whose request is in
        the child waits for it (the newest of them then runs). A request of
        another key while the child is busy is refused, so that two visible
        analyses compute side by side and a long one (a scorecard at
        1,048,576 × 8192 takes seconds) does not hold up the others. False
        too once the child has stopped.
        """
        with self._lock:
            if not self.alive:
                return False
            sent = _Sent(request, job, parcel, latest, request_id=request_id)
            if self._running is None:
                self._start(sent)
            elif self._same_request(parcel, self._running.parcel):
                self._waiting.append(sent)
            else:
                return False
        return True

    def take_over(self, sent: _Sent) -> bool:
        """Run or queue ``sent``, a request of a worker process that stopped; False if this one has stopped too."""
        with self._lock:
            if not self.alive:
                return False
            if self._running is None:
                self._start(sent)
            else:
                self._waiting.append(sent)
        return True

    def cancel_superseded(self) -> None:
        """Send the child a cancel for the request it runs if that reports progress and was superseded
        (its ``progress`` then returns False and the job stops early)."""
        with self._lock:
            running = self._running
            if (running is None or running.request_id is None or running.request_id == self._cancelled
                    or running.latest.get(running.parcel[1]) == running.parcel[2]):
                return
            self._cancelled = running.request_id
            with contextlib.suppress(OSError, ValueError):  # the child is gone: the reader sees its end
                protocol.write_frame(self._child.stdin, pickle.dumps((protocol.CANCEL, running.request_id)))

    @staticmethod
    def _same_request(parcel: list, other: list) -> bool:
        """Whether two parcels are requests of the same service and key."""
        return parcel[0]() is other[0]() and parcel[1] == other[1]

    def _start(self, sent: _Sent) -> None:
        """Send ``sent``'s request to the child (the lock is held)."""
        self._running = sent
        with contextlib.suppress(OSError, ValueError):  # the child is gone: the reader sees its end and runs it
            protocol.write_frame(self._child.stdin, sent.request)

    def _next(self) -> None:
        """Start the oldest waiting job that is still the latest request of its key (the lock is held)."""
        while self._waiting:
            sent = self._waiting.popleft()
            if sent.latest.get(sent.parcel[1]) == sent.parcel[2]:
                self._start(sent)
                return
            sent.parcel.extend([_SUPERSEDED, None, None])
            _relay.post(sent.parcel)

    def _read_replies(self) -> None:
        try:
            if protocol.read_frame(self._child.stdout) != protocol.READY:
                raise ConnectionError("the worker process did not start")
            self.started = True
            while (frame := protocol.read_frame(self._child.stdout)) is not None:
                ok, value = pickle.loads(frame)
                del frame
                if ok is None:  # progress of the running request: (request_id, done, total)
                    with self._lock:
                        running = self._running
                        head = running.parcel[:3] if running and running.request_id == value[0] else None
                    if head is not None:
                        _relay.post_progress(*head, *value[1:])
                    del running, head
                    continue
                with self._lock:
                    running, self._running = self._running, None
                    self._next()
                if running is not None:
                    parcel = running.parcel
                    parcel += [value, None, None] if ok else [None, value, None]
                    del ok, value
                    _relay.post(parcel)
        except BaseException:  # noqa: BLE001 - no start, or a reply that does not read back: no longer trusted
            self._child.kill()
        self._stopped()

    def _how_it_ended(self) -> str:
        """The child's end in words ("killed by signal 9", "exit status 1"), once it has been waited for."""
        code = self._child.returncode
        return f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"

    def _stopped(self) -> None:
        """The child's replies ended: start a replacement now and hand it the child's requests.

        The request in flight counts a try (if the child had started); one
        tried in :data:`MAX_PROCESS_TRIES` processes is answered with an
        error (it may be what kills them) instead. A superseded request is
        dropped. Without a replacement (:func:`worker_process` gives none)
        they run in this thread. After :meth:`close` they are all dropped.
        """
        with self._lock:
            self.alive = False
            running, waiting = self._running, list(self._waiting)
            self._running = None
            self._waiting.clear()
        try:
            self._child.wait(timeout=2)
        except subprocess.TimeoutExpired:  # its output closed, the process still there
            self._child.kill()
            self._child.wait()
        for stream in (self._child.stdin, self._child.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        if running is not None and self.started:
            running = running._replace(tries=running.tries + 1)
        unanswered = ([running] if running is not None else []) + waiting
        del running, waiting
        with _process_lock:  # a release that closes this process (under the lock) is seen here, not after
            closing = self._closing
            replacement = None if closing or not (unanswered or _process_users) else worker_process()
        while unanswered:
            sent = unanswered.pop(0)
            if closing or sent.latest.get(sent.parcel[1]) != sent.parcel[2]:
                sent.parcel.extend([_SUPERSEDED, None, None])
                _relay.post(sent.parcel)
            elif sent.tries >= MAX_PROCESS_TRIES:
                sent.parcel.extend([None, RuntimeError(
                    f"The analysis worker process stopped {sent.tries} times while computing this (the last time "
                    f"{self._how_it_ended()}), so it is not computed again; change an input to try once more"), None])
                _relay.post(sent.parcel)
            elif replacement is None or not replacement.take_over(sent):
                _run_job(sent.job, sent.parcel, sent.latest, sent.request_id is not None)
            del sent

    def close(self) -> None:
        """End the child now, even in the middle of a job, without waiting for it.

        The reader thread collects its exit status and drops its jobs.
        """
        with self._lock:
            self._closing = True
            self.alive = False
        self._child.kill()


def _pickled(job: ModelJob, request_id: int | None = None) -> bytes | None:
    """``job``'s request for the worker process, or None if its arguments do not pickle (a thread runs it)."""
    try:
        return job.request(request_id)
    except Exception:  # noqa: BLE001 - whatever pickling raises: the thread gets the job as it is
        return None


def _owner_deleted(key: Any) -> bool:
    """Whether the QObject that ``key`` names (a panel, or a tuple that holds one) was deleted meanwhile.

    A panel closed and deleted while its request computes (a window torn
    down, a test's panel) still has a Python wrapper, and its callbacks
    raise on the first widget they touch.
    """
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(part, QObject) and not shiboken6.isValid(part) for part in parts)


def _run_job(job: Callable[..., Any], parcel: list, latest: dict, with_progress: bool = False) -> None:
    """Run ``job`` in this thread and post its result (or :data:`_SUPERSEDED`) with ``parcel``; with
    ``with_progress``, ``job(progress=…)`` (its progress posted while it is the latest request of its key)."""
    def progress(done: int, total: int) -> bool:
        if latest.get(parcel[1]) != parcel[2]:
            return False
        _relay.post_progress(*parcel[:3], done, total)
        return True

    if latest.get(parcel[1]) != parcel[2]:
        parcel += [_SUPERSEDED, None, job]
    else:
        try:
            result, error = (job(progress=progress) if with_progress else job()), None
        except BaseException as exc:  # noqa: BLE001 - delivered to on_error on the GUI thread, a BaseException
            # too (tokenizers' PanicException): a request left unanswered keeps its panel computing for ever
            result, error = None, protocol.sendable_error(exc)
        parcel += [result, error, job]
        del result, error
    del job
    _relay.post(parcel)


_worker_process: _WorkerProcess | None = None
#: Held while the worker process is looked up, started or released (the GUI thread, and a reader
#: thread replacing the process it read from).
_process_lock = threading.RLock()
#: The services that use the worker process; it ends when the last of them shuts down.
_process_users: weakref.WeakSet[ComputeService] = weakref.WeakSet()
_process_failures = 0
#: Numbers the requests that report progress (unique across the services sharing the worker process).
_request_ids = itertools.count(1)


def worker_process(user: ComputeService | None = None) -> _WorkerProcess | None:
    """The running worker process, started if needed; None when turned off, it could not start or it kept stopping.

    A ``user`` keeps it running until :func:`release_worker_process` (its
    shutdown) is called for every user.
    """
    global _worker_process, _process_failures
    if os.environ.get(WORKER_PROCESS_ENV, "1") == "0":
        return None
    with _process_lock:
        if _worker_process is not None and not _worker_process.alive:  # it stopped by itself
            # One that never said it was ready will not start on a later try either.
            _process_failures += 1 if _worker_process.started else MAX_PROCESS_REPLACEMENTS + 1
            _worker_process = None
        if _worker_process is None:
            if _process_failures > MAX_PROCESS_REPLACEMENTS:
                return None
            try:
                _worker_process = _WorkerProcess()
            except OSError:  # no way to start it here: threads only
                _process_failures = MAX_PROCESS_REPLACEMENTS + 1
                return None
        if user is not None:
            _process_users.add(user)
        return _worker_process


def release_worker_process(user: ComputeService) -> None:
    """``user`` no longer needs the worker process; the last user's release ends it, at once."""
    global _worker_process
    with _process_lock:
        if user not in _process_users:
            return
        _process_users.discard(user)
        if not _process_users and _worker_process is not None:
            _worker_process.close()
            _worker_process = None


@atexit.register
def _close_worker_process() -> None:
    if _worker_process is not None:
        _worker_process.close()


class ComputeService(QObject):
    """Runs requests in the worker process or in worker threads and delivers results on the GUI thread.

    Parameters
    ----------
    parent : QObject, optional
    workers : int
        Worker threads.
    processes : bool
        Send :class:`ModelJob` requests to the shared worker process
        (False: run them in the threads too, e.g. for a one-off export).

    Signals
    -------
    busyChanged(bool)
        True when some request has been running for more than
        :data:`BUSY_DELAY_MS`; False when all are done.
    idle()
        Nothing is pending any more (a result delivered, drawn after this, or a request cancelled).
    """

    busyChanged = Signal(bool)
    idle = Signal()

    def __init__(self, parent: QObject | None = None, workers: int = 2, processes: bool = True) -> None:
        super().__init__(parent)
        self._use_process = processes
        self._executor = ThreadsAfterTheEvent(workers, "posenc-compute", self)
        self._latest: dict[Any, int] = {}
        self._jobs: dict[Any, Callable[[], Any]] = {}  # each key's last request (an equal one under way joins it)
        self._callbacks: dict[Any, tuple[Callable, Callable | None]] = {}
        self._on_progress: dict[Any, Callable[[int, int], None] | None] = {}
        self._pending: set[Any] = set()
        self._counter = itertools.count(1)
        self._busy = False
        self._closed = False
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(self._show_busy)
        self._since_request = QElapsedTimer()
        self._since_request.start()
        _get_relay()  # created here, on the GUI thread, before any result comes back

    def submit(
        self,
        key: Any,
        function: Callable[[], Any],
        on_result: Callable[[Any], None],
        on_error: Callable[[Exception], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Run ``function()`` off the GUI thread; call ``on_result`` with its value on the GUI thread.

        ``function`` runs in the worker process when it is a :class:`ModelJob` that can go there, else in a
        worker thread (see the module's docstring). A later ``submit`` with the same ``key`` supersedes this
        one: its result (or error) is never delivered; one equal to the request under way for ``key``
        (:func:`~.job_match.same_request`) is not run again: that result goes to the new callbacks. An error
        goes to ``on_error``, or is raised on the GUI thread without one. With ``on_progress``, ``function``
        is called with a ``progress`` keyword (see the module's docstring). After :meth:`shutdown` this does
        nothing (a closing window may still ask for a redraw).
        """
        if self._closed:
            return
        self._since_request.restart()
        if key in self._pending and same_request(self._jobs.get(key), function) and (
                on_progress is None) == (self._on_progress.get(key) is None):  # the same under way: its result here
            self._callbacks[key], self._on_progress[key] = (on_result, on_error), on_progress
            return
        self._jobs[key], generation = function, next(self._counter)
        self._latest[key] = generation
        self._callbacks[key] = (on_result, on_error)
        self._on_progress[key] = on_progress
        self._pending.add(key)
        if not self._busy_timer.isActive() and not self._busy:
            self._busy_timer.start()
        parcel = [weakref.ref(self), key, generation]
        process = (worker_process(self) if self._use_process and isinstance(function, ModelJob)
                   and function.in_process() else None)
        if process is not None:
            process.cancel_superseded()
        request_id = next(_request_ids) if on_progress is not None else None
        request = _pickled(function, request_id) if process is not None else None
        if request is not None and process.submit(request, function, parcel, self._latest, request_id):
            return
        latest = self._latest
        # The job holds only this box, [service, key, generation, function]; the worker takes the
        # function out and hands the rest to the relay as the parcel (nothing stays behind with it).
        box = [*parcel, function]

        def job() -> None:
            _run_job(box.pop(), box, latest, on_progress is not None)

        self._executor.submit(job)

    def start_at_once_until_idle(self) -> None:
        """Until no request is pending, start the requests for the worker threads when submitted, not when the
        event loop next runs.

        For the window's first data: its construction, show and first layout
        are not a parameter change's chain of slots, and its panels' first
        jobs overlap with them (start-up to the first paint: −12 to −19 ms,
        alternating fresh processes). With nothing asked for by the first
        event-loop pass, it ends there.
        """
        self._executor.at_once = True
        QTimer.singleShot(0, self, self._end_at_once_if_idle)

    def _end_at_once_if_idle(self) -> None:
        if not self._pending:
            self._executor.at_once = False

    def prepare_worker_process(self) -> None:
        """Start the worker process now (in idle time), so the first analysis need not wait ~0.3 s for it."""
        if self._use_process and not self._closed:
            worker_process(self)

    def cancel(self, key: Any) -> None:
        """Forget any request under ``key``; its result will not be delivered (a running job that
        reports progress is told to stop)."""
        self._latest.pop(key, None)
        self._callbacks.pop(key, None)
        self._on_progress.pop(key, None)
        if _worker_process is not None:
            _worker_process.cancel_superseded()
        self._pending.discard(key)
        self._update_busy()

    def cancel_owner(self, owner: Any) -> None:
        """Forget the requests of ``owner``: under the key ``owner`` itself and under ``(owner, name)`` keys."""
        for key in [key for key in (*self._latest, *self._pending)
                    if key is owner or (isinstance(key, tuple) and key and key[0] is owner)]:
            self.cancel(key)

    def ms_since_request(self) -> int:
        """Milliseconds since the last :meth:`submit` (every view update asks through it)."""
        return self._since_request.elapsed()

    def is_pending(self, key: Any) -> bool:
        """True while a request under ``key`` is computing (its result not yet delivered)."""
        return key in self._pending

    def is_idle(self) -> bool:
        """True when no request is waiting to be delivered."""
        return not self._pending

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Process events until every request is delivered (tests, benchmarks, export).

        Between deliveries it sleeps in Qt's event dispatcher: a result (a
        posted event from a worker) or any timer wakes it, and a timer at the
        deadline ends a wait for a result that never comes.
        """
        deadline = QDeadlineTimer(max(0, int(timeout * 1000)))
        wake_at_deadline = QTimer()
        wake_at_deadline.setSingleShot(True)
        wake_at_deadline.start(max(0, int(deadline.remainingTime())))
        QCoreApplication.processEvents()  # may deliver results, or start new requests
        while self._pending and not deadline.hasExpired():
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        return not self._pending

    def shutdown(self) -> None:
        """Drop pending requests and stop the workers, without waiting for a job that is running.

        A thread's job cannot be interrupted: it runs to its end and its
        result is dropped. The worker process ends if no other service uses
        it, killed in the middle of a job.
        """
        self._closed = True
        self._latest.clear()
        self._pending.clear()
        self._executor.shutdown()
        release_worker_process(self)

    def _deliver(self, key: Any, generation: int, result: Any, error: Any) -> None:
        if self._latest.get(key) != generation:
            return
        self._pending.discard(key)
        on_result, on_error = self._callbacks.pop(key, (None, None))
        self._on_progress.pop(key, None)
        self._update_busy()
        if _owner_deleted(key):  # its callbacks would touch deleted widgets
            del self._latest[key]
            return
        if error is not None:
            if on_error is not None:
                on_error(error)
            else:
                raise error
        elif on_result is not None:
            on_result(result)

    def _progressed(self, key: Any, generation: int, done: int, total: int) -> None:
        on_progress = self._on_progress.get(key)
        if on_progress is not None and self._latest.get(key) == generation and not _owner_deleted(key):
            on_progress(done, total)

    def _show_busy(self) -> None:
        if self._pending and not self._busy:
            self._busy = True
            self.busyChanged.emit(True)

    def _update_busy(self) -> None:
        if not self._pending:
            self._executor.at_once = False
            self._busy_timer.stop()
            if self._busy:
                self._busy = False
                self.busyChanged.emit(False)
            self.idle.emit()

"""The compute service's progress channel: progress reaches the GUI thread, a superseded request is told to stop
(in a worker thread and in the worker process)."""

from __future__ import annotations

import io
import os
import pickle
import threading
import weakref

from posenc_gui import compute as compute_module
from posenc_gui import worker_process
from posenc_gui.compute import ModelJob
from waiting import TIMEOUT_S

#: A job that would count this far if nothing stopped it.
LIMIT = 10**9


def test_progress_reaches_the_gui_thread_and_a_newer_request_stops_the_running_one(compute, qtbot):
    gui_thread = threading.get_ident()
    seen: list[tuple[int, int, int]] = []
    step = threading.Semaphore(0)  # the job takes one step per progress the GUI thread received
    stopped: list[int] = []

    def counting(progress):
        done = 0
        while done < LIMIT and progress(done + 1, LIMIT) is not False:
            done += 1
            step.acquire(timeout=TIMEOUT_S)
        stopped.append(done)
        return done

    def on_progress(done, total):
        seen.append((done, total, threading.get_ident()))
        step.release()

    compute.submit("key", counting, lambda result: None, on_progress=on_progress)
    qtbot.waitUntil(lambda: len(seen) >= 3)
    results = []
    compute.submit("key", lambda progress: "newest", results.append, on_progress=lambda done, total: None)
    step.release()  # the first job may wait for a progress that is no longer delivered
    assert compute.wait_idle(TIMEOUT_S)
    qtbot.waitUntil(lambda: bool(stopped))
    assert results == ["newest"] and stopped[0] < LIMIT
    assert [done for done, _, _ in seen] == list(range(1, len(seen) + 1))
    assert {(total, thread) for _, total, thread in seen} == {(LIMIT, gui_thread)}


def test_a_request_without_on_progress_is_called_without_a_progress_argument(compute):
    results = []
    compute.submit("key", lambda: "plain", results.append)
    assert compute.wait_idle(TIMEOUT_S) and results == ["plain"]


def _counting_job(limit, progress):
    done = 0
    while done < limit and progress(done + 1, limit):
        done += 1
    return done


def test_the_worker_process_sends_progress_frames_and_stops_a_request_it_is_told_to_cancel(monkeypatch):
    """The protocol as the child serves it (here in a thread): progress frames before the reply; a cancel
    frame read while the request runs makes its ``progress`` return False."""
    from posenc_gui.model.decoder import view_data

    monkeypatch.setattr(view_data, "counting_for_test", _counting_job, raising=False)
    requests_read, requests_write = (os.fdopen(fd, mode) for fd, mode in zip(os.pipe(), ("rb", "wb")))
    replies_read, replies_write = (os.fdopen(fd, mode) for fd, mode in zip(os.pipe(), ("rb", "wb")))
    server = threading.Thread(target=worker_process.serve, args=(requests_read, replies_write), daemon=True)
    server.start()
    assert worker_process.read_frame(replies_read) == worker_process.READY
    worker_process.write_frame(requests_write, pickle.dumps(
        ("posenc_gui.model.decoder.view_data", "counting_for_test", (LIMIT,), 7)))
    assert pickle.loads(worker_process.read_frame(replies_read)) == (None, (7, 1, LIMIT))
    # The child keeps counting until the pipe is full; the cancel reaches it meanwhile.
    worker_process.write_frame(requests_write, pickle.dumps((worker_process.CANCEL, 7)))
    progress = []
    while (reply := pickle.loads(worker_process.read_frame(replies_read)))[0] is None:
        progress.append(reply[1])
    ok, done = reply
    assert ok is True and 0 <= done < LIMIT  # 0: the cancel came before the first step was answered
    assert progress == [(7, step, LIMIT) for step in range(2, done + 2)]  # the last one was answered False
    # A plain request (no id) is served as before, with no progress frame.
    worker_process.write_frame(requests_write, pickle.dumps(("posenc_gui.model.decoder.view_data", "gap_positions",
                                                             (3, None))))
    assert pickle.loads(worker_process.read_frame(replies_read)) == (True, None)
    requests_write.close()
    server.join(TIMEOUT_S)
    assert not server.is_alive()
    for stream in (requests_read, replies_read, replies_write):
        stream.close()


class _Child:
    """Stands in for the worker process: what the window writes to it."""

    def __init__(self) -> None:
        self.stdin = io.BytesIO()


def test_a_superseded_request_in_the_worker_process_is_sent_one_cancel(compute):
    process = compute_module._WorkerProcess.__new__(compute_module._WorkerProcess)
    process._child, process._lock, process._cancelled = _Child(), threading.Lock(), None
    latest = {"key": 1}
    job = ModelJob(_counting_job, (LIMIT,))
    process._running = compute_module._Sent(b"", job, [weakref.ref(compute), "key", 1], latest, request_id=11)
    process.cancel_superseded()
    assert process._child.stdin.getvalue() == b""  # still the newest request of its key
    latest["key"] = 2
    process.cancel_superseded()
    process.cancel_superseded()
    frames = io.BytesIO(process._child.stdin.getvalue())
    assert pickle.loads(worker_process.read_frame(frames)) == (worker_process.CANCEL, 11)
    assert worker_process.read_frame(frames) is None  # once

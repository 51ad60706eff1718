"""ComputeService: one path off the GUI thread, newest request wins, one BLAS thread per worker."""

from __future__ import annotations

import os
import sys
import threading

import pytest
from threadpoolctl import threadpool_info

from posenc_gui import worker_threads
from posenc_gui.compute import WORKER_NICENESS
from waiting import TIMEOUT_MS, TIMEOUT_S


def test_blas_runs_single_threaded_once_the_service_exists(compute):
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "NumPy's BLAS was not found"
    assert all(pool["num_threads"] == 1 for pool in blas), blas


def test_only_the_newest_request_per_key_is_delivered(compute):
    gate = threading.Event()
    delivered = []

    def slow(value):
        gate.wait(TIMEOUT_S)
        return value

    for value in range(5):
        compute.submit("key", lambda v=value: slow(v), delivered.append)
    gate.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == [4]


def test_requests_start_once_the_gui_thread_is_back_in_its_event_loop(compute):
    # A parameter change is a chain of slots on the GUI thread; a worker started in its middle takes the GIL
    # each time PySide lets it go (around its calls into Qt), and the chain waits (default step +0.3 ms)
    from PySide6.QtWidgets import QApplication

    handed = []
    executor = compute._executor
    real_hand_over = executor._hand_over
    executor._hand_over = lambda jobs: handed.extend(jobs) or real_hand_over(jobs)
    delivered = []
    for value in range(3):
        compute.submit(("key", value), lambda v=value: v, delivered.append)
    assert handed == []  # nothing is handed to the threads while the GUI thread is still in the chain
    QApplication.processEvents()
    assert len(handed) == 3
    assert compute.wait_idle(TIMEOUT_S)
    assert sorted(delivered) == [0, 1, 2]


def test_requests_run_one_at_a_time_while_the_running_one_is_short(compute, monkeypatch):
    # A step's requests are a few jobs of about a millisecond: side by side they waited for each other's GIL
    # (the default step +0.5 ms). Here every job counts as short.
    from PySide6.QtWidgets import QApplication

    monkeypatch.setattr(worker_threads, "SOLO_MS", 3_600_000.0)
    first_started, second_started, gate = threading.Event(), threading.Event(), threading.Event()
    first_running = []
    delivered = []

    def first():
        first_running.append(True)
        first_started.set()
        gate.wait(TIMEOUT_S)
        first_running.clear()
        return "first"

    def second():
        second_started.set()
        return "second", bool(first_running)

    compute.submit("first", first, delivered.append)
    compute.submit("second", second, delivered.append)
    QApplication.processEvents()  # the requests start with the event loop
    assert first_started.wait(TIMEOUT_S)
    # the second would have started by now beside the first if it could (it needs no more than a thread)
    assert not second_started.wait(0.5)
    gate.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == ["first", ("second", False)]


def test_a_long_request_holds_up_the_next_one_no_longer_than_the_solo_time(compute, monkeypatch):
    # An analysis at a large size takes seconds; a panel's request behind it starts in another thread.
    monkeypatch.setattr(worker_threads, "SOLO_MS", 20.0)
    second_delivered = threading.Event()
    delivered = []

    def long():
        second_delivered.wait(TIMEOUT_S)  # ends once the second is delivered (or at the hang bound: the test fails)
        return "long"

    def deliver_second(value):
        delivered.append(value)
        second_delivered.set()

    compute.submit("long", long, delivered.append)
    compute.submit("short", lambda: "short", deliver_second)
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == ["short", "long"]


def test_a_job_that_raises_is_reported_and_the_ones_queued_after_it_still_run(compute, monkeypatch):
    from PySide6.QtWidgets import QApplication

    reported, ran = [], threading.Event()
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args.exc_type))

    def raising():
        raise RuntimeError("a job of the pool's own that does not deliver its errors")

    compute._executor.submit(raising)
    compute._executor.submit(ran.set)
    QApplication.processEvents()  # the jobs start with the event loop
    assert ran.wait(TIMEOUT_S)
    assert reported == [RuntimeError]


def test_a_request_dropped_by_a_shutdown_before_it_started_is_not_run(compute):
    from PySide6.QtWidgets import QApplication

    ran = []
    compute.submit("key", lambda: ran.append(1), ran.append)
    compute.shutdown()
    QApplication.processEvents()
    assert compute.wait_idle(TIMEOUT_S) and ran == []


def test_a_callable_runs_in_a_worker_thread(compute):
    delivered = []
    compute.submit("key", lambda: threading.get_ident(), delivered.append)
    assert delivered == []
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered and delivered[0] != threading.get_ident()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread niceness is set on Linux only")
@pytest.mark.worker_niceness
def test_workers_run_at_a_lower_priority_than_the_gui_thread(compute):
    def own_niceness():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    delivered = []
    compute.submit("key", own_niceness, delivered.append)
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == [min(19, own_niceness() + WORKER_NICENESS)]


def test_a_parameter_step_computes_no_panel_on_the_gui_thread(make_window):
    # Until the event loop runs again, no panel has its new data: each request is off the GUI thread.
    window = make_window(restore=False)
    heatmap, waveforms = window.panels["heatmap"], window.panels["waveforms"]
    window.state.update(d_model=510)
    window.state.flush()
    assert heatmap.data.params.d_model == 512 and window.compute.is_pending(heatmap)
    assert waveforms.data.params.d_model == 512 and window.compute.is_pending(waveforms)
    assert window.compute.wait_idle(TIMEOUT_S)
    assert heatmap.data.params.d_model == waveforms.data.params.d_model == 510


def test_a_result_for_a_widget_deleted_meanwhile_is_dropped(compute, qtbot):
    # A panel closed and deleted while its request computes (a test's panel, a window
    # being torn down) must not get the result: its callbacks touch deleted widgets.
    from PySide6.QtWidgets import QApplication, QLabel, QWidget

    panel = QWidget()
    label = QLabel(panel)
    gate = threading.Event()
    delivered, failed = [], []

    def slow():
        gate.wait(TIMEOUT_S)
        return "done"

    def show(result):
        delivered.append(result)
        label.setText(result)  # raises if the label's C++ object is gone

    compute.submit(panel, slow, show, failed.append)
    compute.submit((panel, "half"), slow, show, failed.append)  # keys that hold the widget
    panel.deleteLater()
    qtbot.waitUntil(lambda: not _alive(label), timeout=TIMEOUT_MS)
    gate.set()
    assert compute.wait_idle(TIMEOUT_S)
    QApplication.processEvents()
    assert delivered == [] and failed == []


def _alive(widget) -> bool:
    import shiboken6

    return shiboken6.isValid(widget)


def test_the_window_s_first_requests_start_at_once_and_later_ones_with_the_event_loop(qtbot, settings_path):
    """The window's first show is no parameter change's chain of slots: its panels' first requests start in the
    workers while it is still being shown and laid out; once they are all answered, requests wait for the event
    loop again."""
    from posenc_gui.mainwindow import MainWindow

    window = MainWindow(restore=False)
    qtbot.addWidget(window)
    window.show()  # builds the shown panels, which ask for their data
    executor = window.compute._executor
    assert not window.compute.is_idle() and executor._waiting == []  # all handed to the threads already
    assert window.compute.wait_idle()
    assert executor.at_once is False
    window.state.update(d_model=256)
    window.state.flush()
    assert executor._waiting  # a parameter change's requests wait for the event loop
    assert window.compute.wait_idle()


def test_starting_at_once_ends_with_the_first_event_loop_pass_when_nothing_was_asked(compute):
    from PySide6.QtWidgets import QApplication

    compute.start_at_once_until_idle()
    assert compute._executor.at_once is True
    QApplication.processEvents()
    assert compute._executor.at_once is False  # a later change's requests wait for the event loop again

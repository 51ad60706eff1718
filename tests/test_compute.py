"""ComputeService: newest request wins, small requests inline, one BLAS thread per worker."""

from __future__ import annotations

import os
import sys
import threading

import pytest
from threadpoolctl import threadpool_info

from posenc_gui.compute import INLINE_COST, WORKER_NICENESS
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
        compute.submit("key", lambda v=value: slow(v), delivered.append, cost=INLINE_COST + 1)
    gate.set()
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == [4]


def test_cheap_requests_run_before_submit_returns(compute):
    delivered = []
    compute.submit("key", lambda: threading.get_ident(), delivered.append, cost=INLINE_COST)
    assert delivered == [threading.get_ident()]  # on this (the GUI) thread, already


def test_expensive_requests_run_in_a_worker(compute):
    delivered = []
    compute.submit("key", lambda: threading.get_ident(), delivered.append, cost=INLINE_COST + 1)
    assert delivered == []
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered and delivered[0] != threading.get_ident()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread niceness is set on Linux only")
def test_workers_run_at_a_lower_priority_than_the_gui_thread(compute):
    def own_niceness():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    delivered = []
    compute.submit("key", own_niceness, delivered.append, cost=INLINE_COST + 1)
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == [min(19, own_niceness() + WORKER_NICENESS)]


def test_inside_workers_first_a_worker_request_starts_before_the_held_inline_ones_run(compute):
    worker_started = threading.Event()
    seen_by_inline = []

    def inline():
        seen_by_inline.append(worker_started.wait(TIMEOUT_S))
        return "inline"

    def in_worker():
        worker_started.set()
        return "worker"

    delivered = []
    with compute.workers_first():
        compute.submit("core panel", inline, delivered.append, cost=INLINE_COST)
        assert delivered == [] and compute.is_pending("core panel")  # held, not yet run
        compute.submit("analysis panel", in_worker, delivered.append)  # no declared cost
    assert seen_by_inline == [True]  # the worker was already computing when the inline request ran
    assert delivered == ["inline"] and not compute.is_pending("core panel")
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == ["inline", "worker"]


def test_inside_workers_first_a_large_declared_worker_request_starts_after_the_inline_ones(compute):
    # Beside the GUI thread's own computation a large one slows it down.
    started_before_inline = []
    worker_started = threading.Event()

    def in_worker():
        worker_started.set()
        return "large"

    def inline():
        started_before_inline.append(worker_started.wait(0.3))
        return "inline"

    delivered = []
    with compute.workers_first():
        compute.submit("core panel, large", in_worker, delivered.append, cost=INLINE_COST + 1)
        compute.submit("core panel, small", inline, delivered.append, cost=INLINE_COST)
    assert started_before_inline == [False]
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == ["inline", "large"]


def test_held_requests_run_in_order_unless_superseded_or_cancelled(compute):
    delivered = []
    with compute.workers_first():
        compute.submit("a", lambda: "a, superseded", delivered.append, cost=1)
        compute.submit("b", lambda: "b", delivered.append, cost=1)
        compute.submit("c", lambda: "c, cancelled", delivered.append, cost=1)
        compute.submit("a", lambda: "a", delivered.append, cost=1)
        compute.cancel("c")
        compute.submit("d", lambda: "d, superseded by a worker request", delivered.append, cost=1)
        compute.submit("d", lambda: "d", delivered.append, cost=INLINE_COST + 1)
    assert delivered == ["b", "a"]
    assert compute.wait_idle(TIMEOUT_S)
    assert delivered == ["b", "a", "d"]


def test_a_held_request_that_fails_without_a_handler_raises_after_the_others_ran(compute):
    delivered = []

    def fail():
        raise ValueError("d_model must be in 2…8192, got 0")

    with pytest.raises(ValueError, match="d_model"):
        with compute.workers_first():
            compute.submit("failing", fail, delivered.append, cost=1)
            compute.submit("fine", lambda: "fine", delivered.append, cost=1)
    assert delivered == ["fine"]
    errors = []
    with compute.workers_first():
        compute.submit("failing", fail, delivered.append, errors.append, cost=1)
    assert [str(error) for error in errors] == ["d_model must be in 2…8192, got 0"]


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

    compute.submit(panel, slow, show, failed.append, cost=INLINE_COST + 1)
    compute.submit((panel, "half"), slow, show, failed.append, cost=INLINE_COST + 1)  # keys that hold the widget
    panel.deleteLater()
    qtbot.waitUntil(lambda: not _alive(label), timeout=TIMEOUT_MS)
    gate.set()
    assert compute.wait_idle(TIMEOUT_S)
    QApplication.processEvents()
    assert delivered == [] and failed == []


def _alive(widget) -> bool:
    import shiboken6

    return shiboken6.isValid(widget)

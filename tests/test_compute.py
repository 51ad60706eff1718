"""ComputeService: newest request wins, small requests inline, one BLAS thread per worker."""

from __future__ import annotations

import os
import sys
import threading

import pytest
from threadpoolctl import threadpool_info

from posenc_gui.compute import INLINE_COST, WORKER_NICENESS


def test_blas_runs_single_threaded_once_the_service_exists(compute):
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "NumPy's BLAS was not found"
    assert all(pool["num_threads"] == 1 for pool in blas), blas


def test_only_the_newest_request_per_key_is_delivered(compute):
    gate = threading.Event()
    delivered = []

    def slow(value):
        gate.wait(5)
        return value

    for value in range(5):
        compute.submit("key", lambda v=value: slow(v), delivered.append, cost=INLINE_COST + 1)
    gate.set()
    assert compute.wait_idle(10)
    assert delivered == [4]


def test_cheap_requests_run_before_submit_returns(compute):
    delivered = []
    compute.submit("key", lambda: threading.get_ident(), delivered.append, cost=INLINE_COST)
    assert delivered == [threading.get_ident()]  # on this (the GUI) thread, already


def test_expensive_requests_run_in_a_worker(compute):
    delivered = []
    compute.submit("key", lambda: threading.get_ident(), delivered.append, cost=INLINE_COST + 1)
    assert delivered == []
    assert compute.wait_idle(10)
    assert delivered and delivered[0] != threading.get_ident()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread niceness is set on Linux only")
def test_workers_run_at_a_lower_priority_than_the_gui_thread(compute):
    def own_niceness():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    delivered = []
    compute.submit("key", own_niceness, delivered.append, cost=INLINE_COST + 1)
    assert compute.wait_idle(10)
    assert delivered == [min(19, own_niceness() + WORKER_NICENESS)]

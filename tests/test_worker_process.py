"""The analysis worker process: the protocol, and ComputeService requests that run there."""

import os
import pickle
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers_imports import assert_loads_none_of
from posenc_gui import compute as compute_module
from posenc_gui import worker_process
from posenc_gui.compute import ModelJob
from posenc_gui.model import EncodingParams
from posenc_gui.model.panels.panel_data import addition_data, linear_relation_data, relative_data
from waiting import TIMEOUT_S

#: Each test here starts, kills or inspects the worker process itself (see conftest.py).
pytestmark = pytest.mark.own_worker_process


def _ask(child: subprocess.Popen, module: str, name: str, args: tuple):
    worker_process.write_frame(child.stdin, pickle.dumps((module, name, args)))
    return pickle.loads(worker_process.read_frame(child.stdout))


@pytest.fixture
def child():
    process = subprocess.Popen(compute_module.worker_command(), cwd=compute_module.WORKER_FOLDER,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert worker_process.read_frame(process.stdout) == worker_process.READY
    yield process
    process.stdin.close()
    assert process.wait(timeout=TIMEOUT_S) == 0  # it ends when its requests end
    process.stdout.close()


def test_the_worker_process_loads_no_qt():
    assert_loads_none_of("import posenc_gui.worker_process, posenc_gui.model.panels.panel_data")


def test_the_child_answers_with_the_models_values_and_errors(child):
    params = EncodingParams(seq_len=48, d_model=32)
    ok, data = _ask(child, "posenc_gui.model.panels.panel_data", "relative_data", (params, 16, 3))
    here = relative_data(params, 16, 3)
    assert ok and data.params == params
    np.testing.assert_array_equal(data.profiles, here.profiles)
    np.testing.assert_array_equal(data.spread.spread, here.spread.spread)
    ok, error = _ask(child, "posenc_gui.model.panels.panel_data", "linear_relation_data",
                     (EncodingParams(seq_len=8, d_model=8), "one"))
    assert not ok and isinstance(error, ValueError) and str(error).startswith("k ")
    ok, error = _ask(child, "os", "system", ("true",))  # only the model runs there
    assert not ok and "posenc_gui.model" in str(error)
    ok, data = _ask(child, "posenc_gui.model.panels.panel_data", "addition_data", (params, 2.0))
    assert ok and data.scale == 2.0  # still serving after the errors


@pytest.fixture
def results():
    return []


def _wait(compute, results, count=1):
    assert compute.wait_idle(TIMEOUT_S)
    assert len(results) >= count


def test_a_model_job_runs_in_the_worker_process_and_survives_its_death(compute, results, no_worker_yet, monkeypatch):
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    params = EncodingParams(seq_len=64, d_model=32)
    compute.submit("relative", ModelJob(relative_data, (params, 8, 2)), results.append)
    process = compute_module.worker_process()
    assert process is not None and process.alive
    _wait(compute, results)
    np.testing.assert_array_equal(results[0].profiles, relative_data(params, 8, 2).profiles)
    # Killed with a request in flight: the request is still answered (in this process),
    # and the next one starts a new child.
    compute.submit("relative", ModelJob(relative_data, (params, 16, 2)), results.append)
    os.kill(process.pid, signal.SIGKILL)
    _wait(compute, results, 2)
    assert results[1].spread.offsets[-1] == 16
    compute.submit("relative", ModelJob(relative_data, (params, 4, 2)), results.append)
    _wait(compute, results, 3)
    replacement = compute_module.worker_process()
    assert replacement is not process and replacement.pid != process.pid and replacement.alive
    assert results[2].spread.offsets[-1] == 4


def test_the_newest_model_job_wins_and_errors_reach_on_error(compute, results, monkeypatch):
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    errors = []
    for d_model in (16, 24, 32, 40):
        compute.submit("addition", ModelJob(addition_data, (EncodingParams(seq_len=32, d_model=d_model), 1.0)),
                       results.append, errors.append)
    _wait(compute, results)
    assert [data.params.d_model for data in results] == [40] and not errors
    compute.submit("linear", ModelJob(linear_relation_data, (EncodingParams(seq_len=8, d_model=8), "one")),
                   results.append, errors.append)
    assert compute.wait_idle(TIMEOUT_S)
    assert len(errors) == 1 and str(errors[0]).startswith("k ") and len(results) == 1
    compute.submit("bad args", ModelJob(relative_data, (lambda: None, 1, 1)), results.append, errors.append)
    assert compute.wait_idle(TIMEOUT_S)
    assert len(errors) == 2 and len(results) == 1  # arguments that do not pickle: an error, no crash


def test_with_the_process_turned_off_model_jobs_run_in_threads(compute, results, monkeypatch):
    monkeypatch.setenv(compute_module.WORKER_PROCESS_ENV, "0")
    assert compute_module.worker_process() is None
    params = EncodingParams(seq_len=32, d_model=16)
    compute.submit("relative", ModelJob(relative_data, (params, 4, 1)), results.append)
    _wait(compute, results)
    np.testing.assert_array_equal(results[0].profiles, relative_data(params, 4, 1).profiles)


def test_only_model_functions_go_to_the_process():
    assert ModelJob(relative_data).in_process()
    assert not ModelJob(np.zeros).in_process()
    assert not ModelJob(lambda: None).in_process()  # a test's stand-in runs in a thread


def test_a_new_sigma_reuses_the_sweeps_of_the_same_parameters():
    # In the worker process the panel's previous result is not at hand; the model keeps the σ-free parts.
    params = EncodingParams(seq_len=40, d_model=64, scheme="naive")
    first, second = addition_data(params, 1.0), addition_data(params, 50.0)
    assert second.sweep is first.sweep and second.ortho is first.ortho
    assert second.current.cosine_mean[0] > first.current.cosine_mean[0]


def test_a_service_without_processes_runs_model_jobs_in_its_threads(qapp, results, monkeypatch):
    from posenc_gui.compute import ComputeService

    def refuse():
        raise AssertionError("the worker process was asked for")

    monkeypatch.setattr(compute_module, "worker_process", refuse)
    service = ComputeService(processes=False)
    try:
        service.prepare_worker_process()  # idle-time start: not for this service either
        params = EncodingParams(seq_len=32, d_model=16)
        service.submit("relative", ModelJob(relative_data, (params, 4, 1)), results.append)
        _wait(service, results)
        assert results[0].params == params
    finally:
        service.shutdown()


def test_a_reply_that_does_not_read_back_replaces_the_child(compute, results, no_worker_yet, monkeypatch):
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    params = EncodingParams(seq_len=32, d_model=16)
    compute.submit("first", ModelJob(relative_data, (params, 4, 1)), results.append)
    process = compute_module.worker_process()
    _wait(compute, results)
    # The reader is waiting for the next reply in the real read_frame; the one after it is garbled.
    real = worker_process.read_frame
    monkeypatch.setattr(worker_process, "read_frame", lambda stream: (real(stream) and b"not a pickle"))
    compute.submit("second", ModelJob(relative_data, (params, 6, 1)), results.append)
    _wait(compute, results, 2)
    compute.submit("third", ModelJob(relative_data, (params, 8, 1)), results.append)
    _wait(compute, results, 3)
    assert sorted(data.spread.offsets[-1] for data in results) == [4, 6, 8]  # all answered
    assert not process.alive and process._child.poll() is not None  # killed, not left running


def test_another_panels_request_does_not_wait_for_a_long_one_in_the_process(compute, results, monkeypatch):
    # Two analyses on screen computed side by side in two threads; the one process must not
    # make the second wait for the first (a scorecard at 1,048,576 × 8192 takes seconds).
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    long = EncodingParams(seq_len=1_048_576, d_model=512)  # about 0.3 s in the process
    compute.submit("long", ModelJob(relative_data, (long, 64, 4)), lambda data: results.append("long"))
    compute.submit("short", ModelJob(relative_data, (EncodingParams(seq_len=32, d_model=16), 4, 1)),
                   lambda data: results.append("short"))
    _wait(compute, results, 2)
    assert results == ["short", "long"]


def test_what_the_childs_functions_print_goes_to_stderr_not_into_the_replies():
    code = ("import posenc_gui.model.core.limits as limits, posenc_gui.worker_process as w;"
            "real = limits.check_int;"
            "limits.check_int = lambda *args: (print('chatter'), real(*args))[1];"
            "w.main()")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        assert worker_process.read_frame(child.stdout) == worker_process.READY
        assert _ask(child, "posenc_gui.model.core.limits", "check_int", ("n", 5, 0, 10)) == (True, 5)
    finally:
        child.stdin.close()
        child.wait(timeout=TIMEOUT_S)
        assert b"chatter" in child.stderr.read()
        child.stdout.close()
        child.stderr.close()


class _UnpicklableInt(int):
    def __reduce__(self):
        raise ValueError("this argument refuses to be pickled")


def test_a_model_job_whose_arguments_do_not_pickle_runs_in_a_thread(compute, results, no_worker_yet, monkeypatch):
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    params = EncodingParams(seq_len=32, d_model=16)
    errors = []
    compute.submit("odd", ModelJob(relative_data, (params, _UnpicklableInt(4), 1)), results.append, errors.append)
    _wait(compute, results)
    assert not errors and results[0].spread.offsets[-1] == 4
    compute.submit("odd", ModelJob(relative_data, (params, 2, 1)), results.append)
    _wait(compute, results, 2)
    assert results[1].spread.offsets[-1] == 2
    assert compute_module.worker_process().alive  # the process still serves


def _close_worker_process() -> None:
    if compute_module._worker_process is not None:
        compute_module._worker_process.close()
        compute_module._worker_process = None


@pytest.fixture
def no_worker_yet(monkeypatch):
    """No worker process running and none failed yet; whatever the test leaves is closed afterwards."""
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    monkeypatch.setattr(compute_module, "_process_failures", 0)
    _close_worker_process()
    yield
    _close_worker_process()


def test_a_worker_process_that_cannot_start_leaves_every_request_to_the_threads(compute, results, no_worker_yet,
                                                                              monkeypatch):
    started = []

    def failing_command():
        started.append(1)
        return [sys.executable, "-I", "-c", "raise SystemExit(1)"]

    monkeypatch.setattr(compute_module, "worker_command", failing_command)
    params = EncodingParams(seq_len=32, d_model=16)
    for count, max_offset in enumerate((4, 6, 8), start=1):
        compute.submit("relative", ModelJob(relative_data, (params, max_offset, 1)), results.append)
        _wait(compute, results, count)
    assert [data.spread.offsets[-1] for data in results] == [4, 6, 8]
    assert started == [1]  # tried once, not again for each request
    assert compute_module.worker_process() is None


class _Panic(BaseException):
    """Stands for tokenizers' PanicException: a BaseException, which ``except Exception`` lets through."""


def _stand_in_for(function):
    """A function the worker process takes for ``function`` (same module and name) but that refuses to run here:
    a request answered by it was run in the window's process, not in a worker process."""

    def only_in_a_worker_process(*_args):
        raise AssertionError("the request ran in the window's process")

    only_in_a_worker_process.__module__ = function.__module__
    only_in_a_worker_process.__qualname__ = function.__qualname__
    return only_in_a_worker_process


def test_a_base_exception_in_the_child_is_an_error_reply_and_the_child_serves_on():
    code = ("import posenc_gui.model.core.limits as limits, posenc_gui.worker_process as w;"
            "Panic = type('PanicException', (BaseException,), {});"
            "limits.check_int = lambda *args: (_ for _ in ()).throw(Panic('no entry found for key'));"
            "w.main()")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert worker_process.read_frame(child.stdout) == worker_process.READY
        ok, error = _ask(child, "posenc_gui.model.core.limits", "check_int", ("n", 5, 0, 10))
        assert not ok and isinstance(error, RuntimeError)
        assert "PanicException" in str(error) and "no entry found for key" in str(error)
        assert _ask(child, "posenc_gui.model.core.limits", "is_real", (0.5,)) == (True, True)  # still serving
    finally:
        child.stdin.close()
        assert child.wait(timeout=4 * TIMEOUT_S) == 0
        child.stdout.close()


def test_a_request_raising_a_base_exception_in_a_thread_reaches_on_error(compute, results):
    def panics():
        raise _Panic("Precompiled: Error(\"Cannot parse precompiled_charsmap\")")

    errors = []
    compute.submit("panics", panics, results.append, errors.append)
    assert compute.wait_idle(4 * TIMEOUT_S), "the request was never answered"
    assert not results and len(errors) == 1 and isinstance(errors[0], RuntimeError)
    assert "_Panic" in str(errors[0]) and "precompiled_charsmap" in str(errors[0])


def test_a_worker_process_killed_mid_request_is_restarted_and_the_request_run_again_there(
        compute, results, no_worker_yet, qtbot):
    process = compute_module.worker_process()
    qtbot.waitUntil(lambda: process.started, timeout=4 * TIMEOUT_S * 1000)
    os.kill(process.pid, signal.SIGSTOP)  # it cannot answer: the request is still in flight when it is killed
    params = EncodingParams(seq_len=64, d_model=32)
    errors = []
    compute.submit("relative", ModelJob(_stand_in_for(relative_data), (params, 16, 2)), results.append,
                   errors.append)
    os.kill(process.pid, signal.SIGKILL)
    assert compute.wait_idle(4 * TIMEOUT_S), "the request was never answered"
    assert not errors and len(results) == 1
    np.testing.assert_array_equal(results[0].profiles, relative_data(params, 16, 2).profiles)
    replacement = compute_module._worker_process  # started when the first one died, not at the next request
    assert replacement is not None and replacement is not process and replacement.alive
    assert replacement.pid != process.pid


#: A worker process that serves no request: it says it is ready, reads a request and kills itself
#: (as a request that crashes the process would, every time).
_DIES_ON_EVERY_REQUEST = ("import os, signal, sys;"
                          "from posenc_gui.worker_process import READY, read_frame, write_frame;"
                          "write_frame(sys.stdout.buffer, READY); read_frame(sys.stdin.buffer);"
                          "os.kill(os.getpid(), signal.SIGKILL)")


def test_a_request_that_worker_processes_keep_dying_on_is_reported_not_run_in_the_window(
        compute, results, no_worker_yet, monkeypatch):
    started = []

    def dying_command():
        started.append(1)
        return [sys.executable, "-c", _DIES_ON_EVERY_REQUEST]

    monkeypatch.setattr(compute_module, "worker_command", dying_command)
    errors = []
    compute.submit("relative", ModelJob(_stand_in_for(relative_data), (EncodingParams(seq_len=8, d_model=8), 4, 1)),
                   results.append, errors.append)
    assert compute.wait_idle(4 * TIMEOUT_S), "the request was never answered"
    assert not results and len(errors) == 1 and isinstance(errors[0], RuntimeError), errors
    message = str(errors[0])
    assert "worker process stopped" in message and "signal 9" in message, message
    assert len(started) >= 2  # the request was tried in a second process before the panel was told


def test_a_window_whose_worker_process_is_killed_mid_update_shows_the_update(make_window, no_worker_yet, qtbot):
    window = make_window(restore=False)
    window.raise_panel("relative")
    panel = window.panels["relative"]
    assert window.compute.wait_idle(4 * TIMEOUT_S)
    process = compute_module.worker_process()
    qtbot.waitUntil(lambda: process.started, timeout=4 * TIMEOUT_S * 1000)
    os.kill(process.pid, signal.SIGSTOP)
    window.state.update(d_model=510)
    window.state.flush()
    assert window.compute.is_pending(panel) and process._running is not None  # a request in the stopped process
    os.kill(process.pid, signal.SIGKILL)
    assert window.compute.wait_idle(4 * TIMEOUT_S), "the window is still computing"
    assert panel.data.params.d_model == 510
    qtbot.waitUntil(lambda: not window.busy_indicator.isVisible(), timeout=4 * TIMEOUT_S * 1000)
    replacement = compute_module._worker_process
    assert replacement is not None and replacement is not process and replacement.alive

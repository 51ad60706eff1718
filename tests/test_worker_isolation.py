"""The worker process imports nothing from the launch folder, and ends (at once) with its last window."""

import os
import signal
import subprocess
import sys
import threading

import pytest

from posenc_gui import compute as compute_module
from posenc_gui.compute import ModelJob
from posenc_gui.model import EncodingParams
from posenc_gui.model.panels.panel_data import relative_data
from waiting import TIMEOUT_MS, TIMEOUT_S

#: Each test here starts, kills or inspects the worker process itself (see conftest.py).
pytestmark = pytest.mark.own_worker_process

#: Modules a worker imports (or Python imports at start-up) that a launch folder could shadow.
PLANTED = ("struct", "pickle", "numpy", "sitecustomize", "posenc_gui")


@pytest.fixture
def launch_folder(tmp_path):
    """A folder holding modules that leave a file in ``tmp_path / "ran"`` when imported."""
    folder, ran = tmp_path / "launch", tmp_path / "ran"
    folder.mkdir()
    ran.mkdir()
    for name in PLANTED:
        code = f"open({str(ran / name)!r}, 'w').close()\n"
        if name == "posenc_gui":
            (folder / name).mkdir()
            (folder / name / "__init__.py").write_text(code)
        else:
            (folder / f"{name}.py").write_text(code)
    return folder, ran


@pytest.fixture
def new_worker(monkeypatch):
    """No worker process running yet: the next request starts one from the current folder."""
    monkeypatch.delenv(compute_module.WORKER_PROCESS_ENV, raising=False)
    if compute_module._worker_process is not None:
        compute_module._worker_process.close()
        compute_module._worker_process = None


def test_the_planted_modules_run_in_a_child_started_the_unsafe_way(launch_folder):
    # The check below would prove nothing if the planted modules could not run.
    folder, ran = launch_folder
    subprocess.run([sys.executable, "-m", "posenc_gui.worker_process"], cwd=folder, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=TIMEOUT_S)
    assert {path.name for path in ran.iterdir()} & {"struct", "posenc_gui"}  # which one depends on the Python


def test_the_worker_imports_nothing_from_the_launch_folder(compute, launch_folder, new_worker, monkeypatch):
    folder, ran = launch_folder
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))  # as `python -m posenc_gui` run there puts it
    monkeypatch.syspath_prepend("")  # and a relative entry, which names the current folder
    results = []
    params = EncodingParams(seq_len=32, d_model=16)
    compute.submit("relative", ModelJob(relative_data, (params, 4, 1)), results.append)
    process = compute_module.worker_process()
    assert compute.wait_idle(TIMEOUT_S) and results[0].params == params
    assert process.alive  # answered by the child: one that failed to start leaves the job to this process
    assert sorted(path.name for path in ran.iterdir()) == []
    if os.path.exists(f"/proc/{process.pid}/cwd"):
        assert os.readlink(f"/proc/{process.pid}/cwd") == os.path.realpath(compute_module.WORKER_FOLDER)


def _use_worker_process(window) -> compute_module._WorkerProcess:
    window.compute.prepare_worker_process()
    process = compute_module.worker_process()
    assert process is not None and process.alive
    return process


def test_the_worker_process_ends_when_its_last_window_closes(make_window, qtbot, new_worker):
    first, second = make_window(restore=False), make_window(restore=False)
    process = _use_worker_process(first)
    assert _use_worker_process(second) is process  # shared
    first.close()
    assert process.alive and process._child.poll() is None
    second.close()
    qtbot.waitUntil(lambda: process._child.poll() is not None, timeout=TIMEOUT_MS)
    assert compute_module.worker_process() is not process  # a later window gets a new one


def test_closing_the_window_kills_a_busy_worker_without_waiting_for_it(make_window, qtbot, new_worker, monkeypatch):
    window = make_window(restore=False)
    process = _use_worker_process(window)
    child = process._child
    waited_on_gui_thread = []
    real_wait = child.wait
    monkeypatch.setattr(child, "wait", lambda *args, **kwargs: (
        waited_on_gui_thread.append(threading.current_thread() is threading.main_thread()),
        real_wait(*args, **kwargs))[1])
    rerun = []
    real_run_job = compute_module._run_job
    monkeypatch.setattr(compute_module, "_run_job", lambda *args: (rerun.append(args), real_run_job(*args)))
    os.kill(child.pid, signal.SIGSTOP)  # a computation that does not end: the child answers nothing
    results = []
    window.compute.submit("stuck", ModelJob(relative_data, (EncodingParams(seq_len=32, d_model=16), 4, 1)),
                          results.append)
    window.close()
    qtbot.waitUntil(lambda: child.returncode is not None, timeout=TIMEOUT_MS)
    assert child.returncode == -signal.SIGKILL
    assert not any(waited_on_gui_thread)  # the reader thread collected it
    assert not rerun and not results  # its job was dropped, not run again in this process


def test_shutdown_does_not_wait_for_a_job_running_in_a_thread(compute, qtbot):
    started, release = threading.Event(), threading.Event()

    def blocked() -> int:
        started.set()
        release.wait(60)
        return 1

    results = []
    compute.submit("blocked", blocked, results.append)
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)  # a job starts once the event loop runs
    # Bounds the wait of a shutdown that waits for the job, so that it fails instead of hanging.
    unblock = threading.Timer(20, release.set)
    unblock.start()
    try:
        compute.shutdown()
        assert not release.is_set()  # returned while the job was still running
    finally:
        release.set()
        unblock.cancel()
    assert compute.wait_idle(TIMEOUT_S) and not results


def test_a_source_checkout_launched_from_its_own_folder_still_finds_posenc_gui_last(monkeypatch):
    # `python -m posenc_gui` in an uninstalled checkout: the launch folder holds the package.
    package_root = os.path.dirname(compute_module.WORKER_FOLDER)
    monkeypatch.chdir(package_root)
    monkeypatch.syspath_prepend(package_root)
    folders = compute_module.worker_command()[4:]
    assert folders[-1] == package_root and package_root not in folders[:-1]

"""Shared fixtures. Tests run headless unless the developer overrides it."""

import os
from pathlib import Path

# Qt's offscreen screen is 800 × 800 unless configured; on a desktop-sized one
# the window opens at its default size (it is fitted to smaller screens). A
# plain "offscreen" (as .ci/run sets) gets the same screen.
DESKTOP_SCREEN = f"offscreen:configfile={Path(__file__).with_name('desktop_screen.json')}"
os.environ.setdefault("QT_QPA_PLATFORM", DESKTOP_SCREEN)
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = DESKTOP_SCREEN

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402
from waiting import TIMEOUT_MS, TIMEOUT_S  # noqa: E402

from posenc_gui import prepare_qt_environment  # noqa: E402

prepare_qt_environment()  # the tests paint as the app does

# No test depends on wall-clock time: on a loaded machine an example may take
# longer than Hypothesis's deadline, and generating examples longer than its
# "too slow" health check allows.
settings.register_profile("posenc-gui", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("posenc-gui")


class PatientQtBot(QtBot):
    """pytest-qt's QtBot whose waits are bounded by :data:`waiting.TIMEOUT_MS` unless a test says otherwise.

    pytest-qt's own default, 5 s, fails a wait for a computed view on a busy machine.
    """

    def waitUntil(self, callback, **kwargs):  # noqa: N802 (pytest-qt's name)
        return super().waitUntil(callback, **{"timeout": TIMEOUT_MS, **kwargs})

    def waitSignal(self, signal, **kwargs):  # noqa: N802
        return super().waitSignal(signal, **{"timeout": TIMEOUT_MS, **kwargs})

    def waitSignals(self, signals, **kwargs):  # noqa: N802
        return super().waitSignals(signals, **{"timeout": TIMEOUT_MS, **kwargs})

    def waitExposed(self, widget, **kwargs):  # noqa: N802
        return super().waitExposed(widget, **{"timeout": TIMEOUT_MS, **kwargs})

    def waitActive(self, widget, **kwargs):  # noqa: N802
        return super().waitActive(widget, **{"timeout": TIMEOUT_MS, **kwargs})

    def waitCallback(self, **kwargs):  # noqa: N802
        return super().waitCallback(**{"timeout": TIMEOUT_MS, **kwargs})


@pytest.fixture
def qtbot(qapp, request):
    """pytest-qt's ``qtbot``, its waits bounded by :data:`waiting.TIMEOUT_MS` (see :class:`PatientQtBot`)."""
    return PatientQtBot(request)


@pytest.fixture(autouse=True, scope="session")
def compute_waits_bounded_by_the_tests_timeout():
    """``ComputeService.wait_idle()`` without a timeout waits up to :data:`waiting.TIMEOUT_S` in the tests.

    The app's own default (30 s) bounds the exports and walkthrough figures
    the tests make in this process too; on a busy machine a large analysis
    can take longer than that without hanging.
    """
    from posenc_gui.compute import ComputeService

    app_wait_idle = ComputeService.wait_idle

    def wait_idle(self, timeout: float = TIMEOUT_S) -> bool:
        return app_wait_idle(self, timeout)

    wait_idle.__doc__ = app_wait_idle.__doc__
    ComputeService.wait_idle = wait_idle
    yield
    ComputeService.wait_idle = app_wait_idle


def pytest_configure(config):
    config.addinivalue_line("markers", "prebuild: main windows build the hidden docks' panels in idle time, as the "
                            "app does (without it they are built when shown: tests do not wait for idle time)")
    config.addinivalue_line("markers", "own_worker_process: the test starts, kills or counts the worker process "
                            "itself (no process is kept for it from other tests, nor after it)")
    config.addinivalue_line("markers", "worker_niceness: compute workers run at the app's lower priority "
                            "(without it, at the tests' own)")


@pytest.fixture(autouse=True)
def workers_at_the_tests_priority(request, monkeypatch):
    """Compute threads and the worker process run at the test process's priority (unless marked ``worker_niceness``).

    The app lowers them by ``WORKER_NICENESS`` so that its GUI thread goes
    first. Beside other busy processes of the same scheduling group (a
    terminal's autogroup: two CPU-bound processes started beside the tests)
    a niced worker gets a few per cent of what they get, and a test waiting
    for its result waits ten times longer or more. The tests wait for results,
    not for the GUI thread, so they run the workers as the test runs.
    """
    if request.node.get_closest_marker("worker_niceness") is None:
        from posenc_gui import compute

        monkeypatch.setattr(compute, "WORKER_NICENESS", 0)


@pytest.fixture(autouse=True)
def panels_built_when_shown(request, monkeypatch):
    """Main windows build a hidden dock's panel when it is first shown, not in idle time (unless marked ``prebuild``).

    The app builds hidden panels one at a time once the user has been idle
    for a second; a test that settles a window (``finish_pending``) would
    wait for every one of them, about 10 s a window. A panel a test looks at
    is built when it asks for it (``window.panels[panel_id]``), as it is
    when the user shows its dock before idle time came.
    """
    if request.node.get_closest_marker("prebuild") is None:
        from posenc_gui.window.panels import PanelPrebuilder

        monkeypatch.setattr(PanelPrebuilder, "start", lambda self: None)


class _TestSession:
    """Stands for the test session among the worker process's users (see :func:`one_worker_process_across_tests`)."""


_SESSION = _TestSession()


@pytest.fixture(autouse=True)
def one_worker_process_across_tests(request):
    """The worker process outlives the test that started it, unless it is still computing (then it is ended).

    The app starts it for its first window and ends it with its last; each
    test's window or ``compute`` would start one (~0.3 s of start-up and
    imports) and the next test another. Kept, the next test finds it idle,
    as a second window of the app does. A test marked ``own_worker_process``
    (it starts, kills or counts the process itself) or ``worker_niceness``
    gets the app's behaviour: no process kept before, during or after it.
    """
    from posenc_gui import compute

    def end_it() -> None:
        with compute._process_lock:
            compute._process_users.discard(_SESSION)
            if compute._worker_process is not None:
                compute._worker_process.close()
                compute._worker_process = None

    if request.node.get_closest_marker("own_worker_process") or request.node.get_closest_marker("worker_niceness"):
        end_it()
        yield
        end_it()
        return
    with compute._process_lock:
        compute._process_users.add(_SESSION)
    yield
    with compute._process_lock:
        process = compute._worker_process
        if process is not None and (not process.alive or process._running is not None or process._waiting):
            end_it()


@pytest.fixture
def state(qapp):
    """A fresh AppState with default parameters."""
    from posenc_gui.state import AppState

    return AppState()


@pytest.fixture
def compute(qapp):
    """A ComputeService, shut down after the test."""
    from posenc_gui.compute import ComputeService

    service = ComputeService()
    yield service
    service.shutdown()


@pytest.fixture
def settings_path(tmp_path, monkeypatch):
    """Point the app's QSettings at a fresh ini file for this test."""
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("POSENC_GUI_SETTINGS", str(path))
    return path


@pytest.fixture
def make_window(qtbot, settings_path):
    """Build, show and settle real main windows: ``make_window(size=(w, h), **MainWindow kwargs)``."""

    def make(size: tuple[int, int] | None = None, **kwargs):
        from posenc_gui.mainwindow import MainWindow

        window = MainWindow(**kwargs)
        qtbot.addWidget(window)
        if size is not None:
            window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        assert window.compute.wait_idle()
        return window

    return make


def pytest_sessionfinish(session, exitstatus):
    """Empty the clipboard while Python is still running.

    Tests copy figures to the clipboard; Qt keeps that data in a global that
    it destroys after the interpreter has finalized, and the Python-side
    destructor then segfaults the process after every test passed.
    """
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        app.clipboard().clear()

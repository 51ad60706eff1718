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

from posenc_gui import prepare_qt_environment  # noqa: E402

prepare_qt_environment()  # the tests paint as the app does

# No test depends on wall-clock time: on a loaded machine an example may take
# longer than Hypothesis's deadline, and generating examples longer than its
# "too slow" health check allows.
settings.register_profile("posenc-gui", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("posenc-gui")


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

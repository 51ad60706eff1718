"""Shared fixtures. Tests run headless unless the developer overrides it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from posenc_gui import prepare_qt_environment  # noqa: E402

prepare_qt_environment()  # the tests paint as the app does


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

"""Shared fixtures. Tests run headless unless the developer overrides it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


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
    """Delete leftover Qt widgets while Python is intact.

    Left to interpreter shutdown, windows, scenes and the QApplication are
    destroyed in arbitrary order, and Qt can segfault after every test passed.
    """
    import gc

    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()

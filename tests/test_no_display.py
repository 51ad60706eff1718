"""Without a display the app says so in one line and exits with status 2, instead of Qt's abort."""

import os
import subprocess
import sys

import pytest

from posenc_gui.display import display_problem, explain_qt_failure, qt_start_guard
from waiting import TIMEOUT_S

X11_OR_WAYLAND = sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd", "dragonfly"))
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "QT_QPA_PLATFORM")


def launch(tmp_path, **variables) -> subprocess.CompletedProcess:
    """``python -I -m posenc_gui`` with no display variables but ``variables``."""
    env = {name: value for name, value in os.environ.items() if name not in DISPLAY_VARIABLES}
    env.update(XDG_RUNTIME_DIR=str(tmp_path), POSENC_GUI_SETTINGS=str(tmp_path / "settings.ini"), **variables)
    return subprocess.run([sys.executable, "-I", "-m", "posenc_gui", "--no-restore"], capture_output=True,
                          text=True, timeout=TIMEOUT_S, env=env)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.skipif(not X11_OR_WAYLAND, reason="Qt draws through X11 or Wayland only on Linux and the BSDs")
def test_with_no_display_the_app_says_so_and_exits_2(tmp_path):
    result = launch(tmp_path)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "no display" in line and "posenc-gui export" in line and "QT_QPA_PLATFORM=offscreen" in line


@pytest.mark.skipif(not X11_OR_WAYLAND, reason="Qt draws through X11 or Wayland only on Linux and the BSDs")
def test_a_display_qt_cannot_use_gives_one_line_and_exit_2_not_an_abort(tmp_path):
    display = next(f":{n}" for n in range(97, 200) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    result = launch(tmp_path, DISPLAY=display)
    assert result.returncode == 2, result.stderr
    line = one_line(result.stderr)
    assert line.startswith("posenc-gui: cannot open the window: ") and "QT_QPA_PLATFORM=offscreen" in line


@pytest.mark.parametrize("environ, platform, blocked", [
    ({}, "linux", True),
    ({"DISPLAY": ":0"}, "linux", False),
    ({"WAYLAND_DISPLAY": "wayland-1"}, "linux", False),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
    ({"QT_QPA_PLATFORM": "minimal"}, "freebsd14", False),
    ({"QT_QPA_PLATFORM": "vnc:size=800x600"}, "linux", False),
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
    ({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, "linux", True),  # Wayland asked for, X11 there
    ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, "linux", False),
    ({}, "darwin", False),
    ({}, "win32", False),
])
def test_the_display_check_reads_the_environment(environ, platform, blocked, tmp_path):
    environ = {"XDG_RUNTIME_DIR": str(tmp_path), **environ}
    assert (display_problem(environ, platform) is not None) == blocked


def test_wayland_s_default_socket_counts_as_a_display(tmp_path):
    (tmp_path / "wayland-0").touch()
    assert display_problem({"XDG_RUNTIME_DIR": str(tmp_path)}, "linux") is None


def test_the_explanation_names_what_qt_found():
    fatal = "This application failed to start because no Qt platform plugin could be initialized."
    unreachable = ["qt.qpa.xcb: could not connect to display host:0.0",
                   'qt.qpa.plugin: Could not load the Qt platform plugin "xcb" in "" even though it was found.']
    assert explain_qt_failure(unreachable, fatal) == "could not connect to display host:0.0"
    missing = ['qt.qpa.plugin: Could not load the Qt platform plugin "nosuch" in "" even though it was found.']
    assert explain_qt_failure(missing, fatal) == "Qt's nosuch platform plugin did not start"
    assert explain_qt_failure([], fatal + "\n\nAvailable platform plugins are: …") == fatal


def test_qt_messages_held_back_during_start_up_are_written_afterwards(qapp, capfd):
    from PySide6.QtCore import qWarning

    with qt_start_guard():
        qWarning("a start-up warning")
        assert "a start-up warning" not in capfd.readouterr().err
    assert "a start-up warning" in capfd.readouterr().err

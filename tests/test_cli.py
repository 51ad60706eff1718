"""The command line, run as a user would (subprocess)."""

import os
import shutil
import subprocess
import sys

import pytest

from posenc_gui import __version__
from waiting import TIMEOUT_S


def run(*args, env_extra=None, timeout=TIMEOUT_S):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "posenc_gui", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"posenc-gui {__version__}"


def test_help_lists_the_parameter_flags():
    result = run("--help")
    assert result.returncode == 0
    for flag in ("--scheme", "--seq-len", "--d-model", "--base", "--layout"):
        assert flag in result.stdout


@pytest.mark.parametrize("args, name", [(["--d-model", "0"], "d_model"), (["--base", "1"], "base"),
                                        (["--seq-len", "-3"], "seq_len")])
def test_bad_flag_gives_the_model_message_and_no_window(args, name):
    result = run(*args)
    assert result.returncode == 2
    assert name in result.stderr and "must be" in result.stderr


def test_installed_entry_point_starts_the_window_offscreen(tmp_path):
    exe = shutil.which("posenc-gui", path=os.path.dirname(sys.executable)) or shutil.which("posenc-gui")
    assert exe, "the posenc-gui console script is not installed"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")}
    result = subprocess.run([exe, "--quit-after-first-paint", "--scheme", "harmonic", "--d-model", "64"],
                            capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert result.returncode == 0, result.stderr
    assert "first paint" in result.stdout and "harmonic_n128_d64" in result.stdout
    assert (tmp_path / "s.ini").exists()  # settings written on close


def run_app_with(tmp_path, patch: str) -> subprocess.CompletedProcess:
    """Run ``posenc_gui.__main__.main`` offscreen until its first paint, after the Python lines ``patch``.

    ``patch`` sees the entry point's module as ``cli``.
    """
    script = tmp_path / "patched_app.py"
    script.write_text("import sys\nimport posenc_gui.__main__ as cli\n" + patch
                      + "sys.exit(cli.main(['--quit-after-first-paint', '--no-restore']))\n", encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_quitting_after_copying_a_figure_exits_cleanly(tmp_path):
    # Qt used to destroy a Python-made clipboard QMimeData after the
    # interpreter had finalized: a segfault on every exit after a copy.
    copy_then_quit = (
        "from posenc_gui.views.export_ui import copy_panel_figure\n"
        "from PySide6.QtGui import QGuiApplication\n"
        "report = cli._report_first_paint\n"
        "def copy_and_report(window, app):\n"
        "    window.compute.wait_idle()\n"
        "    assert copy_panel_figure(window, 'heatmap')\n"
        "    mime = QGuiApplication.clipboard().mimeData()\n"
        "    print('formats', sorted(mime.formats()))\n"
        "    report(window, app)\n"
        "cli._report_first_paint = copy_and_report\n"
    )
    for _ in range(3):
        result = run_app_with(tmp_path, copy_then_quit)
        assert "image/svg+xml" in result.stdout and "application/x-qt-image" in result.stdout


def test_the_app_tunes_the_memory_allocator_before_its_window(tmp_path):
    result = run_app_with(tmp_path, (
        "tune = cli.tune_memory_allocator\n"
        "def recorded():\n"
        "    from PySide6.QtWidgets import QApplication\n"
        "    print('tuned', tune(), 'before the application:', QApplication.instance() is None)\n"
        "cli.tune_memory_allocator = recorded\n"
    ))
    expected = "tuned True" if sys.platform.startswith("linux") else "tuned False"
    assert f"{expected} before the application: True" in result.stdout
    assert "first paint" in result.stdout

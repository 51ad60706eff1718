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


def test_help_shows_what_each_flag_takes_and_its_default():
    text = " ".join(run("--help").stdout.split())
    for needle in ("--scheme NAME", "--seq-len N", "--base X", "--layout NAME", "--truncate BOOL",
                   "--short-factor X,X,…", "--model-path PATH", "--preset NAME", "'Llama 3.1'",
                   "Values: interleaved or halves. Default: interleaved.", "Default: 4,096.", "Default: true.",
                   "--causal, --no-causal", "--real-head H", "--compare SCHEMES"):
        assert needle in text, needle
    assert "None" not in text and "SEQ_LEN" not in text and ".;" not in text
    export = " ".join(run("export", "--help").stdout.split())
    for needle in ("--scheme NAME[,NAME…]", "--d-model N[,N…]", "Default: 512. A comma list writes a file",
                   "--preset NAME"):
        assert needle in export, needle
    assert "None" not in export and ".;" not in export


@pytest.mark.parametrize("args, needle", [
    (["--d-model", "0"], "argument --d-model: d_model must be in 2…8192, got 0"),
    (["--base", "1"], "argument --base: base must be > 1"),
    (["--seq-len", "-3"], "argument --seq-len: seq_len must be"),
    (["--layout", "diagonal"], "argument --layout: layout must be one of interleaved or halves, got 'diagonal'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--preset", "Llama 9"], "argument --preset: preset must be one of"),
    (["--preset", "Llama 2", "--scheme", "alibi"], "--preset Llama 2 is a setup of the rope scheme"),
    (["--d-model", "32", "--dims", "40"], "--dims: dims must be in 0…31"),
    (["--compare", "rope,nosuch"], "error: --compare: 'nosuch' is not a scheme"),
    (["--demo-d-model", "999"], "argument --demo-d-model: demo_d_model must be in 2…64, got 999"),
    (["--seeds", "x"], "argument --seeds: seeds must be an integer 2…64, got 'x'"),
])
def test_a_bad_command_line_is_one_line_exit_2_and_no_window(tmp_path, args, needle):
    result = run(*args, "--quit-after-first-paint", env_extra={"POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")})
    assert result.returncode == 2, result.stdout
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("posenc-gui: error: "), result.stderr
    assert needle in result.stderr
    assert "first paint" not in result.stdout and not (tmp_path / "s.ini").exists()  # nothing shown or saved


def test_a_preset_and_panel_options_start_the_window(tmp_path):
    result = run("--preset", "llama 3.1", "--seq-len", "2048", "--causal", "--quit-after-first-paint", "--no-restore",
                 env_extra={"POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")})
    assert result.returncode == 0, result.stderr
    assert "rope_n2048_d128_r500000_llama3_f8" in result.stdout


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
    """Run the window's command line (``posenc_gui.cli.window.main``) offscreen until its first paint, after the
    Python lines ``patch``.

    ``patch`` sees that module as ``cli``.
    """
    script = tmp_path / "patched_app.py"
    script.write_text("import sys\nimport posenc_gui.cli.window as cli\n" + patch
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



def test_at_exit_the_window_s_canvases_are_emptied_before_it_is_deleted(tmp_path):
    # Deleted with full scenes, a window with every panel built crashed 2-7 runs in 30 on a busy machine: a scene
    # torn down from C++ asked a pyqtgraph item for its geometry, the override raised, Shiboken crashed printing it.
    result = run_app_with(tmp_path, (
        "import pyqtgraph as pg\n"
        "from posenc_gui.views import plotkit\n"
        "close = plotkit.close_canvases\n"
        "def recorded(window):\n"
        "    canvases = window.findChildren(pg.GraphicsView)\n"
        "    close(window)\n"
        "    print('canvases', len(canvases), 'emptied', sum(c.closed and not c.items() for c in canvases))\n"
        "plotkit.close_canvases = recorded\n"
    ))
    assert "canvases " in result.stdout, "the exit did not empty the canvases"
    counts = result.stdout.split("canvases ")[1].split()
    assert int(counts[0]) > 0 and counts[2] == counts[0], result.stdout

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

"""A settings file cannot hurt: any content or kind of file gives defaults and one warning, never a hang or crash."""

import os
import random
import stat
import struct
import subprocess
import sys

import pytest

from posenc_gui.model import EncodingParams
from posenc_gui.settings import MAX_FILE_BYTES, Settings, check_text, read_file
from waiting import TIMEOUT_S

SAVED = EncodingParams(scheme="harmonic", seq_len=300, d_model=64)


@pytest.fixture(scope="module")
def saved_file(qapp, tmp_path_factory) -> bytes:
    """A settings file as the window writes it, holding :data:`SAVED`."""
    from posenc_gui.mainwindow import MainWindow

    path = tmp_path_factory.mktemp("saved") / "settings.ini"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POSENC_GUI_SETTINGS", str(path))
        window = MainWindow(params=SAVED)
        window.close()
        window.deleteLater()
    return path.read_bytes()


def _message(window) -> str:
    return window.statusBar().currentMessage()


def _nested_variant_list(depth: int) -> bytes:
    """A QDataStream (Qt 4.0 format) QVariant: a list holding a list … ``depth`` deep."""
    innermost = struct.pack(">II", 9, 0)  # type 9 is QVariantList; no elements
    return struct.pack(">II", 9, 1) * depth + innermost


def _escaped(data: bytes) -> str:
    return "".join(f"\\x{byte:02x}" for byte in data)


@pytest.mark.parametrize("depth", [30_000, 100_000])
def test_a_deeply_nested_value_gives_defaults_and_a_warning(make_window, settings_path, depth):
    settings_path.write_text("[General]\nparams=" + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "ignored" in _message(window)


def test_recent_sessions_nested_deeper_than_json_recurses_give_an_empty_list(make_window, settings_path, saved_file):
    nested = "[" * 20_000 + "]" * 20_000  # within the key's bound (40 KiB) and the file's (64 KiB)
    settings_path.write_bytes(saved_file + f'[General]\nrecentSessions="{nested}"\n'.encode())
    window = make_window()
    assert window.state.params == SAVED and window.recent_sessions() == []


@pytest.mark.parametrize("value", [
    "@Variant({payload})",
    "\\x40Variant({payload})",  # the @ escaped
    '"@"Variant({payload})',  # split by quotes, which the parser drops
    "@DateTime({payload})",
])
def test_serialized_values_are_not_parsed(make_window, settings_path, value):
    # Unpacked, they are lists nested 2,000 deep (deeper ones crash Qt's parser with a stack overflow).
    payload = _escaped(_nested_variant_list(2_000))
    settings_path.write_text(f"[General]\nparams={value.format(payload=payload)}\n", encoding="utf-8")
    assert settings_path.stat().st_size <= MAX_FILE_BYTES
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "serialized values" in _message(window)


def _cut_mid_line(data: bytes) -> bytes:
    return data[: data.index(b"params=") + 20]


@pytest.mark.parametrize("damage", [
    pytest.param(lambda data: b"", id="empty"),
    pytest.param(_cut_mid_line, id="truncated"),
    pytest.param(lambda data: random.Random(0).randbytes(3000), id="binary"),
    pytest.param(lambda data: data.decode("utf-8").encode("utf-16"), id="utf-16"),
    pytest.param(lambda data: data.decode("utf-8").encode("utf-16-le"), id="utf-16-without-bom"),
])
def test_an_unreadable_file_gives_defaults_and_a_warning(make_window, settings_path, saved_file, damage):
    settings_path.write_bytes(damage(saved_file))
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "ignored" in _message(window) and str(settings_path) in _message(window)


def test_a_huge_file_is_not_read(make_window, settings_path, saved_file):
    settings_path.write_bytes(saved_file)
    os.truncate(settings_path, 10 * 2**20)  # the valid settings, then 10 MiB of zeros
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "larger than 64 KiB" in _message(window)


def test_a_file_cut_at_a_line_break_names_what_is_missing(make_window, settings_path, saved_file):
    settings_path.write_bytes(saved_file[: saved_file.index(b"params=")])  # only the geometry is left
    window = make_window()
    assert window.state.params == EncodingParams()
    assert "parameters missing" in _message(window) and "layout missing" in _message(window)


@pytest.mark.parametrize("params, complaint", [
    ('{\\"base\\": \\"10000\\"}', "base must be a real number"),
    ('{\\"seq_len\\": 128.0}', "seq_len must be a whole number"),
])
def test_parameters_of_the_wrong_type_give_defaults(make_window, settings_path, params, complaint):
    settings_path.write_text(f'[General]\nparams="{params}"\n', encoding="utf-8")
    window = make_window()
    assert window.state.params == EncodingParams()
    assert complaint in _message(window)


def test_values_of_the_wrong_type_and_unknown_keys_are_dropped_and_named(make_window, settings_path, saved_file):
    extra = b"\n[export]\npng_scale=1, 2\nlast_format=@Rect(0 0 1 1)\n\n[other]\nkey=1\n"
    settings_path.write_bytes(saved_file + extra)
    window = make_window()
    assert window.state.params == SAVED  # the good values are used
    message = _message(window)
    assert "PNG scale ignored (not text)" in message and "export format ignored (not text)" in message
    assert "unknown key 'other/key'" in message
    assert window.settings.value("export/png_scale") is None
    window.close()
    assert b"[other]" not in settings_path.read_bytes()  # written back without them


def test_several_problems_make_one_message_naming_each(make_window, settings_path):
    settings_path.write_text('[General]\nparams="{not json"\nwindowState=@ByteArray(garbage)\n'
                             "geometry=@ByteArray(junk)\nsurprise=1\n", encoding="utf-8")
    window = make_window()
    message = _message(window)
    for part in ("parameters ignored", "layout ignored", "window geometry ignored", "unknown key 'surprise'"):
        assert part in message


FIFO_SCRIPT = """
import os, sys
from posenc_gui import prepare_qt_environment
prepare_qt_environment()
from PySide6.QtWidgets import QApplication
app = QApplication([])
from posenc_gui.mainwindow import MainWindow
from posenc_gui.model import EncodingParams
window = MainWindow()
print(window.statusBar().currentMessage())
print(window.state.params == EncodingParams())
print(window.save_settings())
sys.stdout.flush()
os._exit(0)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_in_place_of_the_settings_file_is_neither_read_nor_written(tmp_path):
    fifo = tmp_path / "settings.ini"
    os.mkfifo(fifo)
    env = dict(os.environ, POSENC_GUI_SETTINGS=str(fifo), QT_QPA_PLATFORM="offscreen", POSENC_GUI_WORKER_PROCESS="0")
    # A read or write of the FIFO would wait for a peer for ever: the timeout only bounds that hang.
    result = subprocess.run([sys.executable, "-c", FIFO_SCRIPT], env=env, capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    message, defaults, saved = result.stdout.splitlines()[-3:]
    assert "a FIFO, not a regular file" in message and "will not be saved" in message
    assert defaults == "True" and "not saved" in saved
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_folder_in_place_of_the_settings_file_is_left_alone(make_window, settings_path):
    settings_path.mkdir()
    window = make_window()
    assert "a folder, not a regular file" in _message(window)
    assert "not saved" in window.save_settings()
    assert settings_path.is_dir() and not any(settings_path.iterdir())


def test_a_device_is_not_opened_or_written():
    text, problem, writable = read_file(os.devnull)
    assert (text, writable) == ("", False) and "a device" in problem
    settings = Settings(os.devnull, {})
    settings.setValue("params", "{}")
    assert "not saved" in settings.save()


def test_an_empty_file_is_replaced_by_good_settings_when_the_window_closes(make_window, settings_path):
    settings_path.write_bytes(b"")
    first = make_window()
    assert "it is replaced when the window closes" in _message(first)
    first.state.update(d_model=40)
    first.state.flush()
    first.close()
    second = make_window()
    assert second.state.params.d_model == 40 and not _message(second)


@pytest.mark.parametrize("content", [
    pytest.param(b"\x00\xff garbage", id="unreadable"),
    pytest.param(b"#!/bin/sh\nexport PATH=/opt/tools/bin\n", id="a shell script"),  # reads as ini: no key of ours
    pytest.param(b"[core]\neditor = vim\n", id="another program's ini"),
    pytest.param(b"[General]\nparams=" + b"[" * 70_000 + b"\n", id="too large"),
])
def test_a_file_the_app_did_not_write_is_kept_at_close(make_window, settings_path, content):
    # POSENC_GUI_SETTINGS pointing at the wrong file must not cost the user that file (#36, 9).
    settings_path.write_bytes(content)
    window = make_window()
    assert "kept as it is" in _message(window) and "will not be saved" in _message(window)
    window.state.update(d_model=40)
    window.state.flush()
    assert "kept as it is" in window.save_settings()
    window.close()
    assert settings_path.read_bytes() == content
    assert [path.name for path in settings_path.parent.iterdir()] == [settings_path.name]  # nothing left beside it


def test_a_symlinked_settings_file_keeps_its_link(make_window, settings_path, tmp_path):
    target = tmp_path / "elsewhere.ini"
    target.write_text("", encoding="utf-8")
    settings_path.symlink_to(target)
    window = make_window(params=SAVED)
    window.close()
    assert settings_path.is_symlink() and b"harmonic" in target.read_bytes()


@pytest.mark.parametrize("text", [
    "[General]\nx=@Variant(\\0\\0\\0\\t)\n",
    "[General]\nx=\\x40Variant(a)\n",
    "[General]\nx=\\100Variant(a)\n",  # octal
    "[General]\nx=\\x10040Variant(a)\n",  # a 16-bit escape keeps its low 16 bits
    "[General]\nx=@\\\r\nVariant(a)\n",  # a backslash joins the lines
    '[General]\nx=a, "@"DateTime(a)\n',
])
def test_serialized_values_are_found_however_they_are_escaped(text):
    assert "serialized" in check_text(text)


@pytest.mark.parametrize("text", [
    "[General]\nfolder=/home/me/@work, @@at\n",  # an @ that starts no serialized value
    "[General]\nstate=@ByteArray(\\0\\x1Variant()\n",
])
def test_ordinary_values_pass_the_check(text):
    assert check_text(text) is None


def _nested_dock_layout(depth: int) -> bytes:
    """A QMainWindow state whose left dock area nests ``depth`` sequences (Qt restores it recursively)."""
    blob = struct.pack(">iiBi", 0xFF, 1, 0xFD, 1) + struct.pack(">iii", 0, 100, 100)  # version, dock areas: 1
    blob += (struct.pack(">BBi", 0xFC, 1, 1) + struct.pack(">Biiii", 0xFC, 0, 100, 0, 0)) * depth
    return blob + struct.pack(">BBi", 0xFC, 1, 0) + struct.pack(">6i", 100, 100, 0, 0, 0, 0)


def test_a_layout_too_large_for_qt_to_restore_safely_is_ignored(make_window, settings_path, tmp_path):
    # Qt restores nested dock areas recursively: 50,000 levels (1.1 MB) overflow its stack.
    # The bound (16 KiB, about 700 levels) is far below that, and 40 times the window's own layout.
    from PySide6.QtCore import QByteArray, QSettings

    writer = QSettings(str(tmp_path / "written.ini"), QSettings.Format.IniFormat)
    writer.setValue("windowState", QByteArray(_nested_dock_layout(750)))
    writer.sync()
    del writer
    settings_path.write_bytes((tmp_path / "written.ini").read_bytes())
    window = make_window()
    assert "layout ignored (longer than 16,384)" in _message(window)


def test_longropes_factor_lists_come_back_after_a_restart(make_window, settings_path):
    from posenc_gui.model import SCHEMES

    preset = next(preset for preset in SCHEMES["rope"].presets if preset.label.startswith("Phi-3.5"))
    first = make_window()
    assert first.state.update(scheme="rope", seq_len=preset.seq_len, d_model=preset.d_model, **preset.options) is None
    first.state.flush()
    saved = first.state.params
    first.close()
    assert len(settings_path.read_text(encoding="utf-8")) > 2000  # two lists of 48 numbers, and the remembered ones
    second = make_window()
    assert second.state.params == saved and "ignored" not in _message(second)
    assert second.state.params.options["long_factor"][-1] == 64.83999633789062  # every digit

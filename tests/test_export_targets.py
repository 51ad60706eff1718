"""Export targets that are not plain files: symbolic links are followed and kept, special files refused.

No test here can hang on a FIFO: while one is the target, the test holds
both of its ends open without blocking, so any ``open`` of it by the code
under test would return at once (and what it wrote would be read back).
"""

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from posenc_gui import export
from posenc_gui.export import ExportError
from waiting import TIMEOUT_S


def leftovers(*folders: Path) -> list[str]:
    """Temporary files an export left behind."""
    return sorted(p.name for folder in folders for p in folder.iterdir() if p.name.endswith(".part"))


@pytest.fixture
def folders(tmp_path):
    """Two folders: ``links`` (where the user points the export) and ``files`` (where the links lead)."""
    links, files = tmp_path / "links", tmp_path / "files"
    links.mkdir()
    files.mkdir()
    return links, files


class HeldFifo:
    """A FIFO at ``path`` whose two ends this test holds open (non-blocking)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)

    def untouched(self) -> bool:
        """Still a FIFO, and nothing was written into it."""
        if not stat.S_ISFIFO(os.lstat(self.path).st_mode):
            return False
        try:
            return os.read(self.reader, 1) == b""
        except BlockingIOError:
            return True

    def close(self) -> None:
        os.close(self.reader)
        os.close(self.writer)


@pytest.fixture
def fifo(tmp_path):
    held = HeldFifo(tmp_path / "pipe.png")
    yield held
    held.close()


@pytest.fixture
def dev_kept(monkeypatch):
    """Fail, instead of doing it, any move of a file onto a path in /dev (a broken export would replace /dev/null)."""
    replace = os.replace

    def guarded(source, target, *args, **kwargs):
        if os.path.realpath(target).startswith("/dev/"):
            raise AssertionError(f"the export replaced {target}")
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", guarded)


def device_node(tmp_path: Path) -> Path:
    """A character device to export to: a copy of /dev/null's node when this user may make one, else /dev/null."""
    node = tmp_path / "null.png"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return node
    except PermissionError:
        return Path(os.devnull)  # the tests that use it run with dev_kept


# ---------------------------------------------------------------- links
def test_a_symlink_is_kept_and_the_file_it_leads_to_is_written(folders):
    links, files = folders
    real = files / "figure.csv"
    real.write_bytes(b"old")
    link = links / "figure.csv"
    link.symlink_to(real)
    assert export.atomic_write(link, b"new contents") == link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new contents"
    assert leftovers(links, files) == []


def test_a_chain_of_relative_links_is_followed_to_its_end(folders):
    links, files = folders
    real = files / "data.json"
    real.write_bytes(b"old")
    (files / "hop.json").symlink_to("data.json")
    first = links / "first.json"
    first.symlink_to(Path("..") / "files" / "hop.json")
    export.atomic_write(first, b"new")
    assert first.is_symlink() and (files / "hop.json").is_symlink()
    assert real.read_bytes() == b"new"
    assert sorted(p.name for p in files.iterdir()) == ["data.json", "hop.json"]


def test_a_dangling_link_creates_its_target(folders):
    links, files = folders
    link = links / "new.npy"
    link.symlink_to(files / "new.npy")
    export.atomic_write(link, b"created")
    assert link.is_symlink()
    assert (files / "new.npy").read_bytes() == b"created"
    assert not (files / "new.npy").is_symlink()


def test_a_dangling_link_into_a_missing_folder_is_refused(folders):
    links, files = folders
    link = links / "lost.png"
    link.symlink_to(files / "missing" / "lost.png")
    with pytest.raises(ExportError, match=r"links to .*missing.* does not exist") as info:
        export.check_target(link)
    assert str(link) in str(info.value)
    assert link.is_symlink()


@pytest.mark.parametrize("hops", [1, 2])
def test_a_link_loop_is_refused_and_left_alone(tmp_path, hops):
    names = [tmp_path / f"loop{i}.png" for i in range(hops)]
    for i, name in enumerate(names):
        name.symlink_to(names[(i + 1) % hops].name)
    with pytest.raises(ExportError, match="loop") as info:
        export.atomic_write(names[0], b"new")
    assert str(names[0]) in str(info.value)
    assert all(name.is_symlink() for name in names)
    assert leftovers(tmp_path) == []


def test_the_mode_of_the_file_a_link_leads_to_is_kept(folders):
    links, files = folders
    real = files / "table.csv"
    real.write_bytes(b"old")
    os.chmod(real, 0o604)
    link = links / "table.csv"
    link.symlink_to(real)
    export.atomic_write(link, b"new")
    assert link.is_symlink()
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o604


def test_a_failed_write_through_a_link_leaves_the_file_and_writes_beside_it(folders, monkeypatch):
    links, files = folders
    real = files / "figure.svg"
    real.write_bytes(b"precious")
    link = links / "figure.svg"
    link.symlink_to(real)
    seen = {}

    def full(stream, data):
        seen["while writing"] = leftovers(links, files), leftovers(files)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export.files, "_write_all", full)
    with pytest.raises(ExportError, match="disk is full.*unchanged"):
        export.atomic_write(link, b"new")
    anywhere, beside_the_file = seen["while writing"]
    assert len(anywhere) == 1 and beside_the_file == anywhere  # the temporary file was in the file's folder
    assert real.read_bytes() == b"precious" and link.is_symlink()
    assert leftovers(links, files) == []


# -------------------------------------------------------- special files
def test_a_fifo_is_refused_without_being_opened(fifo):
    with pytest.raises(ExportError, match="FIFO") as info:
        export.atomic_write(fifo.path, b"new")
    assert str(fifo.path) in str(info.value) and "\n" not in str(info.value)
    assert fifo.untouched()


def test_a_link_to_a_fifo_is_refused_naming_both(fifo, tmp_path):
    link = tmp_path / "to_pipe.png"
    link.symlink_to(fifo.path)
    with pytest.raises(ExportError, match="FIFO") as info:
        export.check_target(link)
    assert str(link) in str(info.value) and str(fifo.path) in str(info.value)
    assert link.is_symlink() and fifo.untouched()


def test_a_device_is_refused(tmp_path, dev_kept):
    node = device_node(tmp_path)
    with pytest.raises(ExportError, match="a device") as info:
        export.atomic_write(node, b"new")
    assert str(node) in str(info.value)
    assert stat.S_ISCHR(os.stat(node).st_mode)


def test_a_link_to_dev_null_is_refused_and_kept(tmp_path, dev_kept):
    link = tmp_path / "figure.png"
    link.symlink_to(os.devnull)
    with pytest.raises(ExportError, match=f"links to {os.devnull}, which is a device"):
        export.atomic_write(link, b"new")
    assert link.is_symlink() and os.readlink(link) == os.devnull


def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.png"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(ExportError, match="socket") as info:
            export.atomic_write(path, b"new")
        assert str(path) in str(info.value)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


@pytest.mark.parametrize("through_a_link", [False, True])
def test_a_folder_is_refused(tmp_path, through_a_link):
    folder = tmp_path / "figures.png"
    folder.mkdir()
    target = folder
    if through_a_link:
        target = tmp_path / "link.png"
        target.symlink_to(folder)
    with pytest.raises(ExportError, match="is a folder") as info:
        export.atomic_write(target, b"new")
    assert str(target) in str(info.value)
    assert folder.is_dir() and target.exists() and list(folder.iterdir()) == []


class NeverRendered:
    """A panel whose figure or data must not be asked for."""

    title = "Never"

    def figure_widget(self):
        raise AssertionError("rendered a figure for a target that is refused")

    def export_data(self):
        raise AssertionError("computed data for a target that is refused")


@pytest.mark.parametrize("fmt", ["png", "csv"])
def test_a_refused_target_is_refused_before_anything_is_rendered(fifo, fmt):
    with pytest.raises(ExportError, match="FIFO"):
        export.export_panel(NeverRendered(), fifo.path, fmt=fmt)
    assert fifo.untouched()


# ----------------------------------------------------- where users see it
def test_the_command_line_says_why_in_one_line(fifo, folders):
    links, files = folders
    command = [sys.executable, "-m", "posenc_gui", "export", "heatmap", "-o", str(fifo.path)]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("posenc-gui export: error: Cannot write")
    assert str(fifo.path) in lines[0] and "FIFO" in lines[0]
    assert fifo.untouched()
    real = files / "pe.csv"
    real.write_bytes(b"old")
    (links / "pe.csv").symlink_to(real)
    command[-1] = str(links / "pe.csv")
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert result.returncode == 0, result.stderr
    assert (links / "pe.csv").is_symlink() and real.read_bytes().startswith(b"# posenc_gui")


def test_the_window_shows_why_and_the_dialog_stays_open(make_window, monkeypatch, fifo, qtbot):
    from posenc_gui.views import export_ui

    errors = []
    monkeypatch.setattr(export_ui, "show_error", lambda parent, message: errors.append(message))
    window = make_window(restore=False)
    assert export_ui.export_panel_to(window, "heatmap", str(fifo.path)) is None
    assert len(errors) == 1 and str(fifo.path) in errors[0] and "FIFO" in errors[0]
    dialog = export_ui.ExportDialog(window, "waveforms")
    qtbot.addWidget(dialog)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("png"))
    dialog.path_edit.setText(str(fifo.path))
    dialog.export_button.click()
    assert dialog.written is None and dialog.result() != dialog.DialogCode.Accepted
    assert len(errors) == 2 and "FIFO" in errors[1]
    assert fifo.untouched()

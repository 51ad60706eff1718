"""Export formats and file names, and the atomic write every export ends with (see :mod:`posenc_gui.export`)."""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any



IMAGE_FORMATS = ("png", "svg", "pdf")
DATA_FORMATS = ("csv", "npy", "json")
FORMATS = IMAGE_FORMATS + DATA_FORMATS
FORMAT_DESCRIPTIONS = {
    "png": "PNG image",
    "svg": "SVG vector image",
    "pdf": "PDF document",
    "csv": "CSV table (main matrix)",
    "npy": "NumPy array (main matrix)",
    "json": "JSON (all arrays and settings)",
}
#: Symbolic links followed from an export path before the chain is called a loop (Linux's own bound).
MAX_LINK_HOPS = 40

class ExportError(Exception):
    """An export that did not happen; the message is one line meant for the user."""


# --------------------------------------------------------------------- names
def format_for_path(path: str | os.PathLike) -> str:
    """The export format given by ``path``'s extension.

    Raises
    ------
    ExportError
        For a missing or unknown extension, naming the known ones.
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        known = ", ".join(f".{f}" for f in FORMATS)
        shown = f"'.{suffix}'" if suffix else "no extension"
        raise ExportError(f"Unknown export format ({shown}) for {Path(path).name}: use one of {known}")
    return suffix


def suggested_name(params: Any, panel_id: str, fmt: str) -> str:
    """A descriptive file name, e.g. ``sinusoidal_n128_d512_b10000_heatmap.png``."""
    slug = params.slug() if hasattr(params, "slug") else str(params)
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", f"{slug}_{panel_id}").strip("-.") or "figure"
    return f"{safe}.{fmt}"


# ------------------------------------------------------------- atomic write
def _write_all(stream: io.BufferedWriter, data: bytes) -> None:
    """Write ``data`` to ``stream`` (a seam for tests that simulate a full disk)."""
    view = memoryview(data)
    step = 1 << 20
    for start in range(0, len(view), step):
        stream.write(view[start:start + step])


def _reason(error: OSError) -> str:
    if error.errno == errno.ENOSPC or error.errno == getattr(errno, "EDQUOT", -1):
        return "the disk is full"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if error.errno == errno.EROFS:
        return "the file system is read-only"
    return error.strerror or str(error)


def _final_target(path: Path) -> Path:
    """The end of ``path``'s chain of symbolic links (``path`` itself when it is not a link).

    The end may not exist yet (a dangling link, a new file). Nothing is opened.

    Raises
    ------
    ExportError
        For a chain longer than :data:`MAX_LINK_HOPS` (a loop) or an unreadable link.
    """
    current = path
    for _ in range(MAX_LINK_HOPS + 1):
        try:
            if not stat.S_ISLNK(os.lstat(current).st_mode):
                break
            current = current.parent / os.readlink(current)
        except FileNotFoundError:
            break
        except OSError as error:
            raise ExportError(f"Cannot write {path}: {_reason(error)}") from None
    else:
        raise ExportError(
            f"Cannot write {path}: its symbolic links lead in a loop (or more than {MAX_LINK_HOPS} deep)"
        )
    return Path(os.path.realpath(current))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _file_to_write(target: Path) -> Path:
    """The regular file, existing or not, that an export to the absolute path ``target`` replaces.

    That is ``target`` or, for a symbolic link, the file at the end of its
    chain of links (the link itself is kept). Only ``lstat``/``stat`` look
    at it: a FIFO or a device is refused without being opened.

    Raises
    ------
    ExportError
        Naming ``target`` (and where it links to) and why it cannot be written.
    """
    final = _final_target(target)
    linked = os.path.islink(target)
    subject = f"it links to {final}, which" if linked else "it"
    folder = final.parent
    if not folder.is_dir():
        where = f"it links to {final}, whose folder" if linked else "the folder"
        raise ExportError(f"Cannot write {target}: {where} {folder} does not exist")
    try:
        mode = os.stat(final).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise ExportError(f"Cannot write {target}: {_reason(error)}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise ExportError(f"Cannot write {target}: {subject} is {_kind(mode)}; exports are written to regular files")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError(f"Cannot write {target}: no permission to write in {folder}")
    return final


def check_target(path: str | os.PathLike) -> Path:
    """Fail early (before rendering) when ``path`` cannot be written.

    ``path`` may be a regular file, a new name in an existing folder, or a
    symbolic link (a chain of them) leading to either: the export then
    replaces the file the link leads to and keeps the link. Folders,
    devices, FIFOs and sockets are refused without being opened.

    Returns
    -------
    Path
        ``path`` made absolute (a link is not resolved).

    Raises
    ------
    ExportError
        Naming the path and why it cannot be written.
    """
    target = Path(path).expanduser().absolute()
    _file_to_write(target)
    return target


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    For a symbolic link the file it leads to is written (the temporary file
    is made in that file's folder) and the link is kept. The target is
    replaced only once every byte is on disk, with the mode of the file it
    replaces; on any failure the temporary file is removed and an existing
    target is left untouched.

    Returns
    -------
    Path
        ``path`` made absolute, as :func:`check_target` gives it.

    Raises
    ------
    ExportError
        With the reason (folder missing or not writable, not a regular file, disk full, …).
    """
    target = Path(path).expanduser().absolute()
    final = _file_to_write(target)
    folder = final.parent
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".part", dir=folder)
    except OSError as error:
        raise ExportError(f"Cannot write {target}: {_reason(error)} (folder {folder})") from None
    try:
        with os.fdopen(fd, "wb") as stream:
            _write_all(stream, data)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            mode = stat.S_IMODE(os.stat(final).st_mode) if final.exists() else _new_file_mode()
            os.chmod(temp_name, mode)
        except OSError:
            pass  # keep mkstemp's private mode rather than fail the export
        os.replace(temp_name, final)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        if isinstance(error, OSError):
            kept = " (the existing file was left unchanged)" if final.exists() else ""
            raise ExportError(f"Could not write {target}: {_reason(error)}{kept}") from None
        raise
    return target


"""The window's settings file: read only when it is safe to parse, written back atomically.

The file is untrusted input. QSettings reads a FIFO until a writer appears
(for ever), reads a file of any size, and deserializes ``@Variant(…)`` and
``@DateTime(…)`` values with QDataStream, which recurses into nested lists
until the stack overflows (a segfault, not an exception). So the file is
checked before QSettings sees it: a regular file of at most
:data:`MAX_FILE_BYTES`, UTF-8 text in the ini layout, with no serialized
values. Only a checked copy is parsed; the values live in memory
(:class:`Settings`) and are written to a new file that replaces the old one.

A file is replaced only when it is missing, empty, or one this app wrote
(it holds at least one of the app's keys): ``POSENC_GUI_SETTINGS`` pointing
at some other file, or a file the app cannot read, is kept as it is and
the settings are not saved (the window says so).
"""

from __future__ import annotations

import contextlib
import os
import stat
import string
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSettings

#: Larger files are not read (the app writes about 2 KiB).
MAX_FILE_BYTES = 64 * 1024
#: QSettings' escapes (``\n``, ``\"``, …) and what they stand for.
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            '"': '"', "?": "?", "'": "'", "\\": "\\"}
_OCTAL_DIGITS = "01234567"
#: Values QSettings deserializes with QDataStream: the only ones that nest.
_SERIALIZED = ("@Variant(", "@DateTime(")
#: Characters a settings file never holds unescaped: it is binary, or another encoding.
_CONTROL = frozenset(chr(code) for code in range(32) if chr(code) not in "\t\n\r") | {"\x7f"}


@dataclass(frozen=True)
class Key:
    """What a settings key holds: a ``kind`` of value of at most ``max_size`` characters or bytes.

    ``label`` names it in messages. A ``required`` key is written every
    time; a file that lacks it was cut short.
    """

    kind: type
    max_size: int
    label: str
    required: bool = False


def _not_regular(mode: int) -> str:
    """What a file of ``mode`` that is not a regular file is, as a reason not to read it."""
    if stat.S_ISDIR(mode):
        kind = "a folder"
    elif stat.S_ISFIFO(mode):
        kind = "a FIFO"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a special file"
    return f"it is {kind}, not a regular file"


def _unescaped(text: str) -> str:
    """``text`` as QSettings' ini parser unescapes a value: escapes applied, quotes dropped.

    Lists are not split at their commas, so a serialized value is found
    wherever an element of it starts. Like Qt, a numeric escape keeps
    16 bits and a backslash before a line break joins the lines.
    """
    out: list[str] = []
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        i += 1
        if char == '"':
            continue
        if char != "\\":
            out.append(char)
            continue
        if i == end:
            break
        char = text[i]
        i += 1
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char == "x" or char in _OCTAL_DIGITS:
            base, digits = (16, string.hexdigits) if char == "x" else (8, _OCTAL_DIGITS)
            value, start = (0 if char == "x" else int(char)), i
            while i < end and text[i] in digits:
                value = (value * base + int(text[i], base)) & 0xFFFF
                i += 1
            if char != "x" or i > start:
                out.append(chr(value))
        elif char in "\r\n" and i < end and text[i] in "\r\n" and text[i] != char:
            i += 1  # a line break of two characters after the backslash
    return "".join(out)


def check_text(text: str) -> str | None:
    """Why ``text`` (a settings file's content) must not be parsed, or None when it may be.

    It must be ini text as QSettings writes it: lines that are blank,
    comments, ``[section]`` headers or ``key=value``, each ended by a line
    break, no control characters, and no serialized values however they
    are escaped.
    """
    if not text:
        return "it is empty"
    if any(char in _CONTROL for char in text):
        return "it is not text"
    if not text.endswith("\n"):
        return "it is truncated: its last line is cut off"
    unescaped = _unescaped(text)
    found = [prefix for prefix in _SERIALIZED if prefix in unescaped]
    if found:
        return f"it holds serialized values ({found[0]}…), which are not read"
    for number, line in enumerate(text.split("\n")[:-1], 1):
        line = line.strip(" \t\r\ufeff")
        if line and not line.startswith((";", "[")) and "=" not in line:
            return f"line {number} is not a setting (key=value)"
    return None


class FileRefused(Exception):
    """A file :func:`read_regular_file` does not read: ``reason`` says why; ``regular`` is False for a
    FIFO, device, folder or socket."""

    def __init__(self, reason: str, regular: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.regular = regular


def read_regular_file(path: str | os.PathLike, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    A file that is not a regular file is not opened (a FIFO would block
    the read for ever), a larger one is not read.

    Raises
    ------
    FileNotFoundError
        When there is no file at ``path``.
    FileRefused
        With the reason for any other file it does not read.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise FileRefused(f"it cannot be read ({error.strerror})") from None
    size = f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20 else f"{max_bytes // 1024} KiB"
    too_large = f"it is larger than {size}"
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(_not_regular(info.st_mode), regular=False)
    if info.st_size > max_bytes:
        raise FileRefused(too_large)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise FileRefused(f"it cannot be read ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as stream:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):  # replaced since the check above
            raise FileRefused(_not_regular(mode), regular=False)
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileRefused(too_large)
    return data


def read_file(path: str) -> tuple[str, str | None, bool]:
    """The text of the settings file at ``path``: ``(text, problem, writable)``.

    A missing file gives ``("", None, True)``. A file that is not a regular
    file (a FIFO, a device, a folder) is not opened, and ``writable`` is
    False: it must not be replaced either. A regular file that is too large
    or whose content fails :func:`check_text` gives ``""`` and the reason.
    """
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return "", None, True
    except FileRefused as refused:
        return "", refused.reason, refused.regular
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", "it is not UTF-8 text", True
    problem = check_text(text)
    return ("", problem, True) if problem else (text, None, True)


def _holds_anything(path: str) -> bool:
    """Whether the file at ``path`` is not empty (or cannot be checked: then it may hold something to keep)."""
    try:
        return os.stat(path).st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


def parse(text: str) -> tuple[dict[str, Any], bool]:
    """The settings in ``text`` (checked by :func:`check_text`), parsed by QSettings: ``(values, ok)``.

    ``ok`` is False when QSettings reports a format error (a line it skipped).
    """
    descriptor, path = tempfile.mkstemp(prefix="posenc-gui-", suffix=".ini")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        reader = QSettings(path, QSettings.Format.IniFormat)
        values = {key: reader.value(key) for key in reader.allKeys()}
        ok = reader.status() == QSettings.Status.NoError
        del reader
    finally:
        os.unlink(path)
    return values, ok


class Settings:
    """The settings of one window, in memory: read from a checked file, written back whole.

    It offers the part of QSettings' interface the views use (``value``,
    ``setValue``). Keys not in ``keys``, and values of the wrong type or
    size, are dropped when the file is read and named in :attr:`ignored`.

    Parameters
    ----------
    path : str
        The settings file. It is read here and replaced by :meth:`save`.
    keys : Mapping[str, Key]
        The keys the app writes, with what each may hold.

    Attributes
    ----------
    problem : str or None
        Why the whole file was ignored (then every value is a default).
    ignored : list of str
        The keys that were dropped or are missing, each with the reason.
    writable : bool
        False when ``path`` is not a regular file, or is one this app did not
        write (see the module docstring): :meth:`save` leaves it alone.
    """

    def __init__(self, path: str, keys: Mapping[str, Key]) -> None:
        self.path = path
        self.ignored: list[str] = []
        text, self.problem, regular = read_file(path)
        #: Why :meth:`save` does not write: the file is not regular, or not one this app wrote.
        self._kept = None if regular else "is not a regular file"
        if self.problem is not None and regular and _holds_anything(path):
            self._kept = "could not be read and is kept as it is"
        self._values: dict[str, Any] = {}
        if not text:
            return
        values, ok = parse(text)
        if not ok:
            self.problem, self._kept = "it is not in the ini format", "could not be read and is kept as it is"
            return
        if not any(key in keys for key in values):
            self.problem = "it holds none of posenc-gui's settings"
            self._kept = "was not written by posenc-gui and is kept as it is"
            return
        for key, value in values.items():
            spec = keys.get(key)
            if spec is None:
                self.ignored.append(f"unknown key {key!r} ignored")
            elif not isinstance(value, spec.kind):
                self.ignored.append(f"{spec.label} ignored (not {'text' if spec.kind is str else 'binary data'})")
            elif len(value) > spec.max_size:
                self.ignored.append(f"{spec.label} ignored (longer than {spec.max_size:,})")
            else:
                self._values[key] = value
        self.ignored += [f"{spec.label} missing" for key, spec in keys.items() if spec.required and key not in values]

    @property
    def writable(self) -> bool:
        """Whether :meth:`save` may replace the file (it is missing, empty or this app's)."""
        return self._kept is None

    def warning(self) -> str | None:
        """One line on why the whole file was ignored and what happens to it at close, or None when it was read."""
        if self.problem is None:
            return None
        if self._kept is None:
            return (f"Settings file {self.path} ignored ({self.problem}); defaults are used and it is replaced when "
                    "the window closes.")
        return (f"Settings file {self.path} ignored ({self.problem}) and kept as it is; defaults are used, and "
                "settings will not be saved until it is moved or removed.")

    def value(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it has none."""
        return self._values.get(key, default)

    def setValue(self, key: str, value: Any) -> None:  # noqa: N802 (QSettings' name, which the views call)
        """Set ``key``; it is written by the next :meth:`save`."""
        self._values[key] = value

    def save(self) -> str | None:
        """Write every value to a new file that then replaces :attr:`path`; None, or why it failed.

        A symbolic link stays and its target is replaced. Nothing is written
        when the path is not a regular file or not one this app wrote (see :attr:`writable`).
        """
        target = os.path.realpath(self.path)
        try:
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as error:
            return f"Settings not saved: {self.path} cannot be checked ({error.strerror})"
        if mode is not None and not stat.S_ISREG(mode):
            return f"Settings not saved: {self.path} is not a regular file"
        if self._kept is not None:
            return f"Settings not saved: {self.path} {self._kept}"
        folder = os.path.dirname(target)
        try:
            os.makedirs(folder, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(prefix=".posenc-gui-", suffix=".ini", dir=folder)
            os.close(descriptor)
        except OSError as error:
            return f"Settings not saved in {folder} ({error.strerror})"
        try:
            writer = QSettings(temporary, QSettings.Format.IniFormat)
            for key, value in self._values.items():
                writer.setValue(key, value)
            writer.sync()
            status = writer.status()
            del writer
            if status != QSettings.Status.NoError:
                raise OSError(0, "QSettings could not write it")
            os.replace(temporary, target)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return f"Settings not saved to {self.path} ({error.strerror})"
        return None

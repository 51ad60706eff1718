"""Whether the window can open here, and one clear line when it cannot.

Without a display Qt aborts (exit 134) after its hint that ``libxcb-cursor0``
is needed, a hint it gives whatever stopped its xcb platform plugin: no
display, an X server that cannot be reached, or another missing library.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
from collections.abc import Iterator, Mapping

#: What to do instead, appended to every message.
ADVICE = ("For figures without a window use 'posenc-gui export …'; "
          "to run the window off screen set QT_QPA_PLATFORM=offscreen.")
#: Exit status when the window cannot open (as for bad arguments).
EXIT_NO_DISPLAY = 2
#: Qt platform plugins that draw on an X11 or Wayland display.
_DISPLAY_PLATFORMS = ("xcb", "wayland", "wayland-egl", "wayland-brcm")


def display_problem(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> str | None:
    """Why no window can open, from the environment alone; None when one may.

    Only where Qt draws through X11 or Wayland (Linux and the BSDs), and
    only when ``QT_QPA_PLATFORM`` is unset or names those platforms alone
    (``offscreen``, ``vnc``, ``eglfs``, … need no display). A display is
    there when ``DISPLAY``, ``WAYLAND_DISPLAY`` or ``WAYLAND_SOCKET`` is
    set or Wayland's default socket exists. Whether it can be reached is
    for Qt to find out (see :func:`qt_start_guard`).
    """
    if not platform.startswith(("linux", "freebsd", "openbsd", "netbsd", "dragonfly")):
        return None
    requested = [entry.split(":")[0].strip() for entry in environ.get("QT_QPA_PLATFORM", "").split(";")]
    requested = [name for name in requested if name]
    if any(name not in _DISPLAY_PLATFORMS for name in requested):
        return None
    x11 = not requested or "xcb" in requested
    wayland = not requested or any(name.startswith("wayland") for name in requested)
    if x11 and environ.get("DISPLAY"):
        return None
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    default_socket = bool(runtime) and os.path.exists(os.path.join(runtime, "wayland-0"))
    if wayland and (environ.get("WAYLAND_DISPLAY") or environ.get("WAYLAND_SOCKET") or default_socket):
        return None
    if x11 and wayland:
        unset = "neither DISPLAY nor WAYLAND_DISPLAY is set"
    else:
        unset = f"{'DISPLAY' if x11 else 'WAYLAND_DISPLAY'} is not set"
    return f"no display to open the window on ({unset})"


def _plugin_load_error(name: str) -> str | None:
    """The dynamic loader's complaint about Qt's platform plugin ``name`` (a missing library), or None."""
    from PySide6.QtCore import QLibraryInfo

    folder = (os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
              or os.path.join(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath), "platforms"))
    path = os.path.join(folder, f"libq{name}.so")
    if not os.path.exists(path):
        return None
    try:
        ctypes.CDLL(path)
    except OSError as error:
        return str(error)
    return None


def explain_qt_failure(messages: list[str], fatal: str) -> str:
    """What stopped Qt from starting, from its log ``messages`` and its ``fatal`` message."""
    for message in messages:
        if "could not connect to display" in message:
            return message.split(": ", 1)[-1].strip()
    plugin = re.search(r'Could not load the Qt platform plugin "([^"]+)"', "\n".join(messages))
    if plugin:
        error = _plugin_load_error(plugin.group(1))
        detail = f"cannot be loaded: {error}" if error else "did not start"
        return f"Qt's {plugin.group(1)} platform plugin {detail}"
    return fatal.strip().splitlines()[0]


@contextlib.contextmanager
def qt_start_guard() -> Iterator[None]:
    """Around the creation of the QApplication: if Qt gives up (a fatal error), say why in one line and exit 2.

    Qt ends the process with ``abort()`` after a fatal message; the
    message handler runs first, so it prints the line and exits. Qt's
    other messages of the block are held back and, if it starts, written
    to stderr as Qt would have.
    """
    from PySide6.QtCore import QtMsgType, qFormatLogMessage, qInstallMessageHandler

    messages: list[str] = []

    def handler(kind: QtMsgType, context, message: str) -> None:
        if kind == QtMsgType.QtFatalMsg:
            print(f"posenc-gui: cannot open the window: {explain_qt_failure(messages, message)}. {ADVICE}",
                  file=sys.stderr, flush=True)
            os._exit(EXIT_NO_DISPLAY)
        messages.append(qFormatLogMessage(kind, context, message))

    previous = qInstallMessageHandler(handler)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)
        for message in messages:
            print(message, file=sys.stderr)

"""The analysis worker process: runs model functions for the window, outside its Python interpreter.

Started by the window as ``python -I -c …`` (see
:func:`posenc_gui.compute.worker_command`: nothing is imported from the
folder the app was launched in), it reads requests from stdin and
writes results to stdout, one at a time, each framed as an 8-byte
little-endian length and a pickle: a request is ``(module, name, args)``
naming a function of ``posenc_gui.model``, a reply ``(True, result)`` or
``(False, exception)``. A request ``(module, name, args, request_id)`` with
an int id is given a ``progress`` keyword (:func:`progress_reporter`): each
``progress(done, total)`` is a frame ``(None, (request_id, done, total))``
before the reply, and it returns False once the window has sent
``(CANCEL, request_id)`` (the function then stops, raising its own error).
Its first frame is :data:`READY`, so that a child that cannot start is
told from one that stopped later. It loads no Qt: only the model and NumPy.

Why a process: a worker thread shares the window's interpreter lock, and
the analyses' many small NumPy calls hold it between them while the GUI
thread needs it for every Python step of a repaint.

The pickles come only from the window's own process and go back to it,
through this process's private pipes; no file or user input is unpickled.
"""

from __future__ import annotations

import importlib
import os
import pickle
import queue
import struct
import sys
import threading
from typing import BinaryIO, Callable

#: Frames start with their length as an unsigned 64-bit little-endian integer.
HEADER = struct.Struct("<Q")
#: The first frame the process writes: it has started and now serves requests.
READY = b"posenc-gui worker ready"
#: Requests may only name functions of this package (the model: NumPy only).
ALLOWED_PACKAGE = "posenc_gui.model"
#: The first item of a frame from the window asking to stop a request: ``(CANCEL, request_id)``.
CANCEL = "cancel"


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's payload, or None at the end of the stream (the other side closed it)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    """Write one frame and flush it."""
    stream.write(HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def serves(module: str) -> bool:
    """Whether requests may name functions of ``module``: ``posenc_gui.model`` or one of its modules."""
    return module == ALLOWED_PACKAGE or module.startswith(ALLOWED_PACKAGE + ".")


def resolve(module: str, name: str):
    """The function ``name`` of ``module``, which must be ``posenc_gui.model`` or one of its modules."""
    if not serves(module):
        raise ValueError(f"module: only {ALLOWED_PACKAGE} and its modules run here, got {module!r}")
    function = getattr(importlib.import_module(module), name)
    if not callable(function):
        raise ValueError(f"name: {module}.{name} is not a function")
    return function


def sendable_error(error: BaseException) -> Exception:
    """``error`` as an exception that the window can receive: itself, or a RuntimeError that names it.

    A BaseException that is not an Exception (tokenizers' ``PanicException``, a model function's
    ``SystemExit``) is not caught by the window's ``except Exception``; its class may not even
    be importable there (``pyo3_runtime``).
    """
    if isinstance(error, Exception):
        return error
    return RuntimeError(f"{type(error).__name__}: {' '.join(str(error).split())}")


def _reply(ok: bool, value) -> bytes:
    """The reply frame's payload; an exception that does not pickle, or not back, goes as its message.

    It goes as a ValueError if it is one (a bad parameter: the message names it), else as a
    RuntimeError naming its type. (An exception whose ``__init__`` takes other arguments than
    its ``args``, such as ``ModelFileError(path, problem)``, pickles but does not unpickle.)
    """
    try:
        payload = pickle.dumps((ok, value), protocol=pickle.HIGHEST_PROTOCOL)
        if not ok:
            pickle.loads(payload)
        return payload
    except Exception as error:  # noqa: BLE001 - whatever pickling raises
        if ok:
            return pickle.dumps((False, RuntimeError(f"{type(value).__name__} could not be sent back: {error}")))
        message = " ".join(str(value).split())
        plain = ValueError(message) if isinstance(value, ValueError) else RuntimeError(
            f"{type(value).__name__}: {message}")
        return pickle.dumps((False, plain))


def progress_reporter(replies: BinaryIO, request_id: int, cancelled: set[int],
                      lock: threading.Lock) -> Callable[[int, int], bool]:
    """``progress(done, total)`` for request ``request_id``: writes a progress frame, returns False once the
    window has cancelled the request (its id in ``cancelled``)."""
    def progress(done: int, total: int) -> bool:
        write_frame(replies, pickle.dumps((None, (request_id, int(done), int(total)))))
        with lock:
            return request_id not in cancelled

    return progress


def _read_requests(requests: BinaryIO, waiting: queue.Queue, cancelled: set[int], lock: threading.Lock) -> None:
    """Read frames until ``requests`` ends: cancels go to ``cancelled`` at once, requests to ``waiting``
    (None at the end), so that a cancel reaches the request running meanwhile."""
    try:
        while (frame := read_frame(requests)) is not None:
            try:
                message = pickle.loads(frame)
            except Exception as error:  # noqa: BLE001 - answered as the request's error
                message = error
            if isinstance(message, tuple) and len(message) == 2 and message[0] == CANCEL:
                with lock:
                    cancelled.add(message[1])
            else:
                waiting.put(message)
    finally:
        waiting.put(None)


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """Write :data:`READY`, then answer requests until ``requests`` ends.

    Whatever a request raises is its reply, a BaseException too (see :func:`sendable_error`):
    only an interrupt (Ctrl+C in the window's terminal reaches this process too) ends it.
    """
    write_frame(replies, READY)
    waiting: queue.Queue = queue.Queue()
    cancelled: set[int] = set()
    lock = threading.Lock()
    threading.Thread(target=_read_requests, args=(requests, waiting, cancelled, lock), daemon=True).start()
    while (message := waiting.get()) is not None:
        request_id = message[3] if isinstance(message, tuple) and len(message) == 4 else None
        try:
            if isinstance(message, Exception):
                raise message
            module, name, args = message[:3]
            function = resolve(module, name)
            if isinstance(request_id, int):
                result = function(*args, progress=progress_reporter(replies, request_id, cancelled, lock))
            else:
                result = function(*args)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # the model's ValueError (a bad parameter) and anything else, sent back
            payload = _reply(False, sendable_error(error))
        else:
            payload = _reply(True, result)
        del message
        with lock:
            cancelled.discard(request_id)
        write_frame(replies, payload)


def main() -> None:
    # The replies own the real stdout; anything printed goes to stderr (or nowhere, when there
    # is none, as under pythonw) instead of into a frame.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    if sys.stderr is not None:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    else:
        with open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), sys.stdout.fileno())
    nice = getattr(os, "nice", None)  # POSIX only
    try:
        if nice is not None:
            nice(int(os.environ.get("POSENC_GUI_WORKER_NICENESS", "0")))
    except (OSError, ValueError):
        pass  # a sandbox that forbids it: the process runs at the window's priority
    from . import tune_memory_allocator

    tune_memory_allocator()  # as the window's process does: a large reply's buffers reused, not mapped anew
    try:
        serve(sys.stdin.buffer, replies)
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the window went away


if __name__ == "__main__":
    main()

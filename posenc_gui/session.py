"""Session files: the parameters, view settings, panel options and layout of a window, as versioned JSON.

A session file is untrusted input (a teacher's handout, a download). It is
read only when it is a regular file of at most :data:`MAX_FILE_BYTES`,
UTF-8 JSON nested at most :data:`MAX_DEPTH` deep, whose every field has the
type and range this version writes; anything else raises
:class:`SessionError` with one line naming what is wrong, before anything
is applied. Fields this version does not know are refused too: a file with
them was written by something else, and silently dropping them would show
a different setup than the one handed out.

Version 1 holds::

    {"format": "posenc-gui session", "version": 1,
     "params": {"scheme": "sinusoidal", "seq_len": 128, "d_model": 512, "base": 10000.0, ...},
     "remembered": {"scale_base": 8.0},          # options of other schemes, by name
     "view": {"embedding_scale": 1.0, "demo_d_model": 8, "reference": 64},
     "panels": {"waveforms": {"dims": "0, 1, 6-7"}, "similarity": {"metric": "cosine"}},
     "layout": "AAAA/wAAAAD9...",                # optional: the window's saveState, base64
     "compare": {"a": {"scheme": "sinusoidal", ...}, "mode": "difference"}}   # version 2, optional

Version 2 adds ``compare``: the pinned setup A (its parameters, as
``params``; a model file's by its path) and how the panels show A beside
the current setup B (:data:`~posenc_gui.model.analyses.compare.COMPARE_MODES`).
Version 1 files are read as they are.

``panels`` maps a panel id to options keyed by the ``dest`` of its
``cli_options`` (what ``apply_options`` takes); the shared view settings
are kept once, under ``view``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import OPTION_SPECS, EncodingParams, ParamSpec, limits
from .model.analyses.compare import COMPARE_MODES, DEFAULT_COMPARE_MODE
from .model.files.json_nesting import nesting_depth
from .settings import FileRefused, read_regular_file
from .state import VIEW_SPECS

if TYPE_CHECKING:
    from .views.registry import PanelOption

#: The schema version this posenc-gui writes and reads; a newer file is refused.
SESSION_VERSION = 2
#: The ``format`` field: what marks a JSON file as a session.
SESSION_FORMAT = "posenc-gui session"
#: Larger files are not read (a session is a few KiB).
MAX_FILE_BYTES = 1024 * 1024
#: Deepest nesting of arrays and objects read (version 2 nests four deep: compare.a and an option list).
MAX_DEPTH = 8
#: Longest integer literal read, in digits: any real setting fits, and Python's int parser stays fast.
MAX_INT_DIGITS = 20
#: Longest text of a panel option (a sentence of the permutation demo, a dimension list): what a
#: QLineEdit holds at most by default, so every saved text reads back.
MAX_TEXT = 32_767
#: Longest layout blob, in base64 characters (the window's saveState is a few hundred bytes).
MAX_LAYOUT_CHARS = 64 * 1024
TOP_FIELDS = ("format", "version", "params", "remembered", "view", "panels", "layout", "compare")
#: The fields of ``compare`` (version 2).
COMPARE_FIELDS = ("a", "mode")


class SessionError(ValueError):
    """A session file that is not read; the message is one line saying why."""


@dataclass(frozen=True)
class Session:
    """What a session file holds, checked (see the module docstring for the fields)."""

    params: EncodingParams
    remembered: Mapping[str, Any] = field(default_factory=dict)
    view: Mapping[str, Any] = field(default_factory=dict)
    panels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    layout: bytes | None = None
    #: The pinned setup A of an A/B comparison, or None when the window was not comparing.
    pinned: EncodingParams | None = None
    compare_mode: str = DEFAULT_COMPARE_MODE


def session_dict(session: Session) -> dict[str, Any]:
    """``session`` as the JSON object of a file of :data:`SESSION_VERSION`."""
    out: dict[str, Any] = {
        "format": SESSION_FORMAT, "version": SESSION_VERSION,
        "params": session.params.as_dict(),
        "remembered": dict(session.remembered),
        "view": dict(session.view),
        "panels": {panel_id: dict(options) for panel_id, options in session.panels.items()},
    }
    if session.layout is not None:
        out["layout"] = base64.b64encode(session.layout).decode("ascii")
    if session.pinned is not None:
        out["compare"] = {"a": session.pinned.as_dict(), "mode": session.compare_mode}
    return out


def write_session(path: str | os.PathLike, session: Session) -> Path:
    """Write ``session`` to ``path`` atomically; the absolute path written.

    Raises
    ------
    posenc_gui.export.ExportError
        With the reason (folder missing or not writable, not a regular file, disk full, …).
    """
    from .export import atomic_write

    text = json.dumps(session_dict(session), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return atomic_write(path, text.encode("utf-8"))


def read_session(path: str | os.PathLike, panel_options: Mapping[str, Sequence[PanelOption]] | None = None) -> Session:
    """The checked session in the file at ``path``.

    A FIFO, device or folder is refused without being opened, a file
    larger than :data:`MAX_FILE_BYTES` without being read.

    Parameters
    ----------
    panel_options : mapping, optional
        The options each panel takes, by panel id (its ``cli_options``);
        by default those of the registered panels.

    Raises
    ------
    SessionError
        One line naming what is wrong.
    """
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise SessionError("there is no such file") from None
    except FileRefused as refused:
        raise SessionError(refused.reason) from None
    return parse_session(data, panel_options)


def parse_session(data: bytes, panel_options: Mapping[str, Sequence[PanelOption]] | None = None) -> Session:
    """The checked session in ``data`` (a file's bytes); :class:`SessionError` naming what is wrong."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SessionError("it is not UTF-8 text") from None
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise SessionError(f"it is nested {depth} deep; a session file nests at most {MAX_DEPTH} deep")
    try:
        document = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant)
    except SessionError:
        raise
    except (ValueError, RecursionError) as error:
        raise SessionError(f"it is not JSON ({_first_line(error)})") from None
    return _checked(document, _known_panel_options() if panel_options is None else panel_options)


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise SessionError(f"it holds an integer of {len(text.lstrip('-')):,} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise SessionError(f"it holds the number {text[:40]}, too large for a float")
    return value


def _refuse_constant(text: str) -> None:
    raise SessionError(f"it holds {text}, which is no number")


def _first_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _known_panel_options() -> dict[str, tuple[PanelOption, ...]]:
    from .views.registry import panel_classes

    return {cls.panel_id: cls.cli_options for cls in panel_classes()}


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SessionError(f"{where} must be an object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "text", bool: "true/false", int: "an integer",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _typed(spec: ParamSpec, value: Any, where: str) -> Any:
    """``value`` checked by ``spec``, which must already be of the spec's JSON type (no conversions)."""
    expected = {"int": (int,), "real": (int, float), "bool": (bool,), "choice": None, "reals": (list,),
                "path": (str,), "name": (str,)}[spec.kind]
    if expected is not None and (type(value) not in expected):
        noun = {"int": "an integer", "real": "a number", "bool": "true or false", "reals": "an array of numbers",
                "path": "text (a path)", "name": "text (a name)"}[spec.kind]
        raise SessionError(f"{where} must be {noun}, got {_kind(value)} {limits.shown(value)}")
    if spec.kind == "reals" and any(type(item) not in (int, float) for item in value):
        raise SessionError(f"{where} must be an array of numbers, got an item that is not one")
    try:
        return spec.check(value)
    except ValueError as error:
        raise SessionError(f"{where}: {error}") from None


def _checked(document: Any, panel_options: Mapping[str, Sequence[PanelOption]]) -> Session:
    top = _object(document, "the file")
    if top.get("format") != SESSION_FORMAT:
        raise SessionError(f'it is not a posenc-gui session (no "format": "{SESSION_FORMAT}")')
    version = top.get("version")
    if type(version) is not int or version < 1:
        raise SessionError(f"version must be a whole number ≥ 1, got {limits.shown(version)}")
    if version > SESSION_VERSION:
        raise SessionError(f"session file version {version} is newer than this posenc-gui understands "
                           f"({SESSION_VERSION})")
    unknown = [name for name in top if name not in TOP_FIELDS]
    if unknown:
        raise SessionError(f"unknown field {limits.shown(unknown[0])} (version {SESSION_VERSION} has "
                           f"{', '.join(TOP_FIELDS)})")
    params = _checked_params(_object(top.get("params"), "params"))
    remembered = {}
    for name, value in _object(top.get("remembered", {}), "remembered").items():
        if name not in OPTION_SPECS:
            raise SessionError(f"remembered: {limits.shown(name)} is no scheme option")
        remembered[name] = _typed(OPTION_SPECS[name], value, f"remembered.{name}")
    view = {}
    for name, value in _object(top.get("view", {}), "view").items():
        if name not in VIEW_SPECS:
            raise SessionError(f"view: {limits.shown(name)} is no view setting; they are {', '.join(VIEW_SPECS)}")
        view[name] = _typed(VIEW_SPECS[name], value, f"view.{name}")
    if view.get("reference", 0) >= params.seq_len:
        raise SessionError(f"view.reference must be a position, 0…{params.seq_len - 1:,}, got {view['reference']:,}")
    panels = {}
    for panel_id, options in _object(top.get("panels", {}), "panels").items():
        if panel_id not in panel_options:
            raise SessionError(f"panels: no panel {limits.shown(panel_id)}; they are {', '.join(panel_options)}")
        declared = {option.dest: option for option in panel_options[panel_id]}
        checked = {}
        for name, value in _object(options, f"panels.{panel_id}").items():
            if name not in declared:
                raise SessionError(f"panels.{panel_id}: no option {limits.shown(name)}"
                                   + (f"; it has {', '.join(declared)}" if declared else ""))
            checked[name] = _panel_value(declared[name], value, f"panels.{panel_id}.{name}")
        panels[panel_id] = checked
    pinned, mode = checked_compare(top.get("compare"), version)
    return Session(params, remembered, view, panels, _layout(top.get("layout")), pinned, mode)


def checked_compare(value: Any, version: int = SESSION_VERSION) -> tuple[EncodingParams | None, str]:
    """The pinned setup A and the compare mode of a ``compare`` field (None: not comparing), as a session
    file (of ``version``) or the window's settings hold it; :class:`SessionError` naming what is wrong."""
    if value is None:
        return None, DEFAULT_COMPARE_MODE
    if version < 2:
        raise SessionError("compare is a field of version 2; this file says version 1")
    fields = _object(value, "compare")
    unknown = [name for name in fields if name not in COMPARE_FIELDS]
    if unknown:
        raise SessionError(f"compare: unknown field {limits.shown(unknown[0])} (it has {', '.join(COMPARE_FIELDS)})")
    if "a" not in fields:
        raise SessionError("compare.a (the pinned setup's parameters) is missing")
    pinned = _checked_params(_object(fields["a"], "compare.a"), "compare.a")
    mode = fields.get("mode", DEFAULT_COMPARE_MODE)
    if type(mode) is not str or mode not in COMPARE_MODES:
        raise SessionError(f"compare.mode must be one of {', '.join(COMPARE_MODES)}, got {limits.shown(mode)}")
    return pinned, mode


def _checked_params(values: dict[str, Any], where: str = "params") -> EncodingParams:
    if type(values.get("scheme")) is not str:
        raise SessionError(f"{where}.scheme must be text, got {_kind(values.get('scheme'))}")
    from .model.core.params import SIZE_SPECS

    specs = {spec.name: spec for spec in SIZE_SPECS} | dict(OPTION_SPECS)
    typed = {"scheme": values["scheme"]}
    for name, value in values.items():
        if name == "scheme":
            continue
        if name not in specs:
            raise SessionError(f"{where}: {limits.shown(name)} is no parameter")
        typed[name] = _typed(specs[name], value, f"{where}.{name}")
    try:
        return EncodingParams.validated(**typed)
    except ValueError as error:
        raise SessionError(f"{where}: {_first_line(error)}") from None


def _panel_value(option: PanelOption, value: Any, where: str) -> Any:
    """``value`` of a panel option, of the type its flag takes; the panel checks its range when it is applied."""
    if option.boolean:
        if type(value) is not bool:
            raise SessionError(f"{where} must be true or false, got {_kind(value)}")
        return value
    if option.type is int:
        if type(value) is not int:
            raise SessionError(f"{where} must be an integer, got {_kind(value)}")
    elif option.type is float:
        if type(value) not in (int, float):
            raise SessionError(f"{where} must be a number, got {_kind(value)}")
    elif type(value) is not str:
        raise SessionError(f"{where} must be text, got {_kind(value)}")
    elif len(value) > MAX_TEXT:
        raise SessionError(f"{where} is longer than {MAX_TEXT:,} characters")
    if option.choices is not None and value not in option.choices:
        raise SessionError(f"{where} must be one of {', '.join(map(str, option.choices))}, got {limits.shown(value)}")
    return value


def _layout(value: Any) -> bytes | None:
    if value is None:
        return None
    if type(value) is not str:
        raise SessionError(f"layout must be base64 text, got {_kind(value)}")
    if len(value) > MAX_LAYOUT_CHARS:
        raise SessionError(f"layout is longer than {MAX_LAYOUT_CHARS:,} characters")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SessionError("layout is not base64") from None

"""Numbers: a panel's arrays as CSV, NPY or JSON (see :mod:`posenc_gui.export`)."""

from __future__ import annotations

import io
import json
import math
from dataclasses import asdict
from typing import Any, Mapping

import numpy as np

from .. import __version__
from ..model import EncodingParams
from .files import ExportError


#: CSV and JSON are text; past this many values they are refused (use NPY).
MAX_TEXT_VALUES = 2**22


# ------------------------------------------------------------------- data
def _check_data(data: Any, name: str, allow_empty: bool = False) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("arrays", {}), Mapping):
        raise ExportError(f"{name} has no numbers to export")
    if not data.get("arrays") and not allow_empty:
        raise ExportError(f"{name} has no matrix to export; export it as .json or as an image")
    arrays = {}
    for key, value in (data.get("arrays") or {}).items():
        array = np.asarray(value)
        if array.dtype == object:
            raise ExportError(f"{name}: array {key!r} is not numeric")
        arrays[str(key)] = array
    meta = data.get("meta") or {}
    return arrays, dict(meta)


def _jsonable(value: Any) -> Any:
    """Plain JSON values: arrays → lists, NaN/inf → null, dataclasses → dicts."""
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


def _params_dict(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, EncodingParams):
        return _jsonable(params.as_dict())
    return _jsonable(dict(params))


def _text_size_check(arrays: Mapping[str, np.ndarray], fmt: str, name: str) -> None:
    total = sum(int(a.size) for a in arrays.values())
    if total > MAX_TEXT_VALUES:
        raise ExportError(
            f"{name}: {total:,} values are too many for {fmt.upper()} (limit {MAX_TEXT_VALUES:,}); export .npy instead"
        )


def _format_number(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same float
    return str(value)


def csv_bytes(data: Mapping[str, Any], *, name: str = "figure", params: Any = None) -> bytes:
    """The main (first) array as CSV: ``#`` comment lines, then one row per matrix row.

    ``numpy.loadtxt(path, delimiter=",")`` reads it back exactly.
    """
    arrays, meta = _check_data(data, name)
    key, main = next(iter(arrays.items()))
    if main.ndim > 2:
        raise ExportError(f"{name}: array {key!r} has {main.ndim} dimensions; CSV holds at most 2 (use .npy)")
    _text_size_check({key: main}, "csv", name)
    matrix = main.reshape(-1, 1) if main.ndim < 2 else main
    if matrix.dtype == bool:
        matrix = matrix.astype(np.int8)
    lines = [f"# posenc_gui {__version__} export: {name}"]
    p = _params_dict(params or meta.get("params"))
    if p:
        lines.append("# parameters: " + ", ".join(f"{k}={v}" for k, v in p.items()))
    lines.append(f"# array: {key}, {matrix.shape[0]} rows x {matrix.shape[1]} columns, {main.dtype}")
    for label in ("rows", "columns", "metric", "reference", "dims", "sampled"):
        if label in meta:
            value = meta[label]
            text = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            lines.append(f"# {label}: {text}".replace("\n", " "))
    body = io.StringIO()
    body.write("\n".join(lines) + "\n")
    for row in matrix.tolist():
        body.write(",".join(_format_number(v) for v in row))
        body.write("\n")
    return body.getvalue().encode("utf-8")


def npy_bytes(data: Mapping[str, Any], *, name: str = "figure") -> bytes:
    """The main (first) array, bit for bit, in NumPy's ``.npy`` format (no pickle).

    A panel that could only give sampled values (``meta["sampled"]``) is
    refused: a bare array cannot say which rows and columns it holds.
    """
    arrays, meta = _check_data(data, name)
    if meta.get("sampled"):
        raise ExportError(
            f"{name}: the full matrix is larger than the export limit, and a .npy file cannot say which rows and "
            "columns a sample holds; export .json (with the sampled positions and dimensions) or .csv, "
            "or reduce seq_len or d_model"
        )
    main = next(iter(arrays.values()))
    buffer = io.BytesIO()
    np.save(buffer, main, allow_pickle=False)
    return buffer.getvalue()


def json_bytes(data: Mapping[str, Any], *, name: str = "figure", panel_id: str = "", params: Any = None) -> bytes:
    """Every array and setting as JSON.

    A panel whose ``meta`` holds a ``"permutation"`` dict (the permutation
    demo) is written as that dict: it is already the structured record of
    the figure. Non-finite numbers become ``null``.
    """
    arrays, meta = _check_data(data, name, allow_empty=True)
    if isinstance(meta.get("permutation"), Mapping):
        document = _jsonable(meta["permutation"])
    else:
        _text_size_check(arrays, "json", name)
        document = {
            "format": "posenc_gui export",
            "version": __version__,
            "panel": panel_id or meta.get("panel", ""),
            "title": name,
            "params": _params_dict(params or meta.get("params")),
            "meta": _jsonable({k: v for k, v in meta.items() if k != "params"}),
            "arrays": {
                key: {"shape": list(array.shape), "dtype": str(array.dtype), "data": _jsonable(array)}
                for key, array in arrays.items()
            },
        }
    try:
        text = json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise ExportError(f"{name}: data cannot be written as JSON ({error})") from None
    return (text + "\n").encode("utf-8")


"""The tables of model files, opened once per file version, wherever the analyses run.

A scheme that reads its table from a model file (``learned_file``) carries
only the file's path and the tensor's name in its options, so that the
worker process can compute from the parameters alone. Each process opens
the file itself, through :func:`cached_model`: a model is kept while its
file is unchanged (the same size, modification time and inode of the path
and, for a folder, of its ``config.json``, index and ``.safetensors``
files), so a parameter change costs a few ``stat`` calls, not a reading.

Only headers and the detected position table are read on opening
(:func:`~posenc_gui.model.files.open_model`); another tensor is read when
its values are first asked for, and kept while the tables kept hold at
most :data:`MAX_TABLE_BYTES`.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..core import limits
from .model_file import FLOAT_DTYPES, ModelFile, ModelFileError, TensorInfo
from .locations import open_found_model

#: Models kept open per process (headers and detected tables: a few MiB each).
MAX_MODELS = 4
#: Bytes of float64 tables read from tensors other than the detected one, kept per process (one table of
#: ``files.MAX_TABLE_VALUES`` values fits).
MAX_TABLE_BYTES = 512 * 2**20
#: Files of a folder whose change makes it another model.
_FOLDER_FILES = ("config.json", "model.safetensors.index.json")

_lock = threading.Lock()
_models: OrderedDict[tuple, ModelFile] = OrderedDict()
#: (model's path, tensor) → (the model it was read from, its table).
_tables: OrderedDict[tuple[str, str], tuple[ModelFile, np.ndarray]] = OrderedDict()


def _version(path: Path) -> tuple:
    """What identifies the file (or folder) at ``path`` as it is now; ModelFileError when it is gone."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise ModelFileError(path, "no such file or folder" if isinstance(error, FileNotFoundError)
                             else f"it cannot be read ({error.strerror})") from None
    stamp: tuple = (info.st_ino, info.st_size, info.st_mtime_ns)
    if os.path.isdir(path):
        entries = []
        for name in sorted(os.listdir(path)):
            if name in _FOLDER_FILES or name.endswith(".safetensors"):
                try:
                    entry = os.stat(path / name)
                except OSError:
                    continue
                entries.append((name, entry.st_ino, entry.st_size, entry.st_mtime_ns))
        stamp += tuple(entries)
    return stamp


def cached_model(path: str | os.PathLike[str]) -> ModelFile:
    """:func:`~posenc_gui.model.files.locations.open_found_model` of ``path``, opened again only when the file changed.

    Raises
    ------
    ModelFileError
        As ``open_model``: naming the file and what is wrong with it.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ModelFileError(repr(path), "a model path must be a str or an os.PathLike")
    if not os.fspath(path):
        raise ModelFileError("''", "no model file is named")
    resolved = Path(os.path.abspath(path))
    key = (str(resolved), _version(resolved))
    with _lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
    model = open_found_model(resolved)  # outside the lock: another thread may read another model meanwhile
    with _lock:
        _models[key] = model
        while len(_models) > MAX_MODELS:
            _models.popitem(last=False)
    return model


def table_tensors(model: ModelFile) -> tuple[TensorInfo, ...]:
    """The tensors of ``model`` that can be read as a table: 2-D, with a float type (or any GGUF type)."""
    return tuple(tensor for tensor in model.tensors if len(tensor.shape) == 2 and min(tensor.shape) >= 1
                 and (tensor.dtype in FLOAT_DTYPES or model.kind == "gguf"))


def table_name(model: ModelFile, tensor: str) -> str:
    """The tensor ``tensor`` names (``""``: the detected position table); ModelFileError when there is none."""
    if tensor:
        return tensor
    if model.position_table_name is None:
        raise ModelFileError(model.path, "it has no learned position table: choose one of its 2-D tensors")
    return model.position_table_name


def table_shape(model: ModelFile, tensor: str) -> tuple[int, int]:
    """``(positions, width)`` of the table ``tensor`` of ``model``, from its header (the detected table's
    offset rows left out); ModelFileError for a tensor it lacks or that is no table."""
    name = table_name(model, tensor)
    if name == model.position_table_name:
        return model.position_table.shape
    info = next((item for item in model.tensors if item.name == name), None)
    if info is None:
        raise ModelFileError(model.path, f"it has no tensor named {name!r}")
    if info not in table_tensors(model):
        raise ModelFileError(model.path, f"tensor {name} of shape {info.shape} and type {info.dtype} is not a "
                                         "table (2-D, of floats)")
    return info.shape


def model_table(model: ModelFile, tensor: str) -> np.ndarray:
    """The table ``tensor`` of ``model`` (``""``: the detected position table) as read-only float64.

    The detected table starts at position 0 (its offset rows left out:
    OPT's 2, RoBERTa's padding); another tensor is its rows as stored.

    Raises
    ------
    ModelFileError
        For a tensor the model lacks, one that is no table, or one holding NaN or infinity.
    """
    name = table_name(model, tensor)
    if name == model.position_table_name:
        if not np.isfinite(model.position_table).all():
            raise ModelFileError(model.path, f"tensor {name} holds NaN or infinite values (see the model's notes)")
        return model.position_table
    table_shape(model, name)
    key = (str(model.path), name)
    with _lock:
        kept = _tables.get(key)
        if kept is not None and kept[0] is model:  # read from this version of the file
            _tables.move_to_end(key)
            return kept[1]
    values = model.read_tensor(name)
    values.flags.writeable = False
    with _lock:
        _tables[key] = (model, values)
        while sum(table.nbytes for _, table in _tables.values()) > MAX_TABLE_BYTES and len(_tables) > 1:
            _tables.popitem(last=False)
    return values


def table_rows(table: np.ndarray, positions: np.ndarray, dims: np.ndarray, what: str) -> np.ndarray:
    """Rows ⌊p⌋ of ``table`` for ``positions``, columns ``dims``, float64 of shape ``(len(positions), len(dims))``.

    A table is constant between its rows, as a model's lookup of position ⌊p⌋.

    Raises
    ------
    ValueError
        Naming seq_len and the table's length (``what`` names the table), for a position past its last row.
    """
    positions = limits.check_positions(positions)
    rows = np.floor(positions)
    if rows.size and rows.max() >= table.shape[0]:
        raise ValueError(f"seq_len: position {positions.max():,g} is past the last row of {what}, which has "
                         f"{table.shape[0]:,} positions (0 … {table.shape[0] - 1:,}); N may be at most "
                         f"{table.shape[0]:,}")
    return table[rows.astype(np.intp)[:, None], dims[None, :]].astype(np.float64, copy=False)


def clear() -> None:
    """Forget every model and table kept (tests; a file changed in a way its stamp does not show)."""
    with _lock:
        _models.clear()
        _tables.clear()

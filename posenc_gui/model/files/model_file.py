"""Model files on disk: a checkpoint's tensors, its learned position table and its RoPE set-up.

:func:`open_model` reads a Hugging Face model folder, a ``.safetensors``
file, a ``.gguf`` file or a ``.npy`` / ``.npz`` table. Files are untrusted:
nothing is unpickled, only regular files are opened, headers and JSON are
bounded in size and nesting, offsets and shapes are checked against the
file, and only the tensors asked for are read, through memory maps, so a
checkpoint of many gigabytes opens without reading its weights. Every
failure is one :class:`ModelFileError` naming the file and what is wrong.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple, Protocol

import numpy as np

from ..core import limits
from .json_nesting import nesting_depth

#: model.safetensors.index.json (and tokenizer.json): larger files are refused ...
MAX_JSON_BYTES = 64 * 2**20
#: ... and so is a config.json over this (configs are a few KiB; 64 MiB of numbers took 11 s and 640 MiB to parse).
MAX_CONFIG_BYTES = 4 * 2**20
#: ... and so is JSON nested deeper (configs nest three or four levels).
MAX_JSON_DEPTH = 64
#: At most this many tensors in a checkpoint.
MAX_TENSORS = 2**18
#: At most this many arrays in an .npz (a model has hundreds of tensors), listed in a zip directory of at most
#: this many bytes: opening one reads each member's header.
MAX_NPZ_ARRAYS = 4096
MAX_NPZ_DIRECTORY_BYTES = 2**20
#: A table read as float64 holds at most this many values (512 MiB).
MAX_TABLE_VALUES = 2**26
#: Suffixes of pickled checkpoints, which are never opened.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
#: The dtypes read exactly as float64, besides GGUF's quantized types.
FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")

Kind = Literal["hf-folder", "safetensors", "gguf", "npy", "npz"]
Pairing = Literal["interleaved", "halves"]

#: Learned absolute position tables, by the end of their tensor name.
_LEARNED_TABLES = (
    "embeddings.position_embeddings.weight",  # BERT, RoBERTa, DistilBERT, ELECTRA
    "wpe.weight",  # GPT-2
    "embed_positions.weight",  # OPT, BART
    "position_embd.weight",  # GGUF (gpt2, bert, starcoder)
)
#: Models whose ``embed_positions`` table starts with 2 rows that are not positions (OPTLearnedPositionalEmbedding).
_OFFSET_TWO_TYPES = frozenset({"opt", "bart", "mbart", "biogpt"})
#: Models that number positions from ``pad_token_id + 1`` (create_position_ids_from_input_ids).
_PADDING_OFFSET_TYPES = frozenset({
    "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "roberta-prelayernorm", "data2vec-text",
    "longformer", "mpnet",
})
_COMMIT = re.compile(r"[0-9a-f]{40}")


class ModelFileError(ValueError):
    """A model file that cannot be opened: ``path`` and what is wrong with it (``problem``)."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        super().__init__(f"{os.fspath(path)}: {problem}")
        self.path = os.fspath(path)
        self.problem = problem


class TensorInfo(NamedTuple):
    """A tensor of a checkpoint: its name, shape (slowest-varying first) and dtype as the file names it."""

    name: str
    shape: tuple[int, ...]
    dtype: str


class TensorSource(Protocol):
    """Where a :class:`ModelFile`'s tensors are read from (``ModelFile.source``): safetensors, GGUF, npy, npz."""

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor ``name`` from row ``first_row`` on, in its stored float type; ModelFileError if not,
        and, before anything is read, when its header no longer gives the ``shape`` it had on opening."""


@dataclass(frozen=True, eq=False)
class ModelFile:
    """A model opened by :func:`open_model`: its tensors, learned position table and RoPE set-up.

    Attributes
    ----------
    name : str
        The model's name: its folder (``org/name`` in a Hugging Face cache) or file stem.
    path : Path
        The folder or file opened.
    kind : {"hf-folder", "safetensors", "gguf", "npy", "npz"}
    tensors : tuple of TensorInfo
        Every tensor, read from the headers only. GGUF shapes are in NumPy
        order (the file stores them fastest-varying first) and dtypes are
        ggml's type names (``F32``, ``Q4_1``, …).
    position_table : ndarray or None
        The learned absolute position table, positions × dimensions,
        float64, read-only; None when the model has none.
    position_table_name : str or None
        The tensor it was read from.
    position_offset : int
        The rows of that tensor before position 0, which are not part of
        ``position_table``: 2 for OPT (and BART), ``pad_token_id + 1`` for
        RoBERTa, 0 otherwise.
    rope_config : dict or None
        The RoPE set-up in Hugging Face config keys (``rope_theta``,
        ``rope_scaling`` or ``rope_parameters`` as the file has them,
        ``head_dim``, ``partial_rotary_factor``, ``max_position_embeddings``, ``hidden_size``,
        ``num_attention_heads``, Phi-3's top-level ``original_max_position_embeddings``; ``head_dim`` and
        ``partial_rotary_factor`` filled in as Hugging Face defaults them);
        from GGUF, also ``freq_factors``. None for a model without RoPE.
    pairing : {"interleaved", "halves"} or None
        Which dimensions RoPE rotates together in this model's code: (2i,
        2i+1) or (i, i + d/2). None without RoPE or for an unknown architecture.
    config : dict or None
        The parsed config.json of a folder, or a GGUF file's metadata (arrays
        longer than ``gguf_file.MAX_KEPT_ARRAY``, and all arrays once
        ``gguf_file.MAX_KEPT_VALUES`` values are kept, as ``SkippedArray``).
    notes : tuple of str
        What the reader inferred or could not use: an offset applied, values
        that are NaN or infinite, a key filled in with its default.
    """

    name: str
    path: Path
    kind: Kind
    tensors: tuple[TensorInfo, ...]
    position_table: np.ndarray | None
    position_table_name: str | None
    position_offset: int
    rope_config: dict[str, Any] | None
    pairing: Pairing | None
    config: dict[str, Any] | None
    notes: tuple[str, ...]
    source: TensorSource = field(repr=False)

    def read_tensor(self, name: str, *, allow_nonfinite: bool = False) -> np.ndarray:
        """The 2-D tensor ``name`` as float64 (F64, F32, F16 and BF16 exactly; GGUF types dequantized).

        Raises
        ------
        ModelFileError
            When there is no such tensor, it is not 2-D, holds more than
            :data:`MAX_TABLE_VALUES` values or a type that is not a float, or
            holds NaN or infinite values and ``allow_nonfinite`` is False.
        """
        info = next((tensor for tensor in self.tensors if tensor.name == name), None)
        if info is None:
            raise ModelFileError(self.path, f"it has no tensor named {name!r}")
        values, problem = _read_table(self.source, info, 0, self.path)
        if problem and not allow_nonfinite:
            raise ModelFileError(self.path, problem)
        return values

    def read_rows(self, name: str, rows: Sequence[int] | None = None) -> np.ndarray:
        """Rows ``rows`` (indices of the first axis; None: all) of the 1-D or 2-D tensor ``name``, as float64.

        Only the rows asked for are read, through the safetensors memory map,
        so a model's 30,000-row word table costs the few rows of a sentence.
        A 1-D tensor (a bias, a LayerNorm weight) gives its entries.

        Raises
        ------
        ModelFileError
            When there is no such tensor, the model is not read from
            safetensors files, the tensor is not 1-D or 2-D or not a float
            type, a row is out of range, more than :data:`MAX_TABLE_VALUES`
            values are asked for, or a value read is NaN or infinite.
        """
        info = next((tensor for tensor in self.tensors if tensor.name == name), None)
        if info is None:
            raise ModelFileError(self.path, f"it has no tensor named {name!r}")
        if not isinstance(self.source, _Safetensors):
            raise ModelFileError(self.path, f"tensor {name}: rows are read from safetensors files only")
        if len(info.shape) not in (1, 2) or info.dtype not in FLOAT_DTYPES:
            raise ModelFileError(self.path, f"tensor {name} is {info.dtype} of shape {info.shape}; rows are read "
                                            f"from 1-D or 2-D tensors of {', '.join(FLOAT_DTYPES)}")
        count = info.shape[0]
        index = np.arange(count) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= count):
            raise ModelFileError(self.path, f"tensor {name} has rows 0 … {count - 1}; asked for row "
                                            f"{int(index.min() if index.min() < 0 else index.max())}")
        width = info.shape[1] if len(info.shape) == 2 else 1
        if index.size * width > MAX_TABLE_VALUES:
            raise ModelFileError(self.path, f"{index.size * width:,} values of tensor {name} asked for "
                                            f"(at most {MAX_TABLE_VALUES:,} are read)")
        values = self.source.read_rows(name, index, info.shape)
        if values.shape != (index.size, *info.shape[1:]):
            raise ModelFileError(self.path, f"tensor {name} changed since the file was opened")
        if not np.isfinite(values).all():
            raise ModelFileError(self.path, f"tensor {name} holds NaN or infinite values in the rows read")
        return values


def open_model(path: str | os.PathLike[str]) -> ModelFile:
    """Open the model at ``path``: a Hugging Face folder, ``.safetensors``, ``.gguf``, ``.npy`` or ``.npz``.

    A folder holds ``model.safetensors``, or shards listed in
    ``model.safetensors.index.json``, and usually ``config.json``. Only
    headers, the configuration and the position table are read.

    Raises
    ------
    ModelFileError
        Naming the file and what is wrong: not a regular file, a pickled
        checkpoint (refused, with how to convert it), too large or nested
        too deep, inconsistent with its own header, or unreadable.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ModelFileError(repr(path), "a model path must be a str or an os.PathLike")
    path = Path(path)
    info = _stat(path)
    if stat.S_ISDIR(info.st_mode):
        return _open_folder(path)
    _require_regular(path, info.st_mode)
    suffix = path.suffix.lower()
    if suffix in PICKLE_SUFFIXES:
        raise _pickle_refused(path)
    openers = {".safetensors": _open_safetensors, ".gguf": open_gguf, ".npy": _open_npy, ".npz": _open_npz}
    if suffix not in openers:
        raise ModelFileError(path, "not a model file: open a Hugging Face model folder or a .safetensors, "
                                   ".gguf, .npy or .npz file")
    return openers[suffix](path)


# ----------------------------------------------------------------- checked files
def _stat(path: Path) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise ModelFileError(path, "no such file or folder") from None
    except OSError as error:
        raise ModelFileError(path, f"it cannot be read ({error.strerror})") from None


def _require_regular(path: Path, mode: int) -> None:
    """Refuse what is not a regular file (a FIFO would block its reader for ever)."""
    if stat.S_ISREG(mode):
        return
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    kind = next((name for test, name in kinds if test(mode)), "a special file")
    raise ModelFileError(path, f"it is {kind}, not a regular file")


@contextlib.contextmanager
def open_regular_file(path: Path) -> Iterator[BinaryIO]:
    """The regular file at ``path`` (symbolic links followed) open for reading, checked once open."""
    _require_regular(path, _stat(path).st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise ModelFileError(path, f"it cannot be read ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as stream:
        _require_regular(path, os.fstat(descriptor).st_mode)  # replaced since the check above
        yield stream


def _pickle_refused(path: Path) -> ModelFileError:
    return ModelFileError(path, (
        "PyTorch pickle checkpoints are not opened: loading one can run any code it holds. Convert it "
        "to safetensors once, in a Python environment you trust, and open that:\n"
        "    import torch, safetensors.torch\n"
        f"    safetensors.torch.save_file({{k: v.contiguous() for k, v in torch.load({os.fspath(path)!r}, "
        "weights_only=True).items()}, 'model.safetensors')"))


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES) -> dict[str, Any]:
    """The JSON object in ``path``, at most ``max_bytes`` and nested at most :data:`MAX_JSON_DEPTH` deep."""
    with open_regular_file(path) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > max_bytes:
            raise ModelFileError(path, f"it is larger than {max_bytes // 2**20} MiB")
        data = stream.read(size)  # read(n) allocates n bytes first
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFileError(path, "it is not UTF-8 text") from None
    depth = nesting_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(path, f"its JSON nests {depth:,} levels deep (at most {MAX_JSON_DEPTH})")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        raise ModelFileError(path, f"it is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ModelFileError(path, "it is not a JSON object")
    return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


# ----------------------------------------------------------------- safetensors
class _Safetensors:
    """Tensors in safetensors files: ``files`` maps each tensor name to its file."""

    def __init__(self, files: Mapping[str, Path]) -> None:
        self.files = files

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        import ml_dtypes  # noqa: F401 (registers bfloat16 with NumPy, which safetensors needs for BF16)
        from safetensors import safe_open

        file = self.files[name]
        try:
            with safe_open(_checked(file), framework="numpy") as handle:
                return _same_shape(handle.get_slice(name), shape, file, name)[first_row:]
        except ModelFileError:
            raise
        except Exception as error:  # any failure of the reader on an untrusted file
            raise ModelFileError(file, f"tensor {name} cannot be read ({error})") from None

    def read_rows(self, name: str, rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """The rows ``rows`` of tensor ``name`` (of ``shape``, as on opening) as float64, each distinct row read
        once (a slice of the map)."""
        import ml_dtypes  # noqa: F401 (registers bfloat16 with NumPy, which safetensors needs for BF16)
        from safetensors import safe_open

        file = self.files[name]
        distinct, where = np.unique(rows, return_inverse=True)
        try:
            with safe_open(_checked(file), framework="numpy") as handle:
                part = _same_shape(handle.get_slice(name), shape, file, name)
                read = [np.asarray(part[int(row):int(row) + 1], dtype=np.float64) for row in distinct]
        except ModelFileError:
            raise
        except Exception as error:  # any failure of the reader on an untrusted file
            raise ModelFileError(file, f"tensor {name} cannot be read ({error})") from None
        stacked = np.concatenate(read) if read else np.zeros((0, *shape[1:]))
        return stacked[where.reshape(-1)]


def _same_shape(part: Any, shape: tuple[int, ...], file: Path, name: str) -> Any:
    """``part`` (a safetensors slice), once its header gives ``shape``, the shape the file had on opening."""
    if tuple(part.get_shape()) != shape:
        raise ModelFileError(file, f"tensor {name} changed since the file was opened")
    return part


def _checked(path: Path) -> Path:
    """``path``, once it is known to be a regular file (safetensors opens it by name)."""
    _require_regular(path, _stat(path).st_mode)
    return path


def _safetensors_headers(files: list[Path]) -> tuple[tuple[TensorInfo, ...], dict[str, Path]]:
    """The tensors in the headers of ``files``, and the file of each; names must not repeat."""
    from safetensors import safe_open

    tensors: list[TensorInfo] = []
    where: dict[str, Path] = {}
    for file in files:
        try:
            with safe_open(_checked(file), framework="numpy") as handle:
                names = handle.keys()
                if len(where) + len(names) > MAX_TENSORS:
                    raise ModelFileError(file, f"the checkpoint holds more than {MAX_TENSORS:,} tensors")
                for name in names:
                    part = handle.get_slice(name)
                    if name in where:
                        raise ModelFileError(file, f"tensor {name} is also in {where[name].name}")
                    where[name] = file
                    tensors.append(TensorInfo(name, tuple(part.get_shape()), part.get_dtype()))
        except ModelFileError:
            raise
        except Exception as error:  # the package checks header size, offsets and shapes against the file
            raise ModelFileError(file, f"not a readable safetensors file ({error})") from None
    return tuple(tensors), where


def _open_safetensors(path: Path) -> ModelFile:
    tensors, where = _safetensors_headers([path])
    return _model(path.stem, path, "safetensors", tensors, _Safetensors(where), None, [])


def _open_folder(folder: Path) -> ModelFile:
    notes: list[str] = []
    config = read_json(folder / "config.json", MAX_CONFIG_BYTES) if os.path.lexists(folder / "config.json") else None
    if config is None:
        notes.append("the folder has no config.json")
    index_path = folder / "model.safetensors.index.json"
    weight_map = _weight_map(index_path) if os.path.lexists(index_path) else None
    if weight_map is not None:
        files = [folder / shard for shard in sorted(set(weight_map.values()))]
    elif os.path.lexists(folder / "model.safetensors"):
        files = [folder / "model.safetensors"]
    else:
        files = sorted(folder.glob("*.safetensors"))
        if len(files) != 1:
            pickles = sorted(entry for entry in folder.iterdir() if entry.suffix.lower() in PICKLE_SUFFIXES)
            if not files and pickles:
                raise _pickle_refused(pickles[0])
            raise ModelFileError(folder, "it holds no model.safetensors" if not files else
                                 f"it holds {len(files)} .safetensors files but no model.safetensors.index.json")
    tensors, where = _safetensors_headers(files)
    for name, shard in (weight_map or {}).items():
        if name not in where or where[name].name != shard:
            raise ModelFileError(index_path, f"it places tensor {name} in {shard}, whose header does not hold it")
    return _model(folder_name(folder), folder, "hf-folder", tensors, _Safetensors(where), config, notes)


def _weight_map(path: Path) -> dict[str, str]:
    """The ``weight_map`` of a ``model.safetensors.index.json``: tensor names to plain file names of its folder."""
    weight_map = read_json(path).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise ModelFileError(path, "it has no weight_map of tensor names to shard files")
    if len(weight_map) > MAX_TENSORS:
        raise ModelFileError(path, f"it lists more than {MAX_TENSORS:,} tensors")
    for name, shard in weight_map.items():
        if (not isinstance(shard, str) or shard in ("", ".", "..") or "/" in shard or "\\" in shard
                or "\0" in shard or Path(shard).name != shard):
            raise ModelFileError(path, f"tensor {name} is in {shard!r}, which is not a file of this folder")
    return weight_map


def folder_name(folder: Path) -> str:
    """The folder's name, or ``org/name`` for a Hugging Face cache's ``models--org--name/snapshots/<commit>``."""
    folder = folder.resolve()
    cache = folder.parent.parent.name
    if _COMMIT.fullmatch(folder.name) and folder.parent.name == "snapshots" and cache.startswith("models--"):
        return cache.removeprefix("models--").replace("--", "/")
    return folder.name


# ----------------------------------------------------------------- GGUF
class GGUFSource:
    """The tensors of a GGUF file: ``tensors`` maps each name to its ``gguf_file.GGUFTensor`` (type, shape, extent)."""

    def __init__(self, path: Path, tensors: Mapping[str, Any]) -> None:
        self.path = path
        self.tensors = tensors

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        from . import gguf_file  # the tensor's bytes are those its header gave on opening: nothing to check

        with open_regular_file(self.path) as stream:
            try:
                return gguf_file.read_rows(stream.fileno(), self.tensors[name], first_row)
            except Exception as error:  # any failure of the dequantization on an untrusted file
                raise ModelFileError(self.path, f"tensor {name} cannot be read ({error})") from None


def open_gguf(path: Path) -> ModelFile:
    """The GGUF file at ``path``, whatever its name ends with (an Ollama blob has no suffix); as :func:`open_model`."""
    from . import gguf_file

    with open_regular_file(path) as stream:
        try:
            header = gguf_file.read_header(stream.fileno())
        except gguf_file.GGUFFormatError as error:
            raise ModelFileError(path, f"not a readable GGUF file: {error}") from None
    source = GGUFSource(path, {tensor.name: tensor for tensor in header.tensors})
    tensors = tuple(TensorInfo(tensor.name, tensor.shape, tensor.type_name) for tensor in header.tensors)
    by_name = {tensor.name: tensor for tensor in tensors}

    def read_vector(name: str) -> np.ndarray:
        if len(by_name[name].shape) != 1:
            raise ModelFileError(path, f"{name} has shape {by_name[name].shape}, not one row of factors")
        return np.asarray(source.read(name, 0, by_name[name].shape), dtype=np.float64)

    try:
        rope_config, notes = gguf_file.rope_config(header, read_vector)
    except gguf_file.GGUFFormatError as error:
        raise ModelFileError(path, str(error)) from None
    pairing = gguf_file.pairing(header.metadata["general.architecture"]) if rope_config else None
    if rope_config and pairing is None:
        notes.append(f"how architecture {header.metadata['general.architecture']!r} pairs RoPE dimensions "
                     "is not known")
    if isinstance(header.metadata.get("split.count"), int) and header.metadata["split.count"] > 1:
        notes.append(f"this is one of {header.metadata['split.count']} split files: only its own tensors are listed")
    return _model(path.stem, path, "gguf", tensors, source, header.metadata, notes,
                  rope=(rope_config, pairing))


# ----------------------------------------------------------------- NumPy
class _Npy:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        array = _load_npy(_checked(self.path))
        if array.shape != shape:
            raise ModelFileError(self.path, f"array {name} changed since the file was opened")
        return np.array(array[first_row:])


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as error:  # NumPy refuses object dtypes, long headers and data past the end
        raise ModelFileError(path, f"not a readable .npy array ({error})") from None


def _numpy_dtype(dtype: np.dtype) -> str:
    """``dtype`` named as safetensors names dtypes (F32, I64, BOOL, …)."""
    letters = {"f": "F", "i": "I", "u": "U"}
    if dtype.kind in letters:
        return f"{letters[dtype.kind]}{dtype.itemsize * 8}"
    return "BOOL" if dtype.kind == "b" else dtype.str


def _open_npy(path: Path) -> ModelFile:
    array = _load_npy(path)
    tensors = (TensorInfo(path.stem, tuple(array.shape), _numpy_dtype(array.dtype)),)
    return _model(path.stem, path, "npy", tensors, _Npy(path), None, [])


class _Npz:
    """The arrays of an ``.npz`` archive, each member's header checked before its data is read.

    np.load's NpzFile allocates whatever shape a member's header declares
    before reading it, so members are read here with NumPy's format reader.
    """

    def __init__(self, path: Path, members: Mapping[str, str]) -> None:
        self.path = path
        self.members = members

    def header(self, archive: Any, member: str) -> tuple[tuple[int, ...], np.dtype]:
        with archive.open(member) as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
            else:
                raise ValueError(f"format version {version} is not read")
        if dtype.hasobject:
            raise ValueError("it holds Python objects, which are not unpickled")
        return shape, dtype

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        import zipfile

        with open_regular_file(self.path) as stream:
            try:
                _zip_directory_checked(stream, self.path)
                with zipfile.ZipFile(stream) as archive:
                    if self.header(archive, self.members[name])[0] != shape:
                        raise ModelFileError(self.path, f"array {name} changed since the file was opened")
                    with archive.open(self.members[name]) as member:
                        return np.lib.format.read_array(member, allow_pickle=False)[first_row:]
            except ModelFileError:
                raise
            except Exception as error:  # a damaged archive or member
                raise ModelFileError(self.path, f"array {name} cannot be read ({error})") from None


def _zip_directory_checked(stream: BinaryIO, path: Path) -> None:
    """Refuse a zip archive whose end record claims more than :data:`MAX_NPZ_ARRAYS` members or a central
    directory over :data:`MAX_NPZ_DIRECTORY_BYTES`, before zipfile reads and parses that directory."""
    size = os.fstat(stream.fileno()).st_size
    tail_start = max(0, size - 22 - 0xFFFF)  # the end record (22 bytes) and a comment of up to 64 KiB
    stream.seek(tail_start)
    tail = stream.read(size - tail_start)
    end = tail.rfind(b"PK\x05\x06")
    if end < 0 or end + 22 > len(tail):
        raise ModelFileError(path, "not a readable .npz archive (it has no zip end record)")
    members, directory_bytes = struct.unpack_from("<HI", tail, end + 10)
    locator = tail_start + end - 20  # a ZIP64 archive's locator stands just before the end record
    if (members == 0xFFFF or directory_bytes == 0xFFFFFFFF) and locator >= 0:
        stream.seek(locator)
        signature, record = struct.unpack("<4sxxxxQxxxx", stream.read(20))
        if signature == b"PK\x06\x07" and 0 <= record <= size - 56:
            stream.seek(record)
            members, directory_bytes = struct.unpack_from("<QQ", stream.read(56), 32)
    if members > MAX_NPZ_ARRAYS or directory_bytes > MAX_NPZ_DIRECTORY_BYTES:
        raise ModelFileError(path, f"its zip directory claims {members:,} members in {directory_bytes:,} bytes "
                                   f"(at most {MAX_NPZ_ARRAYS:,} in {MAX_NPZ_DIRECTORY_BYTES // 2**20} MiB are read: "
                                   "a model's tables are hundreds of arrays)")
    stream.seek(0)


def _open_npz(path: Path) -> ModelFile:
    import zipfile

    with open_regular_file(path) as stream:
        try:
            _zip_directory_checked(stream, path)
            with zipfile.ZipFile(stream) as archive:
                members = [member for member in archive.namelist() if member.endswith(".npy")]
                if len(members) > MAX_NPZ_ARRAYS:  # the end record undercounted them
                    raise ModelFileError(path, f"it holds more than {MAX_NPZ_ARRAYS:,} arrays")
                source = _Npz(path, {member.removesuffix(".npy"): member for member in members})
                headers = {name: source.header(archive, member) for name, member in source.members.items()}
        except ModelFileError:
            raise
        except Exception as error:  # not a zip archive, or a member that is not a plain array
            raise ModelFileError(path, f"not a readable .npz archive ({error})") from None
    tensors = tuple(TensorInfo(name, tuple(shape), _numpy_dtype(dtype)) for name, (shape, dtype) in headers.items())
    return _model(path.stem, path, "npz", tensors, source, None, [])


# ----------------------------------------------------------------- tables
def _read_table(source: TensorSource, info: TensorInfo, first_row: int, path: Path) -> tuple[np.ndarray, str | None]:
    """Rows ``first_row`` on of the 2-D tensor ``info`` as float64, and what is not finite in it (or None)."""
    if len(info.shape) != 2:
        raise ModelFileError(path, f"tensor {info.name} has shape {info.shape}: a table has 2 dimensions")
    rows, columns = info.shape[0] - first_row, info.shape[1]
    if rows < 1 or columns < 1:
        raise ModelFileError(path, f"tensor {info.name} of shape {info.shape} holds no rows to read")
    if rows * columns > MAX_TABLE_VALUES:
        raise ModelFileError(path, f"tensor {info.name} holds {rows * columns:,} values "
                                   f"(at most {MAX_TABLE_VALUES:,} are read)")
    if info.dtype not in FLOAT_DTYPES and not isinstance(source, GGUFSource):  # gguf.quants says which it dequantizes
        raise ModelFileError(path, f"tensor {info.name} is {info.dtype}; tables are read from "
                                   f"{', '.join(FLOAT_DTYPES)} or GGUF's quantized types")
    values = np.asarray(source.read(info.name, first_row, info.shape), dtype=np.float64)  # exact from F16, BF16 and F32
    if values.shape != (rows, columns):
        raise ModelFileError(path, f"tensor {info.name} changed since the file was opened")
    finite = np.isfinite(values)
    if finite.all():
        return values, None
    first = np.unravel_index(int(np.argmin(finite)), finite.shape)
    counts = f"{int(np.isnan(values).sum()):,} NaN and {int(np.isinf(values).sum()):,} infinite values"
    return values, f"tensor {info.name} holds {counts} (the first at row {first[0] + first_row}, column {first[1]})"


def _learned_table(tensors: tuple[TensorInfo, ...], config: Mapping[str, Any] | None, kind: Kind,
                   config_path: Path) -> tuple[TensorInfo | None, int, list[str]]:
    """The learned position table among ``tensors``, the rows before position 0, and notes."""
    found = [tensor for suffix in _LEARNED_TABLES for tensor in tensors
             if tensor.name == suffix or tensor.name.endswith("." + suffix)]
    if not found and kind in ("npy", "npz"):
        found = [tensor for tensor in tensors if len(tensor.shape) == 2]
    if not found:
        return None, 0, []
    table, notes = found[0], []
    if len(found) > 1:
        notes.append(f"position table {table.name} chosen; also found: {', '.join(t.name for t in found[1:])}")
    from .config_rope import MAX_CONFIG_INT, model_type as config_model_type

    model_type = config_model_type(config, config_path)
    offset = 0
    if table.name.endswith("embed_positions.weight"):
        if model_type in _OFFSET_TWO_TYPES or config is None:
            offset = 2
            notes.append(f"the first 2 rows of {table.name} are not positions (OPT's offset)"
                         + ("" if config else ": assumed without a config.json"))
    elif table.name.endswith("embeddings.position_embeddings.weight"):
        if model_type in _PADDING_OFFSET_TYPES or (config is None and table.name.startswith("roberta.")):
            pad = config.get("pad_token_id", 1) if config else 1
            if isinstance(pad, bool) or not isinstance(pad, int) or not 0 <= pad < MAX_CONFIG_INT:
                raise ModelFileError(config_path, f"pad_token_id is {limits.shown(pad)}, not a token id "
                                                  f"(an integer in 0 … {MAX_CONFIG_INT - 1:,})")
            offset = pad + 1
            notes.append(f"positions start at row {offset} of {table.name} (RoBERTa numbers them from "
                         "pad_token_id + 1)")
    return table, offset, notes


# ----------------------------------------------------------------- assembly
def _model(name: str, path: Path, kind: Kind, tensors: tuple[TensorInfo, ...], source: TensorSource,
           config: dict[str, Any] | None, notes: list[str],
           rope: tuple[dict[str, Any] | None, Pairing | None] | None = None) -> ModelFile:
    """The ModelFile of ``tensors``: its position table read, its RoPE set-up found."""
    config_path = path / "config.json" if kind == "hf-folder" else path
    if rope is None:
        from .config_rope import hf_rope  # it raises this module's ModelFileError

        rope_config, pairing, rope_notes = hf_rope(config, config_path)
        notes += rope_notes
    else:
        rope_config, pairing = rope
    table_info, offset, table_notes = _learned_table(tensors, config, kind, config_path)
    notes += table_notes
    table = None
    if table_info is not None:
        try:
            table, problem = _read_table(source, table_info, offset, path)
        except ModelFileError as error:
            notes.append(f"no position table: {error.problem}")
            table_info, offset = None, 0
        else:
            table.flags.writeable = False
            if problem:
                notes.append(problem)
    return ModelFile(name=name, path=path, kind=kind, tensors=tensors, position_table=table,
                     position_table_name=table_info.name if table_info else None, position_offset=offset,
                     rope_config=rope_config, pairing=pairing, config=config, notes=tuple(notes), source=source)

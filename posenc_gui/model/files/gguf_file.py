"""GGUF files (llama.cpp's format): the header read with bounds, tensors read through a memory map.

The layout (ggml's ``docs/gguf.md``): the magic ``GGUF``, a u32 version, u64
tensor and metadata counts, typed key/values, tensor infos (dimensions
fastest-varying first), then the tensors' data, aligned to
``general.alignment`` (32 by default).

The ``gguf`` package's GGUFReader trusts the counts in a header (an array
of numbers claiming more elements than the file holds makes it loop for
ever) and builds one NumPy array for every element of every array (a
whole vocabulary), so the header is parsed here, with bounds, skipping the
long arrays; the package supplies the types, their block sizes and the
dequantization.
"""

from __future__ import annotations

import functools
import math
import mmap
import os
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import limits
from ..rope.types import ROPE_TYPES

#: A header (key/values and tensor infos) larger than this is refused.
MAX_HEADER_BYTES = 64 * 2**20
#: At most this many tensors and metadata keys (the largest models' files hold a few thousand tensors and about a
#: hundred keys): each is parsed in Python, so these bound the time a header takes.
MAX_TENSORS = 2**16
MAX_KEYS = 2**12
#: Arrays longer than this (a vocabulary, its merges) are walked over, not kept ...
MAX_KEPT_ARRAY = 4096
#: ... and so are arrays once this many values of the file's arrays are kept.
MAX_KEPT_VALUES = 2**16
#: Longer metadata arrays are refused (vocabularies hold a few hundred thousand tokens).
MAX_ARRAY_LENGTH = 2**22
#: At most this many strings inside the metadata's arrays, all arrays together (a vocabulary and its merges
#: are under a million), and this many arrays inside arrays (files hold none): each is stepped over in Python.
MAX_ARRAY_ITEMS = 2**21
MAX_INNER_ARRAYS = 2**16
#: Longer keys, tensor names and kept strings are refused.
MAX_NAME_BYTES = 2**16
#: The largest size (heads, lengths, dimensions) read from metadata: llama.cpp reads them as u32.
MAX_COUNT = 2**32 - 1
#: The most ``rope_freqs.weight`` factors read: one per rotary pair of the widest head shown.
MAX_FREQ_FACTORS = limits.MAX_D_MODEL // 2
#: ggml's GGML_MAX_DIMS, and how deep arrays of arrays may nest.
MAX_DIMS = 4
MAX_ARRAY_NESTING = 4
_MAGIC = b"GGUF"
_U64 = struct.Struct("<Q")
_VERSIONS = (2, 3)
_DEFAULT_ALIGNMENT = 32
#: The tensor types read as they are stored; the others go through gguf.quants.
_PLAIN_FLOATS = {"F64": "<f8", "F32": "<f4", "F16": "<f2"}
#: llama.cpp's ``{arch}.rope.scaling.type`` when a file gives none (with factor 1 or none: no scaling).
LLAMA_CPP_DEFAULT_SCALING = "linear"

#: llama.cpp's ``llama_model_rope_type``: "norm" rope rotates consecutive
#: pairs (interleaved), "neox" rope pairs i with i + n_rot/2 (halves).
_INTERLEAVED_ARCHS = frozenset({
    "llama", "llama4", "deci", "baichuan", "internlm2", "minicpm", "xverse", "command-r", "cohere2",
    "olmo", "arctic", "deepseek", "deepseek2", "plm", "chatglm", "granite", "granitemoe",
    "chameleon", "bailingmoe", "smollm3", "arcee", "ernie4_5", "mistral3",
})
_HALVES_ARCHS = frozenset({
    "falcon", "grok", "dbrx", "bert", "nomic-bert", "stablelm", "bitnet", "qwen", "qwen2",
    "qwen2moe", "qwen3", "qwen3moe", "olmo2", "olmoe", "phi2", "phi3", "phimoe", "plamo", "gemma",
    "gemma2", "gemma3", "gemma3n", "starcoder2", "openelm", "gptneox", "codeshell", "orion",
    "nemotron", "exaone", "exaone4", "minicpm3", "dots1",
})


class GGUFFormatError(ValueError):
    """What is wrong with a GGUF file (without its name: the caller adds it)."""


@dataclass(frozen=True)
class SkippedArray:
    """A metadata array too long to keep (a vocabulary): its element type and length."""

    element_type: str
    length: int


@dataclass(frozen=True)
class GGUFTensor:
    """Where a tensor's data lies: ``shape`` in NumPy order (slowest-varying first)."""

    name: str
    shape: tuple[int, ...]
    type_name: str
    start: int
    nbytes: int


@dataclass(frozen=True)
class GGUFHeader:
    """The metadata key/values (long arrays as :class:`SkippedArray`) and the tensors of a file."""

    metadata: dict[str, Any]
    tensors: tuple[GGUFTensor, ...]


class _Cursor:
    """Reads little-endian values from ``buffer[:limit]``, refusing to step past ``limit``."""

    def __init__(self, buffer: mmap.mmap, limit: int, file_size: int) -> None:
        self.buffer = buffer
        self.limit = limit
        self.file_size = file_size
        self.position = 0
        #: Strings and arrays met inside arrays so far, arrays among them, and array values kept.
        self.items = self.inner_arrays = self.kept = 0

    def take(self, count: int) -> int:
        start, end = self.position, self.position + count
        if end > self.limit:
            if self.limit < self.file_size:
                raise GGUFFormatError(f"its header is larger than {MAX_HEADER_BYTES // 2**20} MiB")
            raise GGUFFormatError(f"its header is cut short: it claims more than the file's {self.file_size:,} bytes")
        self.position = end
        return start

    def unpack(self, layout: str) -> Any:
        return struct.unpack_from(layout, self.buffer, self.take(struct.calcsize(layout)))[0]

    def skip_strings(self, count: int) -> None:
        """Step over ``count`` strings (each a u64 length and its bytes) without decoding them."""
        buffer, position, limit = self.buffer, self.position, self.limit
        length = _U64.unpack_from
        for _ in range(count):
            if position + 8 > limit:
                self.take(limit + 1 - self.position)  # raises: the header is cut short, or too large
            position += 8 + length(buffer, position)[0]
        self.take(position - self.position)  # raises when the last string runs past the header

    def string(self, what: str) -> str:
        length = self.unpack("<Q")
        if length > MAX_NAME_BYTES:
            raise GGUFFormatError(f"{what} is {length:,} bytes long (at most {MAX_NAME_BYTES:,})")
        start = self.take(length)
        try:
            return self.buffer[start:start + length].decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFFormatError(f"{what} is not UTF-8 text") from None


@functools.cache
def _value_types() -> tuple[dict[int, str], dict[int, str], int, int]:
    """GGUF's metadata types: struct layouts of the scalars, names, and the string and array codes."""
    from gguf.constants import GGUFValueType

    layouts = {"UINT8": "<B", "INT8": "<b", "UINT16": "<H", "INT16": "<h", "UINT32": "<I", "INT32": "<i",
               "FLOAT32": "<f", "BOOL": "<?", "UINT64": "<Q", "INT64": "<q", "FLOAT64": "<d"}
    scalars = {int(GGUFValueType[name]): layout for name, layout in layouts.items()}
    names = {int(member): member.name for member in GGUFValueType}
    return scalars, names, int(GGUFValueType.STRING), int(GGUFValueType.ARRAY)


def _read_value(cursor: _Cursor, kind: int, key: str, depth: int = 0) -> Any:
    """The value of ``kind`` at the cursor; an array longer than :data:`MAX_KEPT_ARRAY`, or past the file's
    :data:`MAX_KEPT_VALUES`, is skipped."""
    scalars, names, string_kind, array_kind = _value_types()
    if kind in scalars:
        return cursor.unpack(scalars[kind])
    if kind == string_kind:
        return cursor.string(f"the value of {key}")
    if kind != array_kind:
        raise GGUFFormatError(f"{key} has an unknown value type {kind}")
    if depth >= MAX_ARRAY_NESTING:
        raise GGUFFormatError(f"{key} nests arrays more than {MAX_ARRAY_NESTING} deep")
    element, length = _array_start(cursor, key)
    kept = length <= MAX_KEPT_ARRAY and cursor.kept + length <= MAX_KEPT_VALUES
    cursor.kept += length if kept else 0
    if element in scalars:
        size = struct.calcsize(scalars[element])
        start = cursor.take(length * size)
        if not kept:
            return SkippedArray(names[element], length)
        return struct.unpack_from(f"<{length}{scalars[element][1]}", cursor.buffer, start)
    if element not in (string_kind, array_kind):
        raise GGUFFormatError(f"{key} is an array of unknown type {element}")
    if not kept:
        _skip_items(cursor, element, length, key, depth + 1)
        return SkippedArray(names[element], length)
    return tuple(_read_value(cursor, element, key, depth + 1) for _ in range(length))


def _array_start(cursor: _Cursor, key: str) -> tuple[int, int]:
    """The element type and length of the array at the cursor, at most :data:`MAX_ARRAY_LENGTH` long, and at
    most :data:`MAX_ARRAY_ITEMS` strings and :data:`MAX_INNER_ARRAYS` arrays in all the arrays read so far."""
    _, _, string_kind, array_kind = _value_types()
    element, length = cursor.unpack("<I"), cursor.unpack("<Q")
    if length > MAX_ARRAY_LENGTH:
        raise GGUFFormatError(f"{key} is an array of {length:,} elements (at most {MAX_ARRAY_LENGTH:,})")
    if element in (string_kind, array_kind):
        cursor.items += length
        cursor.inner_arrays += length if element == array_kind else 0
        if cursor.items > MAX_ARRAY_ITEMS or cursor.inner_arrays > MAX_INNER_ARRAYS:
            raise GGUFFormatError(f"its metadata arrays hold more than {MAX_ARRAY_ITEMS:,} strings or "
                                  f"{MAX_INNER_ARRAYS:,} arrays (a vocabulary and its merges hold under a million "
                                  "strings)")
    return element, length


def _skip_items(cursor: _Cursor, element: int, length: int, key: str, depth: int) -> None:
    """Step over ``length`` strings or arrays (``element``) at the cursor."""
    if element == _value_types()[2]:
        cursor.skip_strings(length)
        return
    for _ in range(length):
        _skip_array(cursor, key, depth)


def _skip_array(cursor: _Cursor, key: str, depth: int) -> None:
    """Step over the array at the cursor without decoding it."""
    scalars = _value_types()[0]
    if depth >= MAX_ARRAY_NESTING:
        raise GGUFFormatError(f"{key} nests arrays more than {MAX_ARRAY_NESTING} deep")
    element, length = _array_start(cursor, key)
    if element in scalars:
        cursor.take(length * struct.calcsize(scalars[element]))
        return
    _skip_items(cursor, element, length, key, depth + 1)


def _tensor_infos(cursor: _Cursor, count: int) -> list[tuple[str, tuple[int, ...], int, int]]:
    """``count`` tensor infos: (name, ggml dimensions, type code, offset)."""
    infos = []
    for _ in range(count):
        name = cursor.string("a tensor name")
        n_dims = cursor.unpack("<I")
        if n_dims > MAX_DIMS:
            raise GGUFFormatError(f"tensor {name} has {n_dims} dimensions (at most {MAX_DIMS})")
        dims = tuple(cursor.unpack("<Q") for _ in range(n_dims))
        infos.append((name, dims, cursor.unpack("<I"), cursor.unpack("<Q")))
    return infos


def read_header(descriptor: int) -> GGUFHeader:
    """The metadata and tensors of the GGUF file open as ``descriptor``, every offset checked against its size.

    Raises :class:`GGUFFormatError` for anything that is not a well-formed
    GGUF file of version 2 or 3 in little-endian byte order.
    """
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    size = os.fstat(descriptor).st_size
    if size < 24:
        raise GGUFFormatError(f"it is {size} bytes long, too short for a GGUF header")
    with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as buffer:
        if buffer[:4] != _MAGIC:
            raise GGUFFormatError("it does not start with the GGUF magic number")
        cursor = _Cursor(buffer, min(size, MAX_HEADER_BYTES), size)
        cursor.take(4)
        version = cursor.unpack("<I")
        if version not in _VERSIONS:
            swapped = struct.unpack("<I", struct.pack(">I", version))[0]
            order = "big-endian files are not read" if swapped in _VERSIONS else "versions 2 and 3 are read"
            raise GGUFFormatError(f"it is GGUF version {version} ({order})")
        tensor_count, key_count = cursor.unpack("<Q"), cursor.unpack("<Q")
        if tensor_count > MAX_TENSORS or key_count > MAX_KEYS:
            raise GGUFFormatError(f"it claims {tensor_count:,} tensors and {key_count:,} metadata keys "
                                  f"(at most {MAX_TENSORS:,} and {MAX_KEYS:,})")
        metadata: dict[str, Any] = {}
        for _ in range(key_count):
            key = cursor.string("a metadata key")
            if key in metadata:
                raise GGUFFormatError(f"metadata key {key} appears twice")
            metadata[key] = _read_value(cursor, cursor.unpack("<I"), key)
        infos = _tensor_infos(cursor, tensor_count)
        header_end = cursor.position
    alignment = metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment <= 0 or alignment & (alignment - 1):
        raise GGUFFormatError(f"general.alignment is {alignment!r}, not a power of two")
    data_start = -(-header_end // alignment) * alignment
    tensors, names = [], set()
    for name, dims, code, offset in infos:
        if name in names:
            raise GGUFFormatError(f"tensor {name} appears twice")
        names.add(name)
        try:
            kind = GGMLQuantizationType(code)
        except ValueError:
            raise GGUFFormatError(f"tensor {name} has an unknown type {code}") from None
        block_size, block_bytes = GGML_QUANT_SIZES[kind]
        if dims and dims[0] % block_size:
            raise GGUFFormatError(f"tensor {name}: its rows of {dims[0]} values are not whole {kind.name} blocks")
        if offset % alignment:
            raise GGUFFormatError(f"tensor {name}: its offset {offset:,} is not a multiple of {alignment}")
        nbytes = math.prod(dims) // block_size * block_bytes
        start = data_start + offset
        if start + nbytes > size:
            raise GGUFFormatError(f"tensor {name}: its data (bytes {start:,} to {start + nbytes:,}) "
                                  f"lies past the end of the file ({size:,} bytes)")
        tensors.append(GGUFTensor(name, tuple(reversed(dims)), kind.name, start, nbytes))
    return GGUFHeader(metadata, tuple(tensors))


def read_metadata_arrays(descriptor: int, keys: tuple[str, ...]) -> dict[str, Any]:
    """The metadata arrays ``keys`` of the GGUF file open as ``descriptor``, read whole (those :func:`read_header`
    skips for their length, such as a vocabulary): strings as a list, numbers as an array. Keys absent or not
    arrays are left out.

    The walk is bounded as :func:`read_header`'s: the header's size, each
    string's length and each array's length. Raises :class:`GGUFFormatError`.
    """
    scalars, _, string_kind, array_kind = _value_types()
    found: dict[str, Any] = {}
    size = os.fstat(descriptor).st_size
    with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as buffer:
        cursor = _Cursor(buffer, min(size, MAX_HEADER_BYTES), size)
        cursor.take(8)  # magic and version, checked when the file was opened
        cursor.unpack("<Q")
        key_count = cursor.unpack("<Q")
        if key_count > MAX_KEYS:
            raise GGUFFormatError(f"it claims {key_count:,} metadata keys")
        for _ in range(key_count):
            key, kind = cursor.string("a metadata key"), cursor.unpack("<I")
            if key in keys and kind == array_kind:
                found[key] = _whole_array(cursor, key, scalars, string_kind)
            elif kind in scalars:
                cursor.take(struct.calcsize(scalars[kind]))
            elif kind == string_kind:
                cursor.skip_strings(1)
            elif kind == array_kind:
                _skip_array(cursor, key, 0)
            else:
                raise GGUFFormatError(f"{key} has an unknown value type {kind}")
            if len(found) == len(keys):
                break
    return found


def _whole_array(cursor: _Cursor, key: str, scalars: dict[int, str], string_kind: int) -> list[str] | np.ndarray:
    element, length = _array_start(cursor, key)
    if element == string_kind:
        return [cursor.string(f"an element of {key}") for _ in range(length)]
    if element not in scalars:
        raise GGUFFormatError(f"{key} is not an array of strings or numbers")
    layout = scalars[element]
    start = cursor.take(length * struct.calcsize(layout))
    return np.frombuffer(cursor.buffer, np.dtype(layout), length, start).copy()


def read_rows(descriptor: int, tensor: GGUFTensor, first_row: int) -> np.ndarray:
    """The values of ``tensor`` in the file open as ``descriptor``, from row ``first_row`` on; only those are read.

    A 1-D tensor is one row. Quantized types are dequantized by
    ``gguf.quants.dequantize`` (float32, as ggml computes them).
    """
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    kind = GGMLQuantizationType[tensor.type_name]
    block_size, block_bytes = GGML_QUANT_SIZES[kind]
    columns = tensor.shape[-1] if tensor.shape else 1
    rows = math.prod(tensor.shape[:-1])
    row_bytes = columns // block_size * block_bytes
    count = (rows - first_row) * row_bytes
    if os.fstat(descriptor).st_size < tensor.start + tensor.nbytes:
        raise GGUFFormatError("it is shorter than when it was opened")
    with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as buffer:
        view = np.frombuffer(buffer, np.uint8, count, tensor.start + first_row * row_bytes)
        data = view.copy()
        del view  # the map closes only when no array uses it
    data = data.reshape(rows - first_row, row_bytes)
    if tensor.type_name in _PLAIN_FLOATS:
        values = data.view(_PLAIN_FLOATS[tensor.type_name])
    else:
        values = dequantize(data, kind)
    return values.reshape((rows - first_row, columns) if len(tensor.shape) > 1 else (columns,))


def pairing(architecture: str) -> str | None:
    """How llama.cpp's RoPE pairs ``architecture``'s dimensions: "interleaved", "halves" or None (unknown)."""
    if architecture in _INTERLEAVED_ARCHS:
        return "interleaved"
    if architecture in _HALVES_ARCHS:
        return "halves"
    return None


def _count(metadata: Mapping[str, Any], key: str) -> int | None:
    """The integer at ``key`` (a size llama.cpp reads as a u32), or None when it is absent or 0 ("unset")."""
    value = metadata.get(key)
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_COUNT:
        raise GGUFFormatError(f"{key} is {limits.shown(value)}, not an integer in 0 … {MAX_COUNT:,}")
    return value


def _number(metadata: Mapping[str, Any], key: str) -> float | int | None:
    """The positive number at ``key``, or None when it is absent or 0 (llama.cpp's "unset")."""
    value = metadata.get(key)
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise GGUFFormatError(f"{key} is {limits.shown(value)}, not a positive number")
    return value


def rope_config(header: GGUFHeader,
                read_vector: Callable[[str], np.ndarray]) -> tuple[dict[str, Any] | None, list[str]]:
    """The RoPE set-up of a GGUF model in Hugging Face config keys, or None without RoPE; and notes.

    ``{arch}.rope.freq_base`` becomes ``rope_theta`` (llama.cpp's default
    10000 when absent), ``{arch}.rope.dimension_count`` the rotary share
    ``partial_rotary_factor`` of ``head_dim`` (``attention.key_length``, else
    ``embedding_length / attention.head_count``), ``{arch}.context_length``
    ``max_position_embeddings``, and ``{arch}.rope.scaling.*`` a
    ``rope_scaling`` mapping (linear or yarn). A ``rope_freqs.weight`` tensor
    (Llama 3.1's per-pair divisors of the inverse frequencies, llama.cpp's
    ``freq_factors``) becomes ``freq_factors``, a key of this app, not of
    Hugging Face. ``read_vector(name)`` reads a 1-D tensor.
    """
    metadata = header.metadata
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str):
        raise GGUFFormatError("general.architecture is missing")
    tensors = {tensor.name: tensor for tensor in header.tensors}
    base = _number(metadata, f"{arch}.rope.freq_base")
    rotary = _count(metadata, f"{arch}.rope.dimension_count")
    if base is None and rotary is None and "rope_freqs.weight" not in tensors and pairing(arch) is None:
        return None, []
    notes = []
    hidden = _count(metadata, f"{arch}.embedding_length")
    heads = None
    if isinstance(metadata.get(f"{arch}.attention.head_count"), tuple):
        notes.append(f"{arch}.attention.head_count differs between layers: num_attention_heads is left out")
    else:
        heads = _count(metadata, f"{arch}.attention.head_count")
    head_dim = _count(metadata, f"{arch}.attention.key_length")
    if head_dim is None and hidden is not None and heads is not None:
        if hidden < heads:
            raise GGUFFormatError(f"{arch}.embedding_length must be at least {arch}.attention.head_count "
                                  f"({heads:,}), got {hidden:,}: the head dimension would be 0")
        head_dim = hidden // heads
    if rotary is not None and head_dim is not None and rotary > head_dim:
        raise GGUFFormatError(f"{arch}.rope.dimension_count must be at most the head dimension ({head_dim:,}), "
                              f"got {rotary:,}")
    config: dict[str, Any] = {"rope_theta": float(base if base is not None else 10000.0)}
    if base is None:
        notes.append(f"{arch}.rope.freq_base is missing: rope_theta is llama.cpp's default, 10000")
    if hidden is not None:
        config["hidden_size"] = int(hidden)
    if heads is not None:
        config["num_attention_heads"] = int(heads)
    if head_dim is not None:
        config["head_dim"] = int(head_dim)
        factor = 1.0 if rotary is None else rotary / head_dim
        if rotary is not None and int(head_dim * factor) < rotary:  # Hugging Face truncates int(head_dim * factor)
            factor = math.nextafter(factor, math.inf)
        config["partial_rotary_factor"] = factor
    context = _count(metadata, f"{arch}.context_length")
    if context is not None:
        config["max_position_embeddings"] = int(context)
    scaling = _scaling(metadata, arch, notes)
    if scaling is not None:
        config["rope_scaling"] = scaling
    if "rope_freqs.weight" in tensors:
        config["freq_factors"] = tuple(read_vector(_checked_freq_factors(tensors["rope_freqs.weight"],
                                                                         rotary or head_dim)).tolist())
    return config, notes


def _checked_freq_factors(tensor: GGUFTensor, rotary_dim: int | None) -> str:
    """The name of ``rope_freqs.weight``, once its header shows one factor per rotary pair (``rotary_dim / 2``
    when known), at most :data:`MAX_FREQ_FACTORS`: checked before a value is read."""
    count = math.prod(tensor.shape)
    expected = None if rotary_dim is None else rotary_dim // 2
    if count > MAX_FREQ_FACTORS or (expected is not None and count != expected):
        pairs = f"{expected:,}" if expected is not None else f"at most {MAX_FREQ_FACTORS:,}"
        raise GGUFFormatError(f"rope_freqs.weight holds {count:,} factors; it holds one per rotary pair ({pairs})")
    return tensor.name


def _scaling(metadata: Mapping[str, Any], arch: str, notes: list[str]) -> dict[str, Any] | None:
    """``{arch}.rope.scaling.*`` as a Hugging Face ``rope_scaling`` mapping, or None without scaling.

    Keys with no Hugging Face counterpart of the same meaning (``attn_factor``
    multiplies llama.cpp's own YaRN scale, ``yarn_log_multiplier``, …) are
    named in ``notes``.
    """
    prefix = f"{arch}.rope.scaling."
    kind = metadata.get(prefix + "type", LLAMA_CPP_DEFAULT_SCALING)
    if not isinstance(kind, str):
        raise GGUFFormatError(f"{prefix}type is {kind!r}, not a name")
    factor = _number(metadata, prefix + "factor") or _number(metadata, f"{arch}.rope.scale_linear")
    if kind == "none" or (kind == LLAMA_CPP_DEFAULT_SCALING and factor in (None, 1)):
        return None
    mapped = next((rope for rope in ROPE_TYPES.values() if rope.gguf_name == kind), None)
    if mapped is None:
        notes.append(f"{prefix}type {kind!r} is not mapped to a Hugging Face rope_scaling")
        return None
    scaling: dict[str, Any] = {"rope_type": mapped.name}
    if factor is not None:
        scaling["factor"] = float(factor)
    for ours, (theirs, is_count) in mapped.gguf_keys.items():
        value = (_count if is_count else _number)(metadata, prefix + ours)
        if value is not None:
            scaling[theirs] = value if is_count else float(value)
    unmapped = sorted(key for key in metadata
                      if key.startswith(prefix) and key[len(prefix):] not in {"type", "factor", *mapped.gguf_keys})
    if unmapped:
        notes.append(f"not mapped to Hugging Face keys: {', '.join(unmapped)}")
    return scaling

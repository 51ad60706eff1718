"""A decoder's weights, read one layer at a time as float32 (memory-mapped, dequantized per layer).

Hugging Face folders are read through the safetensors memory map (F32, F16,
BF16, F64 converted to float32); GGUF tensors through ``gguf_file`` (the
``gguf`` package dequantizes Q8_0, Q4_0, Q4_1, Q4_K, Q6_K …, to float32 as
ggml does). Of the token embeddings only the rows of the ids traced are read.

llama.cpp's converter stores a ``llama`` model's W_q and W_k (and their
biases) with the rows of each head permuted, so that its interleaved RoPE
(pairs 2i, 2i+1) computes what Hugging Face's halves (i, i + d/2) compute;
:func:`unpermute_rows` undoes it (as transformers' GGUF loader does), so the
queries and keys here have Hugging Face's channel order, and RoPE pairs halves.
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass

import numpy as np

from ..files import gguf_file
from ..files.model_file import GGUFSource, ModelFile, ModelFileError, open_regular_file
from .config import ATTENTION_ROLES, MLP_BIAS_ROLES, MLP_ROLES, DecoderConfig
from .dequantize import dequantize_rows

#: Rows of a GGUF tensor copied and dequantized at once.
_CHUNK_ROWS = 4096


@dataclass(frozen=True)
class LayerWeights:
    """One layer's tensors as float32 (NumPy order: out × in), by role; biases absent when the file has none."""

    tensors: dict[str, np.ndarray]

    def __getitem__(self, role: str) -> np.ndarray:
        return self.tensors[role]

    def get(self, role: str) -> np.ndarray | None:
        return self.tensors.get(role)


def unpermute_rows(weights: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's ``LlamaModel.permute`` of the rows of ``weights`` (``heads`` blocks of head_dim rows).

    llama.cpp writes ``w.reshape(heads, 2, d/2, …).swapaxes(1, 2)``: row
    ``2i + s`` of a head holds Hugging Face's row ``s·d/2 + i``. This is
    transformers' ``reverse_permute_weights``: reshape (heads, d/2, 2, …), swap back.
    """
    rows = weights.shape[0]
    half = rows // heads // 2
    shaped = weights.reshape(heads, half, 2, *weights.shape[1:])
    return np.ascontiguousarray(shaped.swapaxes(1, 2)).reshape(weights.shape)


class WeightReader:
    """Reads the tensors of ``model`` (checked by :func:`~posenc_gui.model.decoder.config.decoder_config`)."""

    def __init__(self, model: ModelFile, config: DecoderConfig) -> None:
        self.model = model
        self.config = config
        self._gguf_tensors = None
        if isinstance(model.source, GGUFSource):
            self._gguf_tensors = model.source.tensors  # name → gguf_file.GGUFTensor

    def _read(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor ``name`` as float32 of ``shape``, finite; ModelFileError naming it if not."""
        if self._gguf_tensors is not None:
            values = _gguf_rows(self.model, self._gguf_tensors[name], None)
        else:
            info = next((tensor for tensor in self.model.tensors if tensor.name == name), None)
            if info is None:
                raise ModelFileError(self.model.path, f"it has no tensor named {name!r}")
            # the shape it had on opening: the reader refuses a file rewritten since; ModelFileError on any failure
            values = self.model.source.read(name, 0, info.shape)
        if values.dtype.kind != "f" and values.dtype.name != "bfloat16":
            raise ModelFileError(self.model.path, f"tensor {name} holds {values.dtype} values, not floats")
        values = np.asarray(values, dtype=np.float32).reshape(-1)
        if values.size != int(np.prod(shape)):
            raise ModelFileError(self.model.path, f"tensor {name} holds {values.size:,} values, not {shape}")
        values = values.reshape(shape)
        if not np.isfinite(values).all():
            raise ModelFileError(self.model.path, f"tensor {name} holds NaN or infinite values")
        return values

    def layer(self, layer: int, *, mlp: bool = True) -> LayerWeights:
        """Layer ``layer``'s attention tensors (and its MLP's when ``mlp``) as float32, Q and K un-permuted."""
        config = self.config
        biases = [role for role in sorted(config.biases) if mlp or role not in MLP_BIAS_ROLES]
        roles = [*ATTENTION_ROLES, *biases, *(MLP_ROLES if mlp else ())]
        tensors = {role: self._read(config.tensor_name(layer, role), config.expected_shape(role)) for role in roles}
        if config.permuted_qk:
            for role, heads in (("q", config.num_heads), ("k", config.num_kv_heads),
                                ("q_bias", config.num_heads), ("k_bias", config.num_kv_heads)):
                if role in tensors:
                    tensors[role] = unpermute_rows(tensors[role], heads)
        return LayerWeights(tensors)

    def embeddings(self, token_ids: np.ndarray) -> np.ndarray:
        """The embedding rows of ``token_ids`` (checked to be in range), float32, (len, hidden)."""
        config = self.config
        name = config.embedding_name
        if self._gguf_tensors is None:
            rows = self.model.read_rows(name, token_ids)  # float64, exact from F32/F16/BF16
            return rows.astype(np.float32)
        distinct, where = np.unique(token_ids, return_inverse=True)
        rows = _gguf_rows(self.model, self._gguf_tensors[name], distinct)
        if not np.isfinite(rows).all():
            raise ModelFileError(self.model.path, f"tensor {name} holds NaN or infinite values in the rows read")
        return rows[where.reshape(-1)]


def _gguf_rows(model: ModelFile, tensor: gguf_file.GGUFTensor, rows: np.ndarray | None) -> np.ndarray:
    """Rows ``rows`` (distinct, sorted, in range; None: all) of the GGUF ``tensor``, dequantized to float32.

    The tensor's extent was checked against the file's size when it was
    opened (``gguf_file.read_header``) and is checked again here.
    """
    columns = tensor.shape[-1] if tensor.shape else 1
    count = math.prod(tensor.shape[:-1])
    row_bytes = tensor.nbytes // count if count else 0
    selected = np.arange(count) if rows is None else rows
    out = np.empty((selected.size, columns), np.float32)
    with open_regular_file(model.path) as stream:
        if stream.seek(0, 2) < tensor.start + tensor.nbytes:
            raise ModelFileError(model.path, "it is shorter than when it was opened")
        with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            for chunk in range(0, selected.size, _CHUNK_ROWS):
                part = selected[chunk:chunk + _CHUNK_ROWS]
                if rows is None:  # consecutive rows: one copy
                    view = np.frombuffer(buffer, np.uint8, part.size * row_bytes,
                                         tensor.start + int(part[0]) * row_bytes)
                    raw = view.reshape(part.size, row_bytes).copy()
                else:
                    raw = np.empty((part.size, row_bytes), np.uint8)
                    for index, row in enumerate(part):
                        view = np.frombuffer(buffer, np.uint8, row_bytes, tensor.start + int(row) * row_bytes)
                        raw[index] = view
                del view  # the map closes only when no array uses it
                try:
                    out[chunk:chunk + part.size] = dequantize_rows(raw, tensor.type_name, columns)
                except Exception as error:  # a type the gguf package does not read, or a malformed tensor
                    raise ModelFileError(model.path, f"tensor {tensor.name} cannot be read ({error})") from None
    return out

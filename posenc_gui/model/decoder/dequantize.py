"""GGUF tensors to float32: the ``gguf`` package's dequantization, with faster paths for Q8_0, Q4_0 and Q4_1.

``gguf.quants.dequantize`` splits a tensor into groups of a few rows and
makes a dozen NumPy calls per group; a decoder layer of a small model then
spends most of its time there. :func:`dequantize_rows` calls each type's
``dequantize_blocks`` of the package once per chunk of
:data:`CHUNK_BLOCKS` blocks instead, and for the three most common types
evaluates the package's own formulas (ggml's ``dequantize_row_q8_0``,
``_q4_0``, ``_q4_1``) with the same float32 operations in the same order, so
the values are the same bits (tests/test_decoder.py checks them against the
package on random blocks).
"""

from __future__ import annotations

import numpy as np

#: Blocks dequantized per call: bounds the temporary arrays (2¹⁶ blocks of 256 values: 64 MiB of float32).
CHUNK_BLOCKS = 2**16


def _scale(blocks: np.ndarray, first: int) -> np.ndarray:
    """The float16 at bytes ``first``, ``first + 1`` of each block, as a float32 column."""
    return blocks[:, first:first + 2].copy().view(np.float16).astype(np.float32)


def _q8_0(blocks: np.ndarray, out: np.ndarray) -> None:
    # 2 bytes float16 scale d, 32 int8 values q: d · q
    out[:] = blocks[:, 2:].view(np.int8)
    out *= _scale(blocks, 0)


def _nibbles(packed: np.ndarray, out: np.ndarray) -> None:
    """16 bytes per block → 32 values in ``out``: the low nibbles first, then the high ones (ggml's order)."""
    half = packed.shape[1]
    out[:, :half] = packed & np.uint8(0x0F)
    out[:, half:] = packed >> np.uint8(4)


def _q4_0(blocks: np.ndarray, out: np.ndarray) -> None:
    # 2 bytes float16 scale d, 16 bytes of 4-bit values q: d · (q − 8)
    _nibbles(blocks[:, 2:], out)
    out -= np.float32(8)
    out *= _scale(blocks, 0)


def _q4_1(blocks: np.ndarray, out: np.ndarray) -> None:
    # 2 bytes float16 scale d, 2 bytes float16 minimum m, 16 bytes of 4-bit values q: d · q + m
    _nibbles(blocks[:, 4:], out)
    out *= _scale(blocks, 0)
    out += _scale(blocks, 2)


_FAST = {"Q8_0": _q8_0, "Q4_0": _q4_0, "Q4_1": _q4_1}
_PLAIN = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


def dequantize_rows(raw: np.ndarray, type_name: str, columns: int) -> np.ndarray:
    """The float32 values of ``raw`` (rows × bytes per row, uint8) of GGUF type ``type_name``: (rows, columns).

    Raises
    ------
    ValueError
        A type the ``gguf`` package does not dequantize, or bytes that are not whole blocks.
    """
    from gguf import quants
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    rows = raw.shape[0]
    if type_name in _PLAIN:
        return raw.view(_PLAIN[type_name]).astype(np.float32, copy=False).reshape(rows, columns)
    kind = GGMLQuantizationType[type_name]
    block_size, block_bytes = GGML_QUANT_SIZES[kind]
    if columns % block_size or raw.shape[1] != columns // block_size * block_bytes:
        raise ValueError(f"{rows} rows of {raw.shape[1]} bytes are not whole {type_name} blocks of {columns} values")
    blocks = raw.reshape(-1, block_bytes)
    fast = _FAST.get(type_name)
    method = getattr(getattr(quants, type_name, None), "dequantize_blocks", None)
    if fast is None and method is None:
        with np.errstate(all="ignore"):
            return np.asarray(quants.dequantize(raw, kind), np.float32).reshape(rows, columns)
    out = np.empty((blocks.shape[0], block_size), np.float32)
    with np.errstate(all="ignore"):  # NaN and infinity from a hostile file are refused by the caller
        for start in range(0, blocks.shape[0], CHUNK_BLOCKS):
            part = slice(start, start + CHUNK_BLOCKS)
            if fast is not None:
                fast(blocks[part], out[part])
            else:
                out[part] = method(blocks[part]).reshape(-1, block_size)
    return out.reshape(rows, columns)

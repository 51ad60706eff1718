"""A learned absolute position table read from a model file: position p is row p of a tensor.

GPT-2's ``wpe``, BERT's ``position_embeddings`` and OPT's ``embed_positions``
(after its two offset rows) are found by :func:`~posenc_gui.model.files.open_model`;
any other 2-D tensor of the file can be chosen instead. The options carry
only the file's path and the tensor's name, so every process that computes
a view opens the file itself (:mod:`posenc_gui.model.files.model_tables`, which
keeps it while the file is unchanged).

The table is finite: it has rows for positions ``0 … rows − 1`` and its own
width (:attr:`Scheme.sizes`), so N is at most its length and d_model is its
width; a position past the last row is a ValueError naming seq_len. A
position between two integers has the row below it, as a model looks up
⌊p⌋. Encoded at a smaller d_model (the toy heads of the permutation and
addition demos), the table gives its first d_model columns, as the
untrained ``learned`` table does. The values are a trained model's floats, not a formula's: the scheme
is not ``exact``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.specs import ParamSpec
from ._core import Scheme

#: Longest model or tensor name in a file name.
_SLUG_CHARS = 40


def model_name(path: str) -> str:
    """The name of the model at ``path`` (its folder or file stem; ``org/name`` in a Hugging Face cache),
    or the last part of the path when it does not open."""
    if not path:
        return "no model"
    # The readers load when a model is named, not with the scheme registry: the window's first paint reads none.
    from ..files import ModelFileError
    from ..files.model_tables import cached_model

    try:
        return cached_model(path).name
    except ModelFileError:
        return os.path.basename(os.path.normpath(path)) or path


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in text)[:_SLUG_CHARS]


def _tensor_choices(options: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The tables of the model at ``options["model_path"]``: (name, "name — rows × columns dtype")."""
    from ..files import ModelFileError
    from ..files.model_tables import cached_model, table_tensors

    try:
        model = cached_model(options.get("model_path", ""))
    except ModelFileError:
        return ()
    choices = []
    for tensor in table_tensors(model):
        if tensor.name == model.position_table_name:
            rows, columns = model.position_table.shape
            detected = " — the position table" + (f", from row {model.position_offset}" if model.position_offset
                                                 else "")
        else:
            (rows, columns), detected = tensor.shape, ""
        choices.append((tensor.name, f"{tensor.name} ({rows:,} × {columns:,} {tensor.dtype}){detected}"))
    return tuple(choices)


MODEL_PATH = ParamSpec(
    "model_path", "path", "", "model file",
    "The model folder or file (.safetensors, .gguf, .npy, .npz) the table is read from; File ▸ Open model…, a "
    "drop on the window or --model PATH set it with the table's sizes.",
    title=lambda path: f"model {model_name(path)}", slug=lambda path: "m" + _slug(model_name(path)) if path else "",
)
TENSOR = ParamSpec(
    "tensor", "name", "", "tensor",
    "The 2-D tensor of the model file whose rows are the positions; empty: the position table the file was "
    "found to have (GPT-2 wpe, BERT position_embeddings, OPT embed_positions after its offset of 2).",
    choices_of=_tensor_choices, title=lambda name: f"tensor {name}" if name else "",
    slug=lambda name: "t" + _slug(name) if name else "",
)


def _opened(model_path: str, tensor: str):
    """The model and the table's name; ValueError naming the option that does not work."""
    if not model_path:
        raise ValueError("model_path: no model file is open; open one with File ▸ Open model…, by dropping it on "
                         "the window, or with --model PATH")
    from ..files import ModelFileError
    from ..files.model_tables import cached_model, table_name

    try:
        model = cached_model(model_path)
    except ModelFileError as error:
        raise ValueError(f"model_path: {error}") from None
    try:
        return model, table_name(model, tensor)
    except ModelFileError as error:
        raise ValueError(f"tensor: {error}") from None


def _sizes(model_path: str, tensor: str) -> tuple[int, int]:
    from ..files import ModelFileError
    from ..files.model_tables import table_shape

    model, name = _opened(model_path, tensor)
    try:
        return table_shape(model, name)
    except ModelFileError as error:
        raise ValueError(f"tensor: {error}") from None


def _table(positions: np.ndarray, dims: np.ndarray, d_model: int, model_path: str, tensor: str) -> np.ndarray:
    from ..files import ModelFileError
    from ..files.model_tables import model_table, table_rows

    model, name = _opened(model_path, tensor)
    try:
        values = model_table(model, name)
    except ModelFileError as error:
        raise ValueError(f"tensor: {error}") from None
    if d_model > values.shape[1]:
        raise ValueError(f"d_model must be at most {values.shape[1]:,}, the width of {name} of {model.name}, "
                         f"got {d_model:,}")
    return table_rows(values, positions, dims, f"{name} of {model.name}")


def _term(dim: int, d_model: int, model_path: str, tensor: str) -> str:
    return f"{tensor or 'W'}[⌊pos⌋, {dim}] of {model_name(model_path)}"


SCHEME = Scheme(
    key="learned_file", label="Learned table (file)", order=96,
    summary="A trained model's learned absolute position table, read from its file: GPT-2's wpe, BERT's "
    "position_embeddings, OPT's embed_positions (after its 2 offset rows), or any 2-D tensor of the file. "
    "Position p is row p: the table has as many positions as rows and its own width, so N is at most its "
    "length and d_model is its width. Open a model with File ▸ Open model…, by dropping it on the window, "
    "or with --model PATH.",
    formula="PE(pos, j) = W[⌊pos⌋, j]  (W: the file's table, positions × d_model)",
    params=(MODEL_PATH, TENSOR), table=_table, term=_term, sizes=_sizes,
)

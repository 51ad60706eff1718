"""Model files on disk, read as untrusted input: the readers (safetensors, GGUF, ``.npy``/``.npz``, a
Hugging Face folder's ``config.json``), the search for models on this machine, and what a model's files set up.

The names of :mod:`.model_file` (:func:`open_model`, :class:`ModelFile` …) are re-exported here, so
``from posenc_gui.model.files import open_model`` reads as before the model had folders.
"""

from .model_file import (
    FLOAT_DTYPES,
    GGUFSource,
    Kind,
    MAX_CONFIG_BYTES,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_NPZ_ARRAYS,
    MAX_NPZ_DIRECTORY_BYTES,
    MAX_TABLE_VALUES,
    MAX_TENSORS,
    ModelFile,
    ModelFileError,
    folder_name,
    open_gguf,
    open_model,
    open_regular_file,
    Pairing,
    PICKLE_SUFFIXES,
    read_json,
    TensorInfo,
    TensorSource,
)

__all__ = [
    "FLOAT_DTYPES",
    "GGUFSource",
    "Kind",
    "MAX_CONFIG_BYTES",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_NPZ_ARRAYS",
    "MAX_NPZ_DIRECTORY_BYTES",
    "MAX_TABLE_VALUES",
    "MAX_TENSORS",
    "ModelFile",
    "ModelFileError",
    "folder_name",
    "open_gguf",
    "open_model",
    "open_regular_file",
    "Pairing",
    "PICKLE_SUFFIXES",
    "read_json",
    "TensorInfo",
    "TensorSource",
]

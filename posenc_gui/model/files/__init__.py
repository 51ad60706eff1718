"""Model files on disk, read as untrusted input: the readers (safetensors, GGUF, ``.npy``/``.npz``, a
Hugging Face folder's ``config.json``), the search for models on this machine, and what a model's files set up.

The names of :mod:`.model_file` (:func:`open_model`, :class:`ModelFile` …) are re-exported here, so
``from posenc_gui.model.files import open_model`` reads as before the model had folders; they load on first
use.
"""


def __getattr__(name: str) -> object:
    # The readers load when first used, not with a sibling module (the session's json_nesting): the window's
    # first paint reads no model file.
    if name in __all__:
        from . import model_file

        return getattr(model_file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

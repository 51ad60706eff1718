"""Models where users keep them: the Hugging Face cache, Ollama's and LM Studio's model folders.

:func:`find_models` lists what is on this computer, without the network
and without reading any weights: per source, its folder, the models found
(a name, the path :func:`~posenc_gui.model.files.open_model` or
:func:`open_found_model` opens, the bytes of its weights) and, in one line
each, what could not be listed. Everything on disk is untrusted: only
the folders of a fixed layout are read (no recursive walk), at most
:data:`MAX_ENTRIES` entries of each and :data:`MAX_TOTAL_ENTRIES` of a
source in all, a manifest or ref at most :data:`MAX_MANIFEST_BYTES`,
symbolic links are followed but what they reach must be a regular file
(a loop, a FIFO or a device is skipped with its reason), and nothing found
is executed.

:func:`open_found_model` opens what :func:`~posenc_gui.model.files.open_model`
does not: an Ollama blob (a GGUF file without the ``.gguf`` suffix, named
as Ollama names it) and a model that is only its ``config.json`` (a folder
without weights, or the file itself), which opens as its RoPE set-up, so
Llama 3.1's frequencies are seen without its 16 GB of weights.

Layouts read (each documented by its project):

- Hugging Face: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
  ``~/.cache/huggingface/hub``; ``models--ORG--NAME/refs/main`` names the
  commit whose ``snapshots/COMMIT/`` holds the files (symbolic links into
  ``blobs/``).
- Ollama: ``$OLLAMA_MODELS``, else ``~/.ollama/models`` (and the Linux
  service's ``/usr/share/ollama/.ollama/models``); the JSON manifest
  ``manifests/HOST/NAMESPACE/MODEL/TAG`` names, in its layer of media type
  ``application/vnd.ollama.image.model``, the digest of the GGUF blob
  ``blobs/sha256-HEX``.
- LM Studio: ``$POSENC_GUI_LMSTUDIO_MODELS`` (this app's override), else
  ``~/.lmstudio/models`` and the older ``~/.cache/lm-studio/models``;
  ``PUBLISHER/REPO/*.gguf``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .model_file import ModelFile, ModelFileError, open_model

#: Entries read of any one folder; past it the folder's listing stops, and says so.
MAX_ENTRIES = 2000
#: Models listed per source.
MAX_MODELS = 500
#: Bytes read of an Ollama manifest or a Hugging Face ref; larger ones are skipped.
MAX_MANIFEST_BYTES = 2**20
#: Entries read per source in all; past it the source's listing stops, and says so (a hostile tree cannot hang it).
MAX_TOTAL_ENTRIES = 50_000
#: Problems reported per source (one line each); the rest are counted.
MAX_PROBLEMS = 5

HUGGING_FACE, OLLAMA, LM_STUDIO = "Hugging Face cache", "Ollama", "LM Studio"
#: The sources in the order a menu lists them.
SOURCES = (HUGGING_FACE, OLLAMA, LM_STUDIO)
#: The media type of the layer of an Ollama manifest that is the model's GGUF file.
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
#: The environment variable naming LM Studio's models folder for this app (LM Studio keeps it in its own settings).
LMSTUDIO_VARIABLE = "POSENC_GUI_LMSTUDIO_MODELS"

_COMMIT = re.compile(r"[0-9a-f]{40}")
_DIGEST = re.compile(r"sha256[:-]([0-9a-f]{64})")
_WEIGHT_SUFFIXES = (".safetensors", ".gguf", ".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".npy", ".npz")


@dataclass(frozen=True)
class FoundModel:
    """A model found on this computer.

    Attributes
    ----------
    source : str
        One of :data:`SOURCES`.
    name : str
        ``org/name`` (Hugging Face), ``model:tag`` (Ollama), ``publisher/repo/file.gguf`` (LM Studio).
    path : Path
        What :func:`open_found_model` opens: a snapshot folder, a GGUF file or blob.
    size : int
        Bytes of its weights (0 for a model that is only its config.json).
    detail : str
        What it is in a few words: ``"safetensors"``, ``"GGUF"``, ``"config.json only"``.
    """

    source: str
    name: str
    path: Path
    size: int
    detail: str

    @property
    def label(self) -> str:
        """``name — 4.9 GB GGUF`` as a menu shows it."""
        size = f"{human_size(self.size)} " if self.size else ""
        return f"{self.name} — {size}{self.detail}"


@dataclass
class SourceScan:
    """What one source holds: its folder (None when it has none here), models, and one-line problems."""

    source: str
    folder: Path | None = None
    models: list[FoundModel] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _more_problems: int = 0
    #: Entries read so far, against :data:`MAX_TOTAL_ENTRIES`.
    entries_read: int = 0

    def problem(self, text: str) -> None:
        """Note a problem in one line; past :data:`MAX_PROBLEMS`, only counted."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(" ".join(text.split()))
        else:
            self._more_problems += 1

    def add(self, model: FoundModel) -> bool:
        """Add ``model``; False once :data:`MAX_MODELS` are listed (the rest are not)."""
        if len(self.models) >= MAX_MODELS:
            self.problem(f"more than {MAX_MODELS} models: the first {MAX_MODELS} found are listed")
            return False
        self.models.append(model)
        return True

    @property
    def notes(self) -> list[str]:
        """The problems, and how many more there were."""
        more = [f"and {self._more_problems:,} more problems"] if self._more_problems else []
        return self.problems + more


def human_size(size: int) -> str:
    """``size`` bytes as ``"4.9 GB"`` (powers of 1000, as the sources' own pages show sizes)."""
    for unit in ("bytes", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:.3g} {unit}"
        size /= 1000
    return ""  # not reached


def find_models(environ: Mapping[str, str] | None = None) -> list[SourceScan]:
    """What each of :data:`SOURCES` holds on this computer, in that order (see the module docstring).

    ``environ`` (default ``os.environ``) gives the folders' variables and
    ``HOME``. Never raises for what is on disk: a problem is a line of its
    source's ``problems``.
    """
    environ = os.environ if environ is None else environ
    return [_scan_hugging_face(environ), _scan_ollama(environ), _scan_lm_studio(environ)]


# ----------------------------------------------------------------- folders
def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or os.path.expanduser("~"))


def hugging_face_folder(environ: Mapping[str, str]) -> Path:
    """The Hugging Face hub cache folder the variables name, as ``huggingface_hub`` finds it."""
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"]).expanduser()
    if environ.get("HUGGINGFACE_HUB_CACHE"):  # the older name, still read by huggingface_hub
        return Path(environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"]).expanduser() / "hub"
    cache = Path(environ["XDG_CACHE_HOME"]) if environ.get("XDG_CACHE_HOME") else _home(environ) / ".cache"
    return cache / "huggingface" / "hub"


def ollama_folders(environ: Mapping[str, str]) -> list[Path]:
    """Ollama's models folder: ``$OLLAMA_MODELS`` alone when set, else the user's and the Linux service's."""
    if environ.get("OLLAMA_MODELS"):
        return [Path(environ["OLLAMA_MODELS"]).expanduser()]
    return [_home(environ) / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]


def lm_studio_folders(environ: Mapping[str, str]) -> list[Path]:
    """LM Studio's models folder: :data:`LMSTUDIO_VARIABLE` alone when set, else the current and older one."""
    if environ.get(LMSTUDIO_VARIABLE):
        return [Path(environ[LMSTUDIO_VARIABLE]).expanduser()]
    return [_home(environ) / ".lmstudio" / "models", _home(environ) / ".cache" / "lm-studio" / "models"]


# ----------------------------------------------------------------- bounded reading
def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _entries(folder: Path, scan: SourceScan) -> Iterator[os.DirEntry]:
    """The first :data:`MAX_ENTRIES` entries of ``folder`` by name (a problem names a folder with more)."""
    entries: list[os.DirEntry] = []
    try:
        with os.scandir(folder) as iterator:
            for entry in iterator:
                if scan.entries_read >= MAX_TOTAL_ENTRIES:
                    if scan.entries_read == MAX_TOTAL_ENTRIES:
                        scan.entries_read += 1
                        scan.problem(f"more than {MAX_TOTAL_ENTRIES:,} entries in all: the listing stopped there")
                    break
                scan.entries_read += 1
                if len(entries) >= MAX_ENTRIES:
                    scan.problem(f"{folder}: more than {MAX_ENTRIES:,} entries; the first {MAX_ENTRIES:,} "
                                 "read were looked at")
                    break
                entries.append(entry)
    except OSError as error:
        scan.problem(f"{folder}: it cannot be read ({error.strerror or error})")
    yield from sorted(entries, key=lambda entry: entry.name)


def _subfolders(folder: Path, scan: SourceScan) -> Iterator[os.DirEntry]:
    for entry in _entries(folder, scan):
        try:
            if entry.is_dir():  # follows a link; a loop is no folder
                yield entry
        except OSError:
            continue


def _regular_size(path: Path, scan: SourceScan | None = None) -> int | None:
    """The size of the regular file ``path`` reaches (links followed); None, with a problem, for anything else."""
    try:
        info = os.stat(path)
    except OSError as error:
        if scan is not None:
            scan.problem(f"{path}: it cannot be read ({error.strerror or error})")
        return None
    if not stat.S_ISREG(info.st_mode):
        if scan is not None:
            scan.problem(f"{path}: not a regular file")
        return None
    return info.st_size


def _read_small(path: Path, scan: SourceScan) -> bytes | None:
    """The bytes of the regular file ``path``, at most :data:`MAX_MANIFEST_BYTES`; None, with a problem, if not."""
    size = _regular_size(path, scan)
    if size is None:
        return None
    if size > MAX_MANIFEST_BYTES:
        scan.problem(f"{path}: it is larger than {MAX_MANIFEST_BYTES // 2**20} MiB, not a manifest")
        return None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
        with os.fdopen(descriptor, "rb") as stream:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # replaced since the check above
                scan.problem(f"{path}: not a regular file")
                return None
            return stream.read(MAX_MANIFEST_BYTES + 1)[:MAX_MANIFEST_BYTES]
    except OSError as error:
        scan.problem(f"{path}: it cannot be read ({error.strerror or error})")
        return None


def _starts_gguf(path: Path) -> bool:
    """Whether the regular file ``path`` starts with GGUF's magic bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
        with os.fdopen(descriptor, "rb") as stream:
            return stat.S_ISREG(os.fstat(descriptor).st_mode) and stream.read(4) == b"GGUF"
    except OSError:
        return False


# ----------------------------------------------------------------- Hugging Face
def _scan_hugging_face(environ: Mapping[str, str]) -> SourceScan:
    scan = SourceScan(HUGGING_FACE)
    folder = hugging_face_folder(environ)
    if not _is_folder(folder):
        return scan
    scan.folder = folder
    for entry in _subfolders(folder, scan):
        if not entry.name.startswith("models--"):
            continue  # datasets--, spaces--, .locks
        name = entry.name.removeprefix("models--").replace("--", "/")
        snapshot = _snapshot(Path(entry.path), scan)
        if snapshot is not None and not all(scan.add(model) for model in _snapshot_models(name, snapshot, scan)):
            break
    return scan


def _snapshot(repository: Path, scan: SourceScan) -> Path | None:
    """The snapshot ``refs/main`` names, else the only one, else the newest; None (and a problem) if none."""
    ref = repository / "refs" / "main"
    if os.path.lexists(ref):
        text = _read_small(ref, scan)
        commit = text.decode("ascii", "replace").strip() if text is not None else ""
        if _COMMIT.fullmatch(commit) and _is_folder(repository / "snapshots" / commit):
            return repository / "snapshots" / commit
    snapshots = [Path(entry.path) for entry in _subfolders(repository / "snapshots", scan)
                 if _COMMIT.fullmatch(entry.name)]
    if not snapshots:
        scan.problem(f"{repository}: no snapshot was downloaded")
        return None
    return max(snapshots, key=lambda path: (_modified(path), path.name))


def _modified(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _snapshot_models(name: str, snapshot: Path, scan: SourceScan) -> list[FoundModel]:
    """The snapshot folder as one model (its safetensors, or its config.json alone), and each GGUF file in it."""
    names = [entry.name for entry in _entries(snapshot, scan)]
    sizes: dict[str, int] = {}
    for file in names:
        if file == "config.json" or file.endswith((".safetensors", ".gguf")):
            size = _regular_size(snapshot / file, scan)
            if size is not None:
                sizes[file] = size
    models = []
    weights = sum(size for file, size in sizes.items() if file.endswith(".safetensors"))
    if weights:
        models.append(FoundModel(HUGGING_FACE, name, snapshot, weights, "safetensors"))
    elif "config.json" in sizes and not any(file.lower().endswith(_WEIGHT_SUFFIXES) for file in names):
        models.append(FoundModel(HUGGING_FACE, name, snapshot, 0, "config.json only"))
    for file, size in sizes.items():
        if file.endswith(".gguf"):
            models.append(FoundModel(HUGGING_FACE, f"{name}/{file}", snapshot / file, size, "GGUF"))
    return models


# ----------------------------------------------------------------- Ollama
def _scan_ollama(environ: Mapping[str, str]) -> SourceScan:
    scan = SourceScan(OLLAMA)
    folder = next((path for path in ollama_folders(environ) if _is_folder(path / "manifests")), None)
    if folder is None:
        return scan
    scan.folder = folder
    for name, manifest in _manifests(folder, scan):
        blob = _model_blob(folder, manifest, scan)
        size = None if blob is None else _regular_size(blob, scan)
        if size is None:
            continue
        if not _starts_gguf(blob):
            scan.problem(f"{name}: its model blob {blob.name} is not a GGUF file")
            continue
        if not scan.add(FoundModel(OLLAMA, name, blob, size, "GGUF")):
            break
    return scan


def _manifests(folder: Path, scan: SourceScan) -> Iterator[tuple[str, Path]]:
    """Each manifest ``manifests/HOST/NAMESPACE/MODEL/TAG`` and the name Ollama gives it."""
    for host in _subfolders(folder / "manifests", scan):
        for namespace in _subfolders(Path(host.path), scan):
            for model in _subfolders(Path(namespace.path), scan):
                for tag in _entries(Path(model.path), scan):
                    name = f"{model.name}:{tag.name}"
                    if namespace.name != "library" or host.name != "registry.ollama.ai":
                        name = f"{namespace.name}/{name}"
                    if host.name != "registry.ollama.ai":
                        name = f"{host.name}/{name}"
                    yield name, Path(tag.path)


def _model_blob(folder: Path, manifest: Path, scan: SourceScan) -> Path | None:
    """The blob the manifest's model layer names (its digest checked to be ``sha256:`` and 64 hex digits)."""
    data = _read_small(manifest, scan)
    if data is None:
        return None
    try:
        layers = json.loads(data.decode("utf-8")).get("layers")
    except (ValueError, AttributeError, RecursionError):
        layers = None
    if not isinstance(layers, list):
        scan.problem(f"{manifest}: not an Ollama manifest (no list of layers)")
        return None
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = _DIGEST.fullmatch(str(layer.get("digest", "")))
            if digest is None:
                scan.problem(f"{manifest}: its model layer's digest {str(layer.get('digest'))[:80]!r} is not sha256")
                return None
            return folder / "blobs" / f"sha256-{digest.group(1)}"
    return None  # an adapter, a projector or a template only: no model of its own


# ----------------------------------------------------------------- LM Studio
def _scan_lm_studio(environ: Mapping[str, str]) -> SourceScan:
    scan = SourceScan(LM_STUDIO)
    folder = next((path for path in lm_studio_folders(environ) if _is_folder(path)), None)
    if folder is None:
        return scan
    scan.folder = folder
    for publisher in _subfolders(folder, scan):
        for repository in _subfolders(Path(publisher.path), scan):
            for entry in _entries(Path(repository.path), scan):
                if not entry.name.lower().endswith(".gguf"):
                    continue
                size = _regular_size(Path(entry.path), scan)
                if size is not None and not scan.add(FoundModel(
                        LM_STUDIO, f"{publisher.name}/{repository.name}/{entry.name}", Path(entry.path), size, "GGUF")):
                    return scan
    return scan


# ----------------------------------------------------------------- opening
def open_found_model(path: str | os.PathLike[str]) -> ModelFile:
    """Open the model at ``path`` as :func:`~posenc_gui.model.files.open_model`, and also an Ollama blob and a
    model that is only its config.json (see the module docstring).

    Raises
    ------
    ModelFileError
        As ``open_model``, naming the file and what is wrong with it.
    """
    path = Path(path)
    config = _config_only(path)
    if config is not None:
        return _open_config(path, config)
    if _DIGEST.fullmatch(path.name) and path.parent.name == "blobs" and _starts_gguf(path):
        from .model_file import open_gguf  # a GGUF file whose name has no .gguf suffix

        model = open_gguf(path)
        return replace(model, name=_ollama_name(path) or model.name)
    return open_model(path)


def _config_only(path: Path) -> Path | None:
    """The config.json of a model that has no weights: a folder holding config.json and no weight file, or a
    ``.json`` file other than a safetensors index; None otherwise."""
    if _is_folder(path):
        try:
            with os.scandir(path) as iterator:
                for count, entry in enumerate(iterator):
                    if count >= MAX_ENTRIES or entry.name.lower().endswith(_WEIGHT_SUFFIXES) \
                            or entry.name == "model.safetensors.index.json":
                        return None
        except OSError:
            return None
        return path / "config.json" if os.path.lexists(path / "config.json") else None
    if path.suffix.lower() == ".json" and not path.name.endswith(".index.json"):
        return path
    return None


def _open_config(path: Path, config_path: Path) -> ModelFile:
    """The model of ``config_path`` alone: its RoPE set-up, no tensors (see ``config_rope.hf_rope``)."""
    from .config_rope import hf_rope
    from .model_file import MAX_CONFIG_BYTES, folder_name, read_json

    config = read_json(config_path, MAX_CONFIG_BYTES)
    rope, pairing, notes = hf_rope(config, config_path)
    name = folder_name(path) if path.is_dir() else (
        folder_name(path.parent) if path.name == "config.json" else path.stem)
    return ModelFile(name=name, path=path, kind="hf-folder" if path.is_dir() else "config.json", tensors=(),
                     position_table=None, position_table_name=None, position_offset=0, rope_config=rope,
                     pairing=pairing, config=config, notes=("config.json only: no weights were read", *notes),
                     source=_NoWeights(config_path))


class _NoWeights:
    """The tensors of a model that is only its config.json: none."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, name: str, first_row: int, shape: tuple[int, ...]) -> np.ndarray:
        raise ModelFileError(self.path, f"tensor {name} cannot be read: the model is only its config.json")


def _ollama_name(blob: Path) -> str | None:
    """The name of the Ollama model whose model layer is ``blob``, from the manifests beside its folder."""
    scan = SourceScan(OLLAMA)
    folder = blob.parent.parent
    return next((name for name, manifest in _manifests(folder, scan)
                 if _model_blob(folder, manifest, scan) == blob), None)

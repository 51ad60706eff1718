"""Models where users keep them: the Hugging Face cache, Ollama and LM Studio listed in File ▸ Models on this
computer and opened from it; a model that is only its config.json opens as its RoPE set-up; hostile folders
stay bounded and say so in one line."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file
from test_model_files import LLAMA, rope_gguf, table, write_json

from posenc_gui.model import rope_frequencies
from posenc_gui.model.files import locations
from posenc_gui.model.files.locations import HUGGING_FACE, LM_STUDIO, OLLAMA, find_models, open_found_model
from posenc_gui.model.files.model_setup import model_setups
from posenc_gui.model.schemes.rope import hf_config
from posenc_gui.views import model_open

#: Llama 3.1's RoPE keys (its config.json on the Hub).
LLAMA31 = LLAMA | {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0, "rope_scaling": {
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192}}
#: A deadline that only catches a hang (4× a slow machine's scan of these small trees).
HANG_MS = 120_000


def hf_repository(cache, name: str, files: dict, commit: str = "a" * 40, main: bool = True):
    """A Hugging Face cache repository ``models--ORG--NAME``: ``files`` (name → bytes) as blobs, linked from
    ``snapshots/COMMIT/`` as huggingface_hub links them; ``refs/main`` names the commit when ``main``."""
    repository = cache / f"models--{name.replace('/', '--')}"
    (repository / "blobs").mkdir(parents=True, exist_ok=True)
    (repository / "refs").mkdir(exist_ok=True)
    snapshot = repository / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for number, (file, data) in enumerate(files.items()):
        blob = repository / "blobs" / f"{commit[:8]}{number:032x}"
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / file)
    if main:
        (repository / "refs" / "main").write_text(commit)
    return snapshot


def safetensors_bytes(tmp_path, tensors) -> bytes:
    save_file(tensors, tmp_path / "scratch.safetensors")
    return (tmp_path / "scratch.safetensors").read_bytes()


def ollama_model(root, name: str, tag: str, blob_data: bytes, namespace: str = "library"):
    """An Ollama model: its GGUF blob, and its manifest naming it in the model layer (with a template layer)."""
    import hashlib

    digest = hashlib.sha256(blob_data).hexdigest()
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / f"sha256-{digest}").write_bytes(blob_data)
    manifest = root / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    write_json(manifest, {"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64, "size": 10},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(blob_data)}]})
    return root / "blobs" / f"sha256-{digest}"


@pytest.fixture
def computer(tmp_path, monkeypatch):
    """A home with a Hugging Face cache (Llama 3.1's config.json alone, a GPT-2-like checkpoint, a GGUF repo, a
    dataset), an Ollama folder (one GGUF model) and an LM Studio folder (one GGUF), the variables naming them."""
    home, cache, ollama, studio = (tmp_path / name for name in ("home", "hub", "ollama", "lmstudio"))
    home.mkdir()
    llama = hf_repository(cache, "meta-llama/Llama-3.1-8B", {"config.json": json.dumps(LLAMA31).encode()})
    weights = safetensors_bytes(tmp_path, {"transformer.wpe.weight": table(40, 24)})
    hf_repository(cache, "openai/gpt2-tiny", {"config.json": b'{"model_type": "gpt2"}'}, commit="b" * 40,
                  main=False)  # an older snapshot refs/main does not name
    gpt2 = hf_repository(cache, "openai/gpt2-tiny", {"config.json": b'{"model_type": "gpt2"}',
                                                     "model.safetensors": weights}, commit="c" * 40)
    rope_gguf(tmp_path / "qwen.gguf", "qwen2")
    gguf_data = (tmp_path / "qwen.gguf").read_bytes()
    qwen = hf_repository(cache, "Qwen/Qwen2-GGUF", {"qwen2-q8_0.gguf": gguf_data, "README.md": b"hello"})
    (cache / "datasets--org--data" / "snapshots").mkdir(parents=True)
    blob = ollama_model(ollama, "qwen2", "latest", gguf_data)
    studio_file = studio / "lmstudio-community" / "Qwen2-GGUF" / "Qwen2-Q8_0.gguf"
    studio_file.parent.mkdir(parents=True)
    studio_file.write_bytes(gguf_data)
    for name, value in (("HOME", home), ("HF_HUB_CACHE", cache), ("OLLAMA_MODELS", ollama),
                        (locations.LMSTUDIO_VARIABLE, studio)):
        monkeypatch.setenv(name, str(value))
    return {"llama": llama, "gpt2": gpt2, "gpt2 weights": len(weights), "qwen": qwen / "qwen2-q8_0.gguf",
            "blob": blob, "studio": studio_file, "gguf bytes": len(gguf_data)}


def listing(scans) -> dict[str, list[tuple]]:
    return {scan.source: [(model.name, model.path, model.size, model.detail) for model in scan.models]
            for scan in scans}


# ---------------------------------------------------------------- the model layer
def test_each_source_lists_its_models_with_their_paths_and_sizes(computer):
    scans = find_models()
    assert [scan.source for scan in scans] == [HUGGING_FACE, OLLAMA, LM_STUDIO]
    assert listing(scans) == {
        HUGGING_FACE: [("Qwen/Qwen2-GGUF/qwen2-q8_0.gguf", computer["qwen"], computer["gguf bytes"], "GGUF"),
                       ("meta-llama/Llama-3.1-8B", computer["llama"], 0, "config.json only"),
                       ("openai/gpt2-tiny", computer["gpt2"], computer["gpt2 weights"], "safetensors")],
        OLLAMA: [("qwen2:latest", computer["blob"], computer["gguf bytes"], "GGUF")],
        LM_STUDIO: [("lmstudio-community/Qwen2-GGUF/Qwen2-Q8_0.gguf", computer["studio"], computer["gguf bytes"],
                     "GGUF")]}
    assert all(not scan.notes for scan in scans)


def test_a_computer_without_the_folders_lists_nothing_and_names_no_folder(tmp_path):
    scans = find_models({"HOME": str(tmp_path)})
    assert [(scan.folder, scan.models, scan.notes) for scan in scans[::2]] == [(None, [], [])] * 2
    assert scans[1].models == []


def test_the_huggingface_hub_cache_variables_are_read_in_its_order(tmp_path):
    home = str(tmp_path)
    assert locations.hugging_face_folder({"HOME": home}) == tmp_path / ".cache" / "huggingface" / "hub"
    assert locations.hugging_face_folder({"HOME": home, "HF_HOME": "/h"}) == locations.Path("/h/hub")
    assert locations.hugging_face_folder({"HOME": home, "HF_HOME": "/h", "HF_HUB_CACHE": "/c"}) == \
        locations.Path("/c")


def test_an_ollama_blob_opens_as_its_gguf_under_the_name_ollama_gives_it(computer):
    opened = model_setups(computer["blob"])
    assert (opened.name, opened.model.kind) == ("qwen2:latest", "gguf")
    assert [setup.params.scheme for setup in opened.setups] == ["rope"]
    assert opened.setups[0].params.options["rope_theta"] == 1000000.0


@pytest.mark.parametrize("where", ["folder", "config.json", "named file"])
def test_a_config_json_without_weights_opens_as_llama_31s_rope(tmp_path, where):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    name = "llama-3.1-8b.json" if where == "named file" else "config.json"
    write_json(folder / name, LLAMA31)
    opened = model_setups(folder if where == "folder" else folder / name)
    (setup,) = opened.setups
    params = setup.params
    assert (params.scheme, params.d_model, params.options["rope_type"], params.options["factor"],
            params.options["rope_theta"]) == ("rope", 128, "llama3", 8.0, 500000.0)
    ours = rope_frequencies(hf_config(params.d_model, **params.options), seq_len=params.seq_len)
    np.testing.assert_array_equal(ours[0], rope_frequencies(LLAMA31)[0])
    assert "config.json only: no weights were read" in opened.model.notes
    assert opened.tables == ()


def test_a_folder_with_weights_is_not_taken_for_its_config_alone(tmp_path):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    write_json(folder / "config.json", {"model_type": "gpt2"})
    save_file({"transformer.wpe.weight": table(40, 24)}, folder / "model.safetensors")
    assert open_found_model(folder).position_table.shape == (40, 24)


# ---------------------------------------------------------------- hostile folders
def test_a_100_mib_manifest_a_link_loop_and_a_fifo_blob_are_skipped_in_one_line_each(computer, tmp_path):
    ollama = tmp_path / "ollama"
    huge = ollama / "manifests" / "registry.ollama.ai" / "library" / "huge" / "latest"
    huge.parent.mkdir(parents=True)
    with open(huge, "wb") as stream:
        stream.truncate(100 * 2**20)  # 100 MiB, sparse: a reader that read it first would take it all
    fifo = ollama_model(ollama, "fifo", "latest", b"GGUF-not-really")
    fifo.unlink()
    os.mkfifo(fifo)  # opening it for reading would block for ever
    loop = computer["llama"].parent / ("d" * 40)
    loop.mkdir()
    os.symlink("config.json", loop / "config.json")  # a link to itself
    (computer["llama"].parent.parent / "refs" / "main").write_text("d" * 40)
    scans = {scan.source: scan for scan in find_models()}
    ollama_notes = scans[OLLAMA].notes
    assert [model.name for model in scans[OLLAMA].models] == ["qwen2:latest"]
    assert any(str(huge) in note and "larger than 1 MiB" in note for note in ollama_notes)
    assert any(str(fifo) in note and "not a regular file" in note for note in ollama_notes)
    assert any(str(loop / "config.json") in note and "cannot be read" in note for note in scans[HUGGING_FACE].notes)
    assert "meta-llama/Llama-3.1-8B" not in [model.name for model in scans[HUGGING_FACE].models]
    assert all("\n" not in note for scan in scans.values() for note in scan.notes)
    with pytest.raises(ValueError, match="not a regular file|cannot be read"):
        model_setups(loop)


def test_100000_folders_are_read_only_up_to_the_bound_and_said_in_one_line(tmp_path):
    studio = tmp_path / "lmstudio"
    studio.mkdir()
    for number in range(100_000):
        os.mkdir(studio / f"p{number:06d}")
    (scan,) = [scan for scan in find_models({"HOME": str(tmp_path), locations.LMSTUDIO_VARIABLE: str(studio)})
               if scan.source == LM_STUDIO]
    assert scan.models == []
    assert scan.entries_read <= locations.MAX_TOTAL_ENTRIES + 1
    assert scan.notes == [f"{studio}: more than {locations.MAX_ENTRIES:,} entries; the first "
                          f"{locations.MAX_ENTRIES:,} read were looked at"]


def test_a_deep_tree_stops_at_the_bound_on_entries_in_all(tmp_path, monkeypatch):
    monkeypatch.setattr(locations, "MAX_TOTAL_ENTRIES", 100)
    root = tmp_path / "ollama"
    for host in range(3):
        for model in range(40):
            (root / "manifests" / f"host{host}" / "library" / f"m{model:02d}").mkdir(parents=True)
    (scan,) = [scan for scan in find_models({"HOME": str(tmp_path), "OLLAMA_MODELS": str(root)})
               if scan.source == OLLAMA]
    assert scan.entries_read == 101
    assert scan.notes == ["more than 100 entries in all: the listing stopped there"]


def test_a_manifest_naming_a_blob_outside_its_folder_is_refused(tmp_path):
    root = tmp_path / "ollama"
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / "evil" / "latest"
    manifest.parent.mkdir(parents=True)
    write_json(manifest, {"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                      "digest": "sha256:../../../etc/passwd"}]})
    (scan,) = [scan for scan in find_models({"HOME": str(tmp_path), "OLLAMA_MODELS": str(root)})
               if scan.source == OLLAMA]
    assert scan.models == []
    assert scan.notes == [f"{manifest}: its model layer's digest 'sha256:../../../etc/passwd' is not sha256"]


# ---------------------------------------------------------------- the menu
def menu_entries(window, qtbot) -> dict[str, object]:
    """The File ▸ Models on this computer entries once its listing arrived, by text."""
    menu = window.models_menu.menu
    menu.aboutToShow.emit()
    qtbot.waitUntil(lambda: not window.models_menu._scanning, timeout=HANG_MS)
    return {action.text(): action for action in menu.actions() if action.text()}


def test_the_menu_lists_each_source_and_opens_the_chosen_model_in_the_window(make_window, qtbot, computer,
                                                                             monkeypatch):
    shown = []
    monkeypatch.setattr(model_open, "show_model_problem", lambda parent, message: shown.append(message))
    window = make_window()
    entries = menu_entries(window, qtbot)
    llama = "meta-llama/Llama-3.1-8B — config.json only"
    assert entries[llama].isEnabled()
    gguf_size = locations.human_size(computer["gguf bytes"])
    assert f"qwen2:latest — {gguf_size} GGUF" in entries
    assert f"lmstudio-community/Qwen2-GGUF/Qwen2-Q8_0.gguf — {gguf_size} GGUF" in entries
    entries[llama].trigger()
    assert shown == []
    params = window.state.params
    assert (params.scheme, params.d_model, params.options["rope_type"], params.options["factor"]) == \
        ("rope", 128, "llama3", 8.0)
    entries[f"qwen2:latest — {gguf_size} GGUF"].trigger()
    assert window.state.params.options["rope_theta"] == 1000000.0
    assert window.statusBar().currentMessage().startswith("Opened qwen2:latest (gguf) as RoPE")


def test_the_menu_says_which_sources_have_no_folder(make_window, qtbot, tmp_path, monkeypatch):
    for name in ("HF_HUB_CACHE", "HF_HOME", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "OLLAMA_MODELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(locations.LMSTUDIO_VARIABLE, str(tmp_path / "none"))
    monkeypatch.setattr(locations, "ollama_folders", lambda environ: [tmp_path / "no-ollama"])
    window = make_window()
    entries = menu_entries(window, qtbot)
    assert {text: action.isEnabled() for text, action in entries.items() if "no models folder" in text} == {
        f"{source}: no models folder on this computer": False for source in (HUGGING_FACE, OLLAMA, LM_STUDIO)}


def test_nothing_is_scanned_until_the_menu_is_about_to_show(make_window, qtbot, computer, monkeypatch):
    calls = []
    monkeypatch.setattr(locations, "find_models", lambda environ: calls.append(environ) or find_models())
    window = make_window()
    assert calls == []
    assert "qwen2:latest" in " ".join(menu_entries(window, qtbot))
    assert calls == [None]

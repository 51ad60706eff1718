"""Files crafted to hang, exhaust or crash the readers: each is refused in one line, in bounded time and memory.

Where a file used to make a reader run for hours, the reading is done in a
child process whose time-out only catches that hang: it is minutes, not
the fraction of a second the reading takes now.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from posenc_gui.model.files.json_nesting import nesting_depth

#: How long a child may take to read a file before it counts as hung (the reading takes well under a second).
HANG_S = 120


def in_a_child(code: str, *args: str) -> str:
    """What ``code`` prints (stdout and stderr) when run with ``args`` in an isolated child; fails on a hang."""
    try:
        result = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                                timeout=HANG_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {HANG_S} s")
    return result.stdout + result.stderr


# ---------------------------------------------------------------- JSON nesting (#36, 1)
def depth_by_walking(text: str) -> int:
    """How deep ``text`` nests, one character at a time: a quote after an even run of backslashes starts or
    ends a string (as a JSON parser reads a valid text), brackets outside strings count."""
    depth = deepest = backslashes = 0
    in_string = False
    for char in text:
        if char == "\\":
            backslashes += 1
            continue
        if char == '"' and backslashes % 2 == 0:
            in_string = not in_string
        elif not in_string and char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and char in "]}":
            depth -= 1
        backslashes = 0
    return deepest


@pytest.mark.parametrize("chunk", [3, 7, 2**20])
def test_the_nesting_depth_is_that_of_a_character_walk(monkeypatch, chunk):
    from posenc_gui.model.files import json_nesting

    monkeypatch.setattr(json_nesting, "CHUNK_BYTES", chunk)  # strings and runs of backslashes across chunks
    rng = random.Random(36)
    alphabet = ['"', "\\", "[", "]", "{", "}", "a", "é", ",", ":"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        assert nesting_depth(text.encode("utf-8")) == depth_by_walking(text), text


@pytest.mark.parametrize("text", ['{"a": "\\\\"}', '["\\"[[", [[]]]', '{"k\\\\\\"[": {"x": [1]}}', '"\\u005b"'])
def test_the_nesting_depth_of_valid_json_is_what_the_parser_builds(text):
    def parsed_depth(value) -> int:
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        return 0 if children is None else 1 + max(map(parsed_depth, children), default=0)

    assert nesting_depth(text.encode("utf-8")) == parsed_depth(json.loads(text))


READ_MODEL = """
import sys
from posenc_gui.model import ModelFileError, open_model
try:
    open_model(sys.argv[1])
except ModelFileError as error:
    print(error)
"""


def test_a_64_mib_index_of_escaped_quotes_is_judged_without_hanging(tmp_path):
    from safetensors.numpy import save_file

    import numpy as np
    from posenc_gui.model.files import MAX_JSON_BYTES

    folder = tmp_path / "model"
    folder.mkdir()
    save_file({"wpe.weight": np.zeros((4, 4), np.float32)}, folder / "model.safetensors")
    opening = b'{"weight_map": "'
    pairs = (MAX_JSON_BYTES - len(opening)) // 2
    index = folder / "model.safetensors.index.json"
    index.write_bytes(opening + b'\\"' * pairs)  # a string never closed
    assert index.stat().st_size <= MAX_JSON_BYTES
    assert "model.safetensors.index.json: it is not valid JSON" in in_a_child(READ_MODEL, str(folder))


READ_SESSION = """
import sys
from posenc_gui.session import SessionError, parse_session
try:
    parse_session(open(sys.argv[1], "rb").read(), {})
except SessionError as error:
    print(error)
"""


def test_a_1_mib_session_of_escaped_quotes_is_judged_without_hanging(tmp_path):
    from posenc_gui.session import MAX_FILE_BYTES

    opening = b'{"format": "'
    path = tmp_path / "session.json"
    path.write_bytes(opening + b'\\"' * ((MAX_FILE_BYTES - len(opening)) // 2))
    assert "it is not JSON" in in_a_child(READ_SESSION, str(path))


# ---------------------------------------------------------------- config values out of range (#36, 2)
LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 128}


def config_folder(path, config: dict, tensors: dict | None = None):
    """A Hugging Face folder: ``config`` as its config.json and ``tensors`` (a small table) as model.safetensors."""
    import numpy as np
    from safetensors.numpy import save_file

    path.mkdir()
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(tensors or {"x.weight": np.ones((4, 4), np.float32)}, path / "model.safetensors")
    return path


def gguf_model(path, metadata: dict, tensors: dict | None = None):
    """A llama GGUF file with ``metadata`` (key → (value, GGUFValueType name)) and ``tensors``."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(path, "llama")
    for key, (value, kind) in metadata.items():
        writer.add_key_value(key, value, gguf.GGUFValueType[kind])
    for name, values in (tensors or {"token_embd.weight": np.ones((4, 64), np.float32)}).items():
        writer.add_tensor(name, values)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def roberta_table():
    import numpy as np

    return {"roberta.embeddings.position_embeddings.weight": np.ones((8, 4), np.float32)}


def opt_table():
    import numpy as np

    return {"model.decoder.embed_positions.weight": np.ones((8, 4), np.float32)}


FLOAT_HEADS = {"llama.embedding_length": (64, "UINT32"), "llama.rope.freq_base": (10000.0, "FLOAT32")}
#: Model files whose config holds a value out of range, and what the refusal says (the key and its range).
HOSTILE_MODELS = {
    "hidden_size below the heads, with rotary_dim": (
        lambda path: config_folder(path, {"model_type": "gptj", "n_embd": 2, "n_head": 4, "rotary_dim": 2}),
        r"config\.json: n_embd must be at least n_head \(4\), got 2"),
    "a 400-digit integer": (
        lambda path: config_folder(path, LLAMA | {"max_position_embeddings": 10**400}),
        r"config\.json: max_position_embeddings is 10+\.\.\.0+, not an integer in 1 … 9,007,199,254,740,992"),
    "a 400-digit rope_theta": (
        lambda path: config_folder(path, LLAMA | {"rope_theta": 10**400}),
        r"config\.json: rope_theta is 10+\.\.\.0+, not a positive finite number"),
    "model_type an object": (
        lambda path: config_folder(path, LLAMA | {"model_type": {"name": "llama"}}),
        r"config\.json: model_type is \{'name': 'llama'\}, not a name"),
    "model_type a list": (
        lambda path: config_folder(path, {"model_type": ["opt"]}, opt_table()),
        r"config\.json: model_type is \['opt'\], not a name"),
    "rotary_dim past the head": (
        lambda path: config_folder(path, {"model_type": "gptj", "n_embd": 64, "n_head": 4, "rotary_dim": 32}),
        r"config\.json: rotary_dim must be in 1 … head_dim \(16\), got 32"),
    "a 400-digit pad_token_id": (
        lambda path: config_folder(path, {"model_type": "roberta", "pad_token_id": 10**400}, roberta_table()),
        r"config\.json: pad_token_id is 10+\.\.\.0+, not a token id \(an integer in 0 … 9,007,199,254,740,991\)"),
    "GGUF embedding_length 1, head_count 2": (
        lambda path: gguf_model(path.with_suffix(".gguf"), {
            "llama.embedding_length": (1, "UINT32"), "llama.attention.head_count": (2, "UINT32"),
            "llama.rope.dimension_count": (2, "UINT32")}),
        r"llama\.embedding_length must be at least llama\.attention\.head_count \(2\), got 1"),
    "GGUF head_count 1e-320": (
        lambda path: gguf_model(path.with_suffix(".gguf"), FLOAT_HEADS | {
            "llama.attention.head_count": (1e-320, "FLOAT64")}),
        r"llama\.attention\.head_count is 1e-320, not an integer in 0 … 4,294,967,295"),
    "GGUF context_length 1e300": (
        lambda path: gguf_model(path.with_suffix(".gguf"), FLOAT_HEADS | {
            "llama.attention.head_count": (4, "UINT32"), "llama.context_length": (1e300, "FLOAT64")}),
        r"llama\.context_length is 1e\+300, not an integer in 0 … 4,294,967,295"),
    "GGUF dimension_count past the head": (
        lambda path: gguf_model(path.with_suffix(".gguf"), FLOAT_HEADS | {
            "llama.attention.head_count": (4, "UINT32"), "llama.rope.dimension_count": (64, "UINT32")}),
        r"llama\.rope\.dimension_count must be at most the head dimension \(16\), got 64"),
}


@pytest.fixture(params=list(HOSTILE_MODELS))
def hostile_model(request, tmp_path):
    """A model file with a config value out of range, and the pattern of its refusal."""
    build, pattern = HOSTILE_MODELS[request.param]
    return build(tmp_path / "model"), pattern


def test_a_config_value_out_of_range_is_one_model_file_error_naming_the_key(hostile_model):
    from posenc_gui.model import ModelFileError
    from posenc_gui.model.files.model_setup import model_setups

    path, pattern = hostile_model
    with pytest.raises(ModelFileError, match=pattern) as caught:
        model_setups(path)
    assert "\n" not in str(caught.value)


def test_a_config_value_out_of_range_is_exit_2_from_export(hostile_model, tmp_path, capsys):
    import re

    from posenc_gui.cli import export as export_cli

    path, pattern = hostile_model
    assert export_cli.main(["heatmap", "--model", str(path), "-o", str(tmp_path / "out.png")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]), lines
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("case", ["hidden_size below the heads, with rotary_dim", "GGUF head_count 1e-320"])
def test_a_config_value_out_of_range_is_exit_2_from_the_window_command(tmp_path, case):
    import os
    import re

    build, pattern = HOSTILE_MODELS[case]
    path = build(tmp_path / "model")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "POSENC_GUI_SETTINGS": str(tmp_path / "settings.ini")}
    result = subprocess.run([sys.executable, "-m", "posenc_gui", "--model", str(path), "--no-restore"],
                            capture_output=True, text=True, timeout=180, env=env)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]), result.stderr


def test_a_config_value_out_of_range_is_a_message_in_the_window_which_keeps_its_view(make_window, hostile_model):
    import re

    path, pattern = hostile_model
    window = make_window()
    before = window.state.params
    problem = window.open_model(str(path))
    assert problem.startswith("Model not opened: ") and re.search(pattern, problem) and "\n" not in problem
    assert window.statusBar().currentMessage() == problem
    assert window.state.params == before


def test_settings_remembering_a_model_whose_config_turned_bad_start_with_defaults(make_window, qtbot, tmp_path):
    import numpy as np

    from posenc_gui.mainwindow import MainWindow
    from posenc_gui.model import EncodingParams

    folder = config_folder(tmp_path / "gpt", {"model_type": "gpt2"}, {"wpe.weight": np.ones((16, 8), np.float32)})
    first = make_window()
    assert first.open_model(str(folder)) is None
    first.state.flush()
    assert first.state.params.scheme == "learned_file"
    first.close()
    (folder / "config.json").write_text(json.dumps({"model_type": "gptj", "n_embd": 2, "n_head": 4, "rotary_dim": 2}),
                                        encoding="utf-8")
    window = MainWindow()  # the warning is read at once: the status bar shows it for seconds only
    qtbot.addWidget(window)
    assert window.state.params == EncodingParams()
    message = window.statusBar().currentMessage()
    assert "parameters ignored (model_path: " in message and "n_embd must be at least n_head (4), got 2" in message


# ---------------------------------------------------------------- unbounded reads (#36, 4 and 7)
def peak_allocation(action) -> int:
    """The most bytes Python and NumPy held at once while ``action()`` ran (its exception is raised after)."""
    import tracemalloc

    tracemalloc.start()
    try:
        action()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def refusal_and_peak(action, pattern: str) -> int:
    """The peak allocation of ``action``, which must raise a ModelFileError matching ``pattern``."""
    from posenc_gui.model import ModelFileError

    caught = []

    def refused():
        with pytest.raises(ModelFileError, match=pattern) as error:
            action()
        caught.append(error)

    peak = peak_allocation(refused)
    assert caught
    return peak


def test_rope_freqs_claiming_60_million_factors_is_refused_unread(tmp_path):
    import os
    import struct

    from test_model_files import gguf_bytes, gguf_string

    from posenc_gui.model import open_model

    entries = 60_000_000  # 240 MB of float32, in a sparse file of a few KB on disk
    body = gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    body += gguf_string("rope_freqs.weight") + struct.pack("<IQIQ", 1, entries, 0, 0)  # 1-D, F32, offset 0
    header = gguf_bytes(tensor_count=1, key_count=1, body=body)
    path = tmp_path / "sparse.gguf"
    path.write_bytes(header + b"\0" * (-len(header) % 32))
    os.truncate(path, os.path.getsize(path) + entries * 4)
    peak = refusal_and_peak(lambda: open_model(path), r"sparse\.gguf: rope_freqs\.weight holds 60,000,000 factors; "
                                                      r"it holds one per rotary pair \(at most 4,096\)")
    assert peak < 16 * 2**20


def test_rope_freqs_of_another_length_than_the_rotary_pairs_is_refused(tmp_path):
    import numpy as np

    from posenc_gui.model import ModelFileError, open_model

    path = gguf_model(tmp_path / "model.gguf", {
        "llama.embedding_length": (256, "UINT32"), "llama.attention.head_count": (4, "UINT32"),
        "llama.rope.dimension_count": (64, "UINT32")}, {"rope_freqs.weight": np.ones(33, np.float32)})
    with pytest.raises(ModelFileError, match=r"rope_freqs\.weight holds 33 factors; it holds one per rotary pair "
                                             r"\(32\)"):
        open_model(path)


def npz_of(path, count: int):
    """An .npz archive of ``count`` one-value arrays, written member by member (np.savez would take minutes)."""
    import io
    import zipfile

    import numpy as np

    member = io.BytesIO()
    np.lib.format.write_array(member, np.zeros(1, np.float32))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for index in range(count):
            archive.writestr(f"a{index}.npy", member.getvalue())
    return path


def test_an_npz_of_more_arrays_than_a_model_has_is_refused_from_its_end_record(tmp_path):
    from posenc_gui.model import ModelFileError, open_model
    from posenc_gui.model.files import MAX_NPZ_ARRAYS

    assert len(open_model(npz_of(tmp_path / "most.npz", MAX_NPZ_ARRAYS)).tensors) == MAX_NPZ_ARRAYS
    with pytest.raises(ModelFileError, match=r"its zip directory claims 4,097 members in [0-9,]+ bytes \(at most "
                                             r"4,096 in 1 MiB are read"):
        open_model(npz_of(tmp_path / "more.npz", MAX_NPZ_ARRAYS + 1))


def test_an_npz_whose_end_record_claims_a_quarter_million_members_is_refused_before_zipfile_reads_it(tmp_path):
    import io
    import struct

    import numpy as np

    from posenc_gui.model import open_model

    buffer = io.BytesIO()
    np.savez(buffer, table=np.ones((4, 4)))
    data = bytearray(buffer.getvalue())
    end = data.rfind(b"PK\x05\x06")
    # A ZIP64 locator and record claiming 2^18 members, as an archive of that many would (zipfile reads the
    # directory by its size and offset, so before the check this archive opened as one array).
    directory_bytes, directory_at = struct.unpack_from("<II", data, end + 12)
    record = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, 2**18, 2**18, directory_bytes,
                                          directory_at)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, end, 1)
    data[end:end] = record + locator
    data[end + 76 + 8:end + 76 + 12] = struct.pack("<HH", 0xFFFF, 0xFFFF)
    (tmp_path / "forged.npz").write_bytes(bytes(data))
    peak = refusal_and_peak(lambda: open_model(tmp_path / "forged.npz"), "claims 262,144 members")
    assert peak < 2**20


@pytest.mark.parametrize("kind", ["safetensors", "npy", "npz"])
def test_a_table_grown_since_opening_is_refused_before_it_is_read(tmp_path, kind):
    import numpy as np
    from safetensors.numpy import save_file

    from posenc_gui.model import open_model

    path = tmp_path / f"model.{kind}"
    writers = {"safetensors": lambda values: save_file({"wpe.weight": values}, path),
               "npy": lambda values: np.save(path, values),
               "npz": lambda values: np.savez(path, wpe=values)}
    writers[kind](np.ones((4, 4), np.float32))
    model = open_model(path)
    name = model.tensors[0].name
    writers[kind](np.ones((4096, 4096), np.float32))  # 64 MiB now, read as 128 MiB of float64
    assert refusal_and_peak(lambda: model.read_tensor(name), "changed since the file was opened") < 16 * 2**20


# ---------------------------------------------------------------- GGUF headers that take long to walk
def raw_gguf(path, keys: list[bytes], tensors: list[bytes] = ()):
    """A GGUF file of llama's architecture key, then ``keys`` (each a key's bytes) and tensor infos."""
    import struct

    from test_model_files import gguf_bytes, gguf_string

    architecture = gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    body = architecture + b"".join(keys) + b"".join(tensors)
    path.write_bytes(gguf_bytes(tensor_count=len(tensors), key_count=1 + len(keys), body=body))
    return path


def string_array(name: str, count: int) -> bytes:
    """A metadata key holding ``count`` empty strings (a vocabulary's shape)."""
    import struct

    from test_model_files import gguf_string

    return gguf_string(name) + struct.pack("<IIQ", 9, 8, count) + struct.pack("<Q", 0) * count


def test_a_gguf_of_more_tensors_than_a_model_has_is_refused(tmp_path):
    import struct

    from test_model_files import gguf_string

    from posenc_gui.model import ModelFileError, open_model
    from posenc_gui.model.files.gguf_file import MAX_TENSORS

    infos = [gguf_string(f"t{index}") + struct.pack("<IQIQ", 1, 32, 0, 0) for index in range(MAX_TENSORS + 1)]
    with pytest.raises(ModelFileError, match="claims 65,537 tensors"):
        open_model(raw_gguf(tmp_path / "many.gguf", [], infos))


def array_of_arrays(name: str, count: int) -> bytes:
    """A metadata key holding ``count`` empty arrays of u8."""
    import struct

    from test_model_files import gguf_string

    return gguf_string(name) + struct.pack("<IIQ", 9, 9, count) + struct.pack("<IQ", 0, 0) * count


@pytest.mark.parametrize(("keys", "problem"), ids=["strings", "arrays of arrays"], argvalues=[
    (lambda: [string_array("tokens", 2**20), string_array("merges", 2**20 + 1)], "more than 2,097,152 strings"),
    (lambda: [array_of_arrays("x", 2**16 + 1)], "or 65,536 arrays"),
])
def test_gguf_metadata_arrays_past_a_vocabulary_are_refused(tmp_path, keys, problem):
    from posenc_gui.model import ModelFileError, open_model

    with pytest.raises(ModelFileError, match=problem):
        open_model(raw_gguf(tmp_path / "long.gguf", keys()))


def test_a_vocabulary_of_a_million_tokens_opens_walked_over_not_kept(tmp_path):
    from posenc_gui.model import open_model
    from posenc_gui.model.files.gguf_file import SkippedArray

    model = open_model(raw_gguf(tmp_path / "vocabulary.gguf", [string_array("tokenizer.ggml.tokens", 2**20)]))
    assert model.config["tokenizer.ggml.tokens"] == SkippedArray("STRING", 2**20)


def test_gguf_arrays_are_kept_up_to_a_total_then_walked_over(tmp_path):
    from posenc_gui.model import open_model
    from posenc_gui.model.files.gguf_file import MAX_KEPT_ARRAY, MAX_KEPT_VALUES, SkippedArray

    count = MAX_KEPT_VALUES // MAX_KEPT_ARRAY + 1
    model = open_model(raw_gguf(tmp_path / "kept.gguf", [string_array(f"k{index}", MAX_KEPT_ARRAY)
                                                         for index in range(count)]))
    kept = [model.config[f"k{index}"] for index in range(count)]
    assert all(value == ("",) * MAX_KEPT_ARRAY for value in kept[:-1])
    assert kept[-1] == SkippedArray("STRING", MAX_KEPT_ARRAY)

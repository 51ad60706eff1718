"""Model files on disk (model layer): checkpoints made here with the formats' own writers, and hostile files."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import tracemalloc

import gguf
import numpy as np
import pytest
from safetensors.numpy import save_file

from posenc_gui.model import ModelFileError, open_model
from posenc_gui.model.files import model_file as model_files
from waiting import TIMEOUT_S

RNG = np.random.default_rng(2024)
Q8_0 = gguf.GGMLQuantizationType.Q8_0
Q4_0 = gguf.GGMLQuantizationType.Q4_0


def table(rows: int = 64, columns: int = 48, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal((rows, columns)).astype(dtype)


def write_json(path, value) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def raw_safetensors(path, header: dict, data: bytes = b"", claimed_length: int | None = None) -> None:
    """A safetensors file written byte by byte, to say what the writer never would."""
    encoded = json.dumps(header).encode()
    with open(path, "wb") as stream:
        stream.write(struct.pack("<Q", len(encoded) if claimed_length is None else claimed_length))
        stream.write(encoded)
        stream.write(data)


def write_gguf(path, arch: str, metadata=(), tensors=()) -> None:
    """A GGUF file from (method name, value) metadata calls and (name, array, raw dtype) tensors."""
    writer = gguf.GGUFWriter(path, arch)
    for method, value in metadata:
        getattr(writer, method)(value)
    for name, array, raw_dtype in tensors:
        writer.add_tensor(name, array, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def gguf_bytes(version=3, tensor_count=0, key_count=0, body=b"") -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensor_count, key_count) + body


def gguf_string(text: str) -> bytes:
    return struct.pack("<Q", len(text)) + text.encode()


# ---------------------------------------------------------------- learned tables
@pytest.mark.parametrize("name", ["wpe.weight", "transformer.wpe.weight"])
def test_a_gpt2_table_is_read_exactly_from_its_safetensors_file(tmp_path, name):
    positions, tokens = table(), table(100, 48)
    save_file({name: positions, "transformer.wte.weight": tokens}, tmp_path / "gpt2.safetensors")
    model = open_model(tmp_path / "gpt2.safetensors")
    assert (model.name, model.kind, model.position_table_name, model.position_offset) == (
        "gpt2", "safetensors", name, 0)
    assert model.position_table.dtype == np.float64 and not model.position_table.flags.writeable
    np.testing.assert_array_equal(model.position_table, positions)
    assert sorted(model.tensors) == sorted([(name, (64, 48), "F32"), ("transformer.wte.weight", (100, 48), "F32")])
    assert model.rope_config is None and model.pairing is None
    np.testing.assert_array_equal(model.read_tensor("transformer.wte.weight"), tokens)


def bert_folder(folder, config: dict, positions: np.ndarray) -> None:
    folder.mkdir()
    write_json(folder / "config.json", config)
    write_json(folder / "tokenizer.json", {"version": "1.0", "model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}})
    save_file({"embeddings.position_embeddings.weight": positions,
               "embeddings.word_embeddings.weight": table(30, positions.shape[1]),
               "encoder.layer.0.attention.self.query.weight": table(48, 48)}, folder / "model.safetensors")


def test_a_bert_folder_gives_its_table_and_config(tmp_path):
    config = {"model_type": "bert", "hidden_size": 48, "max_position_embeddings": 64, "num_attention_heads": 4,
              "position_embedding_type": "absolute"}
    positions = table()
    bert_folder(tmp_path / "tiny-bert", config, positions)
    model = open_model(tmp_path / "tiny-bert")
    assert (model.name, model.kind, model.config) == ("tiny-bert", "hf-folder", config)
    np.testing.assert_array_equal(model.position_table, positions)
    assert model.position_offset == 0 and model.rope_config is None and model.pairing is None
    assert len(model.tensors) == 3


def test_roberta_positions_start_after_the_padding_row(tmp_path):
    # RobertaEmbeddings numbers tokens from pad_token_id + 1 (create_position_ids_from_input_ids).
    positions = table(66, 48)
    bert_folder(tmp_path / "roberta", {"model_type": "roberta", "pad_token_id": 1, "hidden_size": 48}, positions)
    model = open_model(tmp_path / "roberta")
    assert model.position_offset == 2
    np.testing.assert_array_equal(model.position_table, positions[2:])
    assert any("pad_token_id + 1" in note for note in model.notes)


def test_opt_positions_start_at_row_two(tmp_path):
    positions = table(66, 48)
    save_file({"model.decoder.embed_positions.weight": positions}, tmp_path / "opt.safetensors")
    model = open_model(tmp_path / "opt.safetensors")
    assert (model.position_table_name, model.position_offset) == ("model.decoder.embed_positions.weight", 2)
    np.testing.assert_array_equal(model.position_table, positions[2:])
    assert any("OPT" in note for note in model.notes)


def test_a_bf16_table_is_converted_bit_exactly(tmp_path):
    bits = RNG.integers(0, 2**16, size=(64, 48), dtype=np.uint16)
    exponent = (bits >> 7) & 0xFF
    bits[exponent == 0xFF] &= 0x807F  # NaN and infinity patterns become finite ones
    raw_safetensors(tmp_path / "bf16.safetensors", {  # raw bytes: no bfloat16 type loaded here
        "wpe.weight": {"dtype": "BF16", "shape": [64, 48], "data_offsets": [0, bits.nbytes]}}, bits.tobytes())
    model = open_model(tmp_path / "bf16.safetensors")
    expected = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # bf16 is f32's top half
    assert model.tensors[0].dtype == "BF16"
    assert np.array_equal(model.position_table.view(np.uint64), expected.view(np.uint64))


def test_f16_and_f64_tables_are_exact(tmp_path):
    half, double = table(dtype=np.float16), table(dtype=np.float64)
    save_file({"wpe.weight": half, "other": double}, tmp_path / "mixed.safetensors")
    model = open_model(tmp_path / "mixed.safetensors")
    assert np.array_equal(model.position_table, half.astype(np.float64))
    assert np.array_equal(model.read_tensor("other").view(np.uint64), double.view(np.uint64))


def test_a_sharded_checkpoint_is_read_across_its_shards(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    positions, query = table(), table(48, 48)
    save_file({"bert.encoder.layer.0.attention.self.query.weight": query}, folder / "model-00001-of-00002.safetensors")
    save_file({"bert.embeddings.position_embeddings.weight": positions}, folder / "model-00002-of-00002.safetensors")
    write_json(folder / "model.safetensors.index.json", {"metadata": {}, "weight_map": {
        "bert.encoder.layer.0.attention.self.query.weight": "model-00001-of-00002.safetensors",
        "bert.embeddings.position_embeddings.weight": "model-00002-of-00002.safetensors"}})
    write_json(folder / "config.json", {"model_type": "bert"})
    model = open_model(folder)
    assert {tensor.name for tensor in model.tensors} == {
        "bert.encoder.layer.0.attention.self.query.weight", "bert.embeddings.position_embeddings.weight"}
    np.testing.assert_array_equal(model.position_table, positions)
    np.testing.assert_array_equal(model.read_tensor("bert.encoder.layer.0.attention.self.query.weight"), query)


def test_an_index_naming_a_tensor_its_shard_lacks_is_refused(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    save_file({"a": table()}, folder / "model-00001-of-00001.safetensors")
    write_json(folder / "model.safetensors.index.json", {"weight_map": {
        "a": "model-00001-of-00001.safetensors", "b": "model-00001-of-00001.safetensors"}})
    with pytest.raises(ModelFileError, match="tensor b"):
        open_model(folder)


def test_npy_and_npz_tables(tmp_path):
    positions, other = table(dtype=np.float64), table(10, 4)
    np.save(tmp_path / "sinusoid.npy", positions)
    model = open_model(tmp_path / "sinusoid.npy")
    assert (model.kind, model.tensors, model.position_table_name) == (
        "npy", (("sinusoid", (64, 48), "F64"),), "sinusoid")
    np.testing.assert_array_equal(model.position_table, positions)
    np.savez_compressed(tmp_path / "tables.npz", table=positions, other=other)
    model = open_model(tmp_path / "tables.npz")
    assert model.kind == "npz" and {tensor.name for tensor in model.tensors} == {"table", "other"}
    np.testing.assert_array_equal(model.read_tensor("other"), other)
    assert model.position_table_name in ("table", "other") and any("also found" in note for note in model.notes)


def test_nan_and_infinity_are_reported_not_hidden(tmp_path):
    positions = table()
    positions[5, 2], positions[7, 0] = np.nan, np.inf
    save_file({"wpe.weight": positions}, tmp_path / "broken.safetensors")
    model = open_model(tmp_path / "broken.safetensors")
    assert any("1 NaN and 1 infinite values" in note and "row 5, column 2" in note for note in model.notes)
    with pytest.raises(ModelFileError, match="NaN"):
        model.read_tensor("wpe.weight")
    assert np.isnan(model.read_tensor("wpe.weight", allow_nonfinite=True)[5, 2])


def test_read_tensor_refuses_what_is_not_a_float_table(tmp_path):
    save_file({"wpe.weight": table(), "vector": np.ones(4, np.float32), "ids": np.ones((2, 2), np.int64)},
              tmp_path / "m.safetensors")
    model = open_model(tmp_path / "m.safetensors")
    for name, problem in (("vector", "2 dimensions"), ("ids", "I64"), ("missing", "no tensor named")):
        with pytest.raises(ModelFileError, match=problem):
            model.read_tensor(name)


# ---------------------------------------------------------------- RoPE from config.json
LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 131072}


@pytest.mark.parametrize("form", [
    {"rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}},
    {"rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 2.0}},
    {"rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                         "original_max_position_embeddings": 32768}},
])
def test_a_llama_config_keeps_each_rope_scaling_form(tmp_path, form):
    folder = tmp_path / "llama"
    folder.mkdir()
    write_json(folder / "config.json", LLAMA | form)
    save_file({"model.layers.0.self_attn.q_proj.weight": table(512, 512)}, folder / "model.safetensors")
    model = open_model(folder)
    assert model.pairing == "halves" and model.position_table is None
    assert model.rope_config == {**form, "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64,
                                 "max_position_embeddings": 131072, "partial_rotary_factor": 1.0}


@pytest.mark.parametrize(("config", "pairing", "factor"), [
    ({"model_type": "gptj", "n_embd": 256, "n_head": 1, "rotary_dim": 64, "n_positions": 2048}, "interleaved", 0.25),
    ({"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4, "rotary_pct": 0.25,
      "rotary_emb_base": 10000}, "halves", 0.25),
    ({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
      "rope_theta": 10000.0}, "halves", 0.4),
])
def test_older_rope_keys_are_read_as_hugging_face_keys(tmp_path, config, pairing, factor):
    folder = tmp_path / "model"
    folder.mkdir()
    write_json(folder / "config.json", config)
    save_file({"x": table(4, 4)}, folder / "model.safetensors")
    model = open_model(folder)
    assert model.pairing == pairing and model.rope_config["partial_rotary_factor"] == factor
    assert model.rope_config["rope_theta"] == 10000.0
    rope = model.rope_config
    assert int(rope["head_dim"] * rope["partial_rotary_factor"]) == int(rope["head_dim"] * factor)


def test_the_rotary_share_keeps_the_rotary_dimension_under_truncation(tmp_path):
    # 30 / 44 * 44 rounds to 29.999…, which int() truncates to 29.
    assert int(44 * (30 / 44)) == 29
    folder = tmp_path / "model"
    folder.mkdir()
    write_json(folder / "config.json", {"model_type": "gptj", "n_embd": 44, "n_head": 1, "rotary_dim": 30})
    save_file({"x": table(4, 4)}, folder / "model.safetensors")
    write_gguf(tmp_path / "model.gguf", "phi2", [("add_key_length", 44), ("add_rope_dimension_count", 30)])
    for path in (folder, tmp_path / "model.gguf"):
        rope = open_model(path).rope_config
        assert (rope["head_dim"], int(rope["head_dim"] * rope["partial_rotary_factor"])) == (44, 30)


def test_a_bad_rope_value_names_the_config_key(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    write_json(folder / "config.json", LLAMA | {"rope_theta": -1})
    save_file({"x": table(4, 4)}, folder / "model.safetensors")
    with pytest.raises(ModelFileError, match=r"config\.json: rope_theta is -1"):
        open_model(folder)


# ---------------------------------------------------------------- GGUF
def rope_gguf(path, arch: str) -> np.ndarray:
    factors = np.linspace(1.0, 8.0, 32, dtype=np.float32)
    write_gguf(path, arch, [
        ("add_context_length", 131072), ("add_embedding_length", 1024), ("add_head_count", 16),
        ("add_rope_freq_base", 1000000.0), ("add_rope_dimension_count", 64),
        ("add_rope_scaling_type", gguf.RopeScalingType.YARN), ("add_rope_scaling_factor", 4.0),
        ("add_rope_scaling_orig_ctx_len", 32768), ("add_rope_scaling_yarn_log_mul", 0.1),
    ], [("rope_freqs.weight", factors, None), ("token_embd.weight", table(50, 1024), None)])
    return factors


@pytest.mark.parametrize(("arch", "pairing"), [("llama", "interleaved"), ("deepseek2", "interleaved"),
                                               ("qwen2", "halves"), ("gemma3", "halves"), ("phi3", "halves")])
def test_gguf_rope_metadata_becomes_a_hugging_face_rope_config(tmp_path, arch, pairing):
    factors = rope_gguf(tmp_path / "model.gguf", arch)
    model = open_model(tmp_path / "model.gguf")
    assert (model.kind, model.pairing, model.position_table) == ("gguf", pairing, None)
    assert model.rope_config == {
        "rope_theta": 1000000.0, "hidden_size": 1024, "num_attention_heads": 16, "head_dim": 64,
        "partial_rotary_factor": 1.0, "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        "freq_factors": tuple(factors.astype(np.float64))}
    assert any(f"{arch}.rope.scaling.yarn_log_multiplier" in note for note in model.notes)
    assert model.config["general.architecture"] == arch


def test_gguf_quantized_tensors_are_dequantized_by_the_gguf_package(tmp_path):
    weights = table(8, 64)
    quantized = {kind: gguf.quants.quantize(weights, kind) for kind in (Q8_0, Q4_0)}
    write_gguf(tmp_path / "q.gguf", "llama", [("add_rope_freq_base", 10000.0)],
               [(f"blk.0.{kind.name}.weight", data, kind) for kind, data in quantized.items()])
    model = open_model(tmp_path / "q.gguf")
    assert [(tensor.name, tensor.shape, tensor.dtype) for tensor in model.tensors] == [
        ("blk.0.Q8_0.weight", (8, 64), "Q8_0"), ("blk.0.Q4_0.weight", (8, 64), "Q4_0")]
    for kind, data in quantized.items():
        values = model.read_tensor(f"blk.0.{kind.name}.weight")
        np.testing.assert_array_equal(values, gguf.quants.dequantize(data, kind))
        step = np.abs(weights.reshape(-1, 32)).max(axis=1, keepdims=True) / (127 if kind == Q8_0 else 8)
        assert np.all(np.abs(values - weights).reshape(-1, 32) <= step)  # within one quantization step


def test_the_gguf_header_agrees_with_the_gguf_packages_reader(tmp_path):
    rope_gguf(tmp_path / "model.gguf", "qwen2")
    model = open_model(tmp_path / "model.gguf")
    reader = gguf.GGUFReader(tmp_path / "model.gguf")
    assert [(tensor.name, tensor.dtype, tensor.shape) for tensor in model.tensors] == [
        (tensor.name, tensor.tensor_type.name, tuple(reversed(tensor.shape.tolist()))) for tensor in reader.tensors]
    for key, field in reader.fields.items():
        if not key.startswith("GGUF."):
            kept = model.config[key]
            assert (list(kept) if isinstance(kept, tuple) else kept) == field.contents(), key
    for tensor in reader.tensors:
        np.testing.assert_array_equal(model.read_tensor(tensor.name) if len(tensor.shape) == 2 else
                                      model.rope_config["freq_factors"], tensor.data)


def test_a_gguf_learned_table_is_read(tmp_path):
    positions = table(dtype=np.float16)
    write_gguf(tmp_path / "gpt2.gguf", "gpt2", [("add_context_length", 64)],
               [("position_embd.weight", positions, None)])
    model = open_model(tmp_path / "gpt2.gguf")
    assert model.position_table_name == "position_embd.weight" and model.rope_config is None
    assert np.array_equal(model.position_table, positions.astype(np.float64))


# ---------------------------------------------------------------- hostile files
def marker_pickle(marker) -> bytes:
    """A pickle whose loading creates ``marker``."""

    class CreatesFile:
        def __reduce__(self):
            return open, (str(marker), "w")

    return pickle.dumps(CreatesFile())


@pytest.mark.parametrize("name", ["model.pt", "model.bin", "model.pth", "last.ckpt"])
def test_pickled_checkpoints_are_refused_with_how_to_convert_them(tmp_path, name):
    marker = tmp_path / "ran"
    (tmp_path / name).write_bytes(marker_pickle(marker))
    with pytest.raises(ModelFileError, match=r"safetensors\.torch\.save_file") as caught:
        open_model(tmp_path / name)
    assert "weights_only=True" in str(caught.value) and not marker.exists()


def test_a_folder_of_pickles_is_refused_with_how_to_convert_them(tmp_path):
    marker = tmp_path / "ran"
    folder = tmp_path / "legacy"
    folder.mkdir()
    write_json(folder / "config.json", {"model_type": "bert"})
    (folder / "pytorch_model.bin").write_bytes(marker_pickle(marker))
    with pytest.raises(ModelFileError, match="pytorch_model.bin: PyTorch pickle"):
        open_model(folder)
    assert not marker.exists()


def test_pickles_disguised_as_arrays_run_nothing(tmp_path):
    marker = tmp_path / "ran"
    np.save(tmp_path / "objects.npy", np.array([marker_pickle(marker), None], dtype=object), allow_pickle=True)
    (tmp_path / "model.safetensors").write_bytes(marker_pickle(marker))
    np.savez(tmp_path / "objects.npz", table=table(), objects=np.array([None, 1], dtype=object))
    (tmp_path / "raw.npy").write_bytes(marker_pickle(marker))
    for name in ("objects.npy", "model.safetensors", "objects.npz", "raw.npy"):
        with pytest.raises(ModelFileError):
            open_model(tmp_path / name)
    assert not marker.exists()


def test_a_header_claiming_2_to_the_62_bytes_is_refused(tmp_path):
    raw_safetensors(tmp_path / "huge.safetensors", {}, claimed_length=2**62)
    with pytest.raises(ModelFileError, match="huge.safetensors: .*header too large"):
        open_model(tmp_path / "huge.safetensors")


@pytest.mark.parametrize("name", ["config.json", "model.safetensors.index.json"])
def test_json_nested_100000_deep_is_refused_without_recursing(tmp_path, name):
    folder = tmp_path / "deep"
    folder.mkdir()
    save_file({"wpe.weight": table()}, folder / "model.safetensors")
    (folder / name).write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(ModelFileError, match=f"{name}: its JSON nests 100,001 levels deep"):
        open_model(folder)


def test_a_config_larger_than_the_bound_is_refused_unread(tmp_path):
    folder = tmp_path / "large"
    folder.mkdir()
    save_file({"wpe.weight": table()}, folder / "model.safetensors")
    write_json(folder / "config.json", {"model_type": "gpt2"})
    os.truncate(folder / "config.json", model_files.MAX_CONFIG_BYTES + 1)
    with pytest.raises(ModelFileError, match="config.json: it is larger than 4 MiB"):
        open_model(folder)


def test_brackets_inside_json_strings_are_not_nesting(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    save_file({"wpe.weight": table()}, folder / "model.safetensors")
    write_json(folder / "config.json", {"model_type": "gpt2", "note": "[" * 1000 + '\\"{'})
    assert open_model(folder).config["note"].startswith("[[[")


def test_tensor_data_past_the_end_of_the_file_is_refused(tmp_path):
    raw_safetensors(tmp_path / "short.safetensors",
                    {"wpe.weight": {"dtype": "F32", "shape": [64, 48], "data_offsets": [0, 64 * 48 * 4]}}, b"\0" * 64)
    with pytest.raises(ModelFileError, match="short.safetensors: not a readable safetensors file"):
        open_model(tmp_path / "short.safetensors")
    body = gguf_string("t") + struct.pack("<IQQIQ", 2, 48, 64, 0, 2**40)  # 2-D F32 at offset 2^40
    (tmp_path / "short.gguf").write_bytes(gguf_bytes(tensor_count=1, body=body) + b"\0" * 64)
    with pytest.raises(ModelFileError, match="short.gguf: .*tensor t: its data .* lies past the end of the file"):
        open_model(tmp_path / "short.gguf")


@pytest.mark.parametrize(("body", "counts", "problem"), ids=[
    "bytes claiming 2^62", "strings past the end", "bytes past the end", "2^62 tensors", "unknown type",
    "a 2^40-byte string"], argvalues=[
    (gguf_string("tokens") + struct.pack("<IIQ", 9, 0, 2**62), (0, 1), "array of 4,611,686,018,427,387,904"),  # u8
    (gguf_string("tokens") + struct.pack("<IIQ", 9, 8, 2**20), (0, 1), "header is cut short"),  # strings
    (gguf_string("tokens") + struct.pack("<IIQ", 9, 0, 2**20), (0, 1), "header is cut short"),  # bytes
    (b"", (2**62, 0), "claims 4,611,686,018,427,387,904 tensors"),
    (gguf_string("k") + struct.pack("<I", 99), (0, 1), "unknown value type 99"),
    (gguf_string("k") + struct.pack("<IQ", 8, 2**40), (0, 1), "1,099,511,627,776 bytes long"),
])
def test_gguf_counts_past_the_file_are_refused(tmp_path, body, counts, problem):
    (tmp_path / "bad.gguf").write_bytes(gguf_bytes(tensor_count=counts[0], key_count=counts[1], body=body))
    with pytest.raises(ModelFileError, match=problem):
        open_model(tmp_path / "bad.gguf")


@pytest.mark.parametrize("shard", ["../outside.safetensors", "/etc/passwd", "sub/model.safetensors", ".."])
def test_a_shard_outside_the_folder_is_refused(tmp_path, shard):
    save_file({"wpe.weight": table()}, tmp_path / "outside.safetensors")
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    save_file({"wpe.weight": table()}, folder / "sub" / "model.safetensors")
    write_json(folder / "model.safetensors.index.json", {"weight_map": {"wpe.weight": shard}})
    with pytest.raises(ModelFileError, match="not a file of this folder"):
        open_model(folder)


def test_a_sparse_multi_gigabyte_checkpoint_opens_reading_only_its_header_and_table(tmp_path):
    import resource

    rest_rows = 2**18  # 2^18 × 4096 float32: 4 GiB
    header = {"wpe.weight": {"dtype": "F32", "shape": [64, 48], "data_offsets": [0, 64 * 48 * 4]},
              "rest": {"dtype": "F32", "shape": [rest_rows, 4096],
                       "data_offsets": [64 * 48 * 4, 64 * 48 * 4 + rest_rows * 4096 * 4]}}
    positions = table()
    folder = tmp_path / "big"
    folder.mkdir()
    write_json(folder / "config.json", {"model_type": "gpt2", "n_positions": 64})
    path = folder / "model.safetensors"
    raw_safetensors(path, header, positions.tobytes())
    os.truncate(path, os.path.getsize(path) + rest_rows * 4096 * 4)
    assert os.path.getsize(path) > 4 * 2**30
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    try:
        model = open_model(folder)
        allocated = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert allocated < 16 * 2**20
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 512 * 2**10
    np.testing.assert_array_equal(model.position_table, positions)
    assert ("rest", (rest_rows, 4096), "F32") in model.tensors
    with pytest.raises(ModelFileError, match="1,073,741,824 values"):
        model.read_tensor("rest")


def refusal_in_a_child(path) -> str:
    """What opening ``path`` in a child process prints: the ModelFileError's message.

    A child, not a thread: a reader blocked in a native open() may hold the
    interpreter's lock, and a killed child cannot leave the test hanging.
    """
    code = ("import sys\nfrom posenc_gui.model import ModelFileError, open_model\n"
            "try:\n    open_model(sys.argv[1])\nexcept ModelFileError as error:\n    print(error)\n")
    try:
        result = subprocess.run([sys.executable, "-I", "-c", code, str(path)], capture_output=True, text=True,
                                timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"opening {path} blocked")
    return result.stdout + result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_model_safetensors_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "model.safetensors")
    write_json(tmp_path / "config.json", {"model_type": "bert"})
    (tmp_path / "link.safetensors").symlink_to(tmp_path / "model.safetensors")
    for path, named in ((tmp_path / "model.safetensors",) * 2, (tmp_path, tmp_path / "model.safetensors"),
                        (tmp_path / "link.safetensors",) * 2):
        assert f"{named}: it is a FIFO, not a regular file" in refusal_in_a_child(path)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_links_are_followed_to_regular_files_only(tmp_path):
    positions = table()
    save_file({"wpe.weight": positions}, tmp_path / "gpt2.safetensors")
    (tmp_path / "linked.safetensors").symlink_to(tmp_path / "gpt2.safetensors")
    np.testing.assert_array_equal(open_model(tmp_path / "linked.safetensors").position_table, positions)
    (tmp_path / "zero.safetensors").symlink_to("/dev/zero")
    with pytest.raises(ModelFileError, match="zero.safetensors: it is a device, not a regular file"):
        open_model(tmp_path / "zero.safetensors")


def test_every_failure_names_the_file(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    for path, problem in ((tmp_path / "absent.gguf", "no such file"), (tmp_path / "notes.txt", "not a model file"),
                          (tmp_path, "no model.safetensors")):
        with pytest.raises(ModelFileError, match=problem) as caught:
            open_model(path)
        assert str(caught.value).startswith(str(path))
        assert isinstance(caught.value, ValueError)


def test_importing_the_model_loads_no_file_reader():
    code = ("import sys, posenc_gui.model;"
            "loaded = [k for k in ('safetensors', 'gguf', 'ml_dtypes', 'zipfile') if k in sys.modules];"
            "print(loaded); sys.exit(1 if loaded else 0)")
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert model_files.open_model is open_model

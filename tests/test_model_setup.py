"""A model file shown by the app's schemes (model layer): learned_file's table, the rope setup of a config,
the path and name parameter kinds, and the analyses that stop at a table's last row."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from safetensors.numpy import save_file
from test_model_files import LLAMA, bert_folder, marker_pickle, rope_gguf, table, write_json

from posenc_gui.model import EncodingParams, ModelFileError, ParamSpec, encode, rope_frequencies
from posenc_gui.model.files import model_tables
from posenc_gui.model.analyses.analysis import offset_profiles, offset_spread
from posenc_gui.model.analyses.linear_relation import linear_relation
from posenc_gui.model.files.model_setup import model_setups, one_line, rope_options
from posenc_gui.model.panels.panel_data import linear_relation_data, relative_data
from posenc_gui.model.schemes import last_position
from posenc_gui.model.schemes.rope import hf_config
from posenc_gui.model.analyses.scorecard import score_scheme, scorecard
from posenc_gui.model.core.specs import MAX_NAME_CHARS, MAX_PATH_CHARS


def gpt2_file(path, positions: np.ndarray | None = None) -> np.ndarray:
    """A GPT-2-shaped checkpoint: ``wpe`` (positions × width) and a token table of the same width."""
    positions = table() if positions is None else positions
    save_file({"wpe.weight": positions, "wte.weight": table(100, positions.shape[1])}, path)
    return positions


def folder(path, config: dict, tensors: dict) -> str:
    path.mkdir()
    write_json(path / "config.json", config)
    save_file(tensors, path / "model.safetensors")
    return str(path)


def shown(path, **values) -> EncodingParams:
    """learned_file of the file at ``path``: its sizes unless ``values`` give them."""
    return EncodingParams().replaced(fit_sizes=True, scheme="learned_file", model_path=str(path), **values)


# ---------------------------------------------------------------- learned_file
def test_the_table_is_the_files_rows_and_a_position_between_rows_has_the_row_below(tmp_path):
    positions = gpt2_file(tmp_path / "gpt2.safetensors")
    params = shown(tmp_path / "gpt2.safetensors", tensor="wpe.weight", seq_len=64, d_model=48)
    np.testing.assert_array_equal(params.encode(), positions.astype(np.float64))  # float32 → float64 is exact
    rows = encode("learned_file", [5.0, 5.7, 63.0], 48, model_path=str(tmp_path / "gpt2.safetensors"),
                  tensor="", dims=[0, 47])
    np.testing.assert_array_equal(rows, positions[[5, 5, 63]][:, [0, 47]])  # "": the detected table
    assert params.title() == "learned_file: 64 positions × d_model 48, model gpt2, tensor wpe.weight"
    assert params.slug() == "learned_file_n64_d48_mgpt2_twpe.weight"
    assert not params.info.exact and params.info.sizes(**params.options) == (64, 48)


def test_n_and_d_model_are_the_tables_and_a_position_past_it_names_seq_len(tmp_path):
    gpt2_file(tmp_path / "gpt2.safetensors")
    params = shown(tmp_path / "gpt2.safetensors", seq_len=64, d_model=48)
    with pytest.raises(ValueError, match="seq_len must be at most 64: the table has 64 positions, got 65"):
        params.replaced(seq_len=65)
    with pytest.raises(ValueError, match="d_model must be 48, the width of the table, got 32"):
        params.replaced(d_model=32)
    with pytest.raises(ValueError, match=r"seq_len: position 64 is past the last row of wpe\.weight of gpt2, "
                                         r"which has 64 positions \(0 … 63\); N may be at most 64"):
        params.encode(np.array([64.0]))
    # Choosing the table in the app brings its sizes: the width, and N capped at its length.
    fitted = EncodingParams(seq_len=1000, d_model=512).replaced(
        fit_sizes=True, scheme="learned_file", model_path=str(tmp_path / "gpt2.safetensors"))
    assert (fitted.seq_len, fitted.d_model) == (64, 48)
    other = fitted.replaced(fit_sizes=True, tensor="wte.weight")  # 100 rows: N stays
    assert (other.seq_len, other.d_model, other.info.sizes(**other.options)) == (64, 48, (100, 48))


def test_opts_offset_rows_are_not_positions_and_another_tensor_is_read_as_stored(tmp_path):
    stored = table(66, 48)
    save_file({"model.decoder.embed_positions.weight": stored, "lm_head.weight": table(30, 48)},
              tmp_path / "opt.safetensors")
    opened = model_setups(tmp_path / "opt.safetensors")
    (setup,) = opened.setups
    assert (setup.params.seq_len, setup.params.d_model) == (64, 48)  # 66 rows − OPT's 2
    np.testing.assert_array_equal(setup.params.encode(), stored[2:])
    assert any("OPT" in note for note in opened.notes(setup))
    lm_head = opened.setup(tensor="lm_head.weight").params
    np.testing.assert_array_equal(lm_head.encode(), model_tables.cached_model(tmp_path / "opt.safetensors")
                                  .read_tensor("lm_head.weight"))


def test_a_missing_file_a_missing_tensor_and_no_file_name_the_option(tmp_path):
    gpt2_file(tmp_path / "gpt2.safetensors")
    with pytest.raises(ValueError, match=r"^model_path: .*none\.safetensors: no such file or folder"):
        shown(tmp_path / "none.safetensors")
    with pytest.raises(ValueError, match=r"^tensor: .*it has no tensor named 'nope'"):
        shown(tmp_path / "gpt2.safetensors", tensor="nope")
    with pytest.raises(ValueError, match=r"^model_path: no model file is open; open one with File ▸ Open model…"):
        EncodingParams(scheme="learned_file").validate()


def test_a_file_rewritten_in_place_is_read_again(tmp_path):
    path = tmp_path / "gpt2.safetensors"
    gpt2_file(path, np.zeros((64, 48), np.float32))
    before = shown(path).encode()
    stat = os.stat(path)
    gpt2_file(path, np.ones((64, 48), np.float32))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new version, whatever the clock's grain
    assert before.max() == 0.0 and shown(path).encode().min() == 1.0


# ---------------------------------------------------------------- the path and name kinds
def test_path_and_name_parameters_are_bounded_text_without_nul():
    path = ParamSpec("model_path", "path", "", "model file", "A file.")
    name = ParamSpec("tensor", "name", "", "tensor", "A tensor.", choices_of=lambda options: ())
    assert path.check("/a b/c,d ") == "/a b/c,d " and path.parse(" x ") == " x "  # spaces and commas are kept
    assert name.check("") == "" and name.check("x" * MAX_NAME_CHARS) == "x" * MAX_NAME_CHARS
    for spec, value, problem in ((path, "a\0b", "NUL"), (path, "x" * (MAX_PATH_CHARS + 1), "4,097 characters"),
                                 (name, "x" * (MAX_NAME_CHARS + 1), "1,025 characters"), (path, 3, "got 3"),
                                 (name, None, "got None")):
        with pytest.raises(ValueError, match=f"^{spec.name} must be text of at most .*{problem}"):
            spec.check(value)
    with pytest.raises(ValueError, match="needs choices_of"):
        ParamSpec("tensor", "name", "", "tensor", "A tensor.")


def test_the_tensor_choices_are_the_files_tables_the_detected_one_marked(tmp_path):
    gpt2_file(tmp_path / "gpt2.safetensors")
    params = shown(tmp_path / "gpt2.safetensors")
    assert params.info.spec("tensor").choices_of(params.options) == (
        ("wpe.weight", "wpe.weight (64 × 48 F32) — the position table"),
        ("wte.weight", "wte.weight (100 × 48 F32)"))
    assert params.info.spec("tensor").choices_of({"model_path": str(tmp_path / "none")}) == ()


# ---------------------------------------------------------------- setups of a model
def test_a_bert_folder_is_shown_as_its_position_table(tmp_path):
    positions = table(64, 48)
    bert_folder(tmp_path / "tiny-bert", {"model_type": "bert", "hidden_size": 48, "max_position_embeddings": 64},
                positions)
    opened = model_setups(tmp_path / "tiny-bert")
    (setup,) = opened.setups
    assert setup.params == EncodingParams.validated(
        scheme="learned_file", model_path=str(tmp_path / "tiny-bert"), tensor="embeddings.position_embeddings.weight",
        seq_len=64, d_model=48)
    assert opened.summary(setup) == ("Opened tiny-bert (hf-folder) as learned table "
                                     "embeddings.position_embeddings.weight (64 × 48).")


LLAMA3 = {"rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}


def test_a_llama3_config_becomes_the_rope_scheme_with_its_options(tmp_path):
    config = LLAMA | LLAMA3  # hidden 512 / 8 heads: head_dim 64
    opened = model_setups(folder(tmp_path / "llama", config, {"x": table(4, 4)}))
    (setup,) = opened.setups
    params = setup.params
    assert (params.scheme, params.seq_len, params.d_model) == ("rope", 131072, 64)
    assert {name: params.options[name] for name in (
        "rope_theta", "rope_type", "factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings", "pairing", "partial_rotary_factor")} == {
        "rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "pairing": "halves",
        "partial_rotary_factor": 1.0}
    ours, theirs = rope_frequencies(hf_config(64, **params.options)), rope_frequencies(opened.model.rope_config)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1] == 1.0
    # Pair 0 turns once per 2π positions, far under L₀/high_freq_factor = 2,048: kept, θ_0 = 1. Pair 31's
    # wavelength 2π·500000^(62/64) ≈ 2.1e6 is past L₀/low_freq_factor = 8,192: divided by the factor 8.
    assert ours[0][0] == 1.0
    assert ours[0][31] == pytest.approx(500000.0 ** (-62 / 64) / 8, rel=4e-16)
    assert setup.notes == () and setup.label == "RoPE (θ 500000, llama3 ×8, head 64, halves)"


PHI3_FACTORS = {"short_factor": [1.0 + i / 64 for i in range(32)], "long_factor": [1.0 + i for i in range(32)]}


@pytest.mark.parametrize(("config", "notes"), [
    ({"rope_scaling": {"type": "linear", "factor": 2.0}}, ()),
    ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}, "max_position_embeddings": 4096}, ()),
    ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "mscale": 1.0,
                          "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "beta_fast": 32,
                          "beta_slow": 1}}, ()),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "mscale_all_dim": 1.0,  # mscale unset: 0.1 ln 4 + 1
                       "original_max_position_embeddings": 32768}}, ()),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 32.0, "truncate": False, "beta_fast": 32.0, "beta_slow": 1.0,
                       "original_max_position_embeddings": 4096}, "rope_theta": 150000.0}, ()),
    ({"rope_scaling": {"type": "longrope", **PHI3_FACTORS}, "original_max_position_embeddings": 4096}, ()),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "attention_factor": 1.5, "original_max_position_embeddings":
                       32768, "sliding": 1}}, ("attention_factor 1.5 is not the rope scheme's 1.13862943611",
                                               "rope_scaling keys not used (Hugging Face does not read them "
                                               "either): sliding")),
])
def test_every_scaling_type_maps_to_options_that_compute_the_configs_frequencies(tmp_path, config, notes):
    opened = model_setups(folder(tmp_path / "llama", LLAMA | config, {"x": table(4, 4)}))
    (setup,) = opened.setups
    params = setup.params
    for seq_len in (params.seq_len, 1000):  # dynamic and longrope depend on the length
        ours = rope_frequencies(hf_config(params.d_model, **params.options), seq_len=seq_len)
        theirs = rope_frequencies(opened.model.rope_config, seq_len=seq_len)
        np.testing.assert_array_equal(ours[0], theirs[0])
        assert ours[1] == theirs[1] or notes
    assert len(setup.notes) == len(notes) and all(any(want in note for note in setup.notes) for want in notes)


def test_what_hugging_face_warns_about_is_computed_as_it_does_and_noted(tmp_path):
    # Phi-3's first configs named LongRoPE "su"; Hugging Face's Phi3Config renames it
    config = LLAMA | {"rope_scaling": {"type": "su", **PHI3_FACTORS}, "original_max_position_embeddings": 4096,
                      "max_position_embeddings": 131072}
    (setup,) = model_setups(folder(tmp_path / "phi3", config, {"x": table(4, 4)})).setups
    assert setup.params.options["rope_type"] == "longrope" and "longrope ×32" in setup.label
    assert any('"su" is LongRoPE\'s legacy name' in note for note in setup.notes)
    # int(64 × 0.3) = 19 rotary channels: ceil(19/2) = 10 frequencies 10000^(−2i/19), as Hugging Face computes
    (setup,) = model_setups(folder(tmp_path / "odd", LLAMA | {"partial_rotary_factor": 0.3},
                                   {"x": table(4, 4)})).setups
    inv_freq, _ = rope_frequencies(hf_config(setup.params.d_model, **setup.params.options))
    np.testing.assert_allclose(inv_freq, [10000.0 ** (-2 * i / 19) for i in range(10)], rtol=1e-14)
    assert [note for note in setup.notes if "is odd" in note] == [note for note in setup.notes if "19" in note]
    assert len([note for note in setup.notes if "is odd" in note]) == 1


def test_a_per_layer_type_rope_section_shows_full_attentions(tmp_path):
    config = LLAMA | {"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0,
                                                             "rope_theta": 1e6},
                                          "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}
    (setup,) = model_setups(folder(tmp_path / "gemma", config, {"x": table(4, 4)})).setups
    assert (setup.params.options["rope_type"], setup.params.options["rope_theta"]) == ("linear", 1e6)
    assert setup.notes == ("rope_parameters has one set-up per layer type: full_attention's is shown "
                           "(sliding_attention not)",)


def test_rope_options_give_the_rotary_channels_under_truncation():
    # 30 / 44 · 44 = 29.999…: int() would rotate 29 channels; the file's share (rotary_dim 30) is nudged up.
    assert int(44 * (30 / 44)) == 29
    options, rope = rope_options({"head_dim": 44, "partial_rotary_factor": math.nextafter(30 / 44, 1.0)},
                                 "interleaved")
    assert rope.rotary_dim == 30 and int(44 * options["partial_rotary_factor"]) == 30


def test_a_gguf_model_with_rope_freqs_says_the_scheme_does_not_apply_them(tmp_path):
    rope_gguf(tmp_path / "model.gguf", "llama")
    (setup,) = model_setups(tmp_path / "model.gguf").setups
    params = setup.params
    assert (params.scheme, params.d_model, params.seq_len) == ("rope", 64, 131072)
    assert (params.options["rope_type"], params.options["factor"], params.options["pairing"]) == (
        "yarn", 4.0, "interleaved")
    assert any("rope_freqs" in note for note in setup.notes)


def test_a_model_with_both_offers_both_and_one_with_neither_names_its_tables(tmp_path):
    both = model_setups(folder(tmp_path / "both", LLAMA | LLAMA3, {"wpe.weight": table(64, 48)}))
    assert [setup.params.scheme for setup in both.setups] == ["learned_file", "rope"]
    assert both.setup("rope") is both.setups[1]
    assert ("It also has RoPE (θ 500000, llama3 ×8, head 64, halves): open it again to choose it (--scheme rope "
            "on the command line).") in both.summary(both.setups[0])
    neither = model_setups(folder(tmp_path / "neither", {"model_type": "mystery"},
                                  {"a.weight": table(8, 4), "b": table(3, 4)[0], "c.weight": table(5, 6)}))
    with pytest.raises(ValueError, match=r"^neither has no learned position table and no RoPE set-up; choose "
                                         r"one of its 2-D tensors as the table \(--tensor NAME\): a\.weight "
                                         r"\(8 × 4 F32\), c\.weight \(5 × 6 F32\)$"):
        neither.setup()
    chosen = neither.setup(tensor="c.weight").params
    assert (chosen.scheme, chosen.options["tensor"], chosen.seq_len, chosen.d_model) == (
        "learned_file", "c.weight", 5, 6)
    with pytest.raises(ValueError, match=r"tensor: .*tensor b of shape \(4,\) and type F32 is not a table"):
        neither.setup(tensor="b")


def test_a_table_wider_than_d_model_allows_is_named_not_shown(tmp_path):
    save_file({"wpe.weight": np.zeros((4, 8200), np.float32)}, tmp_path / "wide.safetensors")
    opened = model_setups(tmp_path / "wide.safetensors")
    assert opened.setups == () and "d_model must be in 2…8192, got 8200" in opened.problems[0]


def test_a_table_holding_nan_is_named_not_shown(tmp_path):
    values = table(64, 48)
    values[3, 5] = np.nan
    gpt2_file(tmp_path / "gpt2.safetensors", values)
    opened = model_setups(tmp_path / "gpt2.safetensors")
    assert [setup.params.options["tensor"] for setup in opened.setups] == []
    assert "tensor wpe.weight holds 1 NaN and 0 infinite values (the first at row 3, column 5)" in opened.notes()
    assert "wpe.weight holds NaN or infinite values" in opened.problems[0]
    with pytest.raises(ValueError, match="no learned position table and no RoPE set-up"):
        opened.setup()


def test_a_pickle_is_refused_on_one_line_with_its_conversion_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "model.pt").write_bytes(marker_pickle(marker))
    with pytest.raises(ModelFileError) as caught:
        model_setups(tmp_path / "model.pt")
    line = one_line(caught.value)
    assert "\n" not in line and not marker.exists()
    assert line.endswith("and open that: import torch, safetensors.torch; safetensors.torch.save_file({k: "
                         "v.contiguous() for k, v in torch.load(" + repr(str(tmp_path / "model.pt")) +
                         ", weights_only=True).items()}, 'model.safetensors')")


# ---------------------------------------------------------------- analyses stop at the last row
def norm_table(rows: int) -> np.ndarray:
    """Row p is (p, 0, 0, 0): ‖PE(p)‖ = p."""
    values = np.zeros((rows, 4), np.float32)
    values[:, 0] = np.arange(rows)
    return values


def test_the_scorecard_measures_a_table_up_to_its_last_row(tmp_path):
    gpt2_file(tmp_path / "norms.safetensors", norm_table(64))
    score = score_scheme(shown(tmp_path / "norms.safetensors", seq_len=64, d_model=4))
    # 100·N is past the 64 rows: the lengths are ⌊N/100⌋ → 1, ⌊N/10⌋ = 6 and N = 64, whose largest
    # norms are those of rows 0, 5 and 63.
    assert score.trained_lengths == (1, 6, 64) and score.trained_max_norm == (0.0, 5.0, 63.0)
    assert score.max_norm[0] == 63.0 and math.isnan(score.max_norm[1]) and math.isnan(score.max_norm[2])
    assert (score.bounded_past, score.generalizes, score.table_rows) == (False, False, 64)
    assert any("rows for positions 0…63 only" in note for note in score.notes)
    # N = 6: rows 0…5 and 0…59 exist (norms up to 5 and 59), 0…599 do not; unseen 6…59 reach 59 = 11.8 × 5.
    small = score_scheme(shown(tmp_path / "norms.safetensors", seq_len=6, d_model=4))
    assert small.max_norm[:2] == (5.0, 59.0) and math.isnan(small.max_norm[2])
    assert small.unseen_ratio == 59.0 / 5.0 and not small.generalizes
    card = scorecard(EncodingParams.validated(scheme="sinusoidal", seq_len=64, d_model=4),
                     options={"model_path": str(tmp_path / "norms.safetensors")})
    assert card.setup("learned_file").options["model_path"] == str(tmp_path / "norms.safetensors")


def test_offsets_and_t_k_stop_at_the_last_row(tmp_path):
    gpt2_file(tmp_path / "norms.safetensors", norm_table(64))
    params = shown(tmp_path / "norms.safetensors", seq_len=64, d_model=4)
    kwargs = params.scheme_kwargs()
    assert last_position("learned_file", **kwargs) == 63.0 and last_position("sinusoidal") == 1e12
    spread = offset_spread("learned_file", np.arange(64.0), 4, [0, 10, 70], **kwargs)
    # PE(p)·PE(p + k) = p(p + k) over the p with p + k ≤ 63: k = 10 has p = 0 … 53, k = 70 none.
    assert spread.count.tolist() == [64, 54, 0]
    assert (spread.minimum[1], spread.maximum[1]) == (0.0, 53.0 * 63.0) and math.isnan(spread.minimum[2])
    profile = offset_profiles("learned_file", [60.0], [0, 3, 4], 4, **kwargs)
    assert profile[0, :2].tolist() == [3600.0, 3780.0] and math.isnan(profile[0, 2])
    relation = linear_relation("learned_file", np.arange(64.0), 4, 1, **kwargs)
    assert relation.positions.max() == 62.0  # p + 1 ≤ 63
    assert linear_relation_data(params, 1).relation.positions.max() == 62.0
    assert relative_data(params, 63, 2).spread.count[-1] == 1  # offset 63 only from p = 0

"""A RoPE scaling type added in one module (``tests/rope_type_progressive.py``) shows in every place a type does.

Registered, the type is a ``rope_type`` choice with its own parameter (a
widget shown only for it, a CLI flag), Hugging Face configs and GGUF files
naming it are read, and the Frequencies (its bands), Precision (its float32
path) and Context extension (a plot of its own) panels compute it; nothing
else in the package names it.
"""

import json
import math

import numpy as np
import pytest

from posenc_gui.cli import export as export_cli
from posenc_gui.cli.parameters import params_from_args
from posenc_gui.cli.window import build_parser
from posenc_gui.cli.parameters import UsageError
from posenc_gui.model import EncodingParams, rope_config, rope_frequencies
from posenc_gui.model.files.gguf_file import GGUFHeader
from posenc_gui.model.files.gguf_file import rope_config as gguf_rope_config
from posenc_gui.model.files.model_setup import rope_options
from posenc_gui.model.rope import types as rope_types
from posenc_gui.model.rope.context import context_extension_data, context_methods
from posenc_gui.model.rope.data import rope_frequency_data
from posenc_gui.model.schemes import SCHEMES
from posenc_gui.model.schemes.rope import hf_config

from rope_type_progressive import ROPE_TYPE

D_MODEL, FACTOR, POWER, L0 = 16, 4.0, 2.0, 512
OPTIONS = {"rope_type": "progressive", "factor": FACTOR, "progressive_power": POWER,
           "original_max_position_embeddings": L0}


@pytest.fixture
def progressive():
    rope_types.register(ROPE_TYPE)
    yield ROPE_TYPE
    rope_types.unregister("progressive")


def _expected_inv_freq(theta: float = 10000.0) -> np.ndarray:
    """θ_i = theta^(−2i/d) / factor^((i / (pairs − 1))^power), from the type's definition."""
    pairs = D_MODEL // 2
    i = np.arange(pairs)
    return theta ** (-2.0 * i / D_MODEL) / FACTOR ** ((i / (pairs - 1)) ** POWER)


def _export(tmp_path, panel: str, *flags: str) -> dict:
    out = tmp_path / f"{panel}.json"
    args = [panel, "-o", str(out), "--scheme", "rope", "--d-model", str(D_MODEL), "--seq-len", "2048",
            "--rope-type", "progressive", "--factor", str(FACTOR), "--progressive-power", str(POWER),
            "--original-max-position-embeddings", str(L0), *flags]
    assert export_cli.main(args) == export_cli.EXIT_OK
    return json.loads(out.read_text())


def test_it_is_a_scaling_choice_whose_own_parameter_shows_only_with_it(progressive):
    rope = SCHEMES["rope"]
    assert "progressive" in dict(rope.spec("rope_type").choices)
    assert "progressive (test)" in rope.spec("rope_type").help
    assert rope.spec("progressive_power").applies({"rope_type": "progressive"})
    assert not rope.spec("progressive_power").applies({"rope_type": "yarn"})
    assert rope.spec("factor").applies({"rope_type": "progressive"})
    assert rope.spec("original_max_position_embeddings").applies({"rope_type": "progressive"})
    assert not rope.spec("sequence_length").applies({"rope_type": "progressive"})  # it does not use the length
    rope_types.unregister("progressive")
    try:
        assert "progressive" not in dict(SCHEMES["rope"].spec("rope_type").choices)
        assert SCHEMES["rope"].spec("progressive_power") is None
    finally:
        rope_types.register(ROPE_TYPE)


def test_the_command_line_takes_it_and_its_parameter(progressive):
    parser = build_parser()
    assert "--progressive-power" in parser.format_help()
    args = parser.parse_args(["--scheme", "rope", "--rope-type", "progressive", "--progressive-power", "3"])
    params = params_from_args(args)
    assert params.options["rope_type"] == "progressive" and params.options["progressive_power"] == 3.0
    with pytest.raises(UsageError, match="progressive_power must be in 0.1…10"):
        parser.parse_args(["--scheme", "rope", "--rope-type", "progressive", "--progressive-power", "30"])


def test_the_frequencies_panel_shows_its_frequencies_and_bands(progressive, tmp_path):
    params = EncodingParams.validated(scheme="rope", seq_len=2048, d_model=D_MODEL, **OPTIONS)
    data = rope_frequency_data(params)
    np.testing.assert_allclose(data.inv_freq, _expected_inv_freq(), rtol=1e-13)
    assert data.scaled and data.trained_context == L0 and data.extended_context == int(L0 * FACTOR)
    assert data.band_ranges == [("kept", 0, 0), ("partly divided", 1, 6), ("divided", 7, 7)]
    assert "partly divided" in json.dumps(_export(tmp_path, "frequencies")["meta"]["bands"])


def test_the_precision_panel_replays_its_float32_path(progressive, tmp_path):
    exported = _export(tmp_path, "precision")
    float32 = np.array(exported["arrays"]["inv_freq"]["data"], dtype=np.float64)
    reference = np.array(exported["arrays"]["inv_freq_reference"]["data"], dtype=np.float64)
    np.testing.assert_allclose(reference, _expected_inv_freq(), rtol=1e-13)
    # a float32 pow, a float32 power of the factor and two float32 divisions: a few float32 ULPs
    np.testing.assert_allclose(float32, reference, rtol=8 * np.finfo(np.float32).eps)


def test_the_context_extension_panel_compares_it(progressive, tmp_path, qtbot, state, compute):
    assert "progressive" in context_methods()
    params = EncodingParams.validated(scheme="rope", seq_len=2048, d_model=D_MODEL, **OPTIONS)
    method = context_extension_data(params).method("progressive")
    assert method.available
    np.testing.assert_allclose(method.inv_freq, _expected_inv_freq(), rtol=1e-13)
    assert "progressive" in _export(tmp_path, "context")["meta"]["attention_factors"]
    from posenc_gui.views.rope_context import RopeContextPanel

    panel = RopeContextPanel(state, compute)
    qtbot.addWidget(panel)
    assert "progressive" in panel.plots


def test_configs_and_gguf_files_naming_it_are_read(progressive):
    config = {"head_dim": D_MODEL, "rope_theta": 10000.0,
              "rope_scaling": {"rope_type": "progressive", "factor": FACTOR, "progressive_power": POWER,
                               "original_max_position_embeddings": L0}}
    rope = rope_config(config)
    assert rope.original_max_position_embeddings == L0 and rope.scaling["progressive_power"] == POWER
    options, _ = rope_options(config, "halves")
    assert {key: options[key] for key in OPTIONS} == OPTIONS
    inv_freq, attention_factor = rope_frequencies(hf_config(D_MODEL, **EncodingParams.validated(
        scheme="rope", d_model=D_MODEL, **options).options))
    np.testing.assert_allclose(inv_freq, _expected_inv_freq(), rtol=1e-13)
    assert attention_factor == 1.0
    metadata = {"general.architecture": "llama", "llama.rope.freq_base": 10000.0, "llama.embedding_length": 64,
                "llama.attention.head_count": 4, "llama.rope.dimension_count": D_MODEL, "llama.context_length": 2048,
                "llama.rope.scaling.type": "progressive", "llama.rope.scaling.factor": FACTOR,
                "llama.rope.scaling.original_context_length": L0}
    read, notes = gguf_rope_config(GGUFHeader(metadata, ()), lambda name: np.empty(0))
    assert read["rope_scaling"] == {"rope_type": "progressive", "factor": FACTOR,
                                    "original_max_position_embeddings": L0}
    assert not any("progressive" in note for note in notes)
    assert math.isclose(rope_config(read).scaling["factor"], FACTOR)

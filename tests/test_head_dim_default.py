"""RoPE's and xPos's d_model is an attention head's dimension: 128 unless the user sets it (window, CLI, sessions)."""

from __future__ import annotations

import json

import pytest

from posenc_gui.model import EncodingParams, default_d_model, presets

ROTATIONS = ("rope", "xpos")


def test_every_rotation_preset_has_a_head_dimension_the_default_is_in_the_range_of():
    head_dims = [preset.d_model for info, preset in presets() if info.family == "rotation"]
    assert head_dims and min(head_dims) <= default_d_model("rope") <= max(head_dims)


@pytest.mark.parametrize("key", ROTATIONS)
def test_a_rotation_chosen_without_a_d_model_takes_the_head_dimension_128_and_gives_it_back(key):
    rotation = EncodingParams().replaced(scheme=key)
    assert rotation.d_model == 128
    assert rotation.replaced(scheme="sinusoidal").d_model == 512
    assert EncodingParams.validated(scheme=key).d_model == 128
    assert EncodingParams.validated(scheme="sinusoidal").d_model == 512


@pytest.mark.parametrize("key", ROTATIONS)
def test_a_d_model_the_user_set_is_kept_across_schemes(key):
    assert EncodingParams().replaced(scheme=key, d_model=512).d_model == 512
    assert EncodingParams(d_model=256).replaced(scheme=key).d_model == 256
    assert EncodingParams.validated(scheme=key, d_model=64).d_model == 64
    own = EncodingParams().replaced(scheme=key).replaced(d_model=96)
    assert own.replaced(scheme="sinusoidal").d_model == 96
    assert EncodingParams().replaced(scheme="rope").replaced(scheme="xpos").d_model == 128


def test_the_command_lines_give_rope_128_unless_d_model_is_given():
    from posenc_gui.cli.parameters import params_from_args
    from posenc_gui.cli.window import build_parser, prepare_launch
    from posenc_gui.cli.plan import plan
    from posenc_gui.cli.plan import build_parser as export_parser
    from posenc_gui.views.registry import panel_classes

    assert params_from_args(build_parser().parse_args(["--scheme", "xpos"])).d_model == 128
    assert params_from_args(build_parser().parse_args(["--scheme", "rope", "--d-model", "256"])).d_model == 256
    launch = prepare_launch(["--scheme", "rope"])
    assert EncodingParams().replaced(fit_sizes=True, **launch.overrides).d_model == 128
    classes = panel_classes()
    planned = plan(export_parser(classes).parse_args(["heatmap", "--scheme", "rope,sinusoidal", "-o", "out/"]),
                   classes)
    assert sorted(params.d_model for params in {job.params for job in planned.jobs}) == [128, 512]


def test_the_window_gives_rope_128_when_chosen_from_the_parameters_and_from_a_session(make_window, tmp_path):
    from posenc_gui.session import read_session

    window = make_window(restore=False)
    assert window.state.update(scheme="rope") is None
    assert window.state.params.d_model == 128
    window.state.update(scheme="alibi")
    assert window.state.params.d_model == 512
    window.state.update(d_model=64)
    window.state.update(scheme="xpos")
    assert window.state.params.d_model == 64
    path = tmp_path / "rope.json"
    path.write_text(json.dumps({"format": "posenc-gui session", "version": 2,
                                "params": {"scheme": "rope", "seq_len": 256}}))
    assert read_session(str(path)).params.d_model == 128
    assert window.open_session(str(path)) is None
    assert window.state.params.d_model == 128

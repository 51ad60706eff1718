"""A rotation scheme and a bias scheme, each declared in one module, work in every place a scheme of their family does.

``tests/scheme_prope.py`` (p-RoPE: RoPE whose slowest pairs do not turn)
declares its :class:`~posenc_gui.model.schemes.Rotation`;
``tests/scheme_kerple.py`` (KERPLE's logarithmic bias) its bias. Registered,
every panel either exports them or says why it does not apply, the command
line takes their flags, and the positional logits, the permutation demo,
the Attention bias panel and the Scorecard compute them from those hooks
alone: nothing else in the package names them.
"""

import json

import numpy as np
import pytest

from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams, register, unregister
from posenc_gui.model.attention import head_rotation, permutation_demo
from posenc_gui.model.bias.data import attention_bias_data
from posenc_gui.model.bias.xpos import xpos_zeta
from posenc_gui.model.attention.logits import positional_logits
from posenc_gui.model.core.sampling import AxisSample
from posenc_gui.model.analyses.scorecard import scorecard_setups
from posenc_gui.views.registry import panel_classes

import scheme_kerple
import scheme_prope

D_MODEL, SEQ_LEN = 16, 64
#: The panels each family's scheme must be computed in (the others may say why they do not apply).
EXPECTED = {
    "prope": {"heatmap", "waveforms", "permutation", "logits", "scorecard"},
    "kerple": {"permutation", "logits", "bias"},
}


@pytest.fixture
def schemes():
    register(scheme_prope.SCHEME)
    register(scheme_kerple.SCHEME)
    yield
    unregister("prope")
    unregister("kerple")


@pytest.mark.parametrize("key", ["prope", "kerple"])
def test_every_panel_exports_it_or_says_why_it_does_not_apply(schemes, key, tmp_path, capsys):
    exported = set()
    for cls in panel_classes():
        if cls.panel_id in ("decoder", "walkthrough"):  # a model file's decoder; a tour of fixed set-ups
            continue
        out = tmp_path / f"{cls.panel_id}.json"
        code = export_cli.main([cls.panel_id, "-o", str(out), "--scheme", key, "--seq-len", str(SEQ_LEN),
                                "--d-model", str(D_MODEL)])
        error = capsys.readouterr().err
        if code == export_cli.EXIT_OK:
            exported.add(cls.panel_id)
            assert f'"{key}"' in json.dumps(json.loads(out.read_text()))  # a figure of this scheme
        else:
            assert code == export_cli.EXIT_USAGE and "does not apply here" in error, (cls.panel_id, error)
    assert EXPECTED[key] <= exported
    assert not {"frequencies", "context", "precision"} & exported  # no Hugging Face RoPE configuration


def test_the_command_line_takes_their_flags(schemes):
    from posenc_gui.cli.parameters import params_from_args
    from posenc_gui.cli.window import build_parser

    parser = build_parser()
    args = parser.parse_args(["--scheme", "prope", "--p-keep", "0.5"])
    assert params_from_args(args).options["p_keep"] == 0.5
    args = parser.parse_args(["--scheme", "kerple", "--kerple-r1", "3"])
    assert params_from_args(args).options["kerple_r1"] == 3.0


def test_the_positional_logits_of_the_rotation_come_from_its_frequencies(schemes):
    # q = k = 1, interleaved pairs, no attention factor: 2·Σ_i cos(r·θ_i); the pairs that do not turn add 2 each
    theta = 10000.0 ** (-np.arange(0, D_MODEL, 2) / D_MODEL)
    theta[6:] = 0.0  # round(0.75 · 8) = 6 pairs turn
    offsets = np.arange(0.0, 40.0)
    logits = positional_logits("prope", offsets, [0.0], d_model=D_MODEL, seq_len=SEQ_LEN)[:, 0]
    np.testing.assert_allclose(logits, 2.0 * np.cos(np.multiply.outer(offsets, theta)).sum(axis=1), atol=1e-12)


def test_the_permutation_demo_rotates_with_its_rotation_and_adds_its_bias(schemes):
    rotation = head_rotation(5, 8, "prope", {"p_keep": 0.5})
    np.testing.assert_allclose(rotation.inv_freq, [1.0, 10000.0 ** -0.25, 0.0, 0.0], rtol=1e-15)
    assert rotation.pairing == "interleaved"
    demo = permutation_demo(d_model=8, scheme="prope", scheme_kwargs={"p_keep": 0.5})
    assert demo.rotates and demo.with_pe.trace_a.rotation is not None
    demo = permutation_demo(d_model=8, scheme="kerple", scheme_kwargs={"kerple_r1": 1.0, "kerple_r2": 2.0})
    assert demo.biased
    n = len(demo.with_pe.trace_a.tokens)
    bias = demo.with_pe.trace_a.bias
    distance = np.subtract.outer(np.arange(n), np.arange(n)).astype(float)
    lower = distance >= 0
    np.testing.assert_allclose(bias[lower], -np.log1p(2.0 * distance[lower]), rtol=1e-15)
    assert np.all(np.isneginf(bias[~lower]))


def test_the_attention_bias_panel_shows_the_bias_without_slopes_or_buckets(schemes):
    params = EncodingParams.validated(scheme="kerple", seq_len=8, d_model=D_MODEL, kerple_r1=0.5, kerple_r2=1.0)
    data = attention_bias_data(params, AxisSample(0, 1, 8), AxisSample(0, 1, 8))
    assert data.slopes is None and data.buckets is None and data.table is None
    assert data.masked == 28  # the keys after their query: 8·7/2
    assert data.matrix[5, 2] == pytest.approx(-0.5 * np.log(4.0), rel=1e-15)


def test_the_scorecard_scores_the_rotation_as_a_table_of_angles(schemes):
    params = EncodingParams.validated(scheme="sinusoidal", seq_len=32, d_model=8)
    setups = {setup.scheme for setup in scorecard_setups(params)}
    assert "prope" in setups and "kerple" not in setups


def test_the_demo_scales_xpos_queries_and_keys_so_the_logit_decays_with_the_distance():
    # one pair (d_k 2): θ_0 = 1, ζ_0 = (0 + 0.4)/1.4; the xPos logit is RoPE's times ζ_0^((m − n)/scale_base)
    scale_base = 4.0
    xpos = head_rotation(6, 2, "xpos", {"scale_base": scale_base})
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    angles = np.arange(6.0)
    plain = np.empty((6, 6))
    for m in range(6):
        for n in range(6):
            turn = angles[n] - angles[m]  # q·R((n − m)θ)·k for the interleaved pair
            plain[m, n] = (q[m, 0] * (np.cos(turn) * k[n, 0] - np.sin(turn) * k[n, 1])
                           + q[m, 1] * (np.sin(turn) * k[n, 0] + np.cos(turn) * k[n, 1])) / np.sqrt(2.0)
    zeta = xpos_zeta(2, 0.4)[0]
    decay = zeta ** (np.subtract.outer(angles, angles) / scale_base)
    np.testing.assert_allclose(xpos.logits(q, k), plain * decay, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(xpos.logits(q, k, shift=1000.0), xpos.logits(q, k), rtol=1e-9)

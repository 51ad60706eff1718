"""Model layer: scheme values against their formulas, hand-computed cases and properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers_imports import assert_loads_none_of
from posenc_gui.model import SCHEMES, EncodingParams, encode, find_preset, formula_term, limits, presets, wavelengths
from tolerances import angle_atol, assert_close

POSITIONS = [0, 1, 2, 17, 127, 1000.5]


def paper_formula(pos, d, base=10000.0, exponent=lambda i, d: 2 * i / d, trig=(math.sin, math.cos)):
    """The paper's formula written as a loop over j, independent of the model code: (values, angles).

    ``exponent`` and ``trig`` let a test write the formula wrong on purpose.
    """
    values, angles = [], []
    for j in range(d):
        i = j // 2
        angle = pos / base ** exponent(i, d)
        values.append(trig[j % 2](angle))
        angles.append(angle)
    return values, angles


def paper_formula_rows(positions, d, base=10000.0, **wrong):
    """:func:`paper_formula` for each position: (values, angles), each of shape (len(positions), d)."""
    rows = [paper_formula(p, d, base, **wrong) for p in positions]
    return np.array([values for values, _ in rows]), np.array([angles for _, angles in rows])


@pytest.mark.parametrize("d_model", [2, 7, 16, 512])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_sinusoidal_interleaved_matches_the_paper_formula(d_model, base):
    expected, angles = paper_formula_rows(POSITIONS, d_model, base)
    assert_close(encode("sinusoidal", POSITIONS, d_model, base=base), expected, angle_atol(angles))


@pytest.mark.parametrize(
    "mistake, wrong",
    [
        # i stepped by 2 (i = 0, 2, 4, …) in base^(2i/d): the exponent doubles, the divisor is squared
        ("exponent of the dimension, not the pair", {"exponent": lambda i, d: 4 * i / d}),
        ("exponent without the 2", {"exponent": lambda i, d: i / d}),
        ("cos in even dimensions, sin in odd", {"trig": (math.cos, math.sin)}),
    ],
)
@pytest.mark.parametrize("d_model", [16, 512])
def test_the_tolerance_catches_a_wrong_formula(mistake, wrong, d_model):
    # The tolerance allows a few ULP of each angle, not a relative change of it.
    got = encode("sinusoidal", POSITIONS, d_model)
    wrong_values, angles = paper_formula_rows(POSITIONS, d_model, **wrong)
    with pytest.raises(AssertionError, match="differ by more than the tolerance"):
        assert_close(got, wrong_values, angle_atol(angles), mistake)


@pytest.mark.parametrize("d_model", [16, 512])
def test_the_tolerance_catches_the_halves_layout_for_interleaved(d_model):
    expected, angles = paper_formula_rows(POSITIONS, d_model)
    with pytest.raises(AssertionError, match="differ by more than the tolerance"):
        assert_close(encode("sinusoidal", POSITIONS, d_model, layout="halves"), expected, angle_atol(angles))


def test_hand_computed_sinusoidal_d4():
    # d = 4: ω_0 = 1, ω_1 = 10000^(-2/4) = 1/100.
    got = encode("sinusoidal", [1, 50], 4)
    assert_close(got[0], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], angle_atol([1, 1, 0.01, 0.01]))
    assert_close(got[1], [math.sin(50), math.cos(50), math.sin(0.5), math.cos(0.5)], angle_atol([50, 50, 0.5, 0.5]))


@pytest.mark.parametrize("d_model", [2, 5, 8, 9, 64])
def test_halves_layout_is_a_channel_permutation_of_interleaved(d_model):
    positions = np.arange(40.0)
    inter = encode("sinusoidal", positions, d_model)
    halves = encode("sinusoidal", positions, d_model, layout="halves")
    n_sin = (d_model + 1) // 2
    np.testing.assert_array_equal(halves[:, :n_sin], inter[:, 0::2])
    np.testing.assert_array_equal(halves[:, n_sin:], inter[:, 1::2])


def test_odd_d_model_ends_with_an_unpaired_sine():
    pe = encode("sinusoidal", [3.0], 5)
    angle = 3 / 10000 ** (4 / 5)
    assert_close(pe[0, 4], math.sin(angle), angle_atol(angle))
    assert formula_term("sinusoidal", 5, 4).startswith("sin(")


@pytest.mark.parametrize(
    "scheme, params, column, angle",
    [
        ("naive", {}, lambda p, j: p, lambda p, j: p),
        ("normalized", {"length": 5}, lambda p, j: p / 4, lambda p, j: p / 4),
        ("sine", {}, lambda p, j: math.sin(p), lambda p, j: p),
        ("sincos_pair", {}, lambda p, j: (math.sin(p), math.cos(p))[j % 2], lambda p, j: p),
        ("four_vector", {}, lambda p, j: (math.sin(p), math.cos(p), math.sin(p / 2), math.cos(p / 2))[j % 4],
         lambda p, j: p / (1, 1, 2, 2)[j % 4]),
        ("harmonic", {}, lambda p, j: (math.sin if j % 2 == 0 else math.cos)(p / (j // 2 + 1)),
         lambda p, j: p / (j // 2 + 1)),
        ("all_sine", {"base": 100.0}, lambda p, j: math.sin(p / 100 ** (j / 6)), lambda p, j: p / 100 ** (j / 6)),
    ],
)
def test_schemes_of_the_notes_match_their_definitions(scheme, params, column, angle):
    positions = [0.0, 1.0, 2.5, 44.0, 99.0]
    got = encode(scheme, positions, 6, **params)
    expected = [[column(p, j) for j in range(6)] for p in positions]
    angles = [[angle(p, j) for j in range(6)] for p in positions]
    assert_close(got, expected, angle_atol(angles))


def test_sinusoidal_norm_and_relative_dot_product():
    d, positions = 64, np.arange(0.0, 300.0, 7.0)
    pe = encode("sinusoidal", positions, d)
    np.testing.assert_allclose(np.sum(pe**2, axis=1), d / 2, atol=1e-12)
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    for k in (1, 5, 30):
        shifted = encode("sinusoidal", positions + k, d)
        np.testing.assert_allclose(np.sum(pe * shifted, axis=1), np.sum(np.cos(k * omega)), atol=1e-11)


def test_positions_need_not_be_a_range():
    positions = np.array([900.0, 3.0, 0.25, 3.0])
    whole = encode("sinusoidal", positions, 32)
    for row, p in zip(whole, positions):
        np.testing.assert_array_equal(row, encode("sinusoidal", [p], 32)[0])


def test_dims_select_columns_exactly():
    full = encode("sinusoidal", np.arange(20.0), 64, layout="halves")
    dims = np.array([63, 0, 32, 5])
    np.testing.assert_array_equal(encode("sinusoidal", np.arange(20.0), 64, dims=dims, layout="halves"),
                                  full[:, dims])


def test_wavelengths_span_two_pi_to_two_pi_base():
    wl = wavelengths("sinusoidal", 512)
    assert wl[0] == pytest.approx(2 * math.pi)
    assert wl[-1] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert np.all(np.isinf(wavelengths("naive", 8)))


def test_formula_term_names_the_exponent():
    assert formula_term("sinusoidal", 512, 7) == "cos(pos / 10000^(2·3/512))"
    assert formula_term("harmonic", 8, 5) == "cos(pos / 3)"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: encode("sinusoidal", [1], 0), "d_model"),
        (lambda: encode("sinusoidal", [1], limits.MAX_D_MODEL + 1), "d_model"),
        (lambda: encode("sinusoidal", [-1], 8), "positions"),
        (lambda: encode("sinusoidal", [np.nan], 8), "positions"),
        (lambda: encode("sinusoidal", [np.inf], 8), "positions"),
        (lambda: encode("sinusoidal", [[1, 2]], 8), "positions"),
        (lambda: encode("sinusoidal", [1], 8, base=1.0), "base"),
        (lambda: encode("sinusoidal", [1], 8, base=0.5), "base"),
        (lambda: encode("sinusoidal", [1], 8, base=float("nan")), "base"),
        (lambda: encode("sinusoidal", [1], 8, layout="zigzag"), "layout"),
        (lambda: encode("no_such_scheme", [1], 8), "scheme"),
        (lambda: encode("naive", [1], 8, base=3.0), "base"),
        (lambda: encode("sinusoidal", [1], 8, dims=[8]), "dims"),
        (lambda: encode("sinusoidal", np.arange(2**13), 2**13), "encode"),
        (lambda: EncodingParams(seq_len=0).validate(), "seq_len"),
        (lambda: EncodingParams(seq_len=limits.MAX_SEQ_LEN + 1).validate(), "seq_len"),
        (lambda: EncodingParams.validated(colour="red"), "colour"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@settings(max_examples=60, deadline=None)
@given(
    # learned_file's table needs a model file and has its own rows (tests/test_model_setup.py)
    scheme=st.sampled_from(sorted(key for key, info in SCHEMES.items()
                                  if "table" in info.provides and info.sizes is None)),
    positions=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=0, max_size=20),
    d_model=st.integers(2, 48),
)
def test_shape_and_bounds_property(scheme, positions, d_model):
    pe = encode(scheme, positions, d_model)
    assert pe.shape == (len(positions), d_model)
    assert pe.dtype == np.float64
    assert np.all(np.isfinite(pe))
    if scheme not in ("naive", "normalized"):
        assert np.all(np.abs(pe) <= 1.0)


@settings(max_examples=40, deadline=None)
@given(d_model=st.one_of(st.integers(-10, 1), st.integers(limits.MAX_D_MODEL + 1, 10**6)))
def test_out_of_range_d_model_property(d_model):
    with pytest.raises(ValueError, match="d_model"):
        encode("sinusoidal", [0, 1], d_model)


def test_importing_the_model_loads_no_qt():
    assert_loads_none_of("import posenc_gui.model as m; m.encode('sinusoidal', range(4), 8)")


def test_each_preset_has_a_name_of_its_own_that_finds_it():
    names = [preset.name.casefold() for _, preset in presets()]
    assert len(set(names)) == len(names)
    for info, preset in presets():
        assert "(" not in preset.name and preset.label.startswith(preset.name)
        assert find_preset(preset.name.upper()) == (info, preset)
        assert find_preset(f"  {preset.label} ") == (info, preset)
    llama = EncodingParams.from_preset("Llama 3.1")
    assert (llama.scheme, llama.options["rope_theta"], llama.options["rope_type"]) == ("rope", 500000.0, "llama3")
    with pytest.raises(ValueError, match=r"preset must be one of .*'Llama 3\.1'.*; got 'Llama 9'"):
        find_preset("Llama 9")


@pytest.mark.parametrize("key", sorted(SCHEMES))
def test_the_formula_terms_of_several_dimensions_are_each_ones_term(key):
    from posenc_gui.model.schemes import formula_terms

    info = SCHEMES[key]
    preset = next(iter(info.presets), None)
    d_model = 16 if preset is None else preset.d_model
    options = {} if preset is None else dict(preset.options)
    single = [formula_term(key, d_model, dim, **options) for dim in (0, 1, d_model // 2, d_model - 1)]
    assert list(formula_terms(key, d_model, [0, 1, d_model // 2, d_model - 1], **options)) == single

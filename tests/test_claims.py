"""What the summaries, help texts and walkthrough say about wavelengths, norms and offsets holds at odd and small d."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_gui.model import SCHEMES, encode, wavelengths
from posenc_gui.views.relative import RelativePanel
from posenc_gui.views.similarity import SimilarityPanel
from posenc_gui.views.walkthrough import STEPS
from tolerances import angle_atol, sum_atol

BASE = 10000.0
D_MODELS = [2, 3, 4, 7, 512, 513]


def step(title_start: str):
    return next(s for s in STEPS if s.title.startswith(title_start))


@pytest.mark.parametrize("d_model", D_MODELS)
def test_the_longest_wavelength_is_the_one_the_texts_state(d_model):
    # "Wavelengths 2π … 2π·base" held only in the limit of large d: at d = 2 the only pair has 2π.
    longest = float(np.max(wavelengths("sinusoidal", d_model, base=BASE)))
    exponent = (d_model - 2) / d_model if d_model % 2 == 0 else (d_model - 1) / d_model
    assert longest == pytest.approx(2 * math.pi * BASE ** exponent, rel=1e-12)
    assert float(np.min(wavelengths("sinusoidal", d_model, base=BASE))) == pytest.approx(2 * math.pi)
    all_sine = float(np.max(wavelengths("all_sine", d_model, base=BASE)))
    assert all_sine == pytest.approx(2 * math.pi * BASE ** ((d_model - 1) / d_model), rel=1e-12)
    summary = SCHEMES["sinusoidal"].summary
    assert "2π·base^((d−2)/d) (even d; 2π·base^((d−1)/d)" in summary
    assert "2π to 2π·base^((d−1)/d)" in SCHEMES["all_sine"].summary
    assert "2π·10000<sup>(d−2)/d</sup> (even d)" in step("The sinusoidal encoding").text


@pytest.mark.parametrize("d_model", D_MODELS)
def test_the_norm_is_the_one_the_walkthrough_states(d_model):
    positions = np.arange(0.0, 5000.0, 37.0)
    pe = encode("sinusoidal", positions, d_model, base=BASE)
    squared = np.einsum("ij,ij->i", pe, pe)
    if d_model % 2 == 0:
        expected = np.full(positions.size, d_model / 2)
    else:
        last = positions / BASE ** ((d_model - 1) / d_model)
        expected = (d_model - 1) / 2 + np.sin(last) ** 2
        assert np.ptp(squared) > 0  # not d/2 at every position
    np.testing.assert_allclose(squared, expected, rtol=0, atol=float(sum_atol(d_model, d_model)) + 1e-12)
    assert "‖p‖² = d/2 at every position at even d (odd d: (d−1)/2 + the last sine's square)" in \
        step("The sinusoidal encoding").text


@pytest.mark.parametrize("d_model", D_MODELS)
def test_the_dot_product_depends_on_the_offset_only_at_even_d(d_model):
    p, k = np.array([3.0, 400.0, 9000.0]), 5.0
    dots = np.einsum("ij,ij->i", encode("sinusoidal", p, d_model), encode("sinusoidal", p + k, d_model))
    omega = BASE ** (-2 * np.arange(d_model // 2) / d_model)
    offset_only = np.sum(np.cos(k * omega))
    if d_model % 2:
        last = BASE ** (-(d_model - 1) / d_model)
        offset_only = offset_only + np.sin(p * last) * np.sin((p + k) * last)
    np.testing.assert_allclose(dots, offset_only, rtol=0, atol=float(np.max(angle_atol(p + k))) * d_model)
    for text in (RelativePanel.help_text, SimilarityPanel.help_text, step("Relative, not absolute").text):
        assert "even d" in text
    for text in (RelativePanel.help_text, SimilarityPanel.help_text):
        assert "sin(pω)·sin((p+k)ω)" in text


@pytest.mark.parametrize("d_model", [3, 7, 513])
def test_harmonic_has_ceil_half_d_frequencies_and_an_unpaired_last_sine(d_model):
    from posenc_gui.model.schemes import columns

    cols = columns("harmonic", d_model)
    assert np.unique(cols.divisor).size == math.ceil(d_model / 2)
    assert cols.kind[-1] == "sin" and cols.divisor[-1] == math.ceil(d_model / 2)
    assert "k = 1 … ⌈d/2⌉" in SCHEMES["harmonic"].summary
    assert "k = 1 … ⌈d/2⌉" in step("Many frequencies").text

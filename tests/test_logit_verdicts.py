"""Every logit verdict true over the range it names (issue #37, items 1 and 4), against independent brute force.

The truths here are computed without the app's logit code: RoPE's and xPos's q = k = 1 logit from their
formulas (Σ 2 cos(rθ_i), Σ 2 ζ_i^(r/B) cos(rθ_i)), a table's PE(m)·PE(n) from its encoding, a bias from its
scheme's own function, each at every offset or every pair of positions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_gui.model import EncodingParams
from posenc_gui.model.attention.logit_properties import logit_properties
from posenc_gui.model.attention.logit_scan import CosineSum, cosine_sum
from posenc_gui.model.schemes import encode

LN100 = math.log(100.0)


def params(**values) -> EncodingParams:
    return EncodingParams.validated(**values)


def cosine_profile(frequencies: np.ndarray, length: int, weights: np.ndarray | None = None,
                   chunk: int = 2**16) -> np.ndarray:
    """Σ_i w_i cos(r ω_i) for every r = 0 … length − 1, by direct evaluation (w_i = 1 by default)."""
    weights = np.ones(frequencies.size) if weights is None else weights
    out = np.empty(length)
    for start in range(0, length, chunk):
        r = np.arange(start, min(length, start + chunk), dtype=np.float64)
        out[start:start + r.size] = np.cos(np.multiply.outer(r, frequencies)) @ weights
    return out


def decay_from(profile: np.ndarray) -> int | None:
    """The definition: the first r from which every key is ln 100 below distance 0; None when the last is not."""
    kept = np.flatnonzero(profile > profile[0] - LN100)
    return None if kept[-1] == profile.size - 1 else int(kept[-1]) + 1


def rope_frequencies(d: int, base: float) -> np.ndarray:
    return base ** (-np.arange(0, d, 2) / d)


# ------------------------------------------------------------------ item 1: the reproducers


def test_rope_d16_at_a_million_the_profile_returns_above_the_threshold_far_out():
    n, d = 1_048_576, 16
    raw = cosine_profile(rope_frequencies(d, 10000.0), n, np.full(d // 2, 2.0))
    # the numbers, by brute force: without the 1/√d scale the threshold is 16 − ln 100 = 11.39, and
    # p(615,746) = 15.22 is above it; the profile stays below only from r = 1,037,355
    assert raw[0] - LN100 == pytest.approx(11.395, abs=1e-3)
    assert raw[615_746] == pytest.approx(15.22, abs=0.005)
    assert decay_from(raw) == 1_037_355
    # the app's scan evaluates that same profile at every offset
    summed = cosine_sum(params(scheme="rope", seq_len=n, d_model=d))
    # the scan's rounding bound (in logit/√d), and the direct sum's: 8 terms of weight 2, each angle r·θ ≤ r rounded
    direct_error = 8 * 2 * 4 * np.finfo(np.float64).eps * n
    np.testing.assert_allclose(summed.values(0, n) * math.sqrt(d), raw, rtol=0,
                               atol=summed.error_bound(n) * math.sqrt(d) + direct_error)
    # as attention sees it (÷ √16): p(0) = 4 and the last keys keep far more than 1 %: it never decays
    measured = logit_properties(params(scheme="rope", seq_len=n, d_model=d))
    assert decay_from(raw / math.sqrt(d)) is None and measured.decay_distance is None
    cell = measured.verdicts()["decays"]
    assert cell.startswith("✗ no") and "1,048,575" in cell


@pytest.mark.parametrize("n, d, base, old", [(1_048_576, 32, 10000.0, 13), (65_536, 16, 100.0, 50_483)])
def test_sinusoidal_reproducers_are_decided_over_every_offset(n, d, base, old):
    # an even sinusoidal table: PE(m)·PE(m − r) = Σ_i cos(r ω_i) whatever m
    raw = cosine_profile(rope_frequencies(d, base), n)
    if d == 32:
        assert raw[357_645] > raw[0] - LN100  # the witness against "from 13"
    else:
        assert decay_from(raw) == 65_410  # the truth against 50,483
    truth = decay_from(raw / math.sqrt(d))
    measured = logit_properties(params(scheme="sinusoidal", seq_len=n, d_model=d, base=base))
    assert measured.decay_distance == truth and truth != old


@pytest.mark.parametrize("scheme, d, base, truth, sampled", [
    ("rope", 64, 100.0, 61_443, 9), ("rope", 64, 10000.0, 435, 246), ("sinusoidal", 128, 1000.0, 65_115, 7_448)])
def test_a_late_return_above_one_percent_is_found(scheme, d, base, truth, sampled):
    # Scaled by 1/√d, these profiles fall below the 1 % line early and come back above it far out: the old
    # sampling (256 near and 256 log-spaced offsets) said `sampled`; brute force over all 65,536 offsets says `truth`.
    n = 65_536
    weights = np.full(d // 2, 2.0 if scheme == "rope" else 1.0)
    raw = cosine_profile(rope_frequencies(d, base), n, weights)
    assert decay_from(raw / math.sqrt(d)) == truth
    distances = np.union1d(np.arange(256), np.unique(np.round(np.geomspace(256, n - 1, 256)).astype(int)))
    profile = raw[distances] / math.sqrt(d)
    later = np.maximum.accumulate(profile[::-1])[::-1]
    assert distances[np.flatnonzero(later <= profile[0] - LN100)[0]] == sampled  # what sampling misses
    option = {"rope_theta": base} if scheme == "rope" else {"base": base}
    measured = logit_properties(params(scheme=scheme, seq_len=n, d_model=d, **option))
    assert measured.decay_distance == truth
    assert measured.verdicts()["decays"] == f"✓ to 1 % from r = {truth:,}: proved over offsets 0…65,535"


def test_the_scale_makes_the_verdict_what_attention_sees_not_an_artefact_of_d():
    # q = k = 1 with the 1/√d scale: the logit at 0 is √d, so a wider head's keys fall to 1 % sooner; at d 512
    # the first keys keep more than 1 % (p(1) = 2Σcos θ_i/√512 is within ln 100 of √512), unlike the unscaled "r = 1"
    n, d = 128, 512
    raw = cosine_profile(rope_frequencies(d, 10000.0), n, np.full(d // 2, 2.0))
    assert raw[0] - raw[1] < LN100 * math.sqrt(d) and raw[0] - raw[1] > LN100  # decays at 1 only without the scale
    measured = logit_properties(params(scheme="rope", seq_len=n, d_model=d))
    assert measured.decay_distance == decay_from(raw / math.sqrt(d)) > 1


def test_random_pairs_do_not_decay_in_the_mean_and_their_spread_is_the_closed_form():
    # independent q, k with N(0, 1) channels, 4,000 of them: (L(0) − L(r))/√d has mean 0 and the spread
    # √(2·(p(0) − p(r))/√d) of the module's closed form (p the scaled q = k = 1 profile)
    n, d, pairs = 64, 16, 4000
    theta = rope_frequencies(d, 10000.0)
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, pairs, d))
    a, b, c, e = q[:, 0::2], q[:, 1::2], k[:, 0::2], k[:, 1::2]  # interleaved pairs: any pairing has this law
    r = np.arange(n, dtype=np.float64)
    logit = (a * c + b * e) @ np.cos(np.outer(theta, r)) + (a * e - b * c) @ np.sin(np.outer(theta, r))
    drop = (logit[:, :1] - logit) / math.sqrt(d)
    assert np.all(np.abs(drop.mean(axis=0)) < 5 * drop.std(axis=0).max() / math.sqrt(pairs))
    measured = logit_properties(params(scheme="rope", seq_len=n, d_model=d))
    assert drop.std(axis=0).max() == pytest.approx(measured.random_spread, rel=0.08)
    assert "mean 0 at every offset" in measured.decay_words()


# ------------------------------------------------------------------ item 4: xPos over the keys it sees


def xpos_profile(d: int, length: int, gamma: float = 0.4, scale_base: float = 512.0) -> np.ndarray:
    """2 Σ_i ζ_i^(r/B) cos(r θ_i), r = 0 … length − 1: the q = k = 1 logit of a key r before its query."""
    zeta = (np.arange(0, d, 2) / d + gamma) / (1 + gamma)
    r = np.arange(length, dtype=np.float64)
    return 2 * (np.cos(np.outer(r, rope_frequencies(d, 10000.0))) * zeta ** (r[:, None] / scale_base)).sum(axis=1)


def test_xpos_is_measured_over_the_keys_before_the_query():
    n, d = 5_000, 16
    measured = logit_properties(params(scheme="xpos", seq_len=n, d_model=d))
    verdicts, records = measured.verdicts(), measured.verdict_records()
    # over every key a query sees (n ≤ m) and over 16× as many positions, |L| peaks at distance 0: 16
    seen = xpos_profile(d, 16 * n)
    assert np.abs(seen).max() == seen[0] == pytest.approx(16.0)
    assert records["bounded"].mark == "✓" and "e+" not in verdicts["bounded"]
    # neighbouring rows differ at every m: key m + 1 is seen by m + 1 and masked for m
    assert records["tells positions apart"].mark == "✓" and records["tells positions apart"].coverage.covers(0, n - 2)
    assert records["symmetric"].mark == "✗" and measured.masked
    assert measured.decay_distance == decay_from(seen[:n] / math.sqrt(d))


# ------------------------------------------------------------------ every settled verdict, against brute force


def brute_matrix(p: EncodingParams, positions: np.ndarray) -> np.ndarray:
    """L(m, n) over ``positions`` × ``positions``, −inf for a masked key, without the app's logit code."""
    family, options = p.info.family, p.scheme_kwargs()
    if family == "table":
        table = encode(p.scheme, positions, p.d_model, **options)
        return table @ table.T
    if family == "bias":
        return p.info.bias(positions, positions, p.d_model, **options)
    r = np.subtract.outer(positions, positions)
    theta = rope_frequencies(p.d_model, options["rope_theta"])
    if p.scheme == "rope":
        return 2 * np.cos(r[..., None] * theta).sum(axis=-1)
    zeta = (np.arange(0, p.d_model, 2) / p.d_model + options["gamma"]) / (1 + options["gamma"])
    behind = np.maximum(r, 0)[..., None]
    values = 2 * (zeta ** (behind / options["scale_base"]) * np.cos(behind * theta)).sum(axis=-1)
    return np.where(r >= 0, values, -np.inf)


def truths(p: EncodingParams, longer_range: bool = True) -> dict[str, bool]:
    """Each property's answer over its whole claimed range, from :func:`brute_matrix` at every position
    ("bounded" only with ``longer_range``: 16N positions)."""
    n = p.seq_len
    whole = brute_matrix(p, np.arange(n, dtype=np.float64))
    finite = np.isfinite(whole)
    scale = np.abs(whole[finite]).max() if finite.any() else 0.0
    tol = 1e-6 * scale
    diagonals = [np.diagonal(whole, k) for k in range(-(n - 1), n)]
    offset = all(np.all(np.isneginf(line)) or (np.all(np.isfinite(line)) and np.ptp(line) <= tol)
                 for line in diagonals)
    symmetric = np.array_equal(finite, finite.T) and np.all(np.abs(np.where(finite, whole - whole.T, 0)) <= tol)
    scale_d = 1.0 if p.info.family == "bias" else 1 / math.sqrt(p.d_model)
    profile = (whole[n - 1, ::-1] if p.info.family != "rotation" else whole[:, 0]) * scale_d
    decays = decay_from(np.where(np.isfinite(profile), profile, -np.inf)) is not None
    bounded = None
    if longer_range:
        longer = brute_matrix(p, np.arange(16 * n, dtype=np.float64))
        big = np.abs(longer[np.isfinite(longer)])
        bounded = big.max() <= 1.5 * (np.abs(whole[finite]).max() if finite.any() else 0.0)
    past = not np.isnan(brute_matrix(p, np.arange(n, 2 * n, dtype=np.float64))).any()
    first, second = whole[:-1], whole[1:]
    seen1, seen2 = np.isfinite(first), np.isfinite(second)
    both = seen1 & seen2
    steps = np.abs(np.where(both, first, 0) - np.where(both, second, 0)).max(axis=1)
    mask = np.any(seen1 != seen2, axis=1)
    median = np.median(steps) if n > 1 else 1.0
    if n < 2:
        apart = True
    elif median == 0:
        apart = bool(mask.all())
    else:
        apart = np.where(mask, np.inf, steps).min() / median >= 0.1
    return {"offset only": offset, "decays": decays, "symmetric": symmetric, "bounded": bounded,
            "defined past N": past, "tells positions apart": apart}


def random_setup(rng: np.random.Generator, longest: int) -> EncodingParams | None:
    scheme = rng.choice(["rope", "xpos", "sinusoidal", "sincos_pair", "four_vector", "harmonic", "all_sine", "sine",
                         "naive", "normalized", "binary", "nope", "learned", "alibi", "t5"])
    d = int(rng.integers(1, 33))
    if scheme in ("rope", "xpos"):
        d = 2 * max(1, d // 2)
    options = {}
    base = float(10 ** rng.uniform(1, 5))
    if scheme in ("rope", "xpos"):
        options["rope_theta"] = base
    elif scheme in ("sinusoidal", "all_sine"):
        options["base"] = base
    elif scheme == "alibi":
        options.update(n_heads=8, head=int(rng.integers(0, 8)), symmetric=bool(rng.integers(0, 2)))
    elif scheme == "t5":
        options.update(bidirectional=bool(rng.integers(0, 2)), seed=int(rng.integers(0, 100)))
    elif scheme == "learned":
        options["seed"] = int(rng.integers(0, 100))
    try:
        return params(scheme=str(scheme), seq_len=int(rng.integers(2, longest)), d_model=d, **options)
    except ValueError:
        return None


@pytest.mark.parametrize("seed", range(12))
def test_no_settled_verdict_contradicts_brute_force(seed):
    # N < 24: the longer range of "bounded" (16N) is brute-forced too; N up to 400: every other property
    rng = np.random.default_rng(1000 + seed)
    settled = 0
    for longest, longer_range in ((24, True),) * 6 + ((400, False),) * 3:
        setup = None
        while setup is None:
            setup = random_setup(rng, longest)
        truth = truths(setup, longer_range)
        for name, verdict in logit_properties(setup).verdict_records().items():
            assert verdict.mark == "–" or verdict.coverage.proved or verdict.witness, (setup, name)
            if verdict.mark != "–" and truth[name] is not None:
                assert verdict.holds == truth[name], (setup, name, verdict.as_dict())
                settled += 1
    assert settled >= 30  # most verdicts at these sizes are settled: the check is not vacuous


def test_the_scan_equals_brute_force_at_every_offset_for_random_cosine_sums():
    # the blocked matrix product against a direct sum at random sizes, rates with a decay (xPos) included
    rng = np.random.default_rng(3)
    for _ in range(5):
        terms, start, count = int(rng.integers(1, 40)), int(rng.integers(0, 10**6)), int(rng.integers(1, 5000))
        rates = -rng.uniform(0, 1e-3, terms) + 1j * rng.uniform(0, 2, terms)
        weights = rng.standard_normal(terms) + 1j * rng.standard_normal(terms)
        summed = CosineSum(rates, weights, 0.5, -1e-6)
        r = start + np.arange(count, dtype=np.float64)
        direct = np.real(np.exp(np.multiply.outer(r, rates)) @ weights) + 0.5 - 1e-6 * r
        # the direct sum rounds its angles r·λ_i as the scan does: twice the scan's bound covers both
        np.testing.assert_allclose(summed.values(start, count), direct, rtol=0,
                                   atol=2 * summed.error_bound(start + count) + 1e-12)


def test_the_scorecards_logit_scans_advance_in_steps_to_the_whole_result():
    from posenc_gui.model.analyses.scorecard import continue_logits, scorecard

    setup = params(seq_len=20_000, d_model=64)
    data = scorecard(setup, schemes=["rope", "sinusoidal"], scan_work=2**16)  # 2,048 of 20,000 offsets a step
    assert set(data.logits_pending) == {"rope", "sinusoidal"}
    steps = 0
    while data.logits_pending:
        data = continue_logits(data, 2**16)
        steps += 1
    assert steps >= 2 * 9  # about 10 steps per scheme, one scheme at a time
    for key in ("rope", "sinusoidal"):
        whole = logit_properties(setup.replaced(scheme=key))
        assert data.logit_properties(key).short_cells() == whole.short_cells()
        assert data.logit_table()[key]["verdicts"]["decays"]["coverage"]["method"] == "exact"

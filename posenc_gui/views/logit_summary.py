"""The Positional-logits panel's headline numbers, in words: what the figure shows of each family's logit."""

from __future__ import annotations

import numpy as np

from ..model.attention.logits import LogitProfileData, RotationTerms, XposScale

#: Digits as subscripts, for indices in plain text (ζ₁₂₇).
SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def profile_summary(data: LogitProfileData) -> str:
    """The headline numbers under the figure: a bias's values, a table's dot product, a rotation's logit, its
    attention factor, random spread and decay bound (xPos: its scale)."""
    rotation, bias = data.rotation, data.bias
    if bias is not None:
        return bias_summary(data)
    if rotation is None:
        return (
            f"PE(m)·PE(m − r) from m = N − 1 = {data.query_position:,}: <b>{data.logit_at_zero:.6g}</b> at "
            f"distance 0 (‖PE(m)‖²); {half_sentence(data)}. An added table's positional logit is the p·p term of "
            "the four-term split; with W<sub>q</sub>W<sub>k</sub>ᵀ = I it is this dot product.")
    if rotation.xpos is not None:
        return xpos_summary(data, rotation, rotation.xpos)
    factor, scale = rotation.attention_factor, rotation.attention_factor ** 2
    unrotated = rotation.head_dim - rotation.rotary_dim
    plus_unrotated = f" + {unrotated}" if unrotated else ""
    bound = (f"Eq. 37 bound for q = k = 1: {rotation.ones_bound[0]:,.6g} at distance 0 "
             f"(B(0) = {rotation.decay_bound[0]:.4g} × the rotated part), "
             f"{rotation.ones_bound[-1]:,.6g} at {data.distances[-1]:,}.")
    return (
        f"q = k = 1: logit <b>{data.logit_at_zero:.6g}</b> at distance 0 (af²·{rotation.rotary_dim}"
        + (f" + {unrotated} unrotated" if unrotated else "") + f"); {half_sentence(data)}. "
        f"Attention factor af = <b>{factor:.6g}</b>: the rotated part of every logit × af² = <b>{scale:.6g}</b>. "
        f"Random q, k ({rotation.seeds} seeds): spread ± {rotation.mean_random_std:.4g} on average "
        f"(expected √(af⁴·{rotation.rotary_dim}{plus_unrotated}) = {rotation.expected_random_std:.4g} at every "
        f"distance). {bound}"
    )


def half_sentence(data: LogitProfileData) -> str:
    """Where the profile first falls below half its value at distance 0."""
    if data.logit_at_zero <= 0:
        return "with no positive logit at distance 0 there is no half point"
    if data.half_distance is None:
        return f"it stays above half of that at the {data.distances.size:,} distances drawn (0…{data.distances[-1]:,})"
    if data.half_after == data.half_distance - 1:
        return f"first below half at distance <b>{data.half_distance:,}</b>"
    return (f"first below half between distances {data.half_after:,} and <b>{data.half_distance:,}</b> "
            "(sampled)")


def bias_summary(data: LogitProfileData) -> str:
    """The bias at distances 0, 1 and the farthest, what it does with the keys after the query, and whether
    its values are a random draw (a scheme with a ``seed``)."""
    distances, profile, after = data.distances, data.profile, data.bias.after
    seed = data.params.options.get("seed")
    drawn = ("" if seed is None else
             f" The bias values are an untrained random draw (seed {seed}), not a trained model's.")
    if distances.size == 1:
        return f"Bias added to the logit of a query and a key at one position: <b>{profile[0]:.7g}</b>.{drawn}"
    values = [f"<b>{profile[0]:.7g}</b> at distance 0", f"{profile[1]:.7g} at 1"]
    if distances.size > 2:
        values.append(f"<b>{profile[-1]:.7g}</b> at {distances[-1]:,}")
    if after is None:
        keys_after = "keys after the query are masked (−inf, grey): a causal bias"
    elif np.array_equal(after, profile):
        keys_after = "keys after the query get the same bias (symmetric)"
    else:
        keys_after = f"the key 1 after the query m = 0: {after[1]:.7g}"
    return (f"Bias added to the logit of the query m = {data.query_position:,} and the key r before it: "
            f"{', '.join(values)}; {keys_after}. A bias adds no vector: its positional logit is the bias "
            f"itself, added to q·k.{drawn}")


def xpos_summary(data: LogitProfileData, rotation: RotationTerms, scale: XposScale) -> str:
    """The q = k = 1 logit, the scale's decay per pair and the random pairs' shrinking spread.

    Indices and exponents in Unicode (ζ₀, ζᵢ^(r/512)), not sub/sup markup: the figure's caption is the plain text.
    """
    halves, last, base = scale.half_distances, data.distances[-1], scale.scale_base
    slowest = str(scale.zeta.size - 1).translate(SUBSCRIPT_DIGITS)
    return (
        f"q = k = 1: logit <b>{data.logit_at_zero:.6g}</b> at distance 0 (2·{rotation.rotary_dim // 2} pairs; "
        f"no attention factor); {half_sentence(data)}. "
        f"Scale ζᵢ^(r/{base:g}) per pair (not in the heatmap's columns): from ζ₀ = <b>{scale.zeta[0]:.4g}</b> "
        f"(halved at r = {halves[0]:,.0f}) to ζ{slowest} = <b>{scale.zeta[-1]:.4g}</b> (halved at "
        f"r = {halves[-1]:,.0f}); the scale alone, 2Σ ζᵢ^(r/{base:g}), is {scale.envelope[-1]:.4g} at {last:,}. "
        f"Random q, k ({rotation.seeds} seeds): spread ± {rotation.random_std[0]:.4g} at distance 0 "
        f"(expected √{rotation.rotary_dim} = {scale.expected_std[0]:.4g}), ± {rotation.random_std[-1]:.4g} at "
        f"{last:,} (expected {scale.expected_std[-1]:.4g}): the scale shrinks even independent pairs. "
        "The matrix leaves out keys after their query, where the scale grows."
    )

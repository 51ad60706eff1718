"""Rotary position embedding (RoPE, Su et al. 2021) as today's models configure it.

RoPE adds nothing to the token embeddings: it rotates each (q, k) pair of
channels of a head by the angle ``position · θ_i``, so the attention logit
of a query at m and a key at n depends only on n − m. The app's d_model is
the head dimension here. The frequencies θ_i are Hugging Face's for the
chosen scaling type (:func:`posenc_gui.model.rope.rope_frequencies`); the
trained context L₀ is ``original_max_position_embeddings``, and the app's
number of positions is the sequence length dynamic NTK scales at.

LongRoPE divides each pair's θ_i by its own factor: ``short_factor`` up to
L₀, ``long_factor`` past it (one number per pair; empty means 1 for every pair).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import limits
from ..rope import MAX_FACTOR, MIN_FACTOR, rope_config, rope_frequencies, rope_pairs, rope_type
from ..rope import types as rope_types
from ..core.specs import ParamSpec
from ._core import Columns, Preset, Rotation, Scheme

#: Longest trained context offered (2^30: a spin box holds 32-bit integers; no model comes near).
MAX_CONTEXT = 2**30

#: Phi-3.5-mini-instruct config.json's rope_scaling (longrope): one factor per rotary pair (head 96, 48 pairs).
PHI35_SHORT_FACTOR = (
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684,
    1.1099998950958252, 1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378,
    1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533, 2.729999542236328,
    2.749999523162842, 2.8399994373321533,
)
PHI35_LONG_FACTOR = (
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115,
    1.600000023841858, 1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863,
    4.789999961853027, 7.400000095367432, 7.700000286102295, 9.09000015258789, 12.199999809265137,
    17.670000076293945, 24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992, 50.340003967285156,
    50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457,
    62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
    63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688, 64.06999969482422,
    64.08000183105469, 64.12000274658203, 64.41000366210938, 64.4800033569336, 64.51000213623047,
    64.52999877929688, 64.83999633789062,
)


ROPE_THETA = ParamSpec("rope_theta", "real", 10000.0, "rope_theta (base)",
                       "The base: pair i turns by position · rope_theta^(−2i/rotary_dim). Must be > 1.",
                       low=1.0, high=limits.MAX_BASE, low_open=True, log=True, slider=(100.0, 1e7),
                       title=lambda value: f"θ {value:g}")
#: The parameters every scaling type shares: base, rotary share, pairing.
_COMMON = (
    ROPE_THETA,
    ParamSpec("partial_rotary_factor", "real", 1.0, "partial rotary factor",
              "The share of each head's channels that rotate (GPT-NeoX 0.25); the others pass unrotated.",
              low=0.0, high=1.0, low_open=True, title=lambda value: "" if value == 1.0 else f"rotary {value:g}",
              slug=lambda value: "" if value == 1.0 else f"p{value:g}"),
    ParamSpec("pairing", "choice", "halves", "pairing",
              "Which channels rotate together: halves pairs i with i + rotary_dim/2 (GPT-NeoX, Hugging Face's "
              "rotate_half); interleaved pairs 2i with 2i + 1 (RoFormer, GPT-J, Meta's Llama code).",
              choices=(("halves", "halves — i with i + d/2 (GPT-NeoX, HF rotate_half)"),
                       ("interleaved", "interleaved — 2i with 2i+1 (RoFormer, GPT-J, Meta)")),
              title=str, slug=lambda value: "" if value == "halves" else value),
)


def scheme_params() -> tuple[ParamSpec, ...]:
    """The scheme's parameters for the scaling types registered now (:data:`~posenc_gui.model.rope.types.ROPE_TYPES`):
    the ``rope_type`` choice, the parameters several types share (shown for those that use them), each type's own."""
    kinds = tuple(rope_types.ROPE_TYPES.values())

    def shown(uses: Callable[[rope_types.RopeType], bool]) -> tuple[str, tuple[str, ...]]:
        return ("rope_type", tuple(kind.name for kind in kinds if uses(kind)))

    summaries = [kind.summary for kind in kinds]
    listed = ", ".join(summaries[:-1]) + (", or " if len(summaries) > 1 else "") + summaries[-1]
    choice = ParamSpec(
        "rope_type", "choice", "default", "context scaling",
        f"How the frequencies are changed to reach a longer context than training's: {listed}.",
        choices=tuple((kind.name, kind.name) for kind in kinds),
        title=lambda value: "" if value == "default" else value, slug=lambda value: "" if value == "default" else value)
    shared = (
        ParamSpec("factor", "real", 4.0, "factor",
                  "How many times the trained context the scaling reaches.",
                  low=MIN_FACTOR, high=MAX_FACTOR, log=True, slider=(1.0, 64.0),
                  shown_when=shown(lambda kind: kind.uses_factor), title=lambda value: f"×{value:g}"),
        ParamSpec("original_max_position_embeddings", "int", 4096, "trained context L₀",
                  "The context the model was pretrained at (Hugging Face's original_max_position_embeddings; "
                  "max_position_embeddings for dynamic NTK).",
                  low=2, high=MAX_CONTEXT, log=True, shown_when=shown(lambda kind: kind.context != "none"),
                  title=lambda value: f"L₀ {value:,}"),
    )
    own = tuple(spec for kind in kinds for spec in kind.params)
    sequence = ParamSpec(
        "sequence_length", "int", 4096, "sequence length",
        "dynamic NTK rebases rope_theta for the length of the sequence, and longrope takes its long factors "
        "past L₀; the app uses its number of positions N.",
        low=1, high=limits.MAX_SEQ_LEN, tied_to="seq_len", shown_when=shown(lambda kind: kind.uses_sequence_length))
    return (*_COMMON, choice, *shared, *own, sequence)


def hf_config(d_model: int, **options: Any) -> dict[str, Any]:
    """The options as a Hugging Face config (``rope_theta``, ``head_dim``, ``rope_scaling`` …) for
    :func:`~posenc_gui.model.rope.rope_frequencies`; ``d_model`` is the head dimension."""
    kind = rope_type(options["rope_type"])
    config: dict[str, Any] = {"rope_theta": options["rope_theta"], "head_dim": d_model,
                              "partial_rotary_factor": options["partial_rotary_factor"]}
    if not kind.uses_factor:
        return config
    scaling: dict[str, Any] = {"rope_type": kind.name, "factor": options["factor"]}
    original = options["original_max_position_embeddings"]
    if kind.context == "max_position":
        config["max_position_embeddings"] = original
    elif kind.context == "original":
        scaling["original_max_position_embeddings"] = original
        config["max_position_embeddings"] = int(original * options["factor"])
    pairs = (int(d_model * options["partial_rotary_factor"]) + 1) // 2  # one per frequency
    scaling.update(kind.scaling_entries(options, pairs))
    config["rope_scaling"] = scaling
    return config


def _columns(dims: np.ndarray, d_model: int, sequence_length: int, **options: Any) -> Columns:
    """The rotation as a table: what R(p·θ_i) makes of a query whose every pair is (1, 0).

    The first channel of pair i (in the pairing's channel order) holds
    cos(p·θ_i), the second sin(p·θ_i); the channels past the rotary ones
    pass unrotated and hold 1 (the angle 0). The attention factor, which
    scales cos and sin alike, is left out: these are the rotation's own values.
    """
    inv_freq, _ = rope_frequencies(hf_config(d_model, **options), seq_len=sequence_length)
    first, second = rope_pairs(2 * inv_freq.size, options["pairing"])
    pair_of = np.full(d_model, -1)
    pair_of[first] = np.arange(inv_freq.size)
    pair_of[second] = np.arange(inv_freq.size)
    is_second = np.zeros(d_model, dtype=bool)
    is_second[second] = True
    pair = pair_of[dims]
    kinds = np.where(is_second[dims], "sin", "cos")
    with np.errstate(divide="ignore"):
        # encode evaluates pos / divisor; an unrotated channel's divisor inf gives the angle 0.
        divisor = np.where(pair >= 0, 1.0 / inv_freq[np.maximum(pair, 0)], np.inf)
    theta = inv_freq[np.maximum(pair, 0)]
    # The divisor 1/θ_i beyond one pow: two divisions, and where a type blends θ_i with θ_i / factor (yarn,
    # llama3) or raises the base by a difference of products (ntk, dynamic), a few ULPs of the weight or of
    # the difference, which the factor amplifies (measured against 60-digit references: at most 0.9 · factor).
    per_factor = rope_type(options["rope_type"]).divisor_ulps_per_factor
    extra_ulps = 2.0 + (per_factor * options["factor"] if per_factor else 0.0)

    def label(j: int) -> str:
        if pair[j] < 0:
            return "1 (not rotated)"
        return f"{kinds[j]}(pos · θ_{pair[j]}), θ_{pair[j]} = {theta[j]:.6g}"

    return Columns(kinds, divisor, label, divisor_extra_ulps=extra_ulps)


def _rotation(d_model: int, seq_len: int, **options: Any) -> Rotation:
    """Hugging Face's frequencies and attention factor at sequence length ``seq_len`` (dynamic NTK's), the
    options' pairing; ValueError naming d_model for a head too narrow for the rotated pairs."""
    _check_together(d_model, **options)
    inv_freq, attention_factor = rope_frequencies(hf_config(d_model, **options), seq_len=seq_len)
    return Rotation(inv_freq, float(attention_factor), options["pairing"])


def _check_together(d_model: int, **options: Any) -> None:
    rotary = int(d_model * options["partial_rotary_factor"])
    if rotary < 1 or 2 * ((rotary + 1) // 2) > d_model:
        raise ValueError(f"partial_rotary_factor: int(d_model {d_model} × {options['partial_rotary_factor']:g}) = "
                         f"{rotary}; Hugging Face turns ceil({rotary}/2) pairs of channels, which must be at least "
                         f"one and fit in d_model")
    hf_warnings(d_model, **options)  # what Hugging Face refuses (YaRN with an odd rotary dimension …)


def hf_warnings(d_model: int, **options: Any) -> tuple[str, ...]:
    """What Hugging Face warns about the config of these options (``beta_fast < beta_slow``, an odd rotary
    dimension …), which it computes all the same, as the scheme does; ValueError for what it refuses."""
    return rope_config(hf_config(d_model, **options)).warnings


#: Real models' and textbook set-ups.
PRESETS = (
    Preset("Llama 2 (RoPE, θ 10,000, head 128)", 4096, 128, {"rope_theta": 10000.0},
           "Llama-2-7b config.json: rope_theta 10000, hidden_size 4096 / 32 heads"),
    Preset("Llama 3.1 (llama3 scaling ×8 from 8,192)", 131072, 128,
           {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
           "Llama-3.1-8B config.json: rope_theta 500000, rope_scaling llama3 (factor 8, low 1, high 4, "
           "original 8192)"),
    Preset("Qwen2.5 with YaRN (×4 from 32,768)", 131072, 128,
           {"rope_theta": 1000000.0, "rope_type": "yarn", "factor": 4.0,
            "original_max_position_embeddings": 32768},
           "Qwen2.5-7B-Instruct README: rope_scaling yarn, factor 4.0, original_max_position_embeddings 32768"),
    Preset("Mistral 7B Instruct v0.2 (θ 1,000,000, 32k)", 32768, 128, {"rope_theta": 1000000.0},
           "Mistral-7B-Instruct-v0.2 model card: 32k context, rope_theta 1e6, no sliding window; config.json "
           "hidden_size 4096 / 32 heads"),
    Preset("DeepSeek-V3 (YaRN ×40 from 4,096, mscale_all_dim 1)", 163840, 64,
           {"rope_theta": 10000.0, "rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
            "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "pairing": "interleaved"},
           "DeepSeek-V3 config.json: rope_theta 10000, rope_scaling yarn (factor 40, beta_fast 32, beta_slow 1, "
           "mscale 1, mscale_all_dim 1, original 4096), qk_rope_head_dim 64, max_position_embeddings 163840; "
           "its rotary pairs are interleaved (DeepSeek's complex multiplication; transformers' rope_interleave)"),
    Preset("gpt-oss-20b (YaRN ×32 from 4,096, not truncated)", 131072, 64,
           {"rope_theta": 150000.0, "rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
            "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False},
           "gpt-oss-20b config.json: rope_theta 150000, rope_scaling yarn (factor 32, beta_fast 32, beta_slow 1, "
           "original 4096, truncate false), head_dim 64, max_position_embeddings 131072"),
    Preset("Phi-3.5-mini (LongRoPE ×32 from 4,096)", 131072, 96,
           {"rope_theta": 10000.0, "rope_type": "longrope", "factor": 32.0,
            "original_max_position_embeddings": 4096, "short_factor": PHI35_SHORT_FACTOR,
            "long_factor": PHI35_LONG_FACTOR},
           "Phi-3.5-mini-instruct config.json: rope_theta 10000, rope_scaling longrope with 48 short and 48 long "
           "factors, original_max_position_embeddings 4096, max_position_embeddings 131072, hidden 3072 / 32 heads"),
    Preset("GPT-NeoX-20B (partial rotary 0.25)", 2048, 96, {"partial_rotary_factor": 0.25},
           "GPT-NeoX-20B config.json: rotary_pct 0.25, rotary_emb_base 10000, hidden 6144 / 64 heads"),
    Preset("GPT-J-6B (interleaved, 64 of 256 channels)", 2048, 256,
           {"partial_rotary_factor": 0.25, "pairing": "interleaved"},
           "GPT-J-6B config.json: rotary_dim 64, n_embd 4096 / 16 heads; rotate_every_two"),
)


def build_scheme() -> Scheme:
    """The scheme with the scaling types registered now (:data:`~posenc_gui.model.rope.types.ROPE_TYPES`)."""
    return Scheme(
        key="rope", label="RoPE (rotary, Su et al.)", order=110, family="rotation",
        summary="Rotates each pair of query and key channels by position · θ_i, so the attention score depends "
        "only on the offset n − m; nothing is added to the embeddings. d_model is the head dimension here. The "
        "context-scaling types change the θ_i to reach past the trained context L₀.",
        formula="q·k → (R(m·θ) q)·(R(n·θ) k) = q·R((n − m)·θ) k,  θ_i = rope_theta^(−2i/rotary_dim)",
        params=scheme_params(), check_together=_check_together, columns=_columns, rotation=_rotation,
        hf_rope=hf_config, presets=PRESETS,
    )


SCHEME = build_scheme()


def _rebuild() -> None:
    """Register the scheme anew when a scaling type comes or goes: its ``rope_type`` choice and parameters change."""
    from . import SCHEMES, register, unregister

    if SCHEME.key in SCHEMES:
        unregister(SCHEME.key)
    register(build_scheme())


rope_types.on_change(_rebuild)

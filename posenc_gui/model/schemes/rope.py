"""Rotary position embedding (RoPE, Su et al. 2021) as today's models configure it.

RoPE adds nothing to the token embeddings: it rotates each (q, k) pair of
channels of a head by the angle ``position · θ_i``, so the attention logit
of a query at m and a key at n depends only on n − m. The app's d_model is
the head dimension here. The frequencies θ_i are Hugging Face's for the
chosen scaling type (:func:`posenc_gui.model.rope.rope_frequencies`); the
trained context L₀ is ``original_max_position_embeddings``, and the app's
number of positions is the sequence length dynamic NTK scales at.

LongRoPE needs a list of factors per pair (``short_factor``,
``long_factor``): it is read from a model's config with
:func:`~posenc_gui.model.rope.rope_frequencies`, not set here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import limits
from ..rope import MAX_FACTOR, MIN_FACTOR, rope_config, rope_frequencies, rope_pairs
from ..specs import ParamSpec
from ._core import Columns, Preset, Scheme

#: The scaling types set here (all of Hugging Face's but longrope, whose per-pair lists come from a config).
SCALING_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3")
_FACTOR_TYPES = ("linear", "ntk", "dynamic", "yarn", "llama3")
_CONTEXT_TYPES = ("dynamic", "yarn", "llama3")
#: Longest trained context offered (2^30: a spin box holds 32-bit integers; no model comes near).
MAX_CONTEXT = 2**30

def _unless(default: float, label: str):
    """A title part that leaves out Hugging Face's default (a figure names what differs from it)."""
    return lambda value: "" if value == default else f"{label} {value:g}"


PARAMS = (
    ParamSpec("rope_theta", "real", 10000.0, "rope_theta (base)",
              "The base: pair i turns by position · rope_theta^(−2i/rotary_dim). Must be > 1.",
              low=1.0, high=limits.MAX_BASE, low_open=True, log=True, slider=(100.0, 1e7),
              title=lambda value: f"θ {value:g}"),
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
    ParamSpec("rope_type", "choice", "default", "context scaling",
              "How the frequencies are changed to reach a longer context than training's: none (default), "
              "position interpolation (linear), NTK-aware (ntk), dynamic NTK, YaRN, or Llama 3.1's llama3.",
              choices=tuple((name, name) for name in SCALING_TYPES),
              title=lambda value: "" if value == "default" else value, slug=lambda value: "" if value == "default" else value),
    ParamSpec("factor", "real", 4.0, "factor",
              "How many times the trained context the scaling reaches.",
              low=MIN_FACTOR, high=MAX_FACTOR, log=True, slider=(1.0, 64.0), shown_when=("rope_type", _FACTOR_TYPES),
              title=lambda value: f"×{value:g}"),
    ParamSpec("original_max_position_embeddings", "int", 4096, "trained context L₀",
              "The context the model was pretrained at (Hugging Face's original_max_position_embeddings; "
              "max_position_embeddings for dynamic NTK).",
              low=2, high=MAX_CONTEXT, log=True, shown_when=("rope_type", _CONTEXT_TYPES),
              title=lambda value: f"L₀ {value:,}"),
    ParamSpec("beta_fast", "real", 32.0, "beta_fast",
              "YaRN: pairs turning more than beta_fast times over L₀ keep their frequency.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=("rope_type", ("yarn",)), title=_unless(32.0, "beta_fast")),
    ParamSpec("beta_slow", "real", 1.0, "beta_slow",
              "YaRN: pairs turning fewer than beta_slow times over L₀ are interpolated by the factor.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=("rope_type", ("yarn",)), title=_unless(1.0, "beta_slow")),
    ParamSpec("mscale", "real", 1.0, "mscale",
              "YaRN: the attention factor's scale (DeepSeek's mscale); with mscale_all_dim 0, 0.1·ln(factor) + 1.",
              low=0.0, high=MAX_FACTOR, shown_when=("rope_type", ("yarn",)), title=_unless(1.0, "mscale")),
    ParamSpec("mscale_all_dim", "real", 0.0, "mscale_all_dim",
              "YaRN: when not 0 (DeepSeek-V3: 1), the attention factor is mscale's over mscale_all_dim's.",
              low=0.0, high=MAX_FACTOR, shown_when=("rope_type", ("yarn",)), title=_unless(0.0, "mscale_all_dim")),
    ParamSpec("truncate", "bool", True, "truncate",
              "YaRN: round the correction range to whole pairs (Hugging Face's default; gpt-oss: no).",
              shown_when=("rope_type", ("yarn",)), title=lambda value: "" if value else "not truncated"),
    ParamSpec("low_freq_factor", "real", 1.0, "low_freq_factor",
              "llama3: pairs with wavelength above L₀ / low_freq_factor are divided by the factor.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=("rope_type", ("llama3",)), title=_unless(1.0, "low_freq_factor")),
    ParamSpec("high_freq_factor", "real", 4.0, "high_freq_factor",
              "llama3: pairs with wavelength below L₀ / high_freq_factor keep their frequency.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=("rope_type", ("llama3",)), title=_unless(4.0, "high_freq_factor")),
    ParamSpec("sequence_length", "int", 4096, "sequence length",
              "dynamic NTK rebases rope_theta for the length of the sequence; the app uses its number of positions N.",
              low=1, high=limits.MAX_SEQ_LEN, tied_to="seq_len", shown_when=("rope_type", ("dynamic",))),
)


def hf_config(d_model: int, seq_len: int | None = None, **options: Any) -> dict[str, Any]:
    """The options as a Hugging Face config (``rope_theta``, ``head_dim``, ``rope_scaling`` …) for
    :func:`~posenc_gui.model.rope.rope_frequencies`; ``d_model`` is the head dimension."""
    rope_type = options["rope_type"]
    config: dict[str, Any] = {"rope_theta": options["rope_theta"], "head_dim": d_model,
                              "partial_rotary_factor": options["partial_rotary_factor"]}
    if rope_type == "default":
        return config
    scaling: dict[str, Any] = {"rope_type": rope_type, "factor": options["factor"]}
    if rope_type in _CONTEXT_TYPES:
        original = options["original_max_position_embeddings"]
        if rope_type == "dynamic":
            config["max_position_embeddings"] = original
        else:
            scaling["original_max_position_embeddings"] = original
            config["max_position_embeddings"] = int(original * options["factor"])
    if rope_type == "yarn":
        scaling.update({key: options[key] for key in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                                                      "truncate")})
    if rope_type == "llama3":
        scaling.update({key: options[key] for key in ("low_freq_factor", "high_freq_factor")})
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
    scaled = options["rope_type"] in ("ntk", "dynamic", "yarn", "llama3")
    extra_ulps = 2.0 + (2.0 * options["factor"] if scaled else 0.0)

    def label(j: int) -> str:
        if pair[j] < 0:
            return "1 (not rotated)"
        return f"{kinds[j]}(pos · θ_{pair[j]}), θ_{pair[j]} = {theta[j]:.6g}"

    return Columns(kinds, divisor, label, divisor_extra_ulps=extra_ulps)


def _check_together(d_model: int, **options: Any) -> None:
    rotary = int(d_model * options["partial_rotary_factor"])
    if rotary < 2 or rotary % 2:
        raise ValueError(f"partial_rotary_factor: int(d_model {d_model} × {options['partial_rotary_factor']:g}) = "
                         f"{rotary} rotated channels; they must be even and at least 2")
    rope_config(hf_config(d_model, **options))  # what Hugging Face refuses (llama3's factors out of order …)


SCHEME = Scheme(
    key="rope", label="RoPE (rotary, Su et al.)", order=110, family="rotation",
    summary="Rotates each pair of query and key channels by position · θ_i, so the attention score depends only "
    "on the offset n − m; nothing is added to the embeddings. d_model is the head dimension here. The "
    "context-scaling types change the θ_i to reach past the trained context L₀.",
    formula="q·k → (R(m·θ) q)·(R(n·θ) k) = q·R((n − m)·θ) k,  θ_i = rope_theta^(−2i/rotary_dim)",
    params=PARAMS, check_together=_check_together, columns=_columns,
    presets=(
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
        Preset("GPT-NeoX-20B (partial rotary 0.25)", 2048, 96, {"partial_rotary_factor": 0.25},
               "GPT-NeoX-20B config.json: rotary_pct 0.25, rotary_emb_base 10000, hidden 6144 / 64 heads"),
        Preset("GPT-J-6B (interleaved, 64 of 256 channels)", 2048, 256,
               {"partial_rotary_factor": 0.25, "pairing": "interleaved"},
               "GPT-J-6B config.json: rotary_dim 64, n_embd 4096 / 16 heads; rotate_every_two"),
    ),
)

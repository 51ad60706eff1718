"""LongRoPE (Ding et al. 2024, Phi-3): HF's ``_compute_longrope_parameters``.

Each pair's θ_i is divided by its own factor: ``short_factor`` up to L₀,
``long_factor`` past it; the attention factor is sqrt(1 + ln(factor)/ln(L₀)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...core.specs import ParamSpec
from ..config import MAX_FACTOR, MIN_FACTOR, RopeBands, RopeConfig, ScalingSection, uniform_bands
from . import RopeType
from ._titles import factors_title

_SHOWN = ("rope_type", ("longrope",))
PARAMS = (
    ParamSpec("short_factor", "reals", (), "short_factor",
              "longrope: each pair's θ_i is divided by its factor while the sequence fits in L₀ (one number per "
              "rotary pair, separated by commas; empty: 1 for every pair).",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=factors_title("short"), slug=lambda value: ""),
    ParamSpec("long_factor", "reals", (), "long_factor",
              "longrope: the factors used once the sequence is longer than L₀ (one per rotary pair; empty: 1 for "
              "every pair).",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=factors_title("long"), slug=lambda value: ""),
)


def _read(section: ScalingSection) -> tuple[dict[str, object], float]:
    factor = section.factor_or_ratio()
    attention_factor = section.optional_factor("attention_factor")
    scaling: dict[str, object] = {"factor": factor}
    rotary_dim = section.rotary_dim
    for key in ("short_factor", "long_factor"):  # one per frequency, else HF's division fails
        scaling[key] = section.per_pair_factors(key, (rotary_dim + 1) // 2)
        if rotary_dim % 2:
            section.warnings.append(f"Hugging Face warns that {section.source}.{key} must have length rotary_dim "
                                    f"// 2 = {rotary_dim // 2}, but computes with its {(rotary_dim + 1) // 2} (one "
                                    "per frequency)")
    if attention_factor is None:
        # HF ``_compute_longrope_parameters``: 1 for factor ≤ 1, else sqrt(1 + ln(factor) / ln(L₀))
        attention_factor = 1.0 if factor <= 1.0 else _attention_factor(factor, section.original)
    return scaling, attention_factor


def _attention_factor(factor: float, original: int) -> float:
    if original < 2:
        raise ValueError(
            "original_max_position_embeddings must be ≥ 2 for LongRoPE's default attention_factor "
            "sqrt(1 + ln(factor) / ln(original_max_position_embeddings))"
        )
    return math.sqrt(1 + math.log(factor) / math.log(original))


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    # HF ``_compute_longrope_parameters``: 1 / (ext_factors · base^(2i/d))
    long = seq_len is not None and seq_len > rope.original_max_position_embeddings
    return unscaled / np.array(rope.scaling["long_factor" if long else "short_factor"], dtype=np.float64)


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    return uniform_bands(unscaled.size, "rescaled", np.nan)


def _hf_scaling(options: Mapping[str, Any], pairs: int) -> dict[str, Any]:
    return {key: list(options[key]) or [1.0] * pairs for key in ("short_factor", "long_factor")}


ROPE_TYPE = RopeType(name="longrope", summary="LongRoPE (Phi-3)", order=60, read=_read, inv_freq=_inv_freq,
                     bands=_bands, float32_refusal="its per-pair factors come from a model's config",
                     params=PARAMS, context="original", uses_sequence_length=True, hf_scaling=_hf_scaling)

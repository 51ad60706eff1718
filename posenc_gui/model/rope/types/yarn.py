"""YaRN (Peng et al. 2023): HF's ``_compute_yarn_parameters``.

Pairs turning more than ``beta_fast`` times over L₀ keep their frequency,
those turning fewer than ``beta_slow`` times are divided by the factor, a
linear ramp in between; the attention factor is ``get_mscale``'s.
"""

from __future__ import annotations

import math

import numpy as np

from ...core import limits
from ...core.specs import ParamSpec
from ..config import (MAX_FACTOR, MIN_FACTOR, RopeBands, RopeConfig, ScalingSection, check_factor, float32_powers,
                      get_mscale, interpolated, unset)
from . import RopeType
from ._titles import unless

_SHOWN = ("rope_type", ("yarn",))
PARAMS = (
    ParamSpec("beta_fast", "real", 32.0, "beta_fast",
              "YaRN: pairs turning more than beta_fast times over L₀ keep their frequency.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(32.0, "beta_fast")),
    ParamSpec("beta_slow", "real", 1.0, "beta_slow",
              "YaRN: pairs turning fewer than beta_slow times over L₀ are interpolated by the factor.",
              low=MIN_FACTOR, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(1.0, "beta_slow")),
    ParamSpec("mscale", "real", 1.0, "mscale",
              "YaRN: the attention factor's scale (DeepSeek's mscale); with mscale_all_dim 0, 0.1·ln(factor) + 1.",
              low=0.0, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(1.0, "mscale")),
    ParamSpec("mscale_all_dim", "real", 0.0, "mscale_all_dim",
              "YaRN: when not 0 (DeepSeek-V3: 1), the attention factor is mscale's over mscale_all_dim's.",
              low=0.0, high=MAX_FACTOR, shown_when=_SHOWN, title=unless(0.0, "mscale_all_dim")),
    ParamSpec("truncate", "bool", True, "truncate",
              "YaRN: round the correction range to whole pairs (Hugging Face's default; gpt-oss: no).",
              shown_when=_SHOWN, title=lambda value: "" if value else "not truncated"),
)


def _read(section: ScalingSection) -> tuple[dict[str, object], float]:
    """``factor``, ``beta_fast`` (32), ``beta_slow`` (1), ``truncate`` (true), ``mscale``, ``mscale_all_dim`` (None)."""
    factor = section.factor_or_ratio()
    attention_factor = section.optional_factor("attention_factor")
    source, values = section.source, section.section
    # HF reads ``rope_parameters.get("beta_fast") or 32``: a 0 means the default too
    beta_fast, beta_slow = (
        default if unset(values.get(key)) else check_factor(f"{source}.{key}", values[key])
        for key, default in (("beta_fast", 32.0), ("beta_slow", 1.0))
    )
    if beta_fast < beta_slow:  # HF's _validate_yarn_rope_parameters warns and computes the reversed ramp
        section.warnings.append(f"Hugging Face warns that {source}.beta_fast ({beta_fast:g}) must be greater than "
                                f"beta_slow ({beta_slow:g}); the ramp then runs backwards (low correction dim above "
                                "high)")
    truncate = values.get("truncate", True)
    if not isinstance(truncate, (bool, np.bool_)):
        raise ValueError(f"{source}.truncate must be true or false, got {limits.shown(truncate)}")
    mscales = {}
    for key in ("mscale", "mscale_all_dim"):
        value = values.get(key)
        mscales[key] = None if value is None else limits.check_real(f"{source}.{key}", value, 0.0, MAX_FACTOR)
    scaling = {"factor": factor, "beta_fast": beta_fast, "beta_slow": beta_slow, "truncate": bool(truncate),
               **mscales}
    if attention_factor is None:
        attention_factor = _attention_factor(factor, scaling["mscale"], scaling["mscale_all_dim"])
    return scaling, attention_factor


def _attention_factor(factor: float, mscale: float | None, mscale_all_dim: float | None) -> float:
    # HF ``_compute_yarn_parameters``: the mscale ratio when both are set (truthy, so 0 counts as unset)
    if mscale and mscale_all_dim:
        return get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
    return get_mscale(factor)


def ramp(rope: RopeConfig) -> np.ndarray:
    """YaRN's ramp per pair: 0 keeps the frequency (extrapolation), 1 divides it by factor (interpolation)."""
    # HF ``_compute_yarn_parameters``: find_correction_dim / find_correction_range / linear_ramp_factor
    d, theta, original = rope.rotary_dim, rope.rope_theta, rope.original_max_position_embeddings

    def correction_dim(rotations: float) -> float:
        return (d * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(rope.scaling["beta_fast"]), correction_dim(rope.scaling["beta_slow"])
    if rope.scaling["truncate"]:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)  # clamped to d − 1, not d/2 − 1, as in HF
    if low == high:
        high += 0.001  # HF: "Prevent singularity"
    return np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    weight = ramp(rope)
    band = np.where(weight == 0.0, "extrapolated", np.where(weight == 1.0, "interpolated", "ramped"))
    return RopeBands(band, weight)


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return interpolated(unscaled, _bands(rope, unscaled).interpolation, rope.scaling["factor"])


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    # HF ``_compute_yarn_parameters``, its float32 tensor operations in order
    factor = np.float32(rope.scaling["factor"])
    pos_freqs = float32_powers(rope.rope_theta, rope.rotary_dim)
    extrapolation = np.float32(1.0) / pos_freqs
    interpolation = np.float32(1.0) / (factor * pos_freqs)
    extrapolation_factor = np.float32(1.0) - ramp(rope).astype(np.float32)
    return interpolation * (np.float32(1.0) - extrapolation_factor) + extrapolation * extrapolation_factor


def _check_rotary(description: str, rotary_dim: int) -> None:
    if rotary_dim % 2:
        raise ValueError(f"{description} = {rotary_dim} is odd: Hugging Face's YaRN ramp has rotary_dim // 2 = "
                         f"{rotary_dim // 2} values for its {(rotary_dim + 1) // 2} frequencies, and fails")


def _scheme_options(rope: RopeConfig) -> dict[str, object]:
    scaling = rope.scaling
    options = {key: scaling[key] for key in ("beta_fast", "beta_slow", "truncate")}
    if scaling["mscale"] and scaling["mscale_all_dim"]:  # Hugging Face's ratio; otherwise 0.1·ln(factor) + 1
        options.update(mscale=scaling["mscale"], mscale_all_dim=scaling["mscale_all_dim"])
    return options


ROPE_TYPE = RopeType(name="yarn", summary="YaRN", order=40, read=_read, inv_freq=_inv_freq, bands=_bands,
                     float32_inv_freq=_float32, params=PARAMS, context="original", check_rotary=_check_rotary,
                     divisor_ulps_per_factor=2.0, scheme_options=_scheme_options, gguf_name="yarn",
                     gguf_keys={"original_context_length": ("original_max_position_embeddings", True),
                                "yarn_beta_fast": ("beta_fast", False), "yarn_beta_slow": ("beta_slow", False)})

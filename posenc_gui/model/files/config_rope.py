"""The RoPE set-up of a Hugging Face ``config.json``, each value checked before any arithmetic uses it.

A config.json is untrusted: a ``model_type`` that is an object, a
400-digit integer, a ``hidden_size`` smaller than ``num_attention_heads``
(whose head dimension would be 0) are each one :class:`ModelFileError`
naming the key and the values it may take, never a TypeError, an
OverflowError or a ZeroDivisionError.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core import limits
from .model_file import ModelFileError, Pairing

#: The largest integer read from a config (2^53: every integer up to it is exact as a float; sizes are far smaller).
MAX_CONFIG_INT = 2**53
#: How Hugging Face's code for each model_type pairs RoPE dimensions.
HF_PAIRING: dict[str, Pairing] = {
    **dict.fromkeys(("gptj", "codegen", "roformer", "cohere", "cohere2"), "interleaved"),  # rotate_every_two
    **dict.fromkeys((  # rotate_half
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
        "gemma3_text", "phi", "phi3", "gpt_neox", "stablelm", "starcoder2", "olmo", "olmo2", "olmoe",
        "granite", "granitemoe", "smollm3", "nemotron", "persimmon",
    ), "halves"),
}
_ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_dim", "rotary_pct", "rotary_emb_base")
#: Older spellings (GPT-J, GPT-NeoX) of the keys a RoPE set-up is read from.
_ALIASES = {"n_embd": "hidden_size", "n_head": "num_attention_heads", "n_positions": "max_position_embeddings",
            "rotary_emb_base": "rope_theta", "rotary_pct": "partial_rotary_factor"}


def model_type(config: Mapping[str, Any] | None, config_path: Path) -> str | None:
    """The config's ``model_type`` (None without a config or the key); ModelFileError when it is not text."""
    value = config.get("model_type") if config else None
    if value is not None and not isinstance(value, str):
        raise ModelFileError(config_path, f"model_type is {limits.shown(value)}, not a name (text such as \"llama\")")
    return value


def whole_number(value: Any, key: str, config_path: Path, low: int) -> int | None:
    """``value`` of the config key ``key`` as an integer in ``low`` … :data:`MAX_CONFIG_INT` (an integral float
    counts), or None when it is None; ModelFileError naming the key and that range otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= MAX_CONFIG_INT \
            or value != int(value):  # in range before int(): int(inf) raises, 10**400 has no float
        raise ModelFileError(config_path, f"{key} is {limits.shown(value)}, not an integer in {low:,} … "
                                          f"{MAX_CONFIG_INT:,}")
    return int(value)


def positive(value: Any, key: str, config_path: Path) -> float | None:
    """``value`` of the config key ``key`` as a positive finite float (at most :data:`MAX_CONFIG_INT` when written
    as an integer), or None when it is None; ModelFileError naming the key otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (isinstance(value, int) and not 0 < value <= MAX_CONFIG_INT) \
            or (isinstance(value, float) and not (math.isfinite(value) and value > 0)):
        raise ModelFileError(config_path, f"{key} is {limits.shown(value)}, not a positive finite number")
    return float(value)


def hf_rope(config: Mapping[str, Any] | None,
            config_path: Path) -> tuple[dict[str, Any] | None, Pairing | None, list[str]]:
    """The RoPE set-up of a config.json in Hugging Face keys, the pairing its model's code uses, and notes.

    ``head_dim`` is filled in as ``hidden_size // num_attention_heads`` and
    ``partial_rotary_factor`` from ``rotary_dim`` (GPT-J), as Hugging Face
    does. Raises ModelFileError naming the key for a value of the wrong type
    or out of range.
    """
    if config is None:
        return None, None, []
    text_config = config.get("text_config")
    if not any(key in config for key in _ROPE_KEYS) and isinstance(text_config, dict):
        config = text_config  # multimodal models keep the language model's set-up there
    kind = model_type(config, config_path)
    if not any(key in config for key in _ROPE_KEYS) and kind not in HF_PAIRING:
        return None, None, []
    values = {_ALIASES.get(key, key): value for key, value in config.items()}
    spelled = {_ALIASES.get(key, key): key for key in config}  # messages name a key as the file spells it

    def number(key: str) -> float | None:
        return positive(values.get(key), spelled.get(key, key), config_path)

    def integer(key: str) -> int | None:
        return whole_number(values.get(key), spelled.get(key, key), config_path, 1)

    notes = []
    rope: dict[str, Any] = {}
    for key in ("rope_scaling", "rope_parameters"):
        if values.get(key) is not None:
            if not isinstance(values[key], dict):
                raise ModelFileError(config_path, f"{key} is {limits.shown(values[key])}, not an object")
            rope[key] = values[key]
    theta = number("rope_theta")
    if theta is None and "rope_parameters" not in rope:  # rope_parameters holds its own rope_theta
        theta = 10000.0
        notes.append("config.json has no rope_theta: 10000 (the Hugging Face default)")
    if theta is not None:
        rope["rope_theta"] = theta
    for key in ("hidden_size", "num_attention_heads", "max_position_embeddings", "original_max_position_embeddings"):
        value = integer(key)
        if value is not None:
            rope[key] = value
    head_dim = integer("head_dim")
    if head_dim is None and "hidden_size" in rope and "num_attention_heads" in rope:
        if rope["hidden_size"] < rope["num_attention_heads"]:
            hidden, heads = spelled["hidden_size"], spelled["num_attention_heads"]
            raise ModelFileError(config_path, f"{hidden} must be at least {heads} ({rope['num_attention_heads']:,}), "
                                              f"got {rope['hidden_size']:,}: the head dimension {hidden} // {heads} "
                                              "would be 0")
        head_dim = rope["hidden_size"] // rope["num_attention_heads"]
    if head_dim is not None:
        rope["head_dim"] = head_dim
    factor = number("partial_rotary_factor")
    rotary_dim = integer("rotary_dim")
    if rotary_dim is not None and head_dim is not None:
        if rotary_dim > head_dim:
            raise ModelFileError(config_path, f"rotary_dim must be in 1 … head_dim ({head_dim:,}), "
                                              f"got {rotary_dim:,}")
        factor = rotary_dim / head_dim
        if int(head_dim * factor) < rotary_dim:  # Hugging Face truncates int(head_dim * factor)
            factor = math.nextafter(factor, math.inf)
    if factor is not None and factor > 1:
        raise ModelFileError(config_path, f"{spelled.get('partial_rotary_factor', 'partial_rotary_factor')} must be "
                                          f"in 0 … 1, got {factor:g}")
    rope["partial_rotary_factor"] = 1.0 if factor is None else factor
    pairing = HF_PAIRING.get(kind) if kind is not None else None
    if pairing is None:
        notes.append(f"how model_type {kind!r} pairs RoPE dimensions is not known")
    return rope, pairing, notes

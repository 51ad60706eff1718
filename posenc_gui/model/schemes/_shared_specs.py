"""Parameters that several schemes declare: one spec per name (:data:`~posenc_gui.model.schemes.OPTION_SPECS`).

A name means the same in every scheme that has it, down to its range,
help and title, so the schemes that take it import its spec from here:
``n_heads`` and ``head`` (ALiBi's slopes, T5's bias table) and ``seed``
(a random draw: T5's untrained bias table).
"""

from __future__ import annotations

from ..bias import MAX_HEADS
from ..core.specs import ParamSpec

#: Largest seed a user sets: a spin box holds 32-bit signed integers (the model takes up to 2^32 − 1).
MAX_SPIN_SEED = 2**31 - 1

N_HEADS = ParamSpec(
    "n_heads", "int", 8, "heads",
    f"Attention heads, 1…{MAX_HEADS}: ALiBi gives each head its own slope, T5 its own bias per bucket.",
    low=1, high=MAX_HEADS, log=True, title=lambda value: f"{value:,} head" + ("" if value == 1 else "s"),
    slug=lambda value: f"{value}heads")
HEAD = ParamSpec(
    "head", "int", 0, "head shown",
    "The head whose bias is shown, 0-based and below n_heads. ALiBi: with a power-of-two head count head 0 has "
    "the largest slope; otherwise head c does, c the largest power of two below n_heads (BLOOM's 112 heads: "
    "head 64).",
    low=0, high=MAX_HEADS - 1, title=lambda value: f"head {value}", slug=lambda value: f"head{value}")
SEED = ParamSpec(
    "seed", "int", 0, "seed",
    f"Seed of the random draw, 0…{MAX_SPIN_SEED:,}: the same seed gives the same values. The values are an "
    "untrained draw, not a trained model's.",
    low=0, high=MAX_SPIN_SEED, title=lambda value: f"seed {value}")


def check_head(n_heads: int, head: int) -> None:
    """Refuse a head beyond the head count.

    Raises
    ------
    ValueError
        Naming ``head`` and its range for these ``n_heads``.
    """
    if head >= n_heads:
        raise ValueError(f"head must be 0…{n_heads - 1} (one of the n_heads = {n_heads} heads), got {head}")


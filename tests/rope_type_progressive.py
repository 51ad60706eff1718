"""A RoPE scaling type declared in this one module, as a contributor would add one to ``model/rope/types/``.

"progressive" (a test type, no model's) divides pair i's θ_i by
factor^((i / (pairs − 1))^power): the fastest pair is kept, the slowest
divided by the whole factor, those between by a power of it. Its one
parameter of its own is ``progressive_power``; it has a trained context
L₀ (``original_max_position_embeddings``) and a float32 path, and GGUF
files name it ``progressive``.
"""

from __future__ import annotations

import numpy as np

from posenc_gui.model.rope.config import RopeBands, RopeConfig, ScalingSection, check_factor, float32_unscaled
from posenc_gui.model.rope.types import RopeType
from posenc_gui.model.core.specs import ParamSpec

POWER = ParamSpec("progressive_power", "real", 1.0, "progressive power",
                  "progressive: pair i is divided by factor^((i / (pairs − 1))^power).",
                  low=0.1, high=10.0, shown_when=("rope_type", ("progressive",)),
                  title=lambda value: f"power {value:g}")


def _read(section: ScalingSection) -> tuple[dict[str, object], float]:
    power = section.section.get("progressive_power", 1.0)
    return {"factor": section.factor("factor"),
            "progressive_power": check_factor(f"{section.source}.progressive_power", power)}, 1.0


def exponents(pairs: int, power: float) -> np.ndarray:
    """(i / (pairs − 1))^power of each pair: 0 for the fastest, 1 for the slowest."""
    return (np.arange(pairs) / max(pairs - 1, 1)) ** power


def _bands(rope: RopeConfig, unscaled: np.ndarray) -> RopeBands:
    weight = exponents(unscaled.size, rope.scaling["progressive_power"])
    return RopeBands(np.where(weight == 0.0, "kept", np.where(weight == 1.0, "divided", "partly divided")),
                     np.full(unscaled.size, np.nan))


def _inv_freq(rope: RopeConfig, unscaled: np.ndarray, seq_len: int | None) -> np.ndarray:
    return unscaled / rope.scaling["factor"] ** exponents(unscaled.size, rope.scaling["progressive_power"])


def _float32(rope: RopeConfig, seq_len: int | None) -> np.ndarray:
    divisor = np.float32(rope.scaling["factor"]) ** exponents(rope.rotary_dim // 2, rope.scaling["progressive_power"])
    return float32_unscaled(rope.rope_theta, rope.rotary_dim) / divisor.astype(np.float32)


ROPE_TYPE = RopeType(name="progressive", summary="progressive (test)", order=55, read=_read, inv_freq=_inv_freq,
                     bands=_bands, float32_inv_freq=_float32, params=(POWER,), context="original",
                     gguf_name="progressive", gguf_keys={"original_context_length": ("original_max_position_embeddings",
                                                                                     True)})

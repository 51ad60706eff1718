"""Biases added to the attention logits (ALiBi, T5 buckets), the xPos scale, and seeded untrained tables.

Each function follows the authors' or the canonical implementation, quirks
included (``REFERENCES.md``):

- ALiBi (Press et al. 2022): the slopes of the authors' fairseq code
  (``get_slopes``), the paper's bias −m·(i − j).
- T5: Hugging Face's ``T5Attention._relative_position_bucket`` (float32
  logarithm, truncation toward zero), relative position = key − query.
- xPos (Sun et al. 2022): torchscale's ``XPOS`` (``xpos_relative_position.py``).
- Learned tables and T5 bias tables drawn as a model starts training: the
  untrained baseline.

Everything here is float64 (the canonical code computes in float32 where it
is not stated otherwise) and deterministic; every bad input is a
``ValueError`` naming the parameter and its allowed range, and every matrix's
size is checked before it is allocated.

Example
-------
>>> from posenc_gui.model.bias import alibi_slopes, t5_relative_bucket
>>> alibi_slopes(8).tolist()[:3]
[0.5, 0.25, 0.125]
>>> t5_relative_bucket([-200, -8, 0, 8, 200]).tolist()
[15, 8, 0, 24, 31]
"""

from __future__ import annotations

from ._common import BLOCK_ELEMENTS, MAX_HEADS, MAX_SEED, MAX_SIGMA
from .alibi import MAX_SLOPE, alibi_bias, alibi_slopes
from .t5 import DEFAULT_T5_SIGMA, MAX_BUCKETS, t5_bias, t5_random_table, t5_relative_bucket
from .xpos import MAX_GAMMA, XPOS_LOG_LIMIT, xpos_centered_positions, xpos_farthest, xpos_scale, xpos_zeta
from .learned import DEFAULT_LEARNED_SIGMA, learned_key, learned_table, learned_values, splitmix64_mix

__all__ = [
    "BLOCK_ELEMENTS", "DEFAULT_LEARNED_SIGMA", "DEFAULT_T5_SIGMA", "MAX_BUCKETS", "MAX_GAMMA", "MAX_HEADS",
    "MAX_SEED", "MAX_SIGMA", "MAX_SLOPE", "XPOS_LOG_LIMIT", "alibi_bias", "alibi_slopes", "learned_key",
    "learned_table", "learned_values", "splitmix64_mix", "t5_bias", "t5_random_table", "t5_relative_bucket",
    "xpos_centered_positions", "xpos_farthest", "xpos_scale", "xpos_zeta",
]

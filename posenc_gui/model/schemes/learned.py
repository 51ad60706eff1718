"""A learned absolute position table as training starts: every entry drawn from N(0, σ²), seeded.

BERT's ``position_embeddings`` and GPT-2's ``wpe`` are tables of
positions × d_model that training learns; before training they are random
draws (Hugging Face's ``_init_weights``: ``normal_(0, initializer_range)``,
0.02 for both). This scheme is that untrained baseline, not a trained table:
tables read from model files are a separate source (issue #28).

Each entry is drawn on its own from the seed, its row ⌊pos⌋ and its column
(:func:`~posenc_gui.model.bias.learned_values`), so a view evaluates only the
positions it shows, at any length, and a position's vector is the same
whichever other positions are asked for. A model has rows only up to its
trained length; here every position has its own.

The scheme declares itself ``exact``: like a trained table, the table *is*
its numbers, which approximate no formula, so every digit of a value, a
distance or a dot product of them is the table's own (the last bit of an
entry may differ between CPUs, whose ``log`` and ``cos`` round differently,
as another draw would).
"""

from __future__ import annotations

import numpy as np

from ..bias import MAX_SIGMA
from ..bias.learned import DEFAULT_LEARNED_SIGMA, learned_values
from ..core.specs import ParamSpec
from ._core import Preset, Scheme
from ._shared_specs import SEED  # one "seed" for every seeded scheme (learned, t5): a name means one spec

SIGMA = ParamSpec(
    "sigma", "real", DEFAULT_LEARNED_SIGMA, "σ (init std)",
    "The standard deviation every entry is drawn with, N(0, σ²): Hugging Face's initializer_range (0.02 for BERT "
    "and GPT-2). Must be > 0.",
    low=0.0, high=MAX_SIGMA, low_open=True, log=True, slider=(1e-3, 10.0), title=lambda value: f"σ {value:g}",
    slug=lambda value: f"sigma{value:g}",
)


def _table(positions: np.ndarray, dims: np.ndarray, d_model: int, sigma: float, seed: int) -> np.ndarray:
    return learned_values(positions, dims, sigma, seed)


def _term(dim: int, d_model: int, sigma: float, seed: int) -> str:
    return f"σ·z(⌊pos⌋, {dim}), z ~ N(0, 1) drawn with seed {seed}, σ = {sigma:g}"


SCHEME = Scheme(
    key="learned", label="Learned table (untrained)", order=95,
    summary="A learned absolute table (BERT, GPT-2) as training starts: every entry an independent draw from "
    "N(0, σ²), σ = 0.02 as Hugging Face initialises them. This is the untrained baseline a learned table starts "
    "from, not a trained one (those come from model files): no structure by position, nearby positions no more "
    "alike than distant ones, ‖PE(p)‖ ≈ σ·√d_model. Each entry depends on the seed, its row ⌊pos⌋ and its "
    "column only.",
    formula="PE(pos, j) = σ·z, z ~ N(0, 1) drawn for (seed, ⌊pos⌋, j)  (SplitMix64, Box–Muller)",
    params=(SIGMA, SEED), table=_table, term=_term, exact=True,
    presets=(
        Preset("BERT-base, untrained (512 × 768, σ 0.02)", 512, 768, {"sigma": 0.02},
               "bert-base-uncased config.json: max_position_embeddings 512, hidden_size 768, initializer_range "
               "0.02; Hugging Face's BertPreTrainedModel._init_weights draws nn.Embedding from normal_(0, "
               "initializer_range) (Google's TF code: a normal truncated at 2σ)"),
        Preset("GPT-2, untrained (1,024 × 768, σ 0.02)", 1024, 768, {"sigma": 0.02},
               "gpt2 config.json: n_positions 1024, n_embd 768, initializer_range 0.02; Hugging Face's "
               "GPT2PreTrainedModel._init_weights draws wpe from normal_(0, initializer_range) (OpenAI's TF "
               "model.py: random_normal_initializer(stddev=0.01) for wpe)"),
    ),
)

"""The toy head's inputs: the words of a sentence, their seeded embeddings and the head's seeded projections.

A word's toy embedding depends only on the word, the seed and ``d_model``
(seeded with a CRC-32 of the word, not Python's salted ``hash``), so the same
word gets the same vector in every sentence and every run; ``W_q``, ``W_k``,
``W_v`` depend only on the seed and ``d_model`` (:func:`attention_weights`,
drawn once per head). The head itself is :mod:`.head`.
"""

from __future__ import annotations

import functools
import math
import unicodedata
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Sequence

import numpy as np

from ..core import limits

#: Allowed demo model dimension: small, so every number can be read.
MIN_DEMO_D_MODEL = limits.MIN_DEMO_D_MODEL
MAX_DEMO_D_MODEL = limits.MAX_DEMO_D_MODEL
DEFAULT_DEMO_D_MODEL = limits.DEFAULT_DEMO_D_MODEL
#: Longest sentence (in words) the demo accepts.
MAX_WORDS = 512
#: Largest seed.
MAX_SEED = 2**32 - 1
#: The seed of the demo's embeddings and weights unless another is given.
DEFAULT_SEED = 0


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float64)
    array.setflags(write=False)
    return array

# --------------------------------------------------------------------------- tokens


def _strip_punctuation(word: str) -> str:
    start, end = 0, len(word)
    while start < end and unicodedata.category(word[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(word[end - 1]).startswith("P"):
        end -= 1
    return word[start:end]


def tokenize(sentence: str, name: str = "sentence") -> tuple[str, ...]:
    """Split a sentence into lower-case words.

    Splits on whitespace, lower-cases, and strips punctuation from both ends
    of each word (``"Dog,"`` → ``"dog"``, ``"man's"`` stays); pieces that are
    only punctuation are dropped.

    Parameters
    ----------
    sentence : str
        The text.
    name : str
        The parameter name used in error messages (``"sentence_a"``, …).

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        If the sentence is not a string, has no words, or has more than
        :data:`MAX_WORDS` words.
    """
    if not isinstance(sentence, str):
        raise ValueError(f"{name} must be text, got {type(sentence).__name__}")
    words = tuple(w for w in (_strip_punctuation(p.lower()) for p in sentence.split()) if w)
    if not words:
        raise ValueError(f"{name} is empty: type 1…{MAX_WORDS} words")
    if len(words) > MAX_WORDS:
        raise ValueError(f"{name} has {len(words)} words; the limit is {MAX_WORDS} words")
    return words


def _check_tokens(tokens: Sequence[str], name: str) -> tuple[str, ...]:
    if isinstance(tokens, str):
        raise ValueError(f"{name} must be a sequence of words; use tokenize() on a sentence")
    if not isinstance(tokens, Iterable):
        raise ValueError(f"{name} must be a sequence of 1…{MAX_WORDS} words, got {limits.shown(tokens)}")
    tokens = tuple(islice(tokens, MAX_WORDS + 1))
    if not tokens or not all(isinstance(t, str) and t for t in tokens):
        raise ValueError(f"{name} must hold 1…{MAX_WORDS} non-empty words")
    if len(tokens) > MAX_WORDS:
        raise ValueError(f"{name} has more than {MAX_WORDS} words; the limit is {MAX_WORDS} words")
    return tokens


def check_demo_d_model(d_model: object) -> int:
    """Validate the demo's model dimension (``2 … 64``)."""
    return limits.check_int("d_model", d_model, MIN_DEMO_D_MODEL, MAX_DEMO_D_MODEL)


def _check_seed(seed: object) -> int:
    return limits.check_int("seed", seed, 0, MAX_SEED)

# --------------------------------------------------------------------------- parameters


def word_embedding(word: str, d_model: int, seed: int = 0) -> np.ndarray:
    """The toy embedding ``e`` of one word: standard normal entries.

    Seeded by ``(seed, crc32(word))``, so it is the same in every sentence,
    process and platform.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(d_model,)``.
    """
    if not isinstance(word, str) or not word:
        raise ValueError(f"word must be a non-empty str, got {limits.shown(word)}")
    d_model = check_demo_d_model(d_model)
    seed = _check_seed(seed)
    rng = np.random.default_rng([seed, zlib.crc32(word.encode("utf-8")), d_model])
    return rng.standard_normal(d_model)


def token_embeddings(tokens: Sequence[str], d_model: int, seed: int = 0) -> np.ndarray:
    """Stack the embeddings of ``tokens`` into ``E``, shape ``(len(tokens), d_model)``.

    Repeated words get identical rows.
    """
    tokens = _check_tokens(tokens, "tokens")
    d_model = check_demo_d_model(d_model)
    unique = {word: word_embedding(word, d_model, seed) for word in dict.fromkeys(tokens)}
    return np.vstack([unique[word] for word in tokens])


@dataclass(frozen=True, eq=False)
class AttentionWeights:
    """The projections of the toy attention head, each ``(d_model, d_k)``.

    Entries are normal with variance ``1 / d_model``, so ``Q`` and ``K`` keep
    the scale of ``X`` and the scaled scores ``Q Kᵀ / √d_k`` stay near unit
    size (the softmax is neither flat nor saturated).
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray

    @property
    def d_k(self) -> int:
        """The key (and query) dimension."""
        return int(self.w_k.shape[1])


def attention_weights(d_model: int, seed: int = 0) -> AttentionWeights:
    """Seeded ``W_q``, ``W_k``, ``W_v`` for a head with ``d_k = d_v = d_model`` (read-only, shared)."""
    return _attention_weights(check_demo_d_model(d_model), _check_seed(seed))


@functools.lru_cache(maxsize=16)
def _attention_weights(d_model: int, seed: int) -> AttentionWeights:
    # Drawn once per head: every trace and split of the same head used to
    # draw them again (two draws per scale of the Addition dock's 51-scale
    # sweep, 45 % of its time).
    rng = np.random.default_rng([seed, 0x5EED, d_model])
    w = rng.standard_normal((3, d_model, d_model)) / math.sqrt(d_model)
    return AttentionWeights(_readonly(w[0]), _readonly(w[1]), _readonly(w[2]))

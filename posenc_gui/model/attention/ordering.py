"""Two orderings of the same words through the same head: the permutation that aligns them, and what differs.

Without position, reordering the words (a permutation matrix ``P``) only
reorders the rows: ``Z_b = P Z_a`` and ``A_b = P A_a Pᵀ``
(:func:`compare_orderings` measures both and says the result in words). A
causal mask is itself positional (:class:`MaskEvidence`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple, Sequence

import numpy as np

from .embeddings import _check_tokens
from .head import AttentionTrace

#: Below this a difference is called "the same" in the verdicts (rounding is ~1e-16).
SAME_TOLERANCE = 1e-9


def align_permutation(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> tuple[int, ...] | None:
    """The permutation that reorders ``a`` into ``b``, or ``None`` if there is none.

    Returns ``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``: the matrix
    ``P`` with ``P[i, perm[i]] = 1`` satisfies ``P @ X_a == X_b`` for the
    embeddings. A repeated word's occurrences are matched in order (the first
    ``dog`` of b to the first ``dog`` of a, …).

    Raises
    ------
    ValueError
        Unless each is a sequence of 1 … :data:`~.embeddings.MAX_WORDS` words (str).
    """
    tokens_a, tokens_b = _check_tokens(tokens_a, "tokens_a"), _check_tokens(tokens_b, "tokens_b")
    if len(tokens_a) != len(tokens_b) or Counter(tokens_a) != Counter(tokens_b):
        return None
    where: dict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(tokens_a):
        where[word].append(index)
    used: dict[str, int] = defaultdict(int)
    perm = []
    for word in tokens_b:
        perm.append(where[word][used[word]])
        used[word] += 1
    return tuple(perm)


def permutation_matrix(perm: Sequence[int]) -> np.ndarray:
    """``P`` with ``P[i, perm[i]] = 1``, so ``(P @ M)[i] = M[perm[i]]``."""
    n = len(perm)
    p = np.zeros((n, n))
    p[np.arange(n), np.asarray(perm, dtype=np.int64)] = 1.0
    return p


def word_difference(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> str:
    """Which words (with multiplicity) one sentence has and the other lacks, e.g.
    ``"only in a: dog; only in b: cat"``; empty if they hold the same words."""
    count_a, count_b = Counter(tokens_a), Counter(tokens_b)
    only_a = sorted((count_a - count_b).elements())
    only_b = sorted((count_b - count_a).elements())
    parts = []
    for key, words in (("a", only_a), ("b", only_b)):
        if words:
            parts.append(f"only in {key}: " + ", ".join(words[:8]) + (" …" if len(words) > 8 else ""))
    return "; ".join(parts)


def _not_permutation_message(tokens_a: tuple[str, ...], tokens_b: tuple[str, ...]) -> str:
    return (
        f"Sentence b is not a reordering of sentence a ({word_difference(tokens_a, tokens_b)}), so there is no "
        "permutation to compare. Each sentence is still traced on its own; use the same words in "
        "another order to compare."
    )


def repeated_word_spread(trace: AttentionTrace) -> dict[str, float]:
    """For each word that occurs more than once: the largest difference between its output rows.

    Without position identical words have identical rows of ``Z`` (spread
    ≈ 0); with position they differ.
    """
    rows: dict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(trace.tokens):
        rows[word].append(index)
    spread = {}
    for word, index in rows.items():
        if len(index) > 1:
            block = trace.output[index]
            spread[word] = float(np.max(np.abs(block - block[0])))
    return spread


#: At most this many words are named in a verdict's list of keys seen.
MAX_LISTED_WORDS = 4


@dataclass(frozen=True, eq=False)
class MaskEvidence:
    """What a causal mask lets each word see in two orderings of the same words, measured from the traces.

    Attributes
    ----------
    words : tuple of str
        Sentence a's words, in a's order.
    keys_seen_a, keys_seen_b : tuple of int
        How many keys each of a's words attends to in a, and the same
        occurrence of the word in b (``i + 1`` at position ``i``).
    first_words : tuple of str
        The first word of a and of b.
    first_output_minus_value : tuple of float
        ``max |Z[0] − V[0]|`` in a and in b: the first word sees only
        itself, so its output is its own value vector (0, exactly).
    """

    words: tuple[str, ...]
    keys_seen_a: tuple[int, ...]
    keys_seen_b: tuple[int, ...]
    first_words: tuple[str, str]
    first_output_minus_value: tuple[float, float]

    @property
    def changed(self) -> int:
        """How many words see a different number of keys in b than in a."""
        return sum(1 for a, b in zip(self.keys_seen_a, self.keys_seen_b) if a != b)

    def sentence(self) -> str:
        """Why the mask is positional, with these numbers, in words."""
        listed = ", ".join(f"“{word}” {a} → {b}" for word, a, b in
                           islice(zip(self.words, self.keys_seen_a, self.keys_seen_b), MAX_LISTED_WORDS))
        more = (f", … ({self.changed} of {len(self.words)} words see a different number)"
                if len(self.words) > MAX_LISTED_WORDS else "")
        first_a, first_b = self.first_words
        res_a, res_b = self.first_output_minus_value
        return (
            f"the causal mask is itself positional: word i attends only to words 0…i, so what a word sees "
            f"depends on its place (keys seen in a → b: {listed}{more}). The first word sees only itself, so "
            f"its output is its own value vector whatever the words are: max |Z[0] − V[0]| = {res_a:.1g} "
            f"(“{first_a}”, a) and {res_b:.1g} (“{first_b}”, b)."
        )


def mask_evidence(trace_a: AttentionTrace, trace_b: AttentionTrace, perm: Sequence[int]) -> MaskEvidence:
    """Measure what the mask lets each word see in ``trace_a`` and in ``trace_b`` (``perm`` aligns b to a).

    Counts the allowed keys of each query row and compares the first word's
    output with its value vector, in both traces.
    """
    seen_a, seen_b = trace_a.keys_seen(), trace_b.keys_seen()
    in_b = np.empty(len(perm), dtype=np.int64)
    in_b[np.asarray(perm, dtype=np.int64)] = np.arange(len(perm))  # a's row r is b's row in_b[r]
    first = tuple(float(np.max(np.abs(t.output[0] - t.v[0]))) for t in (trace_a, trace_b))
    return MaskEvidence(trace_a.tokens, tuple(int(c) for c in seen_a), tuple(int(c) for c in seen_b[in_b]),
                        (trace_a.tokens[0], trace_b.tokens[0]), (first[0], first[1]))


@dataclass(frozen=True, eq=False)
class OrderingComparison:
    """Two sentences through the same head, compared after aligning b to a.

    Attributes
    ----------
    trace_a, trace_b : AttentionTrace
    permutation : tuple of int or None
        ``perm`` with ``tokens_b[i] == tokens_a[perm[i]]``; ``None`` if b is
        not a reordering of a.
    max_abs_diff_output : float or None
        ``max |Z_b − P Z_a|``; ``None`` without a permutation.
    max_abs_diff_attention : float or None
        ``max |A_b − P A_a Pᵀ|``; ``None`` without a permutation.
    verdict : str
        The result in plain words, with the measured numbers.
    mask : MaskEvidence or None
        With a causal head and a permutation, what the mask lets each word
        see in a and in b; otherwise ``None``.
    """

    trace_a: AttentionTrace
    trace_b: AttentionTrace
    permutation: tuple[int, ...] | None
    max_abs_diff_output: float | None
    max_abs_diff_attention: float | None
    verdict: str
    mask: MaskEvidence | None = None

    @property
    def is_permutation(self) -> bool:
        """True if b is a reordering of a."""
        return self.permutation is not None

    @property
    def same(self) -> bool:
        """True if b's outputs are a's rows reordered (up to rounding)."""
        return self.max_abs_diff_output is not None and self.max_abs_diff_output <= SAME_TOLERANCE

    @property
    def causal(self) -> bool:
        """True if the head masks future keys."""
        return self.trace_a.causal


def _position_label(rotation: str | None, bias: bool = False) -> str:
    """How the verdicts name the head with position: an added encoding, the rotation named ``rotation`` (RoPE,
    xPos; None for none) or a logit bias."""
    return f"with {rotation}" if rotation else "with the bias" if bias else "with position"


def _verdict(with_position: bool, perm: tuple[int, ...] | None, diff_z: float | None, diff_a: float | None,
             same_vectors: bool = False, rotation: str | None = None, mask: MaskEvidence | None = None,
             causal: bool = False, bias: bool = False, bias_kept: bool = False) -> str:
    """The comparison in words; ``same_vectors``: the encoding gives every position the same vector;
    ``rotation``: the name of the rotation of Q and K (RoPE, xPos) the head applies instead of adding an
    encoding, None for none; ``mask``: what a causal
    head's mask lets each word see (``causal``: the head has one); ``bias``: a bias is added to the logits;
    ``bias_kept``: the reordering gives every pair of words the bias it had (measured)."""
    label = _position_label(rotation, bias) if with_position else "without position"
    if causal:
        label += " and the causal mask" if with_position else " but with the causal mask"
    label = label[0].upper() + label[1:]  # not str.capitalize: "RoPE" keeps its capitals
    if perm is None or diff_z is None or diff_a is None:
        return f"{label}: no comparison — sentence b is not a reordering of sentence a."
    identity = all(i == j for i, j in enumerate(perm))
    if diff_z <= SAME_TOLERANCE and diff_a <= SAME_TOLERANCE:
        text = (
            f"{label} the outputs are the same rows permuted: max difference {diff_z:.1e} "
            f"(attention weights {diff_a:.1e})"
        )
        text += " — only floating-point rounding." if max(diff_z, diff_a) > 0 else "."
        if identity and (with_position or causal):
            text += (" Both sentences have the same order, so "
                     + ("position and the mask change" if with_position and causal
                        else "position changes" if with_position else "the mask changes")
                     + " nothing here.")
        elif with_position and same_vectors:
            text += (" The encoding gives every position the same vector, so attention still cannot see word "
                     "order: it is permutation invariant, as without position.")
        elif with_position and rotation:
            text += (" The rotation turns too little over these offsets to change the outputs: the head "
                     "still cannot see word order.")
        elif with_position and bias_kept:
            text += (" The reordering gives every pair of words the bias it had (e.g. a reversal under a "
                     "symmetric bias, which depends on |i − j| only), so the head cannot tell the two apart.")
        return text
    text = (
        f"{label} they differ by {diff_z:.2g} (largest |Z_b − P Z_a|; attention weights "
        f"by {diff_a:.2g}): the head now sees word order"
    )
    if mask is not None:
        if not with_position or same_vectors:
            reason = ("no position is added (every position's vector is the same), yet "
                      if with_position else "no position is added, yet ")
            return text + f" — {reason}{mask.sentence()}"
        if rotation:
            return text + (" — a rotated logit depends on the offset n − m between key and query, and the "
                           f"reordering changes the offsets; besides, {mask.sentence()}")
        if bias:
            return text + (" — the bias depends on the positions of query and key, which the reordering "
                           f"changes; besides, {mask.sentence()}")
        return text + f" — from the added encoding, and because {mask.sentence()}"
    if bias:
        return text + (" — the bias added to each logit depends on the positions of query and key, and the "
                       "reordering moves the words to other positions.")
    if rotation:
        return text + (" — a rotated logit depends on the offset n − m between key and query, and the "
                       "reordering changes the offsets.")
    return text + "."


def compare_orderings(trace_a: AttentionTrace, trace_b: AttentionTrace) -> OrderingComparison:
    """Compare two traces after aligning b's rows (and columns) to a's.

    Both traces must be made with the same ``d_model``, seed, causal mask
    and, for a fair comparison, the same scheme (or none). With a rotation
    the verdict says so and why the outputs differ (the rotated logits
    depend on the offsets); with a causal mask it measures what the mask
    lets each word see (:func:`mask_evidence`), which changes with the order
    even without position.

    Raises
    ------
    ValueError
        If one trace is causal and the other is not.
    """
    if trace_a.causal != trace_b.causal:
        raise ValueError("trace_a and trace_b must both have the causal mask or both not "
                         f"(causal {trace_a.causal} and {trace_b.causal})")
    perm = align_permutation(trace_a.tokens, trace_b.tokens)
    with_position = trace_a.with_position or trace_b.with_position
    rotation = next((trace.rotation.name for trace in (trace_a, trace_b) if trace.rotation is not None), None)
    bias = trace_a.bias is not None or trace_b.bias is not None
    causal = trace_a.causal
    if perm is None:
        return OrderingComparison(trace_a, trace_b, None, None, None,
                                  _verdict(with_position, None, None, None, rotation=rotation, causal=causal,
                                           bias=bias))
    index = np.asarray(perm, dtype=np.int64)
    diff_z = float(np.max(np.abs(trace_b.output - trace_a.output[index])))
    diff_a = float(np.max(np.abs(trace_b.attention - trace_a.attention[np.ix_(index, index)])))
    same_vectors = all(trace.positional is not None and bool(np.all(trace.positional == trace.positional[0]))
                       for trace in (trace_a, trace_b))
    mask = mask_evidence(trace_a, trace_b, perm) if causal else None
    bias_kept = (trace_a.bias is not None and trace_b.bias is not None
                 and bool(np.array_equal(trace_b.bias, trace_a.bias[np.ix_(index, index)])))
    return OrderingComparison(trace_a, trace_b, perm, diff_z, diff_a,
                              _verdict(with_position, perm, diff_z, diff_a, same_vectors, rotation, mask, causal,
                                       bias, bias_kept),
                              mask)


class Comparisons(NamedTuple):
    """Two sentences compared without and with position, as the Permutation demo shows them."""

    #: The traces without position, compared.
    without_pe: OrderingComparison
    #: The traces with position, compared.
    with_pe: OrderingComparison
    #: Empty when b reorders a; otherwise why there is no comparison.
    message: str
    #: ``{"a": {word: (spread without, spread with position)}, "b": {…}}`` for the words that occur more than
    #: once (:func:`repeated_word_spread`).
    repeated: dict[str, dict[str, tuple[float, float]]]


def compare_both(plain_a: AttentionTrace, plain_b: AttentionTrace, pos_a: AttentionTrace, pos_b: AttentionTrace
                 ) -> Comparisons:
    """Compare the orderings without position (``plain_*``) and with it (``pos_*``), and the repeated words.

    Used by the toy demo and by the real head alike (each makes its own traces).
    """
    without_pe = compare_orderings(plain_a, plain_b)
    with_pe = compare_orderings(pos_a, pos_b)
    message = "" if without_pe.is_permutation else _not_permutation_message(plain_a.tokens, plain_b.tokens)
    repeated = {}
    for key, plain, positioned in (("a", plain_a, pos_a), ("b", plain_b, pos_b)):
        spread_plain, spread_pos = repeated_word_spread(plain), repeated_word_spread(positioned)
        repeated[key] = {w: (spread_plain[w], spread_pos[w]) for w in spread_plain}
    return Comparisons(without_pe, with_pe, message, repeated)

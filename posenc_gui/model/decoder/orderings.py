"""The permutation demo with a real decoder: one text and a reordering of its tokens ("dog bites man" /
"man bites dog"), traced causally and compared token by token.

Without positions and without a mask, attention is permutation-equivariant:
the reordered text's attention would be the first one's with rows and
columns permuted. A RoPE decoder breaks that in three ways, each measured
here for every layer and head (A the first ordering, B the second, tokens
aligned by their text; ``p_A(t)`` the position of token t in A)::

    mask      pair (t, s) is seen in A when p_A(s) ≤ p_A(t), in B when p_B(s) ≤ p_B(t)
    context   the tokens' vectors before RoPE, q̃ = R(−p)·q / f² (and k̃), differ between A and B from
              layer 1 on: each token has read other tokens before it. At layer 0 they depend on the token
              id alone (equal for equal ids, to float32 rounding)
    position  RoPE rotates q̃ and k̃ by the position, so the logit of a pair depends on its offset:
              B's logit of (t, s) at B's offsets − B's vectors at A's offsets is the position's part,
              B's vectors at A's offsets − A's logit is the context's part; the two add up to B − A.

Everything is in A's token order: row t, column s is query token t, key token s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .trace import DecoderTrace, _rotary_tables, _rotate
from .view_data import DecoderRun, trace_text

#: Each ordering holds at most this many tokens (the comparison keeps layers × heads × T² values, several times).
MAX_ORDERING_TOKENS = 64
#: The demo's texts when none are given: "dog bites man" in a sentence, so that every word has the same token id
#: in both (a first word and the same word after a space are two ids).
DEFAULT_ORDERINGS = ("The dog bites the man.", "The man bites the dog.")
#: Characters a token's text loses before tokens are matched: a word's leading space (GPT-2's Ġ, SentencePiece's ▁).
_SPACES = " \t\n▁Ġ"


@dataclass(frozen=True, eq=False)
class OrderingComparison:
    """Two orderings of the same tokens traced by one decoder, compared in A's token order. L layers, H heads,
    G key/value heads, T tokens.

    Attributes
    ----------
    run_a, run_b : DecoderRun
        The two texts traced (every layer).
    order : ndarray of int (T,)
        ``order[t]``: the position in B of A's token t.
    same_id : ndarray of bool (T,)
        Whether token t has the same id in both (a word after a space and at the start are often two ids).
    seen_a, seen_b : ndarray of bool (T, T)
        Whether query t sees key s in A, in B (the causal mask).
    attention_a, attention_b : ndarray (L, H, T, T)
        Each ordering's attention, 0 where masked.
    logits_a, logits_b, logits_b_at_a : ndarray (L, H, T, T)
        q·k/√d of every pair, masked or not: A's, B's, and B's vectors rotated to A's positions.
    query_change, key_change : ndarray (L, H, T) and (L, G, T)
        ‖q̃_B(t) − q̃_A(t)‖ / ‖q̃_A(t)‖: how much token t's query (key) before RoPE differs between the
        orderings.
    """

    run_a: DecoderRun
    run_b: DecoderRun
    order: np.ndarray
    same_id: np.ndarray
    seen_a: np.ndarray
    seen_b: np.ndarray
    attention_a: np.ndarray
    attention_b: np.ndarray
    logits_a: np.ndarray
    logits_b: np.ndarray
    logits_b_at_a: np.ndarray
    query_change: np.ndarray
    key_change: np.ndarray

    @property
    def seen_in_both(self) -> np.ndarray:
        """(T, T) bool: the pairs both orderings' masks let through."""
        return self.seen_a & self.seen_b

    def largest(self, values: np.ndarray, layer: int, head: int | None = None) -> float:
        """max |values| of ``layer`` (and ``head``) over the pairs seen in both orderings (0 if none)."""
        chosen = values[self.run_a.row(layer)] if head is None else values[self.run_a.row(layer), head]
        both = self.seen_in_both
        return float(np.abs(chosen[..., both]).max()) if both.any() else 0.0


def token_order(texts_a: tuple[str, ...], texts_b: tuple[str, ...]) -> np.ndarray:
    """``order[t]``: where A's token t is in B, tokens matched by their text without leading spaces, equal
    texts in the order they come. ValueError when B's tokens are not A's in another order."""
    def word(text: str) -> str:
        return text.strip(_SPACES)

    if len(texts_a) != len(texts_b) or sorted(map(word, texts_a)) != sorted(map(word, texts_b)):
        raise ValueError(f"text_b must hold text_a's tokens in another order; A reads as "
                         f"{' | '.join(texts_a)}, B as {' | '.join(texts_b)}")
    unused: dict[str, list[int]] = {}
    for index, text in enumerate(texts_b):
        unused.setdefault(word(text), []).append(index)
    return np.asarray([unused[word(text)].pop(0) for text in texts_a], dtype=np.int64)


def _before_rope(vectors: np.ndarray, trace: DecoderTrace) -> np.ndarray:
    """``vectors`` (heads, T, head_dim) after RoPE at the trace's positions, rotated back (float64)."""
    cos, sin = _rotary_tables(trace.positions, trace.inv_freq, trace.attention_factor, trace.exact_angles)
    back = _rotate(vectors.astype(np.float64), cos.astype(np.float64), -sin.astype(np.float64))
    rotary = cos.shape[1]
    back[..., :rotary] /= float(trace.attention_factor) ** 2
    return back


def _at_positions(vectors: np.ndarray, positions: np.ndarray, trace: DecoderTrace) -> np.ndarray:
    """Vectors before RoPE (heads, T, head_dim) rotated to ``positions`` with the trace's RoPE set-up."""
    cos, sin = _rotary_tables(positions, trace.inv_freq, trace.attention_factor, trace.exact_angles)
    return _rotate(vectors, cos.astype(np.float64), sin.astype(np.float64))


def _relative_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(a, axis=-1)
    return np.linalg.norm(b - a, axis=-1) / np.where(norm > 0, norm, 1.0)


def compare_orderings(run_a: DecoderRun, run_b: DecoderRun) -> OrderingComparison:
    """Compare two traces of the same tokens in two orders (see the module docstring).

    Raises
    ------
    ValueError
        The runs do not keep the same layers, or B's tokens are not A's in another order.
    """
    trace_a, trace_b = run_a.trace, run_b.trace
    if trace_a.layers != trace_b.layers:
        raise ValueError(f"run_b must keep run_a's layers ({trace_a.layers}), got {trace_b.layers}")
    order = token_order(run_a.token_texts, run_b.token_texts)
    count = order.size
    where_a = np.arange(count)
    seen_a = where_a[:, None] >= where_a[None, :]
    seen_b = order[:, None] >= order[None, :]
    positions_a = trace_a.positions
    scale = 1.0 / np.sqrt(trace_a.head_dim)
    group = trace_a.num_heads // trace_a.num_kv_heads
    parts: dict[str, list[np.ndarray]] = {name: [] for name in (
        "attention_a", "attention_b", "logits_a", "logits_b", "logits_b_at_a", "query_change", "key_change")}
    kv_of_head = np.arange(trace_a.num_heads) // group
    for layer in trace_a.layers:
        queries_a = trace_a.queries(layer).astype(np.float64)
        keys_a = trace_a._keys[layer].astype(np.float64)  # (G, T, d): one per key/value head
        queries_b = trace_b.queries(layer).astype(np.float64)[:, order]
        keys_b = trace_b._keys[layer].astype(np.float64)[:, order]
        parts["attention_a"].append(trace_a.attention(layer).astype(np.float64))
        parts["attention_b"].append(trace_b.attention(layer).astype(np.float64)[:, order][:, :, order])
        parts["logits_a"].append(queries_a @ keys_a[kv_of_head].transpose(0, 2, 1) * scale)
        parts["logits_b"].append(queries_b @ keys_b[kv_of_head].transpose(0, 2, 1) * scale)
        plain_q_a, plain_k_a = _before_rope(queries_a, trace_a), _before_rope(keys_a, trace_a)
        plain_q_b = _before_rope(trace_b.queries(layer), trace_b)[:, order]
        plain_k_b = _before_rope(trace_b._keys[layer], trace_b)[:, order]
        moved_q = _at_positions(plain_q_b, positions_a, trace_a)
        moved_k = _at_positions(plain_k_b, positions_a, trace_a)
        parts["logits_b_at_a"].append(moved_q @ moved_k[kv_of_head].transpose(0, 2, 1) * scale)
        parts["query_change"].append(_relative_change(plain_q_a, plain_q_b))
        parts["key_change"].append(_relative_change(plain_k_a, plain_k_b))
    same_id = trace_a.token_ids == trace_b.token_ids[order]
    return OrderingComparison(run_a, run_b, order, same_id, seen_a, seen_b,
                              **{name: np.stack(arrays) for name, arrays in parts.items()})


def trace_orderings(path: str, text_a: str, text_b: str,
                    progress: Callable[[int, int], bool | None] | None = None) -> OrderingComparison:
    """Trace ``text_a`` and ``text_b`` (the same tokens in another order) through every layer of the decoder at
    ``path`` and compare them (:func:`compare_orderings`); runs in the worker.

    Parameters
    ----------
    path : str
        A Llama-family model: Hugging Face folder or GGUF file.
    text_a, text_b : str
        At most :data:`MAX_ORDERING_TOKENS` tokens each.
    progress : callable or None
        ``progress(done, total)`` over both traces' layers; False cancels (:class:`TraceCancelled`).

    Raises
    ------
    ValueError
        Naming the text and its range, or saying how B's tokens differ from A's.
    TraceCancelled
        ``progress`` returned False.
    """
    runs = []
    for index, text in enumerate((text_a, text_b)):
        def step(done: int, total: int, first: int = index) -> bool | None:
            return None if progress is None else progress(first * total + done, 2 * total)

        run = trace_text(path, text, progress=step, max_tokens=MAX_ORDERING_TOKENS,
                         name=("text_a", "text_b")[index])
        runs.append(run)
    return compare_orderings(*runs)


__all__ = ["DEFAULT_ORDERINGS", "MAX_ORDERING_TOKENS", "OrderingComparison", "compare_orderings", "token_order",
           "trace_orderings"]

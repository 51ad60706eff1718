"""A real attention head: the first layer of a BERT-family checkpoint, traced on the user's sentences.

The Permutation demo's toy head has random weights. This module runs the
head of a model on disk instead, exactly as Hugging Face's ``BertEmbeddings``
and ``BertSelfAttention`` (``modeling_bert.py``; RoBERTa's and DistilBERT's
are the same up to the names and position ids) compute it, in float64::

    e_i = W_word[id_i] + W_type[0]             (BERT, RoBERTa: token type 0; DistilBERT has none)
    p_i = W_pos[offset + i]                    (offset 0, RoBERTa padding_idx + 1 = 2)
    X   = LayerNorm(e + p) = (x − mean) / √(var + eps) · γ + β     (var: the biased variance)
    Q   = X W_qᵀ + b_q,  K = X W_kᵀ + b_k,  V = X W_vᵀ + b_v    (nn.Linear: weight is (out, in))
    head h keeps the output columns h·d_head … (h+1)·d_head − 1 of Q, K and V
    S   = Q Kᵀ / √d_head,  A = softmax(S) by rows,  Z = A V

"Without the position table" leaves ``p`` out: ``X = LayerNorm(e)``. Every
operation but ``S`` and ``A`` acts on each token alone, so without the table
reordering the tokens only reorders the rows, as in the toy demo; with it,
each token carries its position's row and the head sees the order.

Only the tensors of the embeddings and of layer 0's attention are read, and
of the word table only the rows of the sentences' tokens (memory-mapped,
:meth:`~posenc_gui.model.files.ModelFile.read_rows`). The tokenizer is the
folder's ``tokenizer.json``, read by the ``tokenizers`` package (imported
only when a sentence is tokenised); like every model file it is untrusted:
bounded in size and nesting, and any failure is one line.

Example
-------
>>> demo = bert_permutation_demo("path/to/all-MiniLM-L6-v2", "dog bites man", "man bites dog", head=0)  # doctest: +SKIP
>>> demo.without_pe.max_abs_diff_output < 1e-12  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..core import limits
from ..files.model_file import MAX_JSON_BYTES, ModelFile, ModelFileError, read_json
from ..files.model_tables import cached_model
from .embeddings import MAX_WORDS, _readonly
from .head import AttentionTrace, softmax_rows
from .ordering import compare_both
from .permutation import PermutationDemo, _comparison_dict

#: The file a model folder's tokenizer is read from.
TOKENIZER_FILE = "tokenizer.json"
#: The matrices of the split of the real head's logits, in order.
TABLE_TERMS = ("without the table", "with the table", "table contribution")
#: Hugging Face's default ``layer_norm_eps`` of BERT and RoBERTa, and DistilBERT's fixed one.
DEFAULT_LAYER_NORM_EPS = 1e-12
#: What the split of the logits is, for the figure and the export.
TABLE_SPLIT_NOTE = (
    "The four-term split e·e + e·p + p·e + p·p needs X = E + PE. A BERT-family model normalises first, "
    "X = LayerNorm(e + p), and its projections have biases, so the logits do not split into four terms; what "
    "applies is the logits without and with the position table and their difference, the table's contribution."
)


# --------------------------------------------------------------------------- the model's layout


@dataclass(frozen=True)
class BertLayout:
    """Where a BERT-family checkpoint keeps what its first attention layer needs.

    Attributes
    ----------
    family : {"bert", "roberta", "distilbert"}
        Which Hugging Face code the layout follows (RoBERTa: BERT's names, position ids from ``offset``).
    word, position, token_type : str
        Tensor names of the word, position and token-type tables (``token_type`` "" for DistilBERT).
    norm_weight, norm_bias : str
        The embeddings' LayerNorm γ and β (``weight``/``bias`` or the old ``gamma``/``beta``).
    query, key, value : tuple of (str, str)
        Layer 0's projection weight and bias names.
    hidden_size, num_heads : int
    layer_norm_eps : float
    position_offset : int
        The position table's rows before position 0 (RoBERTa: ``pad_token_id + 1``).
    """

    family: str
    word: str
    position: str
    token_type: str
    norm_weight: str
    norm_bias: str
    query: tuple[str, str]
    key: tuple[str, str]
    value: tuple[str, str]
    hidden_size: int
    num_heads: int
    layer_norm_eps: float
    position_offset: int

    @property
    def d_head(self) -> int:
        """The size of one head: ``hidden_size / num_heads``."""
        return self.hidden_size // self.num_heads


def _config_value(config: dict[str, Any], keys: tuple[str, ...], name: str, where: str) -> Any:
    for key in keys:
        if key in config:
            return config[key]
    raise ValueError(f"model: {where}'s config.json has no {name} ({' or '.join(keys)}), which a BERT-family "
                     "model's first layer needs")


def bert_layout(model: ModelFile) -> BertLayout:
    """The layout of ``model``'s embeddings and first attention layer, checked against its config.

    Accepted: BERT (``embeddings.*`` and ``encoder.layer.0.attention.self.*``,
    with or without a ``bert.`` or another model prefix), RoBERTa-like models
    (the same names; positions start at ``pad_token_id + 1``) and DistilBERT
    (``distilbert.embeddings.*``, ``transformer.layer.0.attention.q_lin`` …, no
    token types), all with absolute position embeddings.

    Raises
    ------
    ValueError
        Naming ``model``, for a model that is not a Hugging Face folder with
        config.json, has no word table or no first attention layer of these
        names, lacks a tensor, has a tensor of another shape than its config
        says, or uses relative positions instead of the table.
    """
    if not isinstance(model, ModelFile):
        raise ValueError(f"model must be a ModelFile from open_model(), got {limits.shown(model)}")
    if model.kind != "hf-folder" or not isinstance(model.config, dict):
        raise ValueError(f"model: {model.name} is not a Hugging Face model folder with config.json; the real head "
                         "needs a BERT-family folder (config.json, model.safetensors, tokenizer.json)")
    config, where = model.config, model.name
    shapes = {tensor.name: tensor.shape for tensor in model.tensors}
    prefixes = [name[: -len("embeddings.word_embeddings.weight")] for name in shapes
                if name.endswith("embeddings.word_embeddings.weight")]
    if len(prefixes) != 1:
        raise ValueError(f"model: {where} is not BERT-family: it has {len(prefixes) or 'no'} "
                         "embeddings.word_embeddings.weight tensor" + ("s" if prefixes else ""))
    prefix = prefixes[0]
    embeddings = f"{prefix}embeddings."
    bert_attention = next((f"{base}encoder.layer.0.attention.self." for base in dict.fromkeys((prefix, ""))
                           if f"{base}encoder.layer.0.attention.self.query.weight" in shapes), None)
    distil_attention = next((f"{base}transformer.layer.0.attention." for base in dict.fromkeys((prefix, ""))
                             if f"{base}transformer.layer.0.attention.q_lin.weight" in shapes), None)
    if bert_attention:
        projections = tuple((f"{bert_attention}{n}.weight", f"{bert_attention}{n}.bias")
                            for n in ("query", "key", "value"))
        family = "roberta" if model.position_offset else "bert"
        hidden = _config_value(config, ("hidden_size",), "hidden_size", where)
        heads = _config_value(config, ("num_attention_heads",), "num_attention_heads", where)
        eps = config.get("layer_norm_eps", DEFAULT_LAYER_NORM_EPS)
        token_type = f"{embeddings}token_type_embeddings.weight"
        type_rows = config.get("type_vocab_size")
    elif distil_attention:
        projections = tuple((f"{distil_attention}{n}.weight", f"{distil_attention}{n}.bias")
                            for n in ("q_lin", "k_lin", "v_lin"))
        family = "distilbert"
        hidden = _config_value(config, ("dim", "hidden_size"), "dim", where)
        heads = _config_value(config, ("n_heads", "num_attention_heads"), "n_heads", where)
        eps = DEFAULT_LAYER_NORM_EPS  # DistilBERT's Embeddings: nn.LayerNorm(config.dim, eps=1e-12)
        token_type, type_rows = "", None
    else:
        raise ValueError(f"model: {where} has word embeddings but no first attention layer named "
                         "encoder.layer.0.attention.self.query or transformer.layer.0.attention.q_lin")
    kind = config.get("position_embedding_type", "absolute")
    if kind != "absolute":
        raise ValueError(f"model: {where} uses position_embedding_type {kind!r}; the real head runs models whose "
                         "position table is added to the embeddings (\"absolute\")")
    hidden = limits.check_int("hidden_size", hidden, 1, 2**16)
    heads = limits.check_int("num_attention_heads", heads, 1, hidden)
    if hidden % heads:
        raise ValueError(f"model: {where}'s hidden_size {hidden} is not a multiple of its {heads} heads")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise ValueError(f"model: {where}'s layer_norm_eps must be a number in (0, 1), got {limits.shown(eps)}")
    norm = next(((f"{embeddings}LayerNorm.{w}", f"{embeddings}LayerNorm.{b}")
                 for w, b in (("weight", "bias"), ("gamma", "beta")) if f"{embeddings}LayerNorm.{w}" in shapes),
                (f"{embeddings}LayerNorm.weight", f"{embeddings}LayerNorm.bias"))
    position = f"{embeddings}position_embeddings.weight"
    expected = {f"{embeddings}word_embeddings.weight": (None, hidden), position: (None, hidden),
                norm[0]: (hidden,), norm[1]: (hidden,)}
    if token_type:
        expected[token_type] = (None if type_rows is None else type_rows, hidden)
    for weight, bias in projections:
        expected[weight], expected[bias] = (hidden, hidden), (hidden,)
    for name, shape in expected.items():
        if name not in shapes:
            raise ValueError(f"model: {where} lacks tensor {name}, which its first attention layer needs")
        found = shapes[name]
        if len(found) != len(shape) or any(want is not None and want != got for want, got in zip(shape, found)):
            wanted = " × ".join("n" if want is None else str(want) for want in shape)
            raise ValueError(f"model: {where}'s tensor {name} has shape {found}; its config.json "
                             f"(hidden_size {hidden}) says {wanted}")
    if shapes[position][0] <= model.position_offset:
        raise ValueError(f"model: {where}'s position table {position} has no rows after its offset "
                         f"{model.position_offset}")
    return BertLayout(family, f"{embeddings}word_embeddings.weight", position, token_type, norm[0], norm[1],
                      *projections, hidden, heads, float(eps), model.position_offset)


def max_tokens(model: ModelFile, layout: BertLayout) -> int:
    """The longest sequence the head takes: the position table's rows after the offset, at most MAX_WORDS."""
    rows = next(tensor.shape[0] for tensor in model.tensors if tensor.name == layout.position)
    return min(rows - layout.position_offset, MAX_WORDS)


def check_head(head: object, layout: BertLayout) -> int:
    """``head`` as an int in ``0 … num_heads − 1``; ValueError naming ``head`` and its range."""
    return limits.check_int("head", head, 0, layout.num_heads - 1)


# --------------------------------------------------------------------------- the head


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """``(x − mean) / √(var + eps) · weight + bias`` over the last axis (torch's LayerNorm: biased variance)."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + eps) * weight + bias


def _read(model: ModelFile, name: str, rows: Sequence[int] | None = None) -> np.ndarray:
    try:
        return model.read_rows(name, rows)
    except ModelFileError as error:
        raise ValueError(f"model: {error}") from None


def real_head_trace(model: ModelFile, layout: BertLayout, ids: Sequence[int], tokens: Sequence[str], head: int,
                    with_position: bool) -> AttentionTrace:
    """One sentence's pass through layer 0's head ``head``, with or without the position table.

    Parameters
    ----------
    model : ModelFile
        The opened folder; ``layout`` from :func:`bert_layout` of it.
    ids : sequence of int
        The token ids (as the tokenizer gives them, special tokens included).
    tokens : sequence of str
        The tokens' text, one per id (the rows' labels).
    head : int
        ``0 … num_heads − 1``.
    with_position : bool
        Add the position table's rows ``offset + 0 … offset + n − 1`` before the LayerNorm.

    Returns
    -------
    AttentionTrace
        ``embeddings`` = word + token-type-0 rows, ``positional`` the
        position rows (None without), ``x`` the LayerNorm's output, ``q``,
        ``k``, ``v`` the head's columns, ``scores``, ``attention``, ``output``.

    Raises
    ------
    ValueError
        For ids outside the word table, more tokens than the table has
        positions, a bad head, or a tensor that cannot be read.
    """
    head = check_head(head, layout)
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    tokens = tuple(tokens)
    if ids.size != len(tokens) or not 1 <= ids.size <= max_tokens(model, layout):
        raise ValueError(f"ids must be 1 … {max_tokens(model, layout)} token ids, one per token; got {ids.size} "
                         f"ids and {len(tokens)} tokens")
    e = _read(model, layout.word, ids)
    if layout.token_type:
        e = e + _read(model, layout.token_type, [0])  # token_type_ids default to 0: every token of one segment
    p = _read(model, layout.position, layout.position_offset + np.arange(ids.size)) if with_position else None
    gamma, beta = _read(model, layout.norm_weight), _read(model, layout.norm_bias)
    x = layer_norm(e if p is None else e + p, gamma, beta, layout.layer_norm_eps)
    columns = np.arange(head * layout.d_head, (head + 1) * layout.d_head)
    q, k, v = (x @ _read(model, weight, columns).T + _read(model, bias)[columns]
               for weight, bias in (layout.query, layout.key, layout.value))
    scores = (q @ k.T) / math.sqrt(layout.d_head)
    attention = softmax_rows(scores)
    output = attention @ v
    return AttentionTrace(tokens, _readonly(e), None if p is None else _readonly(p), _readonly(x), _readonly(q),
                          _readonly(k), _readonly(v), _readonly(scores), _readonly(attention), _readonly(output))


@dataclass(frozen=True, eq=False)
class TableSplit:
    """The real head's logits without and with the position table, and their difference (``with − without``).

    The four-term split does not apply (see :data:`TABLE_SPLIT_NOTE`).
    """

    tokens: tuple[str, ...]
    without_table: np.ndarray
    with_table: np.ndarray
    difference: np.ndarray
    note: str = TABLE_SPLIT_NOTE
    allowed: np.ndarray | None = None

    def terms(self) -> dict[str, np.ndarray]:
        """The three matrices keyed by :data:`TABLE_TERMS`."""
        return dict(zip(TABLE_TERMS, (self.without_table, self.with_table, self.difference)))


def table_split(plain: AttentionTrace, positioned: AttentionTrace) -> TableSplit:
    """The logits of ``plain`` (without the table) and ``positioned`` (with it) and their difference."""
    return TableSplit(positioned.tokens, plain.scores, positioned.scores,
                      _readonly(positioned.scores - plain.scores))


# --------------------------------------------------------------------------- the tokenizer


#: One tokenizers call at a time while stderr points to the null device (see :func:`_tokenizers_call`).
_STDERR_LOCK = threading.Lock()


def _is_panic(error: BaseException) -> bool:
    """Whether ``error`` is a panic of the tokenizers package's Rust code (pyo3's ``PanicException``).

    It derives from BaseException, not Exception, so ``except Exception`` lets it through; the class is
    not importable (its module ``pyo3_runtime`` exists only inside the extension), hence the name.
    """
    return type(error).__name__ == "PanicException"


def _tokenizers_call(path: str | os.PathLike[str], doing: str, call: Callable[[], Any]) -> Any:
    """``call()``, with a panic of the tokenizers package turned into a :class:`ModelFileError` naming ``path``.

    Rust prints a panic's report on the process's stderr (three lines) before Python sees the
    exception; the exception says the same, so the report is dropped: while ``call`` runs, file
    descriptor 2 points to the null device (one call at a time, under a lock). A tokenizer.json
    is untrusted: the package panics on some of them (a ``Precompiled`` normalizer whose charsmap
    does not parse, on reading; a post-processor that names an undefined special token, on tokenising).
    """
    with _STDERR_LOCK, _stderr_to_null():
        try:
            return call()
        except BaseException as error:
            if not _is_panic(error):
                raise
            reason = " ".join(str(error).split())[:200]  # Rust's message, e.g. "no entry found for key"
            raise ModelFileError(path, f"the tokenizers package failed on it while {doing} ({reason})") from None


@contextlib.contextmanager
def _stderr_to_null() -> Iterator[None]:
    """File descriptor 2 points to the null device inside, and back to what it was after (as it is, when the
    process has no descriptor 2 or no null device)."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all (pythonw): nothing to keep quiet
        yield
        return
    try:
        with contextlib.suppress(OSError), open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@functools.lru_cache(maxsize=4)
def _tokenizer(path: str, _version: tuple) -> Any:
    from tokenizers import Tokenizer  # the format's own reader, imported only to read one

    text = json.dumps(read_json(Path(path)))  # bounded size and nesting, UTF-8, no NaN constants

    def read() -> Any:
        tokenizer = Tokenizer.from_str(text)
        tokenizer.no_padding()
        tokenizer.no_truncation()  # a longer sentence is refused with its length, not cut
        return tokenizer

    try:
        return _tokenizers_call(path, "reading it", read)
    except ModelFileError:
        raise
    except Exception as error:  # any failure of the reader on an untrusted file
        first = " ".join(str(error).split())
        raise ModelFileError(path, f"not a tokenizer the tokenizers package reads ({first})") from None


def load_tokenizer(folder: str | os.PathLike[str]) -> Any:
    """The ``tokenizers.Tokenizer`` of ``folder/tokenizer.json`` (read again only when the file changes).

    Raises
    ------
    ModelFileError
        Naming the file: absent, larger than ``MAX_JSON_BYTES``, nested too
        deep, not JSON, or not a tokenizer the package reads.
    """
    path = Path(os.path.abspath(folder)) / TOKENIZER_FILE
    try:
        info = os.stat(path)
    except OSError:
        raise ModelFileError(path, f"the model folder has no {TOKENIZER_FILE}; the real head tokenises with it")
    if info.st_size > MAX_JSON_BYTES:
        raise ModelFileError(path, f"it is larger than {MAX_JSON_BYTES // 2**20} MiB")
    return _tokenizer(str(path), (info.st_ino, info.st_size, info.st_mtime_ns))


def encode_sentence(tokenizer: Any, tokenizer_path: str | os.PathLike[str], sentence: object, name: str,
                    longest: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The ids and token texts of ``sentence`` as the model reads it (special tokens such as [CLS] included).

    ``tokenizer`` is :func:`load_tokenizer`'s, read from ``tokenizer_path``.

    Raises
    ------
    ValueError
        Naming ``name``: not text, no tokens besides the special ones, or more than ``longest`` tokens.
    ModelFileError
        Naming ``tokenizer_path``, when the tokenizers package panics on the sentence (a broken file).
    """
    if not isinstance(sentence, str):
        raise ValueError(f"{name} must be text, got {type(sentence).__name__}")
    if not sentence.strip():
        raise ValueError(f"{name} is empty: type a sentence")
    if len(sentence) > 64 * longest:
        raise ValueError(f"{name} has {len(sentence):,} characters; the head reads at most {longest} tokens")
    try:
        encoding = _tokenizers_call(tokenizer_path, f"tokenising {name}", lambda: tokenizer.encode(sentence))
    except ModelFileError:
        raise
    except Exception as error:  # the tokenizer's own refusal
        raise ValueError(f"{name} cannot be tokenised ({' '.join(str(error).split())})") from None
    ids, tokens = tuple(int(i) for i in encoding.ids), tuple(encoding.tokens)
    if len(ids) > longest:
        raise ValueError(f"{name} has {len(ids)} tokens; the model's position table has {longest} positions")
    if not ids or all(encoding.special_tokens_mask):
        raise ValueError(f"{name} gives no tokens: type a sentence")
    return ids, tokens


# --------------------------------------------------------------------------- the demo


@dataclass(frozen=True, eq=False)
class RealHeadDemo(PermutationDemo):
    """The Permutation demo on a real head: :class:`~posenc_gui.model.attention.PermutationDemo`'s
    comparisons and verdicts, its traces from layer 0's head ``head`` of ``model_name``.

    ``d_model`` is the model's hidden size, ``scheme`` ``"learned_file"``,
    ``split_a``/``split_b`` :class:`TableSplit`. Also: ``model_name``,
    ``model_path``, ``family``, ``head``, ``num_heads``, ``d_head``,
    ``layer_norm_eps``, ``position_offset``, ``ids_a``, ``ids_b``.
    """

    model_name: str = ""
    model_path: str = ""
    family: str = ""
    head: int = 0
    num_heads: int = 1
    d_head: int = 1
    layer_norm_eps: float = DEFAULT_LAYER_NORM_EPS
    position_offset: int = 0
    ids_a: tuple[int, ...] = ()
    ids_b: tuple[int, ...] = ()

    def label(self) -> str:
        """The model and head in words, e.g. ``"all-MiniLM-L6-v2, layer 0, head 3 of 12"``."""
        return f"{self.model_name}, layer 0, head {self.head} of {self.num_heads}"

    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON-able values; see :func:`real_head_dict`."""
        return real_head_dict(self)


def real_head_dict(demo: RealHeadDemo) -> dict[str, Any]:
    """The real-head demo's numbers as a JSON-able dict.

    Keys: ``model`` (``name``, ``path``, ``family``, ``layer`` 0, ``head``,
    ``num_heads``, ``d_head``, ``hidden_size``, ``layer_norm_eps``,
    ``position_offset``), ``sentence_a``, ``sentence_b``, ``tokens_a``,
    ``tokens_b``, ``ids_a``, ``ids_b``, ``is_permutation``, ``permutation``,
    ``message``, ``without_pe`` and ``with_pe`` (as the toy demo's:
    attention, output, scores, differences, verdict), and ``table_split``
    (``a``/``b``: ``without_the_table``, ``with_the_table``, ``table_contribution`` (with − without);
    and ``note``).
    """
    if not isinstance(demo, RealHeadDemo):
        raise ValueError(f"demo must be a RealHeadDemo from bert_permutation_demo(), got {limits.shown(demo)}")
    return {
        "model": {"name": demo.model_name, "path": demo.model_path, "family": demo.family, "layer": 0,
                  "head": demo.head, "num_heads": demo.num_heads, "d_head": demo.d_head,
                  "hidden_size": demo.d_model, "layer_norm_eps": demo.layer_norm_eps,
                  "position_offset": demo.position_offset},
        "sentence_a": demo.sentence_a,
        "sentence_b": demo.sentence_b,
        "tokens_a": list(demo.tokens_a),
        "tokens_b": list(demo.tokens_b),
        "ids_a": list(demo.ids_a),
        "ids_b": list(demo.ids_b),
        "is_permutation": demo.is_permutation,
        "permutation": None if demo.permutation is None else list(demo.permutation),
        "message": demo.message,
        "without_pe": _comparison_dict(demo.without_pe),
        "with_pe": _comparison_dict(demo.with_pe),
        "table_split": {**{key: {name.replace(" ", "_"): term.tolist() for name, term in split.terms().items()}
                           for key, split in (("a", demo.split_a), ("b", demo.split_b))},
                        "note": TABLE_SPLIT_NOTE},
    }


def real_head_demo(model: ModelFile, ids_a: Sequence[int], tokens_a: Sequence[str], ids_b: Sequence[int],
                   tokens_b: Sequence[str], head: int, sentence_a: str = "", sentence_b: str = "") -> RealHeadDemo:
    """Both token sequences through layer 0's head ``head`` of ``model``, with and without the table, compared.

    Raises
    ------
    ValueError
        As :func:`bert_layout` and :func:`real_head_trace`.
    """
    layout = bert_layout(model)
    head = check_head(head, layout)
    tokens_a, tokens_b = tuple(tokens_a), tuple(tokens_b)
    plain_a, plain_b, pos_a, pos_b = (real_head_trace(model, layout, ids, tokens, head, with_position)
                                      for with_position in (False, True)
                                      for ids, tokens in ((ids_a, tokens_a), (ids_b, tokens_b)))
    without_pe, with_pe, message, repeated = compare_both(plain_a, plain_b, pos_a, pos_b)
    return RealHeadDemo(
        sentence_a, sentence_b, tokens_a, tokens_b, layout.hidden_size, 0, "learned_file",
        {"model_path": os.fspath(model.path)}, without_pe, with_pe, table_split(plain_a, pos_a),
        table_split(plain_b, pos_b), message, repeated, False,
        model.name, os.fspath(model.path), layout.family, head, layout.num_heads, layout.d_head,
        layout.layer_norm_eps, layout.position_offset, tuple(int(i) for i in ids_a), tuple(int(i) for i in ids_b),
    )


def bert_permutation_demo(model_path: str, sentence_a: str, sentence_b: str, head: int = 0) -> RealHeadDemo:
    """Tokenise two sentences with the folder's tokenizer.json and run them through layer 0's head ``head``.

    Parameters
    ----------
    model_path : str
        A BERT-family Hugging Face folder: config.json, model.safetensors
        (or shards) and tokenizer.json.
    sentence_a, sentence_b : str
        The sentences; b is usually a reordering of a's words.
    head : int
        ``0 … num_attention_heads − 1``.

    Returns
    -------
    RealHeadDemo

    Raises
    ------
    ValueError
        Naming ``model`` (a folder that cannot be opened, is not
        BERT-family, lacks a tensor or its tokenizer), ``sentence_a`` /
        ``sentence_b`` (empty, or longer than the position table) or
        ``head`` (out of range). Model file errors are one line.
    """
    if not isinstance(model_path, (str, os.PathLike)) or not os.fspath(model_path):
        raise ValueError(f"model_path must name a BERT-family model folder, got {limits.shown(model_path)}")
    try:
        model = cached_model(model_path)
        layout = bert_layout(model)
        tokenizer = load_tokenizer(model.path)
        head = check_head(head, layout)
        longest = max_tokens(model, layout)
        path = model.path / TOKENIZER_FILE
        ids_a, tokens_a = encode_sentence(tokenizer, path, sentence_a, "sentence_a", longest)
        ids_b, tokens_b = encode_sentence(tokenizer, path, sentence_b, "sentence_b", longest)
    except ModelFileError as error:
        raise ValueError(f"model: {' '.join(str(error).split())}") from None
    vocabulary = next(tensor.shape[0] for tensor in model.tensors if tensor.name == layout.word)
    for name, ids in (("sentence_a", ids_a), ("sentence_b", ids_b)):
        if max(ids) >= vocabulary:
            raise ValueError(f"{name}: the tokenizer gives id {max(ids)}, past the word table's {vocabulary} rows "
                             "(tokenizer.json does not belong to this model)")
    return real_head_demo(model, ids_a, tokens_a, ids_b, tokens_b, head, sentence_a, sentence_b)


def real_head_available(model_path: object) -> str | None:
    """None if ``model_path`` is a BERT-family folder with tokenizer.json (opened, not run), else why not.

    Reads headers and config only (the folder is opened through the model cache).
    """
    if not isinstance(model_path, (str, os.PathLike)) or not os.fspath(model_path):
        return "no model folder is open"
    try:
        model = cached_model(model_path)
        bert_layout(model)
    except ValueError as error:  # ModelFileError is one
        return " ".join(str(error).split())
    if not os.path.isfile(model.path / TOKENIZER_FILE):
        return f"{model.name} has no {TOKENIZER_FILE}"
    return None


def head_count(model_path: str) -> int:
    """How many heads layer 0 of the BERT-family folder ``model_path`` has (ValueError as :func:`bert_layout`)."""
    try:
        return bert_layout(cached_model(model_path)).num_heads
    except ModelFileError as error:
        raise ValueError(f"model: {' '.join(str(error).split())}") from None

"""A decoder's tokenizer: its folder's ``tokenizer.json``, or one built from a GGUF file's vocabulary and merges.

GGUF ``tokenizer.ggml.model`` "gpt2" is byte-level BPE: ``tokenizer.ggml.tokens``
is the vocabulary (id = index), ``tokenizer.ggml.merges`` the merges in rank
order, and ``tokenizer.ggml.pre`` names llama.cpp's pre-tokenizer regexes
(``llama-vocab.cpp``), reproduced here for the names listed in
:data:`PRE_TOKENIZER_REGEXES`. "llama" is SentencePiece BPE (Llama 2,
Mistral, TinyLlama): the file has no merges, only ``tokenizer.ggml.scores``,
and the merges are recovered from them as transformers' GGUF loader does
(``generate_merges``: every split of a token into two tokens, ranked by the
whole token's score), with byte fallback and "▁" for spaces (one before the
text unless ``tokenizer.ggml.add_space_prefix`` is false); BOS is added
unless ``tokenizer.ggml.add_bos_token`` is false. Control and user-defined tokens
(``tokenizer.ggml.token_type`` 3 and 4) are matched whole, as llama.cpp does.

The vocabulary arrays are read from the header with the same bounds as
:func:`~posenc_gui.model.files.gguf_file.read_header` (which skips them). The
``tokenizers`` package can panic on a hostile vocabulary (``PanicException``,
a BaseException): building and using a tokenizer is guarded, and any failure
is one :class:`~posenc_gui.model.files.ModelFileError` or ValueError.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..files import gguf_file
from ..files.model_file import ModelFile, ModelFileError, open_regular_file

#: llama.cpp's pre-tokenizer splits by ``tokenizer.ggml.pre``; each list is applied in order, then byte-level.
_GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_LLAMA3_REGEX = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN2_REGEX = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
PRE_TOKENIZER_REGEXES: dict[str, tuple[str, ...]] = {
    "default": (_GPT2_REGEX,), "gpt-2": (_GPT2_REGEX,), "gpt2": (_GPT2_REGEX,),
    **dict.fromkeys(("smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"),
                    (r"\p{N}", _GPT2_REGEX)),
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"), (_LLAMA3_REGEX,)),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "megrez"), (_QWEN2_REGEX,)),
}
#: GGUF token types matched whole (llama_token_type: 3 control, 4 user-defined).
_SPECIAL_TOKEN_TYPES = (3, 4)
#: A SentencePiece vocabulary's merges are recovered by splitting each token in two every way: tokens longer
#: than this are not split, and at most MAX_MERGE_SPLITS splits are tried (a real vocabulary needs < 10⁶).
MAX_MERGED_TOKEN_CHARACTERS = 512
MAX_MERGE_SPLITS = 2**23
#: Texts longer than this many characters are refused before tokenising.
MAX_TEXT_CHARACTERS = 1_000_000
_T = TypeVar("_T")


def guarded(call: Callable[[], _T], failure: Callable[[str], Exception]) -> _T:
    """``call()``, any exception of the ``tokenizers`` package (a PanicException too) raised as ``failure(message)``.

    KeyboardInterrupt, SystemExit and ModelFileError (the project's own, for a file it refused) pass through.
    """
    try:
        return call()
    except (KeyboardInterrupt, SystemExit, ModelFileError):
        raise
    except BaseException as error:  # PanicException derives from BaseException
        raise failure(" ".join(str(error).split()) or type(error).__name__) from None


def folder_tokenizer(folder: Path) -> Any:
    """The ``tokenizers.Tokenizer`` of ``folder/tokenizer.json`` (bounded, as the BERT head reads it)."""
    from ..attention.bert_head import load_tokenizer

    path = folder / "tokenizer.json"
    if not os.path.lexists(path):
        raise ModelFileError(path, "the model folder has no tokenizer.json: tokenize() reads it (trace() takes "
                                   "token ids without it)")
    return guarded(lambda: load_tokenizer(folder),
                   lambda message: ModelFileError(path, f"not a tokenizer the tokenizers package reads ({message})"))


def gguf_tokenizer(model: ModelFile) -> tuple[Any, int | None, list[str]]:
    """The ``tokenizers.Tokenizer`` built from ``model``'s GGUF vocabulary, the BOS id to put first (None: none), notes.

    Raises
    ------
    ModelFileError
        When the file's vocabulary is neither byte-level BPE ("gpt2") nor
        SentencePiece ("llama"), its arrays are malformed or too long to split
        into merges, or the tokenizers package refuses them.
    """
    metadata = model.config or {}
    kind = metadata.get("tokenizer.ggml.model")
    if kind not in ("gpt2", "llama"):
        raise ModelFileError(model.path, f"tokenizer.ggml.model is {kind!r}; tokenising reads byte-level BPE "
                                         "('gpt2') and SentencePiece ('llama') vocabularies (pass token ids to "
                                         "trace() otherwise)")
    arrays = read_metadata_arrays(model.path, ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                                               "tokenizer.ggml.token_type", "tokenizer.ggml.scores"))
    tokens, merges = arrays.get("tokenizer.ggml.tokens"), arrays.get("tokenizer.ggml.merges")
    if not isinstance(tokens, list) or not tokens or not all(isinstance(token, str) for token in tokens):
        raise ModelFileError(model.path, "tokenizer.ggml.tokens is missing or not an array of strings")
    if kind == "llama":
        merges = _sentencepiece_merges(model.path, tokens, arrays.get("tokenizer.ggml.scores"))
    elif not isinstance(merges, list) or not all(isinstance(merge, str) and merge.count(" ") >= 1 for merge in merges):
        raise ModelFileError(model.path, "tokenizer.ggml.merges is missing or not an array of 'left right' strings")
    if len(set(tokens)) != len(tokens):
        raise ModelFileError(model.path, "tokenizer.ggml.tokens holds the same token twice")
    types = arrays.get("tokenizer.ggml.token_type")
    if types is not None and (not isinstance(types, np.ndarray) or types.size != len(tokens)):
        raise ModelFileError(model.path, f"tokenizer.ggml.token_type must hold one type per token ({len(tokens):,})")
    notes = []
    pre = metadata.get("tokenizer.ggml.pre", "default")
    if kind == "gpt2" and pre not in PRE_TOKENIZER_REGEXES:
        notes.append(f"tokenizer.ggml.pre {pre!r} is not known: GPT-2's pre-tokenizer is used, so ids may differ "
                     "from llama.cpp's")
        pre = "default"
    special = [] if types is None else [tokens[i] for i in np.flatnonzero(np.isin(types, _SPECIAL_TOKEN_TYPES))]
    if kind == "llama":
        prefix = metadata.get("tokenizer.ggml.add_space_prefix", True) is not False
        build = functools.partial(_sentencepiece_bpe, tokens, merges, special, prefix)
    else:
        build = functools.partial(_byte_level_bpe, tokens, merges, PRE_TOKENIZER_REGEXES[pre], special)
    tokenizer = guarded(build, lambda message: ModelFileError(model.path, f"its vocabulary is not a tokenizer the "
                                                                          f"tokenizers package builds ({message})"))
    add_bos = metadata.get("tokenizer.ggml.add_bos_token", kind == "llama") is True
    bos = metadata.get("tokenizer.ggml.bos_token_id")
    if add_bos and (isinstance(bos, bool) or not isinstance(bos, int) or not 0 <= bos < len(tokens)):
        raise ModelFileError(model.path, f"tokenizer.ggml.bos_token_id is {bos!r}; it must be a token id in "
                                         f"0…{len(tokens) - 1}")
    return tokenizer, bos if add_bos else None, notes


def _sentencepiece_merges(path: Path, tokens: list[str], scores: object) -> list[tuple[str, str]]:
    """transformers' ``generate_merges(vocab, scores)``: each token's splits into two tokens, best score first."""
    if not isinstance(scores, np.ndarray) or scores.size != len(tokens) or scores.dtype.kind != "f" \
            or not np.isfinite(scores).all():
        raise ModelFileError(path, f"tokenizer.ggml.scores must hold one finite number per token ({len(tokens):,})")
    splits = sum(len(token) - 1 for token in tokens if 0 < len(token) <= MAX_MERGED_TOKEN_CHARACTERS)
    if splits > MAX_MERGE_SPLITS:
        raise ModelFileError(path, f"tokenizer.ggml.tokens would be split {splits:,} ways to recover merges (at most "
                                   f"{MAX_MERGE_SPLITS:,})")
    index = {token: position for position, token in enumerate(tokens)}
    merges = []
    for token, score in zip(tokens, scores.tolist()):
        if len(token) > MAX_MERGED_TOKEN_CHARACTERS:  # no merge makes a token this long
            continue
        local = [(token[:cut], token[cut:], score) for cut in range(1, len(token))
                 if token[:cut] in index and token[cut:] in index]
        merges.extend(sorted(local, key=lambda merge: (index[merge[0]], index[merge[1]])))
    merges.sort(key=lambda merge: (merge[2], len(merge[0]), len(merge[1])), reverse=True)
    return [(left, right) for left, right, _ in merges]


def _sentencepiece_bpe(tokens: list[str], merges: list[tuple[str, str]], special: list[str], prefix: bool) -> Any:
    """transformers' LlamaTokenizer (legacy=False): BPE with byte fallback, "▁" for spaces. Its decoder keeps
    the space of a "▁" at the start (transformers strips one), so that each token decoded alone shows its space."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocabulary = {token: index for index, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocabulary, merges=merges, fuse_unk=True, byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first" if prefix else "never",
                                                       split=False)
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    if special:
        tokenizer.add_special_tokens(special)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _byte_level_bpe(tokens: list[str], merges: list[str], regexes: tuple[str, ...], special: list[str]) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocabulary = {token: index for index, token in enumerate(tokens)}
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    tokenizer = Tokenizer(models.BPE(vocab=vocabulary, merges=pairs, fuse_unk=False, byte_fallback=False))
    splits = [pre_tokenizers.Split(Regex(regex), behavior="isolated") for regex in regexes]
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    if special:
        tokenizer.add_special_tokens(special)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def encode(tokenizer: Any, text: object, bos: int | None = None) -> list[int]:
    """The ids of ``text`` (``bos`` first when given); ValueError naming ``text`` if it cannot be tokenised."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARACTERS:
        raise ValueError(f"text has {len(text):,} characters; at most {MAX_TEXT_CHARACTERS:,} are tokenised")
    encoding = guarded(lambda: tokenizer.encode(text),
                       lambda message: ValueError(f"text cannot be tokenised ({message})"))
    ids = [int(i) for i in encoding.ids]
    return ids if bos is None else [bos, *ids]


def read_metadata_arrays(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The GGUF metadata arrays ``keys`` of the file at ``path`` (:func:`gguf_file.read_metadata_arrays`);
    ModelFileError naming the file when its header is not readable."""
    with open_regular_file(path) as stream:
        try:
            return gguf_file.read_metadata_arrays(stream.fileno(), keys)
        except gguf_file.GGUFFormatError as error:
            raise ModelFileError(path, f"not a readable GGUF file: {error}") from None

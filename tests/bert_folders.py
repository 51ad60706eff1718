"""Tiny BERT-family folders for the real-head tests, written with the formats' own writers.

:func:`hand_folder` is the hand-worked model of ``tests/test_bert_head.py``:
hidden size 4, 2 heads of 2, and weights chosen so that every LayerNorm
input is a centred ±c vector (its normalised form is ±1) and head 1 reads
plain coordinates.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, pre_tokenizers, processors

VOCAB = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "dog": 3, "bites": 4, "man": 5}
#: The hand model's rows: e = word + type 0, the rows it is built from.
E_DOG = np.array([1.0, -1.0, -1.0, 1.0])
E_MAN = np.array([1.0, 1.0, -1.0, -1.0])
TYPE_0 = np.array([0.0, 0.0, 0.5, -0.5])
POSITIONS = np.array([[1.0, 1.0, -1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
GAMMA = np.array([2.0, 1.0, 1.0, 1.0])
BETA = np.array([0.0, 0.0, 0.0, 1.0])


def write_tokenizer(folder: Path, special: bool = True) -> None:
    """A WordLevel tokenizer over :data:`VOCAB`, splitting on whitespace; with ``special``, "[CLS] $A [SEP]"."""
    tokenizer = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if special:
        tokenizer.add_special_tokens(["[CLS]", "[SEP]"])
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tokenizer.save(str(folder / "tokenizer.json"))


#: How :func:`write_panicking_tokenizer` breaks a tokenizer.json so that the tokenizers package panics
#: (``PanicException``, a BaseException): on reading it, or on tokenising with it.
PANICS = ("a Precompiled normalizer with a bad charsmap", "a post-processor naming an undefined special token")


def write_panicking_tokenizer(folder: Path, panic: str) -> Path:
    """Replace ``folder``'s tokenizer.json by one that makes the tokenizers package panic (``panic`` of
    :data:`PANICS`): written by the package, then one field changed as a hostile file would have it."""
    write_tokenizer(folder, special=True)
    path = folder / "tokenizer.json"
    document = json.loads(path.read_text())
    if panic == PANICS[0]:  # the package reads it and panics (rust: "Cannot parse precompiled_charsmap")
        document["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": "AQID"}  # 3 bytes: no charsmap
    else:  # it reads; tokenising a sentence panics looking "[SEP]" up ("no entry found for key")
        del document["post_processor"]["special_tokens"]["[SEP]"]
    path.write_text(json.dumps(document))
    return path


def hand_tensors() -> dict[str, np.ndarray]:
    """The hand model in BERT's names (no prefix); float32, every value exact."""
    word = np.full((len(VOCAB), 4), 0.25)
    word[VOCAB["dog"]] = E_DOG - TYPE_0
    word[VOCAB["man"]] = E_MAN - TYPE_0
    position = np.vstack([POSITIONS, np.arange(24, dtype=float).reshape(6, 4) / 8])
    token_type = np.vstack([TYPE_0, [9.0, 9.0, 9.0, 9.0]])
    # head 0 (rows 0, 1) gets large weights: reading the wrong head's rows changes every number
    w_q = np.array([[30, 0, 0, 0], [0, 30, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]], dtype=float)
    w_k = np.array([[0, 0, 40, 0], [0, 40, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    w_v = np.array([[50, 0, 0, 0], [0, 50, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=float)
    tensors = {
        "embeddings.word_embeddings.weight": word,
        "embeddings.position_embeddings.weight": position,
        "embeddings.token_type_embeddings.weight": token_type,
        "embeddings.LayerNorm.weight": GAMMA,
        "embeddings.LayerNorm.bias": BETA,
        "encoder.layer.0.attention.self.query.weight": w_q,
        "encoder.layer.0.attention.self.query.bias": np.array([7.0, 7.0, 0.5, 0.0]),
        "encoder.layer.0.attention.self.key.weight": w_k,
        "encoder.layer.0.attention.self.key.bias": np.array([7.0, 7.0, 0.0, -1.0]),
        "encoder.layer.0.attention.self.value.weight": w_v,
        "encoder.layer.0.attention.self.value.bias": np.array([7.0, 7.0, 0.0, 0.0]),
        "encoder.layer.0.attention.output.dense.weight": np.eye(4),
    }
    return {name: np.asarray(value, dtype=np.float32) for name, value in tensors.items()}


def bert_config(**overrides) -> dict:
    config = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 4, "num_attention_heads": 2,
              "layer_norm_eps": 1e-12, "type_vocab_size": 2, "max_position_embeddings": 8, "vocab_size": 6,
              "pad_token_id": 0, "position_embedding_type": "absolute"}
    config.update(overrides)
    return config


def write_folder(folder: Path, tensors: dict[str, np.ndarray], config: dict, special: bool = True,
                 tokenizer: bool = True) -> Path:
    """``folder`` with config.json, model.safetensors and (with ``tokenizer``) tokenizer.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    save_file({name: np.ascontiguousarray(value) for name, value in tensors.items()},
              str(folder / "model.safetensors"))
    if tokenizer:
        write_tokenizer(folder, special)
    return folder


def hand_folder(folder: Path, special: bool = False, **config) -> Path:
    """The hand-worked BERT model (without [CLS]/[SEP] unless ``special``)."""
    return write_folder(folder, hand_tensors(), bert_config(**config), special)


def roberta_folder(folder: Path) -> Path:
    """The hand model as RoBERTa: positions start at row pad_token_id + 1 = 2 (rows 0, 1 are not positions)."""
    tensors = hand_tensors()
    table = tensors["embeddings.position_embeddings.weight"]
    tensors["embeddings.position_embeddings.weight"] = np.vstack([np.full((2, 4), 5.0, np.float32), table])
    renamed = {f"roberta.{name}": value for name, value in tensors.items()}
    return write_folder(folder, renamed, bert_config(model_type="roberta", pad_token_id=1,
                                                     max_position_embeddings=10, type_vocab_size=2))


def distilbert_folder(folder: Path) -> Path:
    """The hand model as DistilBERT: no token types (the word rows hold e), q_lin / k_lin / v_lin."""
    tensors = hand_tensors()
    tensors["embeddings.word_embeddings.weight"] = (tensors["embeddings.word_embeddings.weight"]
                                                    + tensors.pop("embeddings.token_type_embeddings.weight")[0])
    names = {"encoder.layer.0.attention.self.query": "transformer.layer.0.attention.q_lin",
             "encoder.layer.0.attention.self.key": "transformer.layer.0.attention.k_lin",
             "encoder.layer.0.attention.self.value": "transformer.layer.0.attention.v_lin"}
    renamed = {}
    for name, value in tensors.items():
        for old, new in names.items():
            name = name.replace(old, new)
        renamed[f"distilbert.{name}"] = value
    config = {"model_type": "distilbert", "dim": 4, "n_heads": 2, "max_position_embeddings": 8, "vocab_size": 6}
    return write_folder(folder, renamed, config)


def random_folder(folder: Path, seed: int = 0, prefix: str = "bert.", hidden: int = 4, heads: int = 2,
                  eps: float = 1e-5, gamma_beta: bool = False) -> Path:
    """A BERT folder of random weights (for the comparison with an independent computation)."""
    rng = np.random.default_rng(seed)
    norm = ("gamma", "beta") if gamma_beta else ("weight", "bias")
    tensors = {
        "embeddings.word_embeddings.weight": rng.standard_normal((len(VOCAB), hidden)),
        "embeddings.position_embeddings.weight": rng.standard_normal((8, hidden)),
        "embeddings.token_type_embeddings.weight": rng.standard_normal((2, hidden)),
        f"embeddings.LayerNorm.{norm[0]}": 1 + 0.1 * rng.standard_normal(hidden),
        f"embeddings.LayerNorm.{norm[1]}": 0.1 * rng.standard_normal(hidden),
    }
    for name in ("query", "key", "value"):
        tensors[f"encoder.layer.0.attention.self.{name}.weight"] = rng.standard_normal((hidden, hidden))
        tensors[f"encoder.layer.0.attention.self.{name}.bias"] = rng.standard_normal(hidden)
    tensors = {f"{prefix}{name}": value.astype(np.float32) for name, value in tensors.items()}
    return write_folder(folder, tensors, bert_config(hidden_size=hidden, num_attention_heads=heads,
                                                     layer_norm_eps=eps))

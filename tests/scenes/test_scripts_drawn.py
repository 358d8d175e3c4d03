"""Text in any script is drawn whole: a storyboard caption keeps a combining mark with its
letter, and a video label mixing right-to-left letters with other text draws every glyph."""

from __future__ import annotations

import pytest
from attention_video.pipeline.outputs import storyboard as sb
from attention_video.scenes.catalogue import isolated
from attention_video.scenes.text import built_text


@pytest.mark.parametrize("word", ["था", "बाज़ार", "كَتَبَ", "मैं"])
def test_a_word_with_combining_marks_is_one_run_of_one_font(word):
    runs = sb._runs(f'We follow "{word}" here', 28)
    with_word = [(font, text) for font, text in runs if word[0] in text]
    assert len(with_word) == 1 and word in with_word[0][1]


@pytest.mark.parametrize("key", ["<s>", "x", "الخبز"])
def test_a_label_with_right_to_left_letters_draws_every_glyph(key):
    label = f"{isolated('الخ')} → {isolated(key)} 0.28"
    drawn = built_text(label, 20)
    glyphs = sum(1 for c in label if not c.isspace() and c not in "\u2068\u2069")
    assert len(drawn.submobjects) >= glyphs - 3  # Arabic letters may join into fewer glyphs
    latin = built_text("x → <s> 0.28", 20)
    assert drawn.width > 0.8 * latin.width

"""Right-to-left words in a left-to-right caption (issue 28): each is a bidi isolate, so
the caption's quotes, colon and numbers stay where the sentence puts them."""

from __future__ import annotations

import pytest
from attention_video.scenes.catalogue import FSI, PDI, Translate, isolated
from attention_video.scenes.text import make_text


def test_right_to_left_values_are_isolated_and_others_left_alone():
    assert isolated("القطة") == f"{FSI}القطة{PDI}"
    assert isolated("החתול") == f"{FSI}החתול{PDI}"
    assert isolated("cat") == "cat" and isolated(0.5) == 0.5
    said = Translate("en")("We follow \"{word}\" through every step that follows.", word="ا")
    assert f'"{FSI}ا{PDI}"' in said


def test_the_number_after_an_arabic_word_is_drawn_after_it():
    # without the isolate Pango's bidi draws `"39.56 :"ا`: the rightmost glyph is the alef
    six = make_text("6", 36)

    def rightmost(text: str):
        return max(make_text(text, 36), key=lambda g: g.get_right()[0])

    def is_six(g) -> bool:
        return abs(g.height - six.height) < 0.01 and abs(g.width - six.width) < 0.01

    assert is_six(rightmost(f'for "{isolated("ا")}": 39.56'))
    assert not is_six(rightmost('for "ا": 39.56'))


@pytest.mark.slow
def test_a_followed_word_piece_is_named_with_the_word_the_user_typed():
    # MiniLM splits Arabic into letters: "ا" began three words; the captions said only "ا"
    from attention_video.attncore import Settings, build_trace
    from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

    s = Settings(sentence="القطة السوداء شربت الحليب", quality="l")
    t = build_trace(s)
    tokens = t.query_tokens
    assert tokens[t.focus].kind in ("word", "subword")
    start = t.focus
    while tokens[start].kind == "subword":
        start -= 1
    end = t.focus + 1
    while end < len(tokens) and tokens[end].kind == "subword":
        end += 1
    typed = "".join(x.text.removeprefix("##") for x in tokens[start:end])
    assert typed in s.sentence.split()
    said = " ".join(text for _, _, text in render_chapter(ChapterJob("input", t, s, clip=None)).subtitles
                    + render_chapter(ChapterJob("linear", t, s, clip=None)).subtitles)
    assert typed in said


def test_a_heads_link_keeps_its_arrow_and_weight_beside_right_to_left_words():
    from attention_video.scenes.chapters.heads import link_text

    assert link_text("ה", "[CLS]", "0.48") == f"{FSI}ה{PDI} → [CLS] 0.48"
    assert link_text("cat", "milk", "0.48") == "cat → milk 0.48"

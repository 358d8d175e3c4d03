"""Right-to-left words in a left-to-right caption (issue 28): each is a bidi isolate, so
the caption's quotes, colon and numbers stay where the sentence puts them."""

from __future__ import annotations

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

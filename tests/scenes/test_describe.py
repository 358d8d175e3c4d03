"""scenes.describe: what a caption's picture shows that the caption does not say, in the
time it has. The pictures here are made by hand; tests/scenes/test_describe_corpus.py
checks the descriptions of real chapters against the scene graph and the trace."""

from __future__ import annotations

import subprocess
import sys

import pytest
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.describe import (
    Grid,
    Number,
    Picture,
    Words,
    describe,
    names_in,
    spoken_seconds,
)

from tests.support.paths import ROOT

EN = Translate("en")
WORDS = Words(("The", "cat", "milk"), ("The", "cat", "milk"), focus=2)
X = Grid("X", 3, 4, True)
Q = Grid("Q", 3, 4, True)
Q_ROW = tuple(Number("Q", (2, m), t) for m, t in enumerate(("2.87", "−4.40", "−1.54", "0.36")))
PLENTY = 60.0  # seconds: every sentence fits


def picture(grids=(), numbers=(), fresh=None) -> Picture:
    keys = {(n.key, n.index) for n in numbers} if fresh is None else fresh
    return Picture(tuple(grids), tuple(numbers), frozenset(keys))


def test_a_grid_the_caption_does_not_name_is_named():
    d = describe(picture([X, Q]), None, "Q = X · W_Q, row by row.", PLENTY, EN, WORDS)
    assert d.text.startswith("On screen: ") is False  # both named by the caption
    d = describe(picture([X, Q]), None, "Every word gets a query.", PLENTY, EN, WORDS)
    assert d.text.startswith("On screen: X, Q.")
    assert d.names[:2] == ("X", "Q")


def test_a_new_grid_is_said_with_its_shape_and_one_that_left_is_said_gone():
    d = describe(picture([Q]), picture([X]), "Every word gets a query.", PLENTY, EN, WORDS)
    assert "New: Q, a grid of 3 × 4 numbers." in d.text
    assert "Gone: X." in d.text
    assert [(m.kind, m.text) for m in d.mentions] == [("rows", "3"), ("cols", "4")]


def test_the_followed_words_row_is_read_with_the_numbers_as_drawn():
    d = describe(picture([Q], Q_ROW), picture([Q]), "Each word gets a query.", PLENTY, EN, WORDS)
    assert 'Q, the row of "milk": 2.87, −4.40, −1.54, 0.36.' in d.text
    assert [m.text for m in d.mentions] == ["2.87", "−4.40", "−1.54", "0.36"]


def test_a_row_the_caption_reads_out_is_not_read_again():
    caption = "Its row of Q: (2.87, −4.40, −1.54, 0.36)."
    d = describe(picture([Q], Q_ROW), picture([Q]), caption, PLENTY, EN, WORDS)
    assert "2.87" not in d.text


def test_numbers_already_in_the_previous_picture_are_not_news():
    d = describe(picture([Q], Q_ROW, fresh=set()), picture([Q]), "A query.", PLENTY, EN, WORDS)
    assert "2.87" not in d.text


def test_a_row_of_weights_is_said_by_its_extremes_over_every_number_on_screen():
    weights = [Number("weights", (2, j), t) for j, t in enumerate(("0.011", "0.989", "0.000"))]
    only_last_new = {("weights", (2, 2))}
    d = describe(picture([], weights, only_last_new), None, "Softmax.", PLENTY, EN, WORDS)
    assert 'the weights of "milk": highest 0.989 for "cat", lowest 0.000 for "milk".' in d.text


def test_an_arrow_is_said_with_its_angle():
    d = describe(picture([], [Number("angle", (2, 1), "29")]), None, "More keys join.",
                 PLENTY, EN, WORDS)
    assert 'The arrow of "cat" is 29° from the query.' in d.text


def test_the_description_fits_its_time_and_keeps_the_grids_it_must_name():
    caption = "Every word gets a query."
    full = describe(picture([X, Q], Q_ROW), None, caption, PLENTY, EN, WORDS)
    short = describe(picture([X, Q], Q_ROW), None, caption, 2.0, EN, WORDS)
    assert len(short.text) < len(full.text)
    assert short.text == "On screen: X, Q."  # the one sentence always said
    assert short.seconds <= 2.0 and full.seconds <= PLENTY
    assert short.seconds == pytest.approx(spoken_seconds(short.text, "en"))


def test_speaking_time_reads_symbols_as_words_at_the_catalogue_rate():
    # "W_Q" is said "W Q"; 14 characters a second in English, 5 in Chinese, scaled by pace
    assert spoken_seconds("On screen: W_Q.", "en") == pytest.approx(len("On screen: W Q.") / 14)
    assert spoken_seconds("画面上：X。", "zh", pace=2.0) == pytest.approx(6 / 5 / 2)


def test_a_symbol_is_named_only_as_a_token_of_its_own():
    assert names_in("Q = X · W_Q", "Q") and names_in("Kᵀ: one column per key", "K")
    assert not names_in("Q_rot = Q turned", "X") and not names_in("W_Q holds", "Q")
    assert names_in("the weights of milk", "weights")


def test_descriptions_are_in_the_caption_language():
    zh = describe(picture([X]), None, "每个词", PLENTY, Translate("zh"), WORDS)
    es = describe(picture([X]), None, "cada palabra", PLENTY, Translate("es"), WORDS)
    assert zh.text.startswith("画面上：X") and es.text.startswith("En pantalla: X")


def test_the_describe_module_imports_no_manim():
    code = ("import sys\n"
            "import attention_video.scenes.describe\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'manim'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_a_caption_too_short_for_on_screen_gets_the_names_alone():
    d = describe(picture([X, Q]), None, "Every word gets a query.", 1.0, EN, WORDS)
    assert d.text == "X, Q." and d.names == ("X", "Q")


def test_only_the_followed_words_row_is_said_by_its_extremes():
    other = [Number("weights", (0, j), t) for j, t in enumerate(("0.500", "0.300", "0.200"))]
    assert "highest" not in describe(picture([], other), None, "Softmax.", PLENTY, EN, WORDS).text

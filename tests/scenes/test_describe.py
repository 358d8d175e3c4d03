"""scenes.describe: what a caption's picture shows that the caption does not say, in the
time it has. The pictures here are made by hand; tests/scenes/test_describe_corpus.py
checks the descriptions of real chapters against the scene graph and the trace."""

from __future__ import annotations

import subprocess
import sys

import pytest
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.describe import (
    Chart,
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


def test_a_stacked_bar_names_the_parts_that_carry_a_word_and_counts_the_grey_ones():
    stacked = Chart("weights", "stacked", (0.6, 0.3, 0.1), ((2, 0), (2, 1), (2, 2)), 3,
                    (True, True, False))
    d = describe(Picture((), (), frozenset(), (stacked,)), None, "Softmax.", PLENTY, EN, WORDS)
    assert d.text == ('the stacked bar: "The" 0.600, "cat" 0.300, and 1 grey part too narrow '
                      'for its word.')
    said = describe(Picture((), (), frozenset(), (stacked,)), None, "The: 0.600, cat: 0.300.",
                    PLENTY, EN, WORDS)  # what the caption states is not said again
    assert said.text == "the stacked bar: 1 grey part, too narrow for its word."
    assert [(m.kind, m.text) for m in d.mentions] == [("value", "0.600"), ("value", "0.300"),
                                                      ("parts", "1")]
    assert "On screen" not in d.text  # its own sentence names it


def test_a_chart_too_long_to_describe_is_named_all_the_same():
    stacked = Chart("weights", "stacked", (0.6, 0.3, 0.1), ((2, 0), (2, 1), (2, 2)), 3,
                    (True, True, False))
    shown = Picture((), (), frozenset(), (stacked,))
    assert describe(shown, None, "Softmax.", 2.0, EN, WORDS).text == "On screen: the stacked bar."
    assert describe(shown, None, "Softmax.", 1.0, EN, WORDS).text == "the stacked bar."


def grid_at(key: str, line: int, place: int) -> Grid:
    return Grid(key, 3, 3, False, (line, place))


def test_thumbnails_are_counted_and_their_rows_said():
    five = [grid_at("head_weights", 0, k) for k in range(3)] + \
        [grid_at("head_weights", 1, k) for k in range(2)]
    d = describe(picture(five), None, "Heads.", PLENTY, EN, WORDS)
    assert "New: each head's weights, 5 grids of 3 × 3 in 2 rows of 3." in d.text
    two = [grid_at("head_weights", 0, k) for k in range(2)]
    assert "2 grids of 3 × 3 side by side." in describe(picture(two), None, "Heads.", PLENTY,
                                                          EN, WORDS).text


def test_the_latest_snapshot_row_is_said_with_its_step():
    table = Grid("history_weights", 2, 3, True)
    row = [Number("history_weights", (1, j), t) for j, t in enumerate(("0.100", "0.850", "0.050"))]
    step = Number("history_steps", (1,), "500")
    old = [Number("history_weights", (0, j), "0.333") for j in range(3)]
    d = describe(picture([table], [*old, step, *row], fresh={(n.key, n.index) for n in row}),
                 None, "Training goes on.", PLENTY, EN, WORDS)
    assert d.text.startswith('the weights at each snapshot, step 500: highest 0.850 for "cat", '
                             'lowest 0.050 for "milk".')
    assert [m.text for m in d.mentions][:3] == ["500", "0.850", "0.050"]


def snapshot(s: int, step: str, angles: tuple[str, ...]) -> list[Number]:
    return [Number("history_steps", (s,), step),
            *(Number("history_angle", (s, j), a) for j, a in enumerate(angles))]


def test_a_snapshots_arrows_are_said_with_how_each_angle_changed():
    first = picture([], snapshot(0, "0", ("80", "125", "30")))
    d = describe(first, None, "Arrows.", PLENTY, EN, WORDS)
    assert 'The arrows\' angles to the query at step 0: "The" 80°, "cat" 125°, "milk" 30°.' in d.text
    # a number of another snapshot that reads the same as one on screen is not taken for it
    last = picture([], [*snapshot(6, "3000", ("49", "11", "150")), Number("history_angle", (3, 1), "80")])
    d = describe(last, first, "Replayed.", PLENTY, EN, WORDS)
    assert ('from step 0 to step 3000: "The" 80° to 49°, "cat" 125° to 11°, "milk" 30° to 150°.'
            in d.text)


def test_head_links_the_caption_leaves_out_are_said_once_in_their_stay():
    links = [Number("head_weights", (h, 2, 1), t) for h, t in enumerate(("0.700", "0.600", "0.500"))]
    caption = "Head 0 looks most at cat (0.700)."
    d = describe(picture([], links), None, caption, PLENTY, EN, WORDS)
    assert 'Strongest links: to "cat": head 1 0.600, head 2 0.500.' in d.text
    later = describe(picture([], links, fresh=set()), picture([], links), "Heads tagged.",
                     PLENTY, EN, WORDS, told=d.told)
    assert "Strongest links" not in later.text
    short = describe(picture([], links), None, caption, 3.0, EN, WORDS)  # the first that fit
    assert short.text == 'Strongest links: to "cat": head 1 0.600.'
    other = Number("head_weights", (3, 2, 0), "0.400")  # the word said once per key
    d = describe(picture([], [*links, other]), None, caption, PLENTY, EN, WORDS)
    assert 'to "cat": head 1 0.600, head 2 0.500; to "The": head 3 0.400.' in d.text

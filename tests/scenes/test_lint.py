"""The picture lint (scenes.lint's rules, pipeline.run.lint's dry run, --lint): each rule
fires on a small synthetic picture that breaks it and stays quiet on a clean one; the
default video is linted whole."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.commands.cli import main
from attention_video.pipeline.run.lint import ChapterLint, LintResult
from attention_video.scenes import lint
from attention_video.scenes.layout import MIN_FONT, SAFE_X
from attention_video.scenes.text import make_text
from attention_video.scenes.themes import THEMES, word_color
from attention_video.scenes.widgets import make_caption
from manim import DOWN, LEFT, ORIGIN, RIGHT, UP, Arrow, Line, Rectangle, Square, VGroup

from tests.support.builds import chapter_lint, dry_run, video_lint

pytestmark = pytest.mark.xdist_group("lint")  # one worker: the default video's build is shared

DARK = THEMES["dark"]
BG = DARK.background


def text(s: str, size: float = 24, color: str = DARK.text):
    return make_text(s, size, color)


def clean_picture() -> list:
    """A caption, two labels side by side, a box around one and an arrow between them."""
    a = text("cat").move_to(LEFT * 2)
    b = text("0.61").move_to(RIGHT * 2)
    box = Rectangle(width=a.width + 0.4, height=a.height + 0.4, stroke_color=DARK.grid).move_to(a)
    arrow = Arrow(a.get_right() + RIGHT * 0.3, b.get_left() + LEFT * 0.3, color=DARK.accent)
    return [box, a, b, arrow, make_caption("The cat looks at 0.61.", DARK)]


def rules(findings) -> list[str]:
    return [f.rule for f in findings]


# ---- one picture ------------------------------------------------------------------------
def test_a_clean_picture_has_no_findings():
    assert lint.picture_findings(lint.marks_of(clean_picture()), BG) == []


def test_two_texts_that_overlap_are_named_by_what_they_show():
    a, b = text("0.61"), text("cat").shift(RIGHT * 0.2)
    found = lint.overlaps(lint.marks_of([a, b]))
    assert [f.message for f in found] == ['text "0.61" overlaps text "cat"']
    b.shift(RIGHT * 2)
    assert lint.overlaps(lint.marks_of([a, b])) == []


def test_a_line_across_a_text_fires_unless_it_is_the_texts_own():
    label = text("drank")
    line = Line(LEFT * 2, RIGHT * 2)  # straight through the word
    found = lint.crossings(lint.marks_of([label, line]))
    assert rules(found) == ["crossing"] and 'text "drank"' in found[0].message
    assert lint.crossings(lint.marks_of([label, line.copy().shift(UP)])) == []  # above it
    assert lint.crossings(lint.marks_of([VGroup(line, label)])) == []  # built together
    # a box around the word is no crossing
    assert lint.crossings(lint.marks_of([label, Rectangle(width=2, height=1)])) == []


def test_an_object_past_the_safe_area_fires():
    inside = text("milk").move_to(RIGHT * (SAFE_X - 1))
    assert lint.outside_safe_area(lint.marks_of([inside])) == []
    out = text("milk").move_to(RIGHT * SAFE_X)
    found = lint.outside_safe_area(lint.marks_of([out]))
    assert rules(found) == ["safe-area"] and found[0].message.startswith('text "milk"')
    low = Square(0.5).move_to(DOWN * 3.9)
    assert rules(lint.outside_safe_area(lint.marks_of([low]))) == ["safe-area"]


def test_text_under_the_size_floor_fires_also_when_shrunk_after_building():
    assert lint.too_small(lint.marks_of([text("0.61", MIN_FONT)])) == []
    assert rules(lint.too_small(lint.marks_of([text("0.61", 10)]))) == ["size"]
    squeezed = text("extraordinary", 24).scale(0.5)  # fit_width's way of shrinking
    assert rules(lint.too_small(lint.marks_of([squeezed]))) == ["size"]


@pytest.mark.parametrize("theme", list(THEMES.values()), ids=list(THEMES))
def test_the_themes_own_text_colours_pass_on_their_background_and_muted_grid_fails(theme):
    ok = [text("cat", color=theme.text), text("0.61", color=theme.muted).shift(DOWN)]
    assert lint.low_contrast(lint.marks_of(ok), theme.background) == []
    faint = lint.low_contrast(lint.marks_of([text("cat", color=theme.grid)]), theme.background)
    assert rules(faint) == ["contrast"]


def test_low_contrast_fires_on_the_background_and_on_a_fill_under_the_text():
    assert lint.low_contrast(lint.marks_of([text("cat", color=DARK.text)]), BG) == []
    dim = lint.low_contrast(lint.marks_of([text("cat", color="#3b4252")]), BG)
    assert rules(dim) == ["contrast"]
    word = text("0.99", color=DARK.text)
    cell = Rectangle(width=1.2, height=0.6, stroke_width=0).set_fill("#5ad28c", 0.8).move_to(word)
    found = lint.low_contrast(lint.marks_of([cell, word]), BG)
    assert rules(found) == ["contrast"] and "0.99" in found[0].message
    # the same fill drawn after the text hides it rather than lying under it
    assert lint.low_contrast(lint.marks_of([word, cell.copy().set_fill(opacity=1)]), BG) == []
    # a faint fill keeps the text readable
    faint = cell.copy().set_fill(opacity=0.12)
    assert lint.low_contrast(lint.marks_of([faint, word]), BG) == []


# ---- colours --------------------------------------------------------------------------
@pytest.mark.parametrize("lab1, lab2, expected", [  # Sharma, Wu & Dalal (2005), table 1
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
])
def test_ciede2000_matches_the_published_test_pairs(lab1, lab2, expected):
    assert lint.ciede2000(np.array(lab1), np.array(lab2)) == pytest.approx(expected, abs=1e-4)


def test_colours_that_look_alike_to_a_colour_blind_viewer_are_found():
    # a blue and a magenta of the same lightness: far apart to most eyes, alike without
    # red-green vision
    alike = lint.confusable([("The", "#70b0eb"), ("cat", "#de70eb")])
    assert len(alike) == 1 and alike[0].cvd == "deuteranopia" and alike[0].delta_e < 5
    # Okabe and Ito's blue and orange, designed to stay apart
    assert lint.confusable([("The", "#0072b2"), ("cat", "#e69f00")]) == []


def test_a_look_alike_coloured_mark_fires_unless_it_carries_its_word():
    alike = lint.confusable([("The", "#70b0eb"), ("cat", "#de70eb")])
    bare = Square(0.3, stroke_width=0).set_fill("#70b0eb", 1)
    found = lint.colour_findings(lint.marks_of([bare]), alike)
    assert rules(found) == ["colour"] and '"The"' in found[0].message
    named = VGroup(bare.copy(), text("The").next_to(bare, RIGHT, buff=0.1))
    assert lint.colour_findings(lint.marks_of([named]), alike) == []
    # a tinted table row is named by the word at the end of its row
    row = Rectangle(width=3, height=0.4, stroke_width=0).set_fill("#70b0eb", 0.3)
    label = text("The").next_to(row, LEFT, buff=1.5)
    assert lint.colour_findings(lint.marks_of([row, label]), alike) == []
    # a line is not: it must have its word beside it
    line = Line(LEFT, RIGHT, color="#70b0eb")
    assert rules(lint.colour_findings(lint.marks_of([line, text("The").next_to(line, LEFT, buff=1.5)]),
                                      alike)) == ["colour"]
    # a word written in its own colour carries itself
    assert lint.colour_findings(lint.marks_of([text("cat", color="#de70eb")]), alike) == []


def test_an_arrow_tip_is_named_by_the_word_written_by_its_shaft():
    alike = lint.confusable([("The", "#70b0eb"), ("cat", "#de70eb")])
    arrow = Arrow(ORIGIN, 3 * RIGHT + UP, buff=0, color="#70b0eb")
    by_shaft = text("The").move_to(arrow.point_from_proportion(0.3) + 0.3 * DOWN)
    assert by_shaft.get_center()[0] < arrow.get_end()[0] - 1.0  # far from the tip
    assert lint.colour_findings(lint.marks_of([arrow, by_shaft]), alike) == []
    # a word nowhere near the arrow still names neither shaft nor tip
    far = text("The").move_to(4 * LEFT + 3 * DOWN)
    found = lint.colour_findings(lint.marks_of([arrow, far]), alike)
    assert rules(found) == ["colour"] and "arrow" in found[0].message


def test_the_default_word_colours_of_both_themes_are_checked_pairwise():
    for theme in THEMES.values():
        colours = [(f"w{i}", word_color(i, theme)) for i in range(6)]
        for c in lint.confusable(colours):
            assert c.delta_e < lint.MIN_WORD_DELTA_E and c.cvd in ("deuteranopia", "protanopia")


# ---- a caption's time ---------------------------------------------------------------
def timing(**kw) -> lint.CaptionTiming:
    base = dict(shown=0.0, reading=4.0, settled=0.5, still=4.0, leaves=4.0)
    return lint.CaptionTiming(**(base | kw))


def test_a_picture_that_stands_long_enough_and_does_not_change_passes():
    assert lint.hold_findings(timing()) == []


def test_a_picture_completed_just_before_its_caption_leaves_fires():
    found = lint.hold_findings(timing(settled=3.5))  # 0.5 s still, needs 2 s
    assert rules(found) == ["hold"] and "0.5 s" in found[0].message
    # a short caption still needs 1.5 s
    assert rules(lint.hold_findings(timing(reading=1.5, settled=3.0))) == ["hold"]


def test_an_object_that_moves_while_the_caption_is_up_fires():
    box, label = Square(1), text("cat").shift(RIGHT * 2)
    still = lint.marks_of([box, label])
    box.shift(UP)
    leaving = lint.marks_of([box, label])
    changes = lint.changed(still, leaving)
    assert changes == ["square at (0.0, 0.0) changes"]
    assert lint.changed(still, lint.marks_of([label])) == ["square at (0.0, 0.0) is cleared"]
    assert lint.changed(still, still) == []
    found = lint.hold_findings(timing(leaves=5.0, changes=tuple(changes)))
    assert rules(found) == ["moves"] and "1.0 s before it leaves" in found[0].message


def test_a_caption_is_linted_at_both_moments_and_each_finding_said_once():
    pic = clean_picture()
    marks = lint.marks_of(pic)
    clean = lint.CaptionPicture(1, "The cat looks at 0.61.", marks, marks, timing())
    assert lint.caption_findings(clean, BG) == []
    pic[2].move_to(pic[1])  # "0.61" onto "cat" before the caption leaves
    moved = lint.CaptionPicture(1, "The cat looks at 0.61.", marks, lint.marks_of(pic), timing())
    assert sorted(rules(lint.caption_findings(moved, BG))) == ["moves", "overlap"]


def test_problems_repeated_over_captions_are_one_line_naming_the_others():
    f = lint.Finding("safe-area", 'text "badge" is 0.11 outside the safe area')
    g = lint.Finding("overlap", 'text "0.61" overlaps text "cat"')
    problems = lint.gather(4, [(1, [f]), (2, [f, g]), (3, [f]), (5, [f])])
    assert [str(p) for p in problems] == [
        'ch 4 caption 1: text "badge" is 0.11 outside the safe area (also captions 2–3, 5)',
        'ch 4 caption 2: text "0.61" overlaps text "cat"']


def test_the_summary_counts_problems_per_rule():
    assert "no problems" in LintResult([ChapterLint("input", 4, [])]).summary()
    f = lint.Problem(1, 2, lint.Finding("hold", "x"))
    assert "1 problems in 4 captions of 1 chapter (1 hold;" in LintResult(
        [ChapterLint("input", 4, [f])]).summary()


# ---- real chapters ------------------------------------------------------------------
DEFAULT = Settings(sentence="The black cat drank the milk", quality="l")


@pytest.fixture(scope="session")  # once per worker, whatever runs between its tests
def default_lint():
    return video_lint(DEFAULT)  # lint_video(DEFAULT, ..., jobs=1), shared with the chapters' checks


@pytest.mark.slow
def test_every_caption_of_the_default_video_is_linted(default_lint):
    # 54 captions in 10 chapters today; each chapter has some, and every problem names one
    assert len(default_lint.chapters) == 10
    assert all(c.captions > 0 for c in default_lint.chapters)
    for p in default_lint.problems:
        assert 1 <= p.caption <= next(c.captions for c in default_lint.chapters
                                      if lint_number(c.chapter) == p.chapter)


def test_the_lint_sees_every_caption_a_dry_run_shows(default_lint):
    assert default_lint.chapters[0].captions == len(dry_run(DEFAULT, "input").subtitles)


def lint_number(slug: str) -> int:
    from attention_video.attncore.chapters import number

    return number(slug)


def test_the_default_video_passes_the_lint(default_lint):
    """Issue 28: the default video breaks no rule of the lint, in any of its 54 captions
    (59 problems when the lint was written)."""
    assert default_lint.chapters and sum(c.captions for c in default_lint.chapters) > 40
    assert [str(p) for p in default_lint.problems] == []


def test_lint_is_refused_with_outputs_it_does_not_make(capsys):
    with pytest.raises(SystemExit) as e:
        main(["The black cat drank the milk", "--lint", "--slides"])
    assert e.value.code == 2 and "--lint" in capsys.readouterr().err


@pytest.mark.slow
def test_lint_prints_one_line_per_problem_and_exits_1(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # The default video passes: a size floor no text reaches makes real problems to print.
    monkeypatch.setattr(lint.too_small, "__defaults__", (1000.0,))
    with pytest.raises(SystemExit) as e:
        main(["The black cat drank the milk", "--chapters", "softmax", "--lint", "-j", "1"])
    assert e.value.code == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines and all(line.startswith("ch 5 caption ") for line in lines)
    assert "lint: " in err.splitlines()[-1] and "problems in 5 captions" in err
    assert not list(tmp_path.iterdir())  # a check writes nothing


# ---- issue 28, part B: the rules the scenes now keep ----------------------------------
def test_the_first_word_colours_stay_apart_for_colour_blind_viewers():
    from attention_video.scenes.themes import WORD_HUES

    for theme in THEMES.values():
        colours = [(f"w{i}", word_color(i, theme)) for i in range(len(WORD_HUES))]
        assert lint.confusable(colours) == [], theme.name


def test_no_two_of_32_word_colours_are_near_one_colour_in_either_theme():
    # Past the first seven, colours cannot stay safe for colour-blind viewers (the lint
    # asks each mark to carry its word), but none may be a near twin of an earlier one,
    # for any viewer: the golden-ratio spread gave words 7 and 9 colours 0.6 apart.
    for theme in THEMES.values():
        colours = [(f"w{i}", word_color(i, theme)) for i in range(32)]
        assert lint.confusable(colours, min_delta=3.0) == [], theme.name
        near_eighth = lint.confusable(colours[:8], min_delta=9.0)
        assert near_eighth == [], (theme.name, near_eighth)


@pytest.mark.parametrize("theme", list(THEMES.values()), ids=list(THEMES))
def test_numbers_on_heat_cells_read_on_bright_and_faint_cells(theme):
    from attention_video.scenes.widgets import CellLayout, MatrixView

    values = np.array([[0.99, 0.75, 0.02], [-0.9, 0.4, 0.0]])
    grid = MatrixView(values, key="weights", theme=theme, heat=True,
                      numbers_in_rows={0, 1}, layout=CellLayout(0.9, 0.5, 22, True))
    assert lint.low_contrast(lint.marks_of([grid]), theme.background) == []


@pytest.mark.parametrize("theme", list(THEMES.values()), ids=list(THEMES))
def test_word_chips_and_word_coloured_numbers_read_on_their_own_tint(theme):
    from attention_video.scenes.widgets import CellLayout, MatrixView, make_token_chips

    colours = [word_color(i, theme) for i in range(12)]
    chips = make_token_chips([f"w{i}" for i in range(12)], colours, theme)
    assert lint.low_contrast(lint.marks_of([chips]), theme.background) == []
    values = np.linspace(0, 1, 12).reshape(1, 12)
    grid = MatrixView(values, key="weights", theme=theme, layout=CellLayout(0.9, 0.5, 22, True),
                      cell_style=lambda i, j: (colours[j], 0.15), max_cols=12)
    assert lint.low_contrast(lint.marks_of([grid]), theme.background) == []


FIXED_RULES = ("overlap", "crossing", "safe-area", "size", "contrast", "colour")


def fixed_rule_problems(settings: Settings, slug: str) -> list[str]:
    """The chapter's problems under the rules fixed for issue 28 (the default video's
    chapters are read from its whole lint, made once)."""
    return [str(p) for p in chapter_lint(settings, slug).problems if p.finding.rule in FIXED_RULES]


LIGHT = Settings(sentence="The black cat drank the milk", quality="l", theme="light")


# The dark theme's chapters are read from the default video's lint (fast); the light
# theme's are linted chapter by chapter (slow tier). The light theme's colours are checked
# fast above, on their own.
THEMES_FAST_DARK = ["dark", pytest.param("light", marks=pytest.mark.slow)]


@pytest.mark.parametrize("theme", THEMES_FAST_DARK)
@pytest.mark.parametrize("slug", ["input", "linear", "factor", "weighted_sum", "qkv"])
def test_the_badge_stays_in_the_safe_area_and_words_read_in_every_chapter(slug, theme):
    assert fixed_rule_problems(DEFAULT if theme == "dark" else LIGHT, slug) == []


@pytest.mark.parametrize("theme", THEMES_FAST_DARK)
def test_the_dot_products_thumbnail_and_arrow_labels_stay_in_the_safe_area_and_uncrossed(theme):
    # the Q·Kᵀ thumbnail and "milk" stuck out; arrows ran through "θ" and "cat", and the
    # dashed shadow drops through "cat"; the light theme's green products on their tint
    assert fixed_rule_problems(DEFAULT if theme == "dark" else LIGHT, "dot") == []


TWENTY = Settings(sentence="The quick brown fox jumps over the lazy dog while an old farmer watches "
                           "from his porch nearby", weights="pretrained", quality="l")


@pytest.mark.parametrize("slug", ["linear", pytest.param("dot", marks=pytest.mark.slow)])
def test_a_twenty_token_sentence_keeps_its_labels_apart_uncrossed_and_legible(slug):
    # row labels touched (ch 2), arrows ran through word labels and "θ", the "not drawn"
    # list and "⋮" were under the size floor (ch 4)
    found = [p for p in fixed_rule_problems(TWENTY, slug)
             if " overlaps " in p or " crosses " in p or " px at 1080p" in p]
    assert found == []


def test_row_labels_of_low_rows_step_out_and_fold_marks_stay_legible():
    from attention_video.scenes.widgets import CellLayout, MatrixView

    words = [f"word{i}" for i in range(24)]
    grid = MatrixView(np.zeros((24, 12)), key="X", theme=DARK, row_labels=words, max_cols=6,
                      layout=CellLayout(0.3, 0.16, MIN_FONT, False))
    marks = lint.marks_of([grid])
    assert lint.overlaps(marks) == []
    assert lint.too_small(marks) == []

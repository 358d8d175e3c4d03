"""--questions: a question card as a chapter opens, before the picture that answers it.

The caption asks (and the voice, when there is one); the card shows the options and a
countdown bar that empties over the think time, which starts once the question has been
read; then the right option is marked (✓, a thicker frame, the others dimmed: not by
colour alone) and the caption gives the answer and why, from the numbers
(attncore.questions, worded by scenes.questions). The card leaves with that caption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attention_video.fastmanim.fades import FadeIn, FadeOut
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_LABEL,
    BUFF_MEDIUM,
    BUFF_SECTION,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
)
from attention_video.scenes.questions import Worded
from attention_video.scenes.text import fit_width, make_text
from attention_video.scenes.themes import Theme
from manim import DOWN, LEFT, RIGHT, UP, Rectangle, RoundedRectangle, VGroup, linear

HEADING_FONT = 34
OPTION_FONT = 30
LETTER_FONT = 26
NOTE_FONT = 20
BAR_HEIGHT = 0.09
LETTERS = "ABCDEFGH"


@dataclass
class Card:
    """The card's parts, for the scene to animate."""

    whole: VGroup
    boxes: list[RoundedRectangle]  # one frame per option
    options: list[VGroup]  # letter and text, per option
    bar: Rectangle  # the countdown's fill (it empties to the left)
    note: VGroup  # "5 s to think"


def option_row(letter: str, text: str, theme: Theme, width: float) -> tuple[VGroup,
                                                                              RoundedRectangle]:
    chip = make_text(letter, LETTER_FONT, theme.accent, weight="BOLD")
    words = make_text(text, OPTION_FONT, theme.text)
    row = VGroup(chip, words).arrange(RIGHT, buff=BUFF_MEDIUM)
    fit_width(row, width - 2 * BUFF_MEDIUM)
    box = RoundedRectangle(corner_radius=0.12, width=width, height=row.height + 2 * BUFF_MEDIUM,
                           stroke_color=theme.grid, stroke_width=2)
    row.move_to(box).align_to(box, LEFT).shift(RIGHT * BUFF_MEDIUM)
    return row, box


def make_card(question: Worded, theme: Theme, tr: Translate, think: float) -> Card:
    heading = make_text(tr("Predict"), HEADING_FONT, theme.accent, weight="BOLD")
    n = len(question.options)
    columns = 2 if n == 4 else 1  # four options as a 2 × 2 grid, two or three in a column
    width = (2 * SAFE_X - BUFF_SECTION) / 2 if columns == 2 else 2 * SAFE_X * 0.6
    rows = [option_row(LETTERS[k], text, theme, width) for k, text in enumerate(question.options)]
    tiles = VGroup(*[VGroup(box, row) for row, box in rows])
    tiles.arrange_in_grid(cols=columns, buff=(BUFF_SECTION, BUFF_BLOCK))
    track = Rectangle(width=tiles.width, height=BAR_HEIGHT, stroke_width=0,
                      fill_color=theme.grid, fill_opacity=1)
    bar = track.copy().set_fill(theme.accent, 1)
    note = VGroup(make_text(tr.plural("{n} second to think", "{n} seconds to think",
                                      round(think)), NOTE_FONT, theme.muted))
    countdown = VGroup(track, bar, note)
    note.next_to(track, DOWN, buff=BUFF_LABEL)
    whole = VGroup(heading, tiles, countdown).arrange(DOWN, buff=BUFF_SECTION)
    room = STAGE_TOP - SAFE_BOTTOM
    if whole.height > room:
        whole.scale_to_fit_height(room)
    whole.move_to(UP * (STAGE_TOP + SAFE_BOTTOM) / 2)
    return Card(whole, [box for _, box in rows], [row for row, _ in rows], bar, note)


def ask(scene: Any, question: Worded) -> None:
    """Ask one question on `scene` (a ChapterScene): card in, the question said and read,
    the countdown, the answer marked and said, the card out with its caption."""
    think = float(scene.settings.think_time)
    card = make_card(question, scene.theme, scene.tr, think)
    scene.play(FadeIn(card.whole), run_time=0.5)
    scene.say(question.ask)
    scene.hold_caption()  # the think time starts once the question has been read
    scene.play(card.bar.animate(rate_func=linear).stretch_to_fit_width(
        0.001, about_edge=LEFT), run_time=think)
    right = question.answer
    scene.say(question.reason)  # the question's caption leaves as the answer comes
    mark = make_text("✓", OPTION_FONT, scene.theme.positive, weight="BOLD")
    box = card.boxes[right]
    mark.move_to(box.get_right() + LEFT * (BUFF_MEDIUM + mark.width / 2))
    wrong = [k for k in range(len(card.boxes)) if k != right]
    scene.play(box.animate.set_stroke(scene.theme.positive, width=6), FadeIn(mark),
               *(card.options[k].animate.set_color(scene.theme.muted) for k in wrong),
               card.bar.animate.set_opacity(0), card.note.animate.set_opacity(0),
               run_time=0.5)
    scene.play(FadeOut(card.whole, mark), run_time=0.5)

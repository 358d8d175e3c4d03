"""The chapter key is what the scene reads: change one setting, or one part of the trace,
and either the key changes or what the chapter draws and says does not.

The first test renders nothing but dry runs: for every settings field, one changed value;
for every chapter in both plans whose key stayed the same, the dry run's subtitles and
drawn numbers must be the same too (a clip served from the cache would show them). The
second perturbs every field of the trace and checks the digest sees it.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.settings import FIELD_NAMES
from attention_video.attncore.sources import Capabilities
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import (
    AttentionTrace,
    HeadChoice,
    HeadTrace,
    RotaryTrace,
    TrainingHistory,
)
from attention_video.pipeline.cache.keys import chapter_key, trace_digest
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from attention_video.pipeline.run.render import plan_chapters

pytestmark = pytest.mark.xdist_group("cache-key")  # one worker: the dry runs are shared
BASE = Settings(weights="random", sentence="cats drink milk")
# One changed value per field, on BASE. The pretrained-only fields pick a checkpoint and a
# layer: they reach a scene only through the trace, which the second test covers field by
# field (a pretrained build here would take most of the fast tier's time).
VARIANTS: dict[str, dict | None] = {
    "sentence": dict(sentence="cats drink water"),
    "query": dict(query="cats"),
    "query_index": dict(query_index=1),
    "target": dict(target="los gatos beben"),
    "translate": dict(sentence="The ball is blue", translate=True, weights="auto"),
    "weights": dict(weights="auto", sentence="the cat drank the milk"),
    "model": None,
    "layer": None,
    "head": dict(head="auto"),
    "seed": dict(seed=1),
    "d_model": dict(d_model=6),
    "d_k": dict(d_k=3),
    "heads": dict(heads=2),
    "causal": dict(causal=True),
    "softmax": dict(softmax=False),
    "positional": dict(positional=False),
    "max_tokens": dict(max_tokens=12),
    "chapters": dict(chapters=("input", "qkv", "summary")),
    "theme": dict(theme="light"),
    "language": dict(language="zh"),
    "quality": dict(quality="l"),
    "output": dict(output="elsewhere.mp4"),
    "pace": dict(pace=1.25),
    "captions": dict(captions="soft"),
    "questions": dict(questions=True),  # a question card opens the chapters that ask
    "think_time": dict(think_time=6.0),  # without questions: nothing to think about
    "voice": None,  # a narrated dry run synthesizes speech: tests/scenes/test_narration.py keys it
    "describe": dict(describe=True),  # silent: the same clips (narrated: a variant,
    #                                   tests/scenes/test_described_narration.py keys it)
}


def test_every_settings_field_has_a_changed_value():
    assert set(VARIANTS) == set(FIELD_NAMES)


@functools.cache
def made(settings: Settings):
    trace = build_trace(settings)
    return trace, tuple(plan_chapters(settings, trace))


@functools.cache
def dry(settings: Settings, chapter: str):
    trace, plan = made(settings)
    r = render_chapter(ChapterJob(chapter, trace, settings, clip=None, plan=plan))
    return r.subtitles, sorted(r.drawn)


# `output` and `max_tokens` reach no key and no scene, nor `think_time` without questions,
# and `questions` only the keys of the chapters that ask: every other chapter is dry-run
# again for each (up to 18 dry runs, 7 CPU-seconds a field). The other fields keep the key
# of chapters 1 and 3 at most, so the fast tier checks these on the five chapters that
# build in under half a second each and no other field reaches; every chapter, for each,
# in the slow tier.
CHEAP_CHAPTERS = ("factor", "softmax", "weighted_sum", "heads", "summary")
EVERY_CHAPTER_SLOW = ("max_tokens", "think_time", "questions")
CASES = [*(pytest.param(f, None, id=f) for f, v in VARIANTS.items()
           if v is not None and f not in ("output", *EVERY_CHAPTER_SLOW)),
         *(pytest.param(f, CHEAP_CHAPTERS, id=f"{f}-cheap-chapters") for f in EVERY_CHAPTER_SLOW),
         *(pytest.param(f, None, marks=pytest.mark.slow, id=f) for f in EVERY_CHAPTER_SLOW),
         pytest.param("output", None, marks=pytest.mark.slow, id="output")]


@pytest.mark.slow
@pytest.mark.parametrize(("field", "only"), CASES)
def test_a_chapter_whose_key_stays_draws_and_says_the_same(field, only):
    changed = BASE.replace(**VARIANTS[field])
    (t0, p0), (t1, p1) = made(BASE), made(changed)
    for chapter in (c for c in p1 if c in p0 and (only is None or c in only)):
        if chapter_key(chapter, t0, BASE, p0) != chapter_key(chapter, t1, changed, p1):
            continue
        assert dry(BASE, chapter) == dry(changed, chapter), (
            f"{field}: chapter {chapter!r} keeps its cache key but draws or says something else")


def test_a_fact_about_the_plan_is_keyed_where_a_chapter_states_it():
    """The defect this test was written for: chapter 7 of the tiny model says "The next
    chapter replays its training" when chapter 8 plays, and the key did not hold the plan,
    so `--chapters 1-7,9` after a full render was served a chapter 7 that promised it."""
    with_learning = Settings(sentence="the cat drank the milk", chapters=("qkv", "learning"))
    without = with_learning.replace(chapters=("qkv",))
    (t0, p0), (t1, p1) = made(with_learning), made(without)
    assert dry(with_learning, "qkv") != dry(without, "qkv")
    assert chapter_key("qkv", t0, with_learning, p0) != chapter_key("qkv", t1, without, p1)


# ---- every part of the trace is in the digest --------------------------------------------
def _other(value):
    """A different value of the same kind."""
    if isinstance(value, np.ndarray):
        out = np.array(value, copy=True)
        if out.dtype == bool:
            out.flat[0] = not out.flat[0]
        else:
            out.flat[0] += 1.0
        return out
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return "something"
    if value == ():
        return ((1, 2),)
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # the task's examples
        return (tuple(str(x) + "x" for x in value[0]),) + value[1:]
    if isinstance(value, tuple) and value and isinstance(value[0], int):  # kv_heads
        return (value[0] + 1,) + value[1:]
    if isinstance(value, tuple) and value and isinstance(value[0], Token):
        return (Token(value[0].text + "x", value[0].kind),) + value[1:]
    if isinstance(value, Capabilities):  # what the model can do
        return dataclasses.replace(value, layered=not value.layered)
    raise AssertionError(f"no other value for {value!r}")


@functools.cache
def full_trace() -> AttentionTrace:
    """A trace with every optional part filled: the tiny model (history), a head choice,
    rotary positions and shared key/value heads (as a decoder's)."""
    t = build_trace(Settings(sentence="the cat drank the milk", weights="tiny"))
    d_k, h = t.d_k, len(t.heads)
    rope = RotaryTrace(10000.0, np.zeros((5, d_k // 2)), np.zeros((h, 5, d_k)),
                       np.zeros((1, 5, d_k)))
    return dataclasses.replace(
        t, head_choice=HeadChoice(HeadChoice.STRONGEST_LINK, 0, 0, "'milk'", 3, "'drank'", 0.5),
        query_inputs=t.query_tokens, x_label_q="E + P", model_weights=np.zeros((1, 1, 5, 5)),
        source_reason="because", rope=rope, kv_heads=(0,) * h)


def _fields(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("name", [n for n in _fields(AttentionTrace)
                                  if n not in ("heads", "history", "head_choice", "rope")])
def test_every_trace_field_is_in_the_digest(name):
    t = full_trace()
    changed = dataclasses.replace(t, **{name: _other(getattr(t, name))})
    if name == "focus":  # only for the chapters that show the followed word
        assert trace_digest(t, with_focus=False) == trace_digest(changed, with_focus=False)
    assert trace_digest(t, with_focus=True) != trace_digest(changed, with_focus=True), name


@pytest.mark.parametrize("name", [n for n in _fields(HeadTrace)])
def test_every_head_field_is_in_the_digest(name):
    t = full_trace()
    head = dataclasses.replace(t.head, **{name: _other(getattr(t.head, name))})
    changed = dataclasses.replace(t, heads=(head,) + t.heads[1:])
    assert trace_digest(t, True) != trace_digest(changed, True), name


@pytest.mark.parametrize("name", _fields(RotaryTrace))
def test_every_rotary_field_is_in_the_digest(name):
    t = full_trace()
    rope = dataclasses.replace(t.rope, **{name: _other(getattr(t.rope, name))})
    assert trace_digest(t, True) != trace_digest(dataclasses.replace(t, rope=rope), True), name


@pytest.mark.parametrize("name", _fields(TrainingHistory))
def test_every_history_field_is_in_the_digest(name):
    t = full_trace()
    history = dataclasses.replace(t.history, **{name: _other(getattr(t.history, name))})
    assert trace_digest(t, True) != trace_digest(dataclasses.replace(t, history=history), True)


@pytest.mark.parametrize("name", _fields(HeadChoice))
def test_every_head_choice_field_is_in_the_digest(name):
    t = full_trace()
    choice = dataclasses.replace(t.head_choice, **{name: _other(getattr(t.head_choice, name))})
    assert trace_digest(t, True) != trace_digest(dataclasses.replace(t, head_choice=choice), True)

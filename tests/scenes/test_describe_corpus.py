"""Every caption's description (scenes.describe) on the lint corpus (tests/data/
lint_corpus.toml), checked against the scene graph and the trace, not against the record
the description was made from:

- it names every grid on screen (every MatrixView in the scene when the caption leaves, a
  table come row by row (TableRows), an overview's thumbnail image (HeatView)) that its
  caption does not name;
- it names every chart on screen (every ChartView: the bars of the weights, the learning
  curves, the stacked bar) that its caption does not name, and while the chart is on screen,
  a caption or its description states the chart's highest value as its labels write it (a
  bar chart's lowest too; a stacked bar's parts that carry a word, and how many are grey);
- while they are on screen, a description says how many grids of one key and size stand
  side by side (thumbnails), in rows consistent with that count, and a caption or a
  description says each number labelled among words that a listener needs: each head's
  strongest link under its thumbnail, each angle of the training snapshot whose step the
  arrows' panel shows;
- it can be said in the caption's time on screen, at the speaking rate its catalogue gives
  and the video's pace (its characters as spoken, counted here);
- every number it states is read back from its text and is the trace's at the precision
  written (tests/support/scene_truth.resolve), or a grid's size or count as the scene graph
  has it, a head's number the head whose weight follows it.

The whole corpus is slow; a few chapters of four cases (English, Chinese, Spanish; one with
a bar chart) run in the fast tier."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from attention_video.attncore.settings import Settings
from attention_video.scenes.catalogue import Translate, translations
from attention_video.scenes.describe import (
    Description,
    Words,
    chart_name,
    chart_word,
    grid_name,
    grid_word,
    names_in,
)
from attention_video.scenes.precision import fmt
from attention_video.scenes.questions import names
from attention_video.scenes.spoken import spoken

from tests.support.builds import plan_of, trace_of
from tests.support.lint_corpus import load_cases
from tests.support.scene_truth import check_drawn

CASES = {c.name: c for c in load_cases()}
FAST = [("tiny-default", "factor"), ("tiny-captions-zh", "weighted_sum"),
        ("tiny-spanish-captions", "input"), ("tiny-chinese", "qkv")]  # (chapters that build in a second or two)
NUMBER = re.compile(r"−?-?\d+(?:\.\d+)?")
COUNT = "count: "  # how many grids of one key and size stand side by side (thumbnails)
LABELLED = "@"  # a number labelled among words ("head 4 → [CLS] 0.656", a snapshot's θ): "@key(index):text"
GREY = "grey parts: "  # a stacked bar's count of parts too narrow for their words, said as a
#                       Mention("parts") (a bare count is not looked for in the words)
SLACK = 0.1  # seconds: a render rounds each play to whole frames, so a caption stays up a
# little longer or shorter than the fast build times it (measured: −0.23 to +0.034 s at -q l)
QUOTED = re.compile(r"[\"“][^\"”]*[\"”]")  # a word in quotes: a token, which may hold digits


@dataclass
class Said:
    """One caption as the scene played it: its words and time on screen, its description,
    and the grids (key → shapes) and charts ((kind, key) → the extremes its labels write)
    on screen when it left, from the scene graph."""

    caption: str
    seconds: float
    description: Description
    grids: dict[str, set[tuple[int, int]]]
    charts: dict[tuple[str, str], tuple[str, ...]]
    must: dict[tuple[str, str], tuple[str, ...]]  # what else is to be said in its stay: how
    #   many thumbnails of a key (COUNT), the numbers labelled among words (LABELLED)


def extremes(chart) -> tuple[str, ...]:
    """What a listener must hear of a chart: its highest value as its labels write it (a
    curve's axis tops at it), and a bar chart's lowest; of a stacked bar, the value of every
    part that carries its word."""
    if chart.kind == "stacked":  # (and how many parts are too narrow for a word, if any)
        grey = chart.labelled.count(False)
        return tuple(fmt(v, chart.decimals) for v, named in zip(chart.plotted, chart.labelled)
                     if named) + ((f"{GREY}{grey}",) if grey else ())
    values = [fmt(v, chart.decimals) for v in (max(chart.plotted), min(chart.plotted))]
    return tuple(values[:1] if chart.kind == "curve" else values)


def labelled_parts(values: tuple[str, ...]) -> int:
    """How many parts of a stacked bar carry their word, from what must be said of it."""
    return sum(1 for v in values if not v.startswith(GREY))


def told_labelled(s: Said, key: str) -> int | None:
    """The count of a stacked bar's labelled parts its description states, if it does."""
    return next((int(m.text) for m in s.description.mentions
                 if m.kind == "labelled" and m.key == key), None)


def played(settings: Settings, slug: str, fast: bool = True) -> list[Said]:
    """Chapter `slug` built as the lint builds it (every play ends at once in its final
    state, keeping a render's time: pipeline.run.fastforward), the scene graph looked at as
    each caption leaves. A caption leaves on the same picture and at the same time as in a
    render (test_the_fast_build_says_what_a_render_says)."""
    from attention_video.pipeline.run.chapter import manim_config  # noqa: PLC0415 (Manim)
    from attention_video.pipeline.run.fastforward import play_at_once, wait_at_once  # noqa: PLC0415
    from attention_video.scenes import scene_class  # noqa: PLC0415
    from attention_video.scenes.text import visible_texts  # noqa: PLC0415
    from attention_video.scenes.widgets import (  # noqa: PLC0415
        ChartView,
        HeatView,
        MatrixView,
        NumberLabel,
        TableRows,
    )
    from manim import tempconfig  # noqa: PLC0415

    looked: list[dict[str, set[tuple[int, int]]]] = []
    charted: list[dict[tuple[str, str], tuple[str, ...]]] = []
    musts: list[dict[tuple[str, str], tuple[str, ...]]] = []

    class Looked(scene_class(slug)):
        def play(self, *args, **kwargs) -> None:
            if fast:
                play_at_once(self, *args, **kwargs)
            else:
                super().play(*args, **kwargs)

        def wait(self, duration: float = 1.0, *args, **kwargs) -> None:
            if fast:
                wait_at_once(self, duration)
            else:
                super().wait(duration, *args, **kwargs)

        def _close_subtitle(self) -> None:
            if self._caption is not None:
                grids: dict[str, set[tuple[int, int]]] = {}
                charts: dict[tuple[str, str], tuple[str, ...]] = {}
                views: dict[tuple[str, tuple[int, int]], int] = {}  # (key, shape) → how many
                tables: dict[int, tuple[MatrixView, set[int]]] = {}
                labels: list[NumberLabel] = []
                for top in self.mobjects:
                    if top is self._caption:
                        continue
                    for m in top.get_family():
                        if isinstance(m, (MatrixView, HeatView)):
                            shape = m.values.shape if isinstance(m, MatrixView) else m.shape
                            grids.setdefault(m.key, set()).add(shape)
                            views[(m.key, shape)] = views.get((m.key, shape), 0) + 1
                        if isinstance(m, TableRows):  # a table come row by row
                            tables.setdefault(id(m.view), (m.view, set()))[1].update(m.rows)
                        if isinstance(m, ChartView) and m.plotted:
                            charts[(m.kind, m.key)] = extremes(m)
                        if isinstance(m, NumberLabel) and visible_texts(m):
                            labels.append(m)
                for view, rows in tables.values():
                    grids.setdefault(view.key, set()).add((len(rows), view.values.shape[1]))
                looked.append(grids)
                charted.append(charts)
                musts.append(must_say(self, views, labels))
            super()._close_subtitle()

    trace = trace_of(settings)
    with tempconfig(manim_config(settings, None, None, Path(tempfile.mkdtemp()))):
        scene = Looked(trace, settings, plan_of(settings), skip_animations=fast)
        scene.render()
    assert len(scene.descriptions) == len(scene.subtitles) == len(looked)
    return [Said(text, b - a, d, g, c, m) for (a, b, text), d, g, c, m
            in zip(scene.subtitles, scene.descriptions, looked, charted, musts)]


def must_say(scene, views: dict[tuple[str, tuple[int, int]], int],
             labels: list) -> dict[tuple[str, str], tuple[str, ...]]:
    """Beside the charts, what a listener must hear while it is on screen: how many grids of
    a key stand side by side (thumbnails, more than one of a size), each head's strongest
    link labelled under its thumbnail, and the angles of the training snapshot whose step
    the arrows' panel shows (its θ column)."""
    from attention_video.scenes.text import visible_texts  # noqa: PLC0415 (Manim)

    must = {("grids", key): (f"{COUNT}{n}",) for (key, _), n in views.items() if n > 1}
    for label in labels:
        if label.key == "head_weights":
            must[("number", f"{label.key}{label.index}")] = (
                f"{LABELLED}{label.key}{label.index}:{label.text}",)
    steps = {label.index[0] for label in labels if label.key == "history_steps"}
    texts = {t for top in scene.mobjects if top is not scene._caption for t in visible_texts(top)}
    for key, index, text in scene.drawn.entries:
        if key == "history_angle" and index[0] in steps and f"{text}°" in texts:
            must[("number", f"{key}{index}")] = (f"{LABELLED}{key}{index}:{text}",)
    return must


def said_in(s: Said, key: str) -> set[str]:
    """What the description says beside its words of the things `must_say` asks for: the
    counts it states (of grids, of a stacked bar's grey parts), the numbers it mentions."""
    out = set()
    for m in s.description.mentions:
        if m.kind == "parts" and m.key == key:
            out.add(f"{GREY}{m.text}")
        if m.kind == "count" and m.key == key:
            out.add(f"{COUNT}{m.text}")
        if m.kind == "value":
            out.add(f"{LABELLED}{m.key}{m.index}:{m.text}")
    return out


def rate(language: str) -> float:
    return float(translations(language).pgettext("characters spoken per second", "14"))


def problems(settings: Settings, slug: str) -> list[str]:
    from attention_video.scenes.labels import word_labels  # noqa: PLC0415

    trace, tr = trace_of(settings), Translate(settings.language)

    Q, K, product = names(trace)
    words = Words(word_labels([t.text for t in trace.query_tokens]),
                  word_labels([t.text for t in trace.key_tokens]), trace.focus, Q, K, product)
    bad, unsaid = [], {}  # unsaid: per chart on screen, where it came and the extremes not said yet
    for n, s in enumerate(played(settings, slug)):
        where = f"{slug} caption {n + 1} {s.caption[:40]!r}: {s.description.text!r}"
        for key in s.grids:  # every grid on screen the caption does not name
            if not names_in(s.caption, grid_word(key, tr, words)) and \
                    grid_name(key, tr, words) not in s.description.text:
                bad.append(f"{where} does not name {key}")
        for kind, key in s.charts:  # every chart on screen
            if not names_in(s.caption, chart_word(kind, key, tr)) and \
                    chart_name(kind, key, tr) not in s.description.text:
                bad.append(f"{where} does not name the {kind} of {key}")
        for (kind, key), values in {**s.charts, **s.must}.items():  # come on screen: its
            if (kind, key) not in unsaid:  #                            extremes are to be said
                unsaid[(kind, key)] = (where, set(values))
            counted = said_in(s, key)
            unsaid[(kind, key)][1].difference_update(
                v for v in values if v in s.caption or v in s.description.text or v in counted
                or (v.startswith(LABELLED) and v.split(":")[-1] in s.caption))
            if kind == "stacked" and (kind, key) in s.charts and \
                    told_labelled(s, key) == labelled_parts(s.charts[(kind, key)]):
                # where its parts' values did not fit: how many carry their word (the values
                # are the weights beside the rows)
                unsaid[(kind, key)][1].difference_update(
                    v for v in values if not v.startswith(GREY))
        for chart in [c for c in unsaid if c not in s.charts and c not in s.must]:
            first, values = unsaid.pop(chart)  # gone from screen: were they said?
            if values:
                bad.append(f"{first} never says {sorted(values)} of the {chart}")
        said = " ".join(spoken(s.description.text, settings.language).split())
        if len(said) / rate(settings.language) / settings.pace > s.seconds + SLACK:
            bad.append(f"{where} takes {len(said) / rate(settings.language) / settings.pace:.1f} s "
                       f"to say in {s.seconds:.1f} s")
        read = NUMBER.findall(QUOTED.sub("", s.description.text.replace("W_", "W")))
        stated = [m.text for m in s.description.mentions]
        if read != stated:
            bad.append(f"{where} states {read}, its record {stated}")
        values = [(m.key, m.index, m.text) for m in s.description.mentions if m.kind == "value"]
        bad += [f"{where}: {b}" for b in check_drawn(trace, values)]
        mentioned = s.description.mentions
        for head, value in zip(mentioned, (*mentioned[1:], None)):  # "head 4 0.656": the head whose weight
            if head.kind == "head" and (value is None or value.kind != "value"  # follows
                                        or (int(head.text),) != tuple(value.index[:1])):
                bad.append(f"{where}: head {head.text} said of {value}")
        for m in s.description.mentions:
            if m.kind == "parts" and not any(f"{GREY}{m.text}" in values
                                             for values in s.charts.values()):
                bad.append(f"{where}: {m.key} has no stacked bar of {m.text} grey parts")
            if m.kind == "count" and (f"{COUNT}{m.text}",) != s.must.get(("grids", m.key)):
                bad.append(f"{where}: {m.key} has not {m.text} grids of a size on screen")
            if m.kind == "lines":  # n thumbnails in `lines` rows of `per`: every row but the
                n, per = (int(x.text) for x in s.description.mentions  # last full
                          if x.key == m.key and x.kind in ("count", "per"))
                if not (int(m.text) - 1) * per < n <= int(m.text) * per:
                    bad.append(f"{where}: {n} grids do not make {m.text} rows of {per}")
            if m.kind in ("rows", "cols"):
                sizes = {r if m.kind == "rows" else c for r, c in s.grids.get(m.key, ())}
                if int(m.text) not in sizes:
                    bad.append(f"{where}: {m.key} has {m.kind} {sizes}, said {m.text}")
    bad += [f"{first} never says {sorted(values)} of the {chart}"
            for chart, (first, values) in unsaid.items() if values]
    return bad


@pytest.mark.slow
@pytest.mark.parametrize(("case", "slug"), [("tiny-default", "learning"), ("tiny-chinese", "dot")])
def test_the_fast_build_says_what_a_render_says(case, slug):
    """The corpus is checked on the lint's fast build; a render (every play's frames made)
    describes the same grids and charts with the same words, and keeps each caption up no
    less time (to SLACK)."""
    settings = CASES[case].settings
    fast, full = played(settings, slug), played(settings, slug, fast=False)
    assert [(s.caption, s.description, s.grids, s.charts) for s in fast] == \
        [(s.caption, s.description, s.grids, s.charts) for s in full]
    assert all(f.seconds <= r.seconds + SLACK for f, r in zip(fast, full))


@pytest.mark.parametrize(("case", "slug"), FAST, ids=[f"{c}-{s}" for c, s in FAST])
def test_a_few_chapters_are_described_truly_and_in_time(case, slug):
    settings = CASES[case].settings
    assert slug in plan_of(settings)
    assert problems(settings, slug) == []


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_every_caption_of_the_corpus_is_described_truly_and_in_time(case):
    settings = CASES[case].settings
    bad = [p for slug in plan_of(settings) for p in problems(settings, slug)]
    assert bad == [], "\n".join(bad)


def without(name: str):
    """scenes.describe.describe with `name` taken out of every description's words (what it
    records left as it was): a description that never says that name."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    real = describe.describe

    def unnamed(*args, **kwargs):
        d = real(*args, **kwargs)
        return describe.Description(d.text.replace(name, ""), d.names, d.mentions, d.seconds,
                                    d.told)

    return unnamed


def test_the_check_fails_on_a_wrong_description(monkeypatch):
    """A description that never names the grids on screen, one that reads a number wrong,
    one too long to say: each is caught."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["tiny-default"].settings
    real = describe.describe

    def mute(*args, **kwargs):
        d = real(*args, **kwargs)
        return describe.Description("", (), (), 0.0) if "On screen" in d.text else d

    monkeypatch.setattr("attention_video.scenes.base.describe", mute)
    assert any("does not name" in p for p in problems(settings, "factor"))

    def wrong(*args, **kwargs):  # its first value one in the last place off, said so
        d = real(*args, **kwargs)
        k = next((k for k, m in enumerate(d.mentions) if m.kind == "value"), None)
        if k is None:
            return d
        m = d.mentions[k]
        off = m.text[:-1] + ("1" if m.text[-1] != "1" else "2")
        mentions = (*d.mentions[:k], describe.Mention(m.kind, m.key, m.index, off), *d.mentions[k + 1:])
        return describe.Description(d.text.replace(m.text, off, 1), d.names, mentions, d.seconds)

    monkeypatch.setattr("attention_video.scenes.base.describe", wrong)
    assert any("trace" in p for p in problems(settings, "factor"))

    def long(*args, **kwargs):
        d = real(*args, **kwargs)
        return describe.Description(d.text + " And so on." * 40, d.names, d.mentions, d.seconds)

    monkeypatch.setattr("attention_video.scenes.base.describe", long)
    assert any("to say in" in p for p in problems(settings, "factor"))


def test_the_check_fails_on_a_chart_left_undescribed(monkeypatch):
    """A description that never says a chart's extremes, and one that never names the
    chart: each is caught (the bars of the weights, chapters softmax and qkv)."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["tiny-default"].settings
    monkeypatch.setattr(describe, "_charts", lambda *args: ({}, set()))
    assert any("never says" in p for p in problems(settings, "softmax"))
    monkeypatch.undo()

    bars = describe.chart_name("bars", "weights", Translate(settings.language))
    monkeypatch.setattr("attention_video.scenes.base.describe", without(bars))
    assert any("does not name the bars" in p for p in problems(settings, "qkv"))


def test_the_check_fails_on_a_stacked_bar_left_undescribed(monkeypatch):
    """A description that names the stacked bar of the weights but never says its parts
    too narrow for their words (chapter softmax) is caught."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["tiny-default"].settings
    assert problems(settings, "softmax") == []
    monkeypatch.setattr(describe, "_stacked", lambda c, caption, tr, words: describe._Part(
        tr("{names}.", names=describe.chart_name(c.kind, c.key, tr)), (c.key,)))
    assert any("never says ['grey parts: " in p for p in problems(settings, "softmax"))


def test_the_check_fails_on_the_learning_tables_and_arrows_left_undescribed(monkeypatch):
    """Chapter learning: a description that never names the table of weights at each
    snapshot (its rows come one by one: TableRows), and one that never says the arrows'
    angles of a snapshot, are caught."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["tiny-default"].settings
    table = describe.grid_name("history_weights", Translate(settings.language),
                               describe.Words((), (), 0))
    monkeypatch.setattr("attention_video.scenes.base.describe", without(table))
    assert any("does not name history_weights" in p for p in problems(settings, "learning"))
    monkeypatch.undo()
    monkeypatch.setattr(describe, "_snapshot_angles", lambda *args: [])
    assert any("never says ['@history_angle" in p for p in problems(settings, "learning"))


@pytest.mark.slow  # (the two-head model is trained on first use; the other negative checks stay fast)
def test_the_check_fails_on_thumbnails_left_uncounted(monkeypatch):
    """Chapter heads: a description that names the heads' thumbnails but never says how
    many there are and how they stand is caught."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["tiny-two-heads"].settings
    assert problems(settings, "heads") == []
    monkeypatch.setattr(describe, "_thumbnails", lambda grids, tr, words: describe._Part(
        tr("{names}.", names=describe.grid_name(grids[0].key, tr, words)), (grids[0].key,)))
    assert any("never says ['count: 2']" in p for p in problems(settings, "heads"))


@pytest.mark.slow
def test_the_check_fails_on_head_links_left_unsaid(monkeypatch):
    """A model of 12 heads (its overview, 72 thumbnails, too): described truly; a
    description that never says the strongest links the caption leaves to the labels
    ("and 8 more, each labelled") is caught."""
    import attention_video.scenes.describe as describe  # noqa: PLC0415

    settings = CASES["pretrained-layer-3"].settings
    assert problems(settings, "heads") == []
    monkeypatch.setattr(describe, "_links", lambda *args: [])
    assert any("never says ['@head_weights" in p for p in problems(settings, "heads"))

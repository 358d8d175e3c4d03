"""What each caption's picture shows that the caption does not say, for a listener who
cannot see it: the descriptions track (--describe) and the transcript read it, and the
described narration says it.

Made from the scene's own record, never from pixels. When a caption leaves, the scene
(scenes.base) hands over a `Picture`: the grids on screen (their trace key and shape, from
the scene graph) and the numbers drawn while the caption was up (the Recorder's entries,
each with its trace key and index, written as the screen writes them). From it `describe`
writes, in the caption language:

    On screen: X, W_Q.                         every grid the caption does not name
    New: Q, a grid of 6 rows by 4 columns.     what appeared since the last picture
    Q, the row of "milk": 2.87, −4.40, …       a row drawn under this caption
    The weights: highest 0.989 ("drank"), lowest 0.000 ("milk").
    The arrow of "drank" is 11° from the query.

The first sentence is always said (as the names alone where "On screen:" would not fit);
the others are added in that order while the whole
still fits the caption's time at the speaking rate of the catalogue (`spoken_seconds`).
Every number a description states is listed in its `mentions` with what it stands for, so
tests check each against the trace (tests/scenes/test_describe.py). No Manim here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from attention_video.scenes.catalogue import N_, Translate, translations
from attention_video.scenes.pacing import caption_chars
from attention_video.scenes.precision import fmt
from attention_video.scenes.spoken import spoken

ROW_VALUES = 4  # a row's numbers said before "…": enough to hear its shape, short to say


@dataclass(frozen=True)
class Grid:
    """A grid of numbers on screen (scenes.widgets.MatrixView): which trace quantity, its
    shape as drawn (Kᵀ is drawn 4 × 6), and whether its cells show numbers or colours."""

    key: str
    rows: int
    cols: int
    numbers: bool


@dataclass(frozen=True)
class Chart:
    """A chart on screen (scenes.widgets.ChartView): `kind` "bars" or "curve", the trace
    `key` of what it plots, each value with its trace index, and the decimals its labels
    write them with."""

    key: str
    kind: str
    values: tuple[float, ...]
    indices: tuple[tuple[int, ...], ...]
    decimals: int

    def text(self, k: int) -> str:
        """Value `k` as the chart's labels write it (scenes.precision)."""
        return fmt(self.values[k], self.decimals)


@dataclass(frozen=True)
class Number:
    """A number drawn while the caption was up: its trace key, index and text as drawn."""

    key: str
    index: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class Picture:
    """What a caption's picture holds when it leaves."""

    grids: tuple[Grid, ...]
    numbers: tuple[Number, ...]  # every recorded number on screen
    fresh: frozenset[tuple[str, tuple[int, ...]]] = frozenset()  # (key, index) of those not
    #                                                  in the previous caption's picture
    charts: tuple[Chart, ...] = ()

    def is_fresh(self, n: Number) -> bool:
        return (n.key, n.index) in self.fresh


@dataclass(frozen=True)
class Mention:
    """A number a description states: a drawn number (`kind` "value", its key and index
    as the Recorder has them) or a grid's size ("rows", "cols" of grid `key`)."""

    kind: str
    key: str
    index: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class Description:
    text: str  # "" when the picture holds nothing the caption does not say
    names: tuple[str, ...] = ()  # the keys of the grids it names
    mentions: tuple[Mention, ...] = ()
    seconds: float = 0.0  # its speaking time at the pace
    told: frozenset[tuple[str, str]] = frozenset()  # the charts (kind, key) whose extremes
    #                                  it or its caption states (said once in a chart's stay)


@dataclass(frozen=True)
class Words:
    """Who the tokens are, for "the row of "milk"": the query words and the key words."""

    queries: Sequence[str]
    keys: Sequence[str]
    focus: int  # the followed word's query row
    Q: str = "Q"  # the names the video gives the query and key rows (Q_rot once turned)
    K: str = "K"
    product: str = "Q·Kᵀ"


# Grids named by words (in the catalogue): as a listener hears the name, and the word a
# caption names the grid by. Q, K and the scores are named as the video writes them
# (Q_rot once turned, `Words`); any other grid by its key, a symbol (X, W_Q, Z).
WORD_NAMES: dict[str, tuple[str, str]] = {
    "weights": (N_("the weights"), N_("weights")),
    "head_weights": (N_("each head's weights"), N_("head")),
    "output": (N_("the output row"), N_("output")),
    "weighted_V": (N_("the weighted rows of V"), N_("weight")),
    "history_weights": (N_("the weights at each snapshot"), N_("weights")),
    "history_products": (N_("the pair products at each snapshot"), N_("pair")),
    "scaled": (N_("the scaled scores"), N_("scaled")),
    "exp_shifted": (N_("the exponentials"), N_("exp")),
}
# Charts (kind, key): as a listener hears the chart named, and the word a caption names it by.
CHART_NAMES: dict[tuple[str, str], tuple[str, str]] = {
    ("bars", "weights"): (N_("the bars"), N_("bar")),
    ("curve", "curve_loss"): (N_("the loss curve"), N_("loss")),
    ("curve", "curve_accuracy"): (N_("the accuracy curve"), N_("accuracy")),
}
SYMBOL_KEYS = {"head_Z": "Z", "X_q": "X", "E_q": "E", "P_q": "P"}  # drawn with these letters
# The first index of these keys is a word's row: of the query words (q) or the keys (k).
ROW_OWNERS = {"Q": "q", "Z": "q", "X_q": "q", "E_q": "q", "P_q": "q", "head_Z": "q",
              "K": "k", "V": "k", "X": "k", "E": "k", "P": "k", "weighted_V": "k",
              "Q_before": "q", "K_before": "k"}
# Rows of weights or scores over the keys, indexed (query, key): their extremes are said.
KEY_ROWS = ("weights", "scores", "scaled", "exp_shifted")
ANGLE = "angle"  # (i, j): key j's angle to query i, whole degrees (scenes.arrows)


def grid_name(key: str, tr: Translate, words: Words) -> str:
    """Grid `key` as a listener hears it named (the scores by that word: their symbol,
    Q·Kᵀ or Q_rot·K_rotᵀ, takes a breath to say)."""
    if key in WORD_NAMES:
        return tr(WORD_NAMES[key][0])
    if key == "scores":
        return tr("the scores")
    return _symbol(key, words)


def grid_word(key: str, tr: Translate, words: Words) -> str:
    """The word or symbol whose presence in a caption names grid `key`."""
    if key in WORD_NAMES:
        return tr(WORD_NAMES[key][1])
    return _symbol(key, words)


def chart_name(kind: str, key: str, tr: Translate) -> str:
    """A chart as a listener hears it named."""
    name = CHART_NAMES.get((kind, key))
    return tr(name[0]) if name else key


def chart_word(kind: str, key: str, tr: Translate) -> str:
    """The word whose presence in a caption names the chart."""
    name = CHART_NAMES.get((kind, key))
    return tr(name[1]) if name else key


def _symbol(key: str, words: Words) -> str:
    return {"Q": words.Q, "K": words.K, "scores": words.product}.get(key, SYMBOL_KEYS.get(key, key))


def names_in(caption: str, word: str) -> bool:
    """Whether `caption` names `word`: as a token of its own where it is a symbol (Q, not
    the Q of "Q_rot" or of a word), anywhere where it is a word."""
    if re.fullmatch(r"[A-Za-z]\w*", word) and (len(word) <= 3 or "_" in word):
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", caption) is not None
    return word.casefold() in caption.casefold()


def speaking_rate(language: str) -> float:
    """Characters a second the descriptions are spoken at in `language` (each catalogue
    gives it: a voice says about 14 characters of English a second, 5 of Chinese)."""
    # TRANSLATORS: how many characters a second a voice says in this language (English 14,
    # Chinese 5); a number, not words.
    return float(translations(language).pgettext("characters spoken per second", "14"))


def spoken_seconds(text: str, language: str, pace: float = 1.0) -> float:
    """How long `text` takes to say: its characters as spoken (symbols in words,
    scenes.spoken) at the language's speaking rate, scaled by the pace."""
    if not text:
        return 0.0
    return caption_chars(spoken(text, language)) / speaking_rate(language) / pace


@dataclass
class _Part:
    text: str
    names: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = field(default_factory=tuple)
    shorter: _Part | None = None  # the same said in fewer words, where this does not fit


def describe(picture: Picture, before: Picture | None, caption: str, seconds: float,
             tr: Translate, words: Words, pace: float = 1.0,
             told: frozenset[tuple[str, str]] = frozenset()) -> Description:
    """What `picture` shows that `caption` does not say, as short sentences for a listener,
    in at most `seconds` of speech at `pace` (the sentence naming the grids and charts on
    screen is always said). `before`: the previous caption's picture (None: the chapter's
    first); `told`: the charts on screen whose extremes were said already."""
    required = _on_screen(picture, caption, tr, words)
    if required and spoken_seconds(required.text, tr.language, pace) > seconds:
        required = _on_screen(picture, caption, tr, words, brief=True)  # the names alone
    charts, stated = _charts(picture, caption, tr, words, told)
    optional = [*charts.values(), *_new_grids(picture, before, caption, tr, words),
                *_rows(picture, caption, tr, words),
                *_extremes(picture, caption, tr, words), *_angles(picture, caption, tr, words),
                *_gone(picture, before, tr, words)]
    chosen = [required] if required else []
    for part in optional:
        while part is not None:
            trial = chosen + [part]
            if spoken_seconds(_joined(trial, tr), tr.language, pace) <= seconds:
                chosen = trial
                break
            part = part.shorter
    text = _joined(chosen, tr)
    said = {c for c, part in charts.items() if any(part is p or part.shorter is p for p in chosen)}
    return Description(text, tuple(n for p in chosen for n in p.names),
                       tuple(m for p in chosen for m in p.mentions),
                       spoken_seconds(text, tr.language, pace), frozenset(told | stated | said))


def _joined(parts: list[_Part], tr: Translate) -> str:
    # TRANSLATORS: what goes between two sentences of a description (a space in English,
    # nothing in Chinese).
    return tr.context("between sentences", " ").join(p.text for p in parts)


def _listed(items: list[str], tr: Translate) -> str:
    # TRANSLATORS: what goes between the items of a list in a description.
    return tr.context("list separator", ", ").join(items)


def _on_screen(picture: Picture, caption: str, tr: Translate, words: Words,
               brief: bool = False) -> _Part | None:
    """The grids on screen the caption does not name; `brief`: their names alone, for a
    caption too short to say "On screen:" too."""
    unnamed = _unique(g.key for g in picture.grids
                      if not names_in(caption, grid_word(g.key, tr, words)))
    charts = _unique((c.kind, c.key) for c in picture.charts
                     if not names_in(caption, chart_word(c.kind, c.key, tr)))
    if not unnamed and not charts:
        return None
    names = _listed([grid_name(k, tr, words) for k in unnamed]
                    + [chart_name(*c, tr) for c in charts], tr)
    if brief:
        # (a list of names as a sentence of its own: "X, Q." / "X、Q。")
        return _Part(tr("{names}.", names=names), tuple(unnamed))
    return _Part(tr("On screen: {names}.", names=names), tuple(unnamed))


def _new_grids(picture: Picture, before: Picture | None, caption: str, tr: Translate,
               words: Words) -> list[_Part]:
    old = {g.key for g in before.grids} if before is not None else set()
    parts = []
    for g in picture.grids:
        if g.key in old:
            continue
        old.add(g.key)
        if names_in(caption, grid_word(g.key, tr, words)) and f"{g.rows} × {g.cols}" in caption:
            continue  # the caption says what it is and its size
        message = (N_("New: {name}, a grid of {rows} × {cols} numbers.") if g.numbers else
                   N_("New: {name}, a grid of {rows} × {cols} cells, coloured by value."))
        text = tr(message, name=grid_name(g.key, tr, words), rows=g.rows, cols=g.cols)
        parts.append(_Part(text, (g.key,), (Mention("rows", g.key, (), str(g.rows)),
                                            Mention("cols", g.key, (), str(g.cols)))))
    return parts


def _gone(picture: Picture, before: Picture | None, tr: Translate, words: Words) -> list[_Part]:
    """The grids of the previous picture that are no longer on screen."""
    now = {g.key for g in picture.grids}
    gone = _unique(g.key for g in (before.grids if before is not None else ()) if g.key not in now)
    if not gone:
        return []
    return [_Part(tr("Gone: {names}.", names=_listed([grid_name(k, tr, words) for k in gone], tr)))]


def _token(words: Words, owner: str, i: int) -> str:
    tokens = words.queries if owner == "q" else words.keys
    return tokens[i] if 0 <= i < len(tokens) else str(i)


def _rows(picture: Picture, caption: str, tr: Translate, words: Words) -> list[_Part]:
    """The followed word's row of a grid, or a row drawn alone (a readout), come on screen
    under this caption, when the caption does not say its numbers."""
    rows: dict[tuple[str, int], list[Number]] = {}
    for n in picture.numbers:
        if n.key in ROW_OWNERS and len(n.index) == 2:
            rows.setdefault((n.key, n.index[0]), []).append(n)
    parts = []
    for (key, i), numbers in rows.items():
        numbers = _unique_numbers(numbers)
        if not any(picture.is_fresh(n) for n in numbers):
            continue
        alone = all(n.index[0] == i for n in picture.numbers if n.key == key and picture.is_fresh(n))
        followed = ROW_OWNERS[key] == "q" and i == words.focus
        whole = [n.index[1] for n in numbers] == list(range(len(numbers)))  # from its start
        if (len(numbers) < 2 or not whole or not (alone or followed)
                or all(n.text in caption for n in numbers)):
            continue
        said = numbers[:ROW_VALUES]
        values = _listed([n.text for n in said] + (["…"] if len(numbers) > len(said) else []), tr)
        word = tr("\"{word}\"", word=_token(words, ROW_OWNERS[key], i))
        text = tr("{name}, the row of {word}: {values}.", name=grid_name(key, tr, words),
                  word=word, values=values)
        parts.append(_Part(text, (), tuple(Mention("value", n.key, n.index, n.text) for n in said)))
    return parts


def _charts(picture: Picture, caption: str, tr: Translate, words: Words,
            told: frozenset[tuple[str, str]]) -> tuple[dict[tuple[str, str], _Part],
                                                       set[tuple[str, str]]]:
    """Each chart on screen whose extremes were not said yet: a bar chart's highest and
    lowest bar with their words, a curve's first and last value and the top of its axis (its
    highest value), as its labels write them. Returns those sentences, and the charts
    whose numbers the caption states itself (told, nothing to add)."""
    parts, stated = {}, set()
    for c in picture.charts:
        chart = (c.kind, c.key)
        if chart in told or chart in parts or not c.values:
            continue
        part = _bars(c, tr, words) if c.kind == "bars" else _curve(c, tr)
        least = part.shorter or part  # (what the shortest form says, its extremes)
        if all(m.text in caption for m in least.mentions):
            stated.add(chart)
        else:
            parts[chart] = part
    return parts, stated


def _bars(c: Chart, tr: Translate, words: Words) -> _Part:
    top = max(range(len(c.values)), key=lambda k: c.values[k])
    low = min(range(len(c.values)), key=lambda k: c.values[k])

    def word(k: int) -> str:  # the key word of bar k (its index is (query, key))
        return tr("\"{word}\"", word=_token(words, "k", c.indices[k][-1]))

    name = chart_name(c.kind, c.key, tr)
    text = tr("{name}: highest {top} for {top_word}, lowest {low} for {low_word}.",
              name=name, top=c.text(top), top_word=word(top), low=c.text(low), low_word=word(low))
    mentions = (Mention("value", c.key, c.indices[top], c.text(top)),
                Mention("value", c.key, c.indices[low], c.text(low)))
    brief = tr("{name}: highest {top}, lowest {low}.", name=name, top=c.text(top),
               low=c.text(low))
    return _Part(text, (c.key,), mentions, _Part(brief, (c.key,), mentions))


def _curve(c: Chart, tr: Translate) -> _Part:
    top, last = max(range(len(c.values)), key=lambda k: c.values[k]), len(c.values) - 1
    name = chart_name(c.kind, c.key, tr)
    text = tr("{name}: from {first} to {last}, its axis up to {top}.",
              name=name, first=c.text(0), last=c.text(last), top=c.text(top))
    brief = tr("{name}: its axis up to {top}.", name=name, top=c.text(top))
    return _Part(text, (c.key,), tuple(_mention(c, k) for k in (0, last, top)),
                 _Part(brief, (c.key,), (_mention(c, top),)))


def _mention(c: Chart, k: int) -> Mention:
    return Mention("value", c.key, c.indices[k], c.text(k))


def _extremes(picture: Picture, caption: str, tr: Translate, words: Words) -> list[_Part]:
    """The followed word's row of weights or scores, come on screen under this caption:
    its highest and lowest (unless a chart of them is on screen: its sentence says them)."""
    charted = {c.key for c in picture.charts}
    rows: dict[tuple[str, int], list[Number]] = {}
    for n in picture.numbers:
        if n.key in KEY_ROWS and len(n.index) == 2:
            rows.setdefault((n.key, n.index[0]), []).append(n)
    parts = []
    for (key, i), numbers in rows.items():
        numbers = _unique_numbers(numbers)
        if i != words.focus or len(numbers) < 3 or not any(picture.is_fresh(n) for n in numbers):
            continue
        if key in charted:
            continue
        top = max(numbers, key=lambda n: _value(n.text))
        low = min(numbers, key=lambda n: _value(n.text))
        if top.text in caption and low.text in caption:
            continue
        name = grid_name(key, tr, words)
        text = tr("{name} of {word}: highest {top} for {top_word}, lowest {low} for {low_word}.",
                  name=name, word=tr("\"{word}\"", word=_token(words, "q", i)),
                  top=top.text, low=low.text,
                  top_word=tr("\"{word}\"", word=_token(words, "k", top.index[1])),
                  low_word=tr("\"{word}\"", word=_token(words, "k", low.index[1])))
        parts.append(_Part(text, (), (Mention("value", top.key, top.index, top.text),
                                      Mention("value", low.key, low.index, low.text))))
    return parts


def _angles(picture: Picture, caption: str, tr: Translate, words: Words) -> list[_Part]:
    """Each key's arrow drawn under this caption, with its angle to the query."""
    parts, seen = [], set()
    for n in picture.numbers:
        if (n.key != ANGLE or len(n.index) != 2 or n.index in seen or not picture.is_fresh(n)
                or f"{n.text}°" in caption):
            continue
        seen.add(n.index)
        word = tr("\"{word}\"", word=_token(words, "k", n.index[1]))
        parts.append(_Part(tr("The arrow of {word} is {angle}° from the query.", word=word,
                              angle=n.text), (), (Mention("value", n.key, n.index, n.text),)))
    return parts


def _unique(keys) -> list[str]:
    out: list[str] = []
    for k in keys:
        if k not in out:
            out.append(k)
    return out


def _unique_numbers(numbers: list[Number]) -> list[Number]:
    """Each index once (a number drawn twice, in a grid and a readout, is one number)."""
    out: dict[tuple, Number] = {}
    for n in numbers:
        out.setdefault(n.index, n)
    return [out[i] for i in sorted(out)]


def _value(text: str) -> float:
    try:
        return float(text.replace("−", "-"))
    except ValueError:
        return float("nan")

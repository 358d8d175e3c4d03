"""What each caption's picture shows that the caption does not say, for a listener who
cannot see it: the descriptions track (--describe) and the transcript read it, and the
described narration says it.

Made from the scene's own record, never from pixels. When a caption leaves, the scene
(scenes.base) hands over a `Picture`: the grids on screen (their trace key and shape, from
the scene graph: MatrixView, a table's rows come one by one (TableRows), an overview's
thumbnail image (HeatView)), the charts (ChartView: bars, curves, a stacked bar) and the
numbers drawn while the caption was up (the Recorder's entries, each with its trace key and
index, written as the screen writes them; a number among words, NumberLabel). From it
`describe` writes, in the caption language:

    On screen: X, W_Q.                         every grid the caption does not name
    New: Q, a grid of 6 rows by 4 columns.     what appeared since the last picture
    New: each head's weights, 12 grids of 10 × 10 in 2 rows of 6.     thumbnails
    Q, the row of "milk": 2.87, −4.40, …       a row drawn under this caption
    The weights: highest 0.989 ("drank"), lowest 0.000 ("milk").
    the stacked bar: "drank" 0.989, and 5 grey parts too narrow for their words.
    the weights at each snapshot, step 3000: highest 0.989 for "drank", …
    The arrow of "drank" is 11° from the query.
    The arrows' angles to the query, from step 0 to step 3000: "drank" 125° to 11°, …
    Strongest links: to "[CLS]": head 4 0.656, head 5 0.696; to "he": head 11 0.542.

The first sentence is always said (as the names alone where "On screen:" would not fit);
the others are added in that order while the whole still fits the caption's time at the
speaking rate of the catalogue (`spoken_seconds`), each in a shorter form where its full
one does not fit. A chart or a snapshot table with a sentence of its own is named by it,
not by "On screen:", and named alone where no form of it fits; what is to be said once in
its stay (a chart's extremes, the head links) and was said is kept in `told`.
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
    place: tuple[int, int] | None = None  # (line, place in it) among the grids of its key


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
    labelled: tuple[bool, ...] = ()  # per value: its mark carries its word (a stacked part)

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
    #          it or its caption states (said once in a chart's stay), and the head links said
    #          (told_number: said once in their stay)


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
    "model_weights": (N_("every layer's heads"), N_("thumbnail")),
}
# Charts (kind, key): as a listener hears the chart named, and the word a caption names it by.
CHART_NAMES: dict[tuple[str, str], tuple[str, str]] = {
    ("bars", "weights"): (N_("the bars"), N_("bar")),
    ("stacked", "weights"): (N_("the stacked bar"), N_("bar")),
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
    charts, stated = _charts(picture, caption, tr, words, told)
    rows = _snapshot_rows(picture, caption, tr, words)
    # a chart whose extremes are to be said, a table whose row is, is named by that sentence,
    # not by "On screen:" (and alone, where the sentence does not fit)
    named = {id(part): chart_name(*chart, tr) for chart, part in charts.items()}
    named |= {id(part): grid_name(part.names[0], tr, words) for part in rows}
    described = set(charts) | {part.names[0] for part in rows}
    required = _on_screen(picture, caption, tr, words, described)
    if required and spoken_seconds(required.text, tr.language, pace) > seconds:
        required = _on_screen(picture, caption, tr, words, described, brief=True)  # names alone
    optional = [*charts.values(), *rows, *_new_grids(picture, before, caption, tr, words),
                *_rows(picture, caption, tr, words),
                *_extremes(picture, caption, tr, words), *_angles(picture, before, caption, tr, words),
                *_links(picture, caption, tr, words, told), *_gone(picture, before, tr, words)]
    chosen, fallen = _fit([required] if required else [], optional, named, seconds, tr, pace)
    if fallen:  # a chart or table only named: each in its shortest form, if that names fewer
        shortest = {id(p): _shortest(p) for p in optional if id(p) in named}
        briefer = [shortest.get(id(p), p) for p in optional]
        named |= {id(shortest[k]): name for k, name in named.items()}
        tried, fewer = _fit([required] if required else [], briefer, named, seconds, tr, pace)
        if fewer < fallen:
            chosen = tried
    text = _joined(chosen, tr)
    said = {c for c, part in charts.items() if any(part is p or part.shorter is p for p in chosen)}
    said |= {told_number(m) for p in chosen for m in p.mentions if m.kind == "value" and m.key == LINK}
    said |= {told_number(n) for n in picture.numbers if n.key == LINK and n.text in caption}
    return Description(text, tuple(n for p in chosen for n in p.names),
                       tuple(m for p in chosen for m in p.mentions),
                       spoken_seconds(text, tr.language, pace), frozenset(told | stated | said))


def _fit(chosen: list[_Part], optional: list[_Part], named: dict[int, str], seconds: float,
         tr: Translate, pace: float) -> tuple[list[_Part], int]:
    """`chosen` and each of `optional` in order, in the first of its forms that still fits
    `seconds`; a part in `named` (a chart's or table's sentence) that fits in none is
    said as the name alone ("On screen: the bars." or "the bars."). Returns the sentences
    and how many were said as the name alone."""
    fallen = 0
    for first in optional:
        part = first
        while part is not None:
            trial = chosen + [part]
            if spoken_seconds(_joined(trial, tr), tr.language, pace) <= seconds:
                chosen = trial
                break
            part = part.shorter
        if part is None and id(first) in named:
            alone = [tr("On screen: {names}.", names=named[id(first)]),
                     tr("{names}.", names=named[id(first)])]
            fits = [t for t in alone if spoken_seconds(_joined([*chosen, _Part(t)], tr),
                                                       tr.language, pace) <= seconds]
            chosen = chosen + [_Part((fits or alone[1:])[0], first.names[:1])]
            fallen += 1
    return chosen, fallen


def _shortest(part: _Part) -> _Part:
    while part.shorter is not None:
        part = part.shorter
    return part


def _joined(parts: list[_Part], tr: Translate) -> str:
    # TRANSLATORS: what goes between two sentences of a description (a space in English,
    # nothing in Chinese).
    return tr.context("between sentences", " ").join(p.text for p in parts)


def _listed(items: list[str], tr: Translate) -> str:
    # TRANSLATORS: what goes between the items of a list in a description.
    return tr.context("list separator", ", ").join(items)


def _on_screen(picture: Picture, caption: str, tr: Translate, words: Words,
               described: set[tuple[str, str]], brief: bool = False) -> _Part | None:
    """The grids and charts on screen the caption does not name (but the `described` ones,
    keys of grids or (kind, key) of charts, which a sentence of their own names); `brief`:
    their names alone, for a caption too short to say "On screen:" too."""
    unnamed = _unique(g.key for g in picture.grids
                      if not names_in(caption, grid_word(g.key, tr, words))
                      and g.key not in described)
    charts = _unique((c.kind, c.key) for c in picture.charts
                     if not names_in(caption, chart_word(c.kind, c.key, tr))
                     and (c.kind, c.key) not in described)
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
        same = [h for h in picture.grids if h.key == g.key]
        if len(same) > 1 and all(h.place is not None and (h.rows, h.cols) == (g.rows, g.cols)
                                 for h in same):
            parts.append(_thumbnails(same, tr, words))
            continue
        if names_in(caption, grid_word(g.key, tr, words)) and f"{g.rows} × {g.cols}" in caption:
            continue  # the caption says what it is and its size
        message = (N_("New: {name}, a grid of {rows} × {cols} numbers.") if g.numbers else
                   N_("New: {name}, a grid of {rows} × {cols} cells, coloured by value."))
        text = tr(message, name=grid_name(g.key, tr, words), rows=g.rows, cols=g.cols)
        parts.append(_Part(text, (g.key,), (Mention("rows", g.key, (), str(g.rows)),
                                            Mention("cols", g.key, (), str(g.cols)))))
    return parts


def _thumbnails(grids: list[Grid], tr: Translate, words: Words) -> _Part:
    """Several grids of one quantity and one size (the heads' thumbnails): how many, their
    size, and how they are laid out (lines of how many)."""
    g, n = grids[0], len(grids)
    lines = 1 + max(h.place[0] for h in grids)
    per = max(sum(h.place[0] == line for h in grids) for line in range(lines))
    name = grid_name(g.key, tr, words)
    size = (Mention("count", g.key, (), str(n)), Mention("rows", g.key, (), str(g.rows)),
            Mention("cols", g.key, (), str(g.cols)))
    if lines == 1:
        text = tr("New: {name}, {n} grids of {rows} × {cols} side by side.", name=name, n=n,
                  rows=g.rows, cols=g.cols)
        return _Part(text, (g.key,), size)
    text = tr("New: {name}, {n} grids of {rows} × {cols} in {lines} rows of {per}.", name=name,
              n=n, rows=g.rows, cols=g.cols, lines=lines, per=per)
    return _Part(text, (g.key,), size + (Mention("lines", g.key, (), str(lines)),
                                         Mention("per", g.key, (), str(per))))


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


SNAPSHOTS = {"history_weights": "weights", "history_products": "values"}  # tables of a row per
#   training snapshot (index (snapshot, …)), each row labelled with its step ("history_steps")
STEP = "history_steps"


def _snapshot_rows(picture: Picture, caption: str, tr: Translate, words: Words) -> list[_Part]:
    """The latest snapshot row come on screen in a table of training snapshots, with its
    step: a row of weights by its highest and lowest and their key words, a row of pair
    products by its first numbers. Each names its table (for "On screen:" to leave out)."""
    parts = []
    for key, kind in SNAPSHOTS.items():
        fresh = [n for n in picture.numbers if n.key == key and picture.is_fresh(n)]
        if not fresh:
            continue
        s = max(n.index[0] for n in fresh)
        row = _unique_numbers([n for n in picture.numbers if n.key == key and n.index[0] == s])
        step = next((n for n in picture.numbers if n.key == STEP and n.index == (s,)), None)
        if step is None or len(row) < 2:
            continue
        if kind == "weights":
            top = max(row, key=lambda n: _value(n.text))
            low = min(row, key=lambda n: _value(n.text))
            text = tr("{name}, step {step}: highest {top} for {top_word}, lowest {low} for "
                      "{low_word}.", step=step.text, top=top.text, low=low.text,
                      name=grid_name(key, tr, words),
                      top_word=tr("\"{word}\"", word=_token(words, "k", top.index[1])),
                      low_word=tr("\"{word}\"", word=_token(words, "k", low.index[1])))
            said = [step, top, low]
        else:
            said = row[:ROW_VALUES]
            values = _listed([n.text for n in said] + (["…"] if len(row) > len(said) else []), tr)
            text = tr("{name}, step {step}: {values}.", step=step.text, values=values,
                      name=grid_name(key, tr, words))
            said = [step, *said]
        parts.append(_Part(text, (key,), _values(said)))  # (names the table: scenes.describe)
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
        if c.kind == "stacked":  # (what the caption does not state of it)
            part = _stacked(c, caption, tr, words)
        else:
            part = _bars(c, caption, tr, words) if c.kind == "bars" else _curve(c, tr, words)
        least = part.shorter or part if part is not None else None  # (its extremes)
        if least is None or (c.kind != "stacked" and all(m.text in caption
                                                          for m in least.mentions)):
            stated.add(chart)
        else:
            parts[chart] = part
    return parts, stated


def _bars(c: Chart, caption: str, tr: Translate, words: Words) -> _Part:
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
    # shortest: the extreme the caption does not state itself ("gives the most weight to
    # "drank": 0.989" leaves the lowest)
    least = None
    if c.text(top) in caption and c.text(low) not in caption:
        least = _Part(tr("{name}: lowest {low}.", name=name, low=c.text(low)), (c.key,),
                      mentions[1:])
    elif c.text(low) in caption and c.text(top) not in caption:
        least = _Part(tr("{name}: highest {top}.", name=name, top=c.text(top)), (c.key,),
                      mentions[:1])
    return _Part(text, (c.key,), mentions, _Part(brief, (c.key,), mentions, least))


def _stacked(c: Chart, caption: str, tr: Translate, words: Words) -> _Part | None:
    """A bar split into parts: each part that carries its word, with its value (but those
    the caption states), and how many are too narrow for one (drawn grey); shorter, the
    same without "too narrow for their words". None: the caption says it all."""
    named = [k for k in range(len(c.values)) if k < len(c.labelled) and c.labelled[k]
             and c.text(k) not in caption]
    grey = len(c.values) - sum(c.labelled[:len(c.values)])
    name = chart_name(c.kind, c.key, tr)
    parts = _listed([tr("{word} {value}", value=c.text(k),
                        word=tr("\"{word}\"", word=_token(words, "k", c.indices[k][-1])))
                     for k in named], tr)
    mentions = tuple(_mention(c, k) for k in named)
    count = (Mention("parts", c.key, (), str(grey)),)
    if not grey:
        return _Part(tr("{name}: {parts}.", name=name, parts=parts), (c.key,), mentions) \
            if named else None
    if not named:
        brief = _Part(tr.plural("{name}: {n} grey part.", "{name}: {n} grey parts.", grey,
                                name=name), (c.key,), count)
        return _Part(tr.plural("{name}: {n} grey part, too narrow for its word.",
                               "{name}: {n} grey parts, too narrow for their words.", grey,
                               name=name), (c.key,), count, brief)
    # shortest, where even that does not fit (a slow language, a short caption): how many
    # parts carry their word (their values are the weights beside the rows) and how many not
    labelled = len(c.values) - grey
    least = _Part(tr("{name}: {k} labelled, {n} grey.", name=name, k=labelled, n=grey),
                  (c.key,), (Mention("labelled", c.key, (), str(labelled)),) + count)
    brief = _Part(tr.plural("{name}: {parts}, and {n} grey part.",
                            "{name}: {parts}, and {n} grey parts.", grey, name=name,
                            parts=parts), (c.key,), mentions + count, least)
    return _Part(tr.plural("{name}: {parts}, and {n} grey part too narrow for its word.",
                           "{name}: {parts}, and {n} grey parts too narrow for their words.",
                           grey, name=name, parts=parts), (c.key,), mentions + count, brief)


def _curve(c: Chart, tr: Translate, words: Words) -> _Part:
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


def _angles(picture: Picture, before: Picture | None, caption: str, tr: Translate,
            words: Words) -> list[_Part]:
    """Each key's arrow drawn under this caption, with its angle to the query; the arrows
    of a training snapshot (HISTORY_ANGLE) together, with how each angle changed since the
    snapshot the previous caption showed."""
    parts, seen = [], set()
    for n in picture.numbers:
        if (n.key != ANGLE or len(n.index) != 2 or n.index in seen or not picture.is_fresh(n)
                or f"{n.text}°" in caption):
            continue
        seen.add(n.index)
        word = tr("\"{word}\"", word=_token(words, "k", n.index[1]))
        parts.append(_Part(tr("The arrow of {word} is {angle}° from the query.", word=word,
                              angle=n.text), (), (Mention("value", n.key, n.index, n.text),)))
    return parts + _snapshot_angles(picture, before, tr, words)


HISTORY_ANGLE = "history_angle"  # (snapshot, j): key j's angle to the query at a snapshot


def _snapshot_angles(picture: Picture, before: Picture | None, tr: Translate,
                     words: Words) -> list[_Part]:
    """The arrows of the training snapshot on screen, come under this caption: each key's
    angle, from what it was at the snapshot the previous caption showed, if another."""
    now, s, step = _snapshot(picture)
    if not now or not any(picture.is_fresh(n) for n in now):
        return []
    was, then_s, then = _snapshot(before) if before is not None else ([], None, None)
    was = {n.index[1]: n for n in was} if then_s != s else {}

    def said(numbers: list[Number]) -> str:  # each key's angle: "drank" 11°
        return _listed([tr("{word} {angle}°", word=tr("\"{word}\"", word=_token(
            words, "k", n.index[1])), angle=n.text) for n in numbers], tr)

    brief = _Part(tr("The angles now: {items}.", items=said(now)), (), _values(now))
    changed = [n for n in now if n.index[1] in was]
    if not changed:
        return [_Part(tr("The arrows' angles to the query at step {step}: {items}.",
                         step=step.text, items=said(now)), (), _values([step, *now]), brief)]
    items = _listed([tr("{word} {then}° to {now}°", then=was[n.index[1]].text, now=n.text,
                        word=tr("\"{word}\"", word=_token(words, "k", n.index[1])))
                     for n in changed], tr)
    text = tr("The arrows' angles to the query, from step {then} to step {now}: {items}.",
              then=then.text, now=step.text, items=items)
    return [_Part(text, (), _values([then, step, *(m for n in changed
                                                    for m in (was[n.index[1]], n))]), brief)]


def _snapshot(picture: Picture) -> tuple[list[Number], int | None, Number | None]:
    """The arrows' angles of the training snapshot on screen, which one, and its step (the
    step label of the snapshot whose angles are up: a number read by its text alone may be
    another snapshot's that reads the same)."""
    angles = [n for n in picture.numbers if n.key == HISTORY_ANGLE and len(n.index) == 2]
    steps = {n.index[0]: n for n in picture.numbers if n.key == STEP and len(n.index) == 1}
    shown = sorted({n.index[0] for n in angles} & set(steps))
    if not shown:
        return [], None, None
    s = shown[-1]
    return _unique_numbers([n for n in angles if n.index[0] == s]), s, steps[s]


LINK = "head_weights"  # (head, query, key): a head's strongest link, labelled under its thumbnail


def told_number(n: Number | Mention) -> tuple[str, str]:
    """How a number said once in its stay on screen is kept in `told` (beside the charts)."""
    return n.key, repr(tuple(n.index))


def _links(picture: Picture, caption: str, tr: Translate, words: Words,
           told: frozenset[tuple[str, str]]) -> list[_Part]:
    """Each head's strongest link for the followed word on screen (the label under its
    thumbnail) that neither the caption nor an earlier description in its stay says: as
    many as fit, in head order (the rest the next caption's description says)."""
    links = [n for n in picture.numbers if n.key == LINK and len(n.index) == 3
             and told_number(n) not in told and n.text not in caption]
    links.sort(key=lambda n: n.index[0])
    part = None
    for k in range(1, len(links) + 1):  # the longest first, each shorter form one fewer
        groups: dict[int, list[Number]] = {}  # by the key linked to, the word said once
        for n in links[:k]:
            groups.setdefault(n.index[2], []).append(n)
        items = tr.context("semicolon", "; ").join(
            tr("to {word}: {links}", word=tr("\"{word}\"", word=_token(words, "k", j)),
               links=_listed([tr("head {head} {value}", head=n.index[0], value=n.text)
                              for n in same], tr))
            for j, same in groups.items())
        mentions = tuple(m for same in groups.values() for n in same
                         for m in (Mention("head", n.key, n.index[:1], str(n.index[0])),
                                   Mention("value", n.key, n.index, n.text)))
        part = _Part(tr("Strongest links: {items}.", items=items), (), mentions, part)
    return [part] if part is not None else []


def _values(numbers: list[Number]) -> tuple[Mention, ...]:
    return tuple(Mention("value", n.key, n.index, n.text) for n in numbers)


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

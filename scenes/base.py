"""The base of every chapter scene: theme, title, captions (recorded as subtitles) and
their pacing, the model badge, and the colours and labels of the words."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from attention_video.attncore.chapters import (
    DESCRIBE_SETTINGS,
    QUESTION_SETTINGS,
    SCENE_SETTINGS,
    SLUGS,
    Chapter,
    number,
)
from attention_video.attncore.chapters import chapter as chapter_entry
from attention_video.attncore.settings import Settings
from attention_video.attncore.tokenize import spelled
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim.fades import FadeIn, FadeOut
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.claims import Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.describe import (
    Chart,
    Description,
    Grid,
    Number,
    Picture,
    Words,
    describe,
    told_number,
)
from attention_video.scenes.labels import word_labels
from attention_video.scenes.layout import BUFF_MEDIUM, BUFF_TIGHT, SAFE_X, SAFE_Y, TITLE_SAFE_X
from attention_video.scenes.pacing import SPEECH_GAP, picture_hold, reading_seconds, whole_frames
from attention_video.scenes.precision import weight_decimals
from attention_video.scenes.predict import ask
from attention_video.scenes.questions import names, worded
from attention_video.scenes.reasons import head_reason, head_why
from attention_video.scenes.rotary import TURNED, score_names
from attention_video.scenes.text import fit_width, fmt, make_text, visible_texts
from attention_video.scenes.themes import THEMES, family_colors, word_color
from attention_video.scenes.titles import chapter_title
from attention_video.scenes.voice import Narrator, Speech
from attention_video.scenes.widgets import (
    ChartView,
    HeatView,
    MatrixView,
    NumberLabel,
    Recorder,
    TableRows,
    make_caption,
    make_title,
    title_font,
)
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    UR,
    Mobject,
    Rectangle,
    Scene,
    VGroup,
    Wait,
    config,
)

TITLE_BADGE_GAP = 0.6  # between a chapter's title and the model badge on its right
BADGE_FONT = 18  # the model badge (two lines where one would be shrunk under it)
# A described narration's description is said in the caption's time or this long, at the
# pace, whichever is longer; the picture holds until it has been said (extended description)
EXTENDED_SECONDS = 8.0


class SceneSettings:
    """The settings a scene may read: attncore.chapters.SCENE_SETTINGS and nothing else,
    since those are what the chapter cache keys a clip on. Anything else a scene needs
    comes through the trace (keyed whole) or the plan (keyed as the chapter declares)."""

    __slots__ = ("_settings",)

    def __init__(self, settings: Settings):
        self._settings = settings

    def __getattr__(self, name: str) -> Any:
        if name not in SCENE_SETTINGS + QUESTION_SETTINGS + DESCRIBE_SETTINGS:  # (the latter two
            # keyed where they change the clip)
            raise AttributeError(f"a scene may not read the setting {name!r}: the chapter "
                                 f"cache does not key on it (attncore.chapters.SCENE_SETTINGS)")
        return getattr(self._settings, name)


class ChapterScene(Scene):
    """One chapter of the video, drawn only from the trace, the settings it may read and
    the chapters of the plan it declares (attncore.chapters)."""

    slug: ClassVar[str] = ""  # its identity in attncore.chapters, which holds its titles
    speaks: ClassVar[bool] = True  # False: a voice setting is not said (the storyboard's stills)

    def __init__(self, trace: AttentionTrace, settings: Settings,
                 plan: tuple[str, ...] = SLUGS, narrator: Narrator | None = None,
                 **kwargs: Any):
        self.trace = trace
        self.settings = SceneSettings(settings)
        self._plan = tuple(plan)
        # What every builder draws with, held once and handed down (scenes.context); the
        # three names below are the scene's own shortcuts to its parts.
        self.ctx = ChapterContext(THEMES[settings.theme], Translate(settings.language),
                                  Recorder(), settings.pace)
        self.theme, self.tr, self.drawn = self.ctx.theme, self.ctx.tr, self.ctx.record
        self.off_frame: list[tuple] = []  # objects found outside the frame (a bug)
        self.subtitles: list[tuple[float, float, str]] = []
        # Per subtitle, when its caption's picture was complete (caption_ends): where a deck
        # step holds (pipeline.outputs.slides).
        self.holds: list[float] = []
        self._held_at: float | None = None
        # Narrated: the narrator the renderer made from the settings (scenes.voice), and
        # each caption's speech with the time it starts.
        self.narrator = narrator if self.speaks else None
        self.speech: list[tuple[float, Speech]] = []
        # Narrated with --describe: each description's speech with the time it starts, after
        # its caption's (the described narration; the plain one leaves these out).
        self.described_speech: list[tuple[float, Speech]] = []
        # What the captions claim about their pictures (scenes.claims), each filed under
        # its caption: tests/support/claims.py checks them against what is on screen.
        self.claims: list[Claim] = []
        # Per subtitle, what its picture shows that it does not say (scenes.describe), and
        # the picture it was made from (the next one says what changed since).
        self.descriptions: list[Description] = []
        # ... and, narrated with --describe, per subtitle when the described narration says
        # its description, (its first word, its end) in chapter seconds (None: not said):
        # the descriptions track is timed with it (pipeline.outputs.subtitles.description_cues)
        self.described_at: list[tuple[float, float] | None] = []
        self._picture: Picture | None = None
        self._told: frozenset[tuple[str, str]] = frozenset()  # charts whose extremes were said
        self._numbers_up: set[tuple[str, tuple]] = set()  # the numbers in that picture
        self._cue_seconds = 0.0  # narrated: how long the caption's cue lasts (its speech)
        self._caption: VGroup | None = None
        self._caption_start = 0.0
        self._picture_settled = 0.0  # when the picture (not a caption) last finished changing
        self._swapping = False  # say() is playing: only captions come and go
        self._caption_need = 0.0  # seconds the caption on screen must stay up (scenes.pacing)
        self._pending_hold = 0.0  # held-frame seconds asked for and not yet played
        self._deferring = True  # waits are gathered into one hold until something moves
        if trace.cross:  # two sentences, two colour families: cool keys, warm queries
            self.k_colors = family_colors(trace.n_k, "cool", self.theme)
            self.q_colors = family_colors(trace.n_q, "warm", self.theme)
        else:
            self.k_colors = [word_color(i, self.theme) for i in range(trace.n_k)]
            self.q_colors = self.k_colors
        # one place names the tokens: a repeated word carries its occurrence (the₁, the₂)
        self.k_labels = word_labels([t.text for t in trace.key_tokens])
        self.q_labels = word_labels([t.text for t in trace.query_tokens])
        self.spoken_words = (*self.k_labels, *self.q_labels)  # a₂ said "the second a"
        self.partner = trace.partner  # the key the chapters feature beside the followed word
        super().__init__(**kwargs)

    # ---- the plan ---------------------------------------------------------------------
    @property
    def entry(self) -> Chapter:
        return chapter_entry(self.slug)

    def in_plan(self, slug: str) -> bool:
        """Whether the video plays chapter `slug`: only for a chapter the table says this
        one reads (attncore.chapters reads_plan), since that is what its clip is keyed on."""
        if slug not in self.entry.reads_plan:
            raise KeyError(f"chapter {self.slug!r} does not declare that it reads whether "
                           f"{slug!r} is in the plan (attncore.chapters reads_plan)")
        return slug in self._plan

    def chapter_ref(self, slug: str) -> int | None:
        """The number of chapter `slug` if the video plays it, for "ch. 5"; else None."""
        return number(slug) if self.in_plan(slug) else None

    # ---- the words ----------------------------------------------------------------------
    @property
    def focus(self) -> int:
        return self.trace.focus

    @property
    def focus_word(self) -> str:
        """The followed token; a word-piece is named with the word the user typed, so a
        piece shared by several words ("ا" of "القطة" and "السوداء") says which it is."""
        tokens, i = self.trace.query_tokens, self.focus
        start, end = i, i + 1
        while start > 0 and tokens[start].kind == "subword":
            start -= 1
        while end < len(tokens) and tokens[end].kind == "subword":
            end += 1
        if end - start == 1:
            return tokens[i].text
        word = "".join(spelled(t) for t in tokens[start:end])
        return self.tr("{piece} (in {word})", piece=tokens[i].text, word=word)

    def quoted(self, word: str) -> str:
        """A word in quotes of the caption language."""
        return self.tr("\"{word}\"", word=word)

    def q_word(self, i: int) -> str:
        return self.trace.query_tokens[i].text

    def k_word(self, j: int) -> str:
        return self.trace.key_tokens[j].text

    def key_name(self, j: int) -> str:
        """A key word in a caption: "itself" when it is the query word in self-attention."""
        if self.trace.is_self_pair(j):
            return self.tr("itself")
        return self.quoted(self.k_word(j))

    def head_reason(self, brief: bool = False) -> str | None:
        """Why --head auto followed this head, in the caption language (scenes.reasons)."""
        return head_reason(self.trace.head_choice, self.tr, brief)

    def head_why(self, brief: bool = False) -> str | None:
        """The reason without the head it names."""
        return head_why(self.trace.head_choice, self.tr, brief)

    @property
    def x_label(self) -> str:
        """How X was made, in the caption language (the core's formula, worded)."""
        t, tr = self.trace, self.tr
        if t.x_from == t.ENCODER:
            return tr("E + P + self-attention")
        if t.x_from == t.HIDDEN:
            return tr("hidden state after layer {layer}", layer=t.layer - 1)
        if t.x_from == t.NORMED_HIDDEN:
            return tr("the normalised hidden state after layer {layer}", layer=t.layer - 1)
        return t.x_label

    @property
    def x_label_q(self) -> str | None:
        """How the decoder rows the queries come from were made, worded (None: no decoder)."""
        return self.tr("E + P + causal self-attention") if self.trace.decoder else None

    def weight_text(self, j: int) -> str:
        """The followed word's weight (or raw factor) for key j as a caption shows it, at the
        weights' one precision (scenes.precision), recorded like every drawn number."""
        text = fmt(self.trace.head.weights[self.focus, j], weight_decimals(self.trace.normalized))
        self.drawn("weights", (self.focus, j), text)
        return text

    # ---- playing, holding, and the checks every test relies on -------------------------
    def play(self, *args: Any, **kwargs: Any) -> None:
        animations = self.prepare_play(*args, **kwargs)
        super().play(*animations, **kwargs)
        self._check_bounds()

    def prepare_play(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Before anything plays: the gathered holds, and, if this play starts to take the
        caption's picture away (something fades out or is replaced), the caption leaves
        with it, after its picture has stood still long enough (nothing is cleared under a
        caption). Returns the animations to play. (The picture lint, pipeline.run.lint,
        plays through this too.)"""
        animations = list(self.compile_animations(*args, **kwargs))
        if self._swapping or all(isinstance(a, Wait) for a in animations):
            self._flush_hold()
            return animations
        if self._caption is not None and any(
                a.is_remover() and a.mobject is not self._caption for a in _leaves(animations)):
            gone = self.caption_goes()
            if gone is not None:  # (timed as the play's own animations: no longer than it)
                out = FadeOut(gone, run_time=min(1.0, self.get_run_time(animations)))
                animations += self.compile_animations(out, **kwargs)
        else:
            self._flush_hold()
        self._picture_settled = self.renderer.time + self.get_run_time(animations)
        return animations

    def caption_goes(self) -> VGroup | None:
        """The caption on screen leaves now, its picture having stood complete and still
        for its hold (scenes.pacing), and its cue ends; returns it for the caller to fade
        out with what it plays (None: no caption is up). A described narration says the
        caption's description first, and the picture holds until it is said."""
        if self._caption is not None and self._says_descriptions():
            self._say_description()
        self._hold_caption()
        caption = self._caption
        if caption is None:
            return None
        self.caption_ends()
        self._close_subtitle()
        self._caption = None
        return caption

    def wait(self, duration: float = 1.0, stop_condition: Any = None,
             frozen_frame: bool | None = None) -> None:
        """A hold. Holds in a row are gathered into one (one held frame, fastmanim.encoder),
        played when something next moves or a caption ends, stretched then to the caption's
        reading time. A wait that updates objects plays at once, as Manim's."""
        if (self._deferring and stop_condition is None and frozen_frame is not False
                and not self._moves_by_itself()):
            self._pending_hold += duration
            return
        self._flush_hold()
        super().wait(duration, stop_condition, frozen_frame)
        self._check_bounds()

    def _moves_by_itself(self) -> bool:
        """Whether a wait would draw changing frames (Manim's should_update_mobjects, which
        can only be asked while a Wait plays)."""
        return bool(self.always_update_mobjects or self.updaters or any(
            m.has_time_based_updater() for m in self.get_mobject_family_members()))

    def _flush_hold(self, at_least: float = 0.0) -> None:
        """Play the gathered holds, and at least `at_least` seconds, as one held frame of a
        whole number of frames."""
        fps = config.frame_rate
        frames = whole_frames(max(self._pending_hold, at_least), fps)
        self._pending_hold = 0.0
        if frames:
            self._deferring = False
            try:
                self.wait((frames + 1e-3) / fps)  # (Manim truncates to whole frames)
            finally:
                self._deferring = True

    def _hold_caption(self) -> None:
        """Before the caption on screen is replaced or what it explains leaves: hold until
        it has been up for its reading time (and, narrated, its speech)."""
        if self._caption is None:
            self._flush_hold()
            return
        now = self.renderer.time
        # (+5 ms: the subtitles' millisecond rounding never takes a cue below its time)
        up = self._caption_need + 0.005 - (now - self._caption_start)
        # ... and its picture stands complete and still for its hold before it leaves
        still = picture_hold(self._caption_need) + 0.005 - (now - max(self._picture_settled, self._caption_start))
        self._flush_hold(at_least=max(up, still))

    def hold_caption(self) -> None:
        """Hold until the caption on screen has been read (and said): the step after it
        starts then (a question's think time, scenes.predict)."""
        self._hold_caption()

    def ask_questions(self) -> None:
        """--questions: each question whose answer this chapter reveals, asked as it opens,
        before its picture (attncore.questions; scenes.predict draws the card)."""
        if not self.settings.questions:
            return
        for question in worded(self.trace, self.tr):
            if question.before == self.slug:
                ask(self, question)

    def tear_down(self) -> None:
        self._flush_hold()
        super().tear_down()

    def _check_bounds(self) -> None:
        """Record any object that leaves the frame (tests require none)."""
        hw, hh = config.frame_width / 2 + 1e-3, config.frame_height / 2 + 1e-3
        for m in self.mobjects:
            pts = [sm.points for sm in m.family_members_with_points()]
            if not pts:
                continue
            allp = np.concatenate(pts)
            (left, bottom), (right, top) = allp[:, :2].min(axis=0), allp[:, :2].max(axis=0)
            if left < -hw or right > hw or bottom < -hh or top > hh:
                self.off_frame.append((type(m).__name__, round(self.renderer.time, 2),
                                       (round(left, 2), round(right, 2), round(bottom, 2), round(top, 2))))

    # ---- frame furniture ---------------------------------------------------------------
    def setup(self) -> None:
        self.camera.background_color = self.theme.background

    def make_badge(self) -> VGroup:
        """Top-right tag: which weights made these numbers."""
        t = self.trace
        if t.trained_here and t.can.sized:  # the tiny model: its sizes are the settings'
            text = self.tr.plural("tiny model (d_model {d_model}, {n} head, seed {seed}) · trained here",
                                  "tiny model (d_model {d_model}, {n} heads, seed {seed}) · trained here",
                                  len(t.heads), d_model=t.d_model, seed=t.seed)
        elif t.trained_here:  # the translation model
            text = self.tr("English → Spanish model (d_model {d_model}) · trained here",
                           d_model=t.d_model)
            if len(t.heads) > 1:
                text += self.tr(" · head {head}", head=t.head_index)
        elif t.trained:
            text = self.tr("{model} · layer {layer} · head {head}", model=t.model_name,
                           layer=t.layer, head=t.head_index)
        else:
            text = self.tr("untrained random weights · seed {seed}", seed=t.seed)
        most = SAFE_X - BUFF_MEDIUM  # at most half the safe width
        badge = make_text(text, BADGE_FONT, self.theme.muted)
        if badge.width > most and " · " in text:  # too long: the last part on a second line
            first, _, last = text.rpartition(" · ")
            badge = VGroup(make_text(first, BADGE_FONT, self.theme.muted),
                           make_text(last, BADGE_FONT, self.theme.muted)).arrange(
                DOWN, aligned_edge=RIGHT, buff=BUFF_TIGHT)
        fit_width(badge, most)
        # its top right corner on the safe area's, never past it (the frame's corner is not)
        return badge.move_to([SAFE_X, SAFE_Y, 0], aligned_edge=UR)

    def show_title(self) -> None:
        # a title naming Q and K names the rows the scores use (Q_rot, K_rot once turned)
        heads, rotary = len(self.trace.heads), score_names(self.trace) == TURNED
        self.title_text = chapter_title(self.slug, self.tr, heads, rotary)
        badge = self.make_badge()
        self.badge = badge
        room = TITLE_SAFE_X + SAFE_X - badge.width - TITLE_BADGE_GAP  # title-safe on its left
        # every chapter's title at one size: the one the widest title of any chapter fits
        size = title_font([chapter_title(s, self.tr, heads, rotary) for s in SLUGS], room)
        title = make_title(self.title_text, self.theme, size)
        fit_width(title, room)
        title.move_to([-TITLE_SAFE_X, title.get_y(), 0], aligned_edge=LEFT)
        self.add(badge)
        self.play(FadeIn(title, shift=0.2 * DOWN), run_time=0.6)
        self.title_mob = title
        self.ask_questions()  # before the chapter's picture: it holds the answers

    def makes(self, *keys: str) -> None:
        """The caption on screen is where the video makes `keys` (trace keys): the companion
        page's "show me in the video" seeks there (scenes.widgets.Recorder.made)."""
        for key in keys:
            self.drawn.makes(key)

    def say(self, text: str, run_time: float = 0.4) -> None:
        """Show a caption (replacing the previous one) and record it as a subtitle; with a
        voice, say it. It stays up for its reading time, or until its speech ends and a
        short gap (scenes.pacing): the step after it waits. Captions come in the video's
        language: say(self.tr(english, chinese))."""
        new = make_caption(text, self.theme)
        if self.settings.captions not in ("burned", "both"):  # soft/none: the words live in
            new.set_opacity(0)  # a subtitle track only; laid out and timed all the same
        old = self.caption_goes()
        self._swapping = True
        try:
            if old is not None:  # the old caption out, then the new one in: never both
                self.play(FadeOut(old), run_time=run_time / 2)
                run_time /= 2
        finally:
            self._swapping = False
        self._caption_start = self.renderer.time
        self.drawn.caption_at = self._caption_start  # what is drawn now, this caption made
        reading = reading_seconds(text, self.settings.language, self.settings.pace)
        self._caption_need = reading
        # The speech's samples start with the caption; the voice is heard LEAD_SILENCE
        # (scenes.voice) later.
        if self.narrator is not None:
            speech = self.narrator.say(text, self.spoken_words)
            self.speech.append((self._caption_start, speech))
            self._caption_need = max(reading, speech.seconds + SPEECH_GAP)
            self._cue_seconds = speech.seconds
        self._swapping = True
        try:
            self.play(FadeIn(new), run_time=run_time)
        finally:
            self._swapping = False
        self._caption = new
        self._caption_text = text

    def claim(self, claim: Claim) -> None:
        """File what the caption on screen claims about its picture (scenes.claims): made
        from the record the caption's words and the picture were made from. A claim a label
        of the picture makes ("+ 3 more") keeps that label's words."""
        self.claims.append(replace(claim, caption=len(self.subtitles),
                                   text=claim.text or self._caption_text))

    def caption_ends(self) -> None:
        """Called when the caption on screen is about to be replaced, or what it explains
        cleared or faded: the storyboard (pipeline.run.stills) takes its still here, and a
        deck step (pipeline.outputs.slides) holds here."""
        if self._held_at is None:
            self._held_at = self.renderer.time

    def caption_leaves(self) -> None:
        """Called as the caption on screen leaves (replaced, or the chapter ends), before
        anything is played: the picture lint (pipeline.run.lint) looks here a second time."""

    def _close_subtitle(self) -> None:
        """The caption's cue: while it is on screen; narrated, while it is said (the caption
        itself stays up for its reading time all the same)."""
        if self._caption is not None:
            self.caption_leaves()
            end = self.renderer.time
            if self.narrator is not None:
                end = min(end, self._caption_start + self._cue_seconds)
            self.subtitles.append((self._caption_start, end, self._caption_text))
            if len(self.descriptions) < len(self.subtitles):  # (said already: described)
                self._describe(self.renderer.time - self._caption_start)
            self.holds.append(self.renderer.time if self._held_at is None else self._held_at)
        self._held_at = None

    def picture(self) -> Picture:
        """What the picture holds now (scenes.describe): the grids on screen, from the
        scene graph, and the recorded numbers that are on screen now and were not in the
        previous caption's picture (a number is on screen when its text is, outside the
        caption and the title: a number recorded as it was built may come a caption later)."""
        keep = (self._caption, getattr(self, "title_mob", None), getattr(self, "badge", None))
        shown = [m for m in self.mobjects if all(m is not k for k in keep)]
        views = [v for top in shown for v in _of_type(top, MatrixView)]
        places = _places([*views, *(v for top in shown for v in _of_type(top, HeatView))])
        grids = [Grid(m.key, *m.values.shape, numbers=bool(m.numbers), place=places[id(m)])
                 for m in views]
        grids += [Grid(m.key, *m.shape, numbers=False, place=places[id(m)])
                  for top in shown for m in _of_type(top, HeatView)]
        tables: dict[int, tuple[MatrixView, set[int]]] = {}  # a table shown row by row
        for part in (p for top in shown for p in _of_type(top, TableRows)):
            tables.setdefault(id(part.view), (part.view, set()))[1].update(part.rows)
        grids += [Grid(v.key, len(rows), v.values.shape[1], numbers=bool(v.numbers))
                  for v, rows in tables.values()]
        charts = tuple(Chart(c.key, c.kind, c.plotted, c.indices, c.decimals, c.labelled)
                       for top in shown for c in _of_type(top, ChartView))
        texts = {t for top in shown for t in visible_texts(top)}
        up = {}
        for key, index, text in self.drawn.entries:
            if (text in texts or f"{text}°" in texts) and (key, index) not in up:
                up[(key, index)] = Number(key, index, text)
        # A number matched by its text alone may be another of its key that reads the same
        # ("0.000" of a row not yet shown): where the scene graph says which are up (the rows
        # of a table shown row by row, labels that hold a number), only those are.
        for view, rows in tables.values():
            up = {k: n for k, n in up.items() if k[0] != view.key or k[1][0] in rows}
        labels = [n for top in shown for n in _of_type(top, NumberLabel) if visible_texts(n)]
        labelled = {n.key for n in labels}
        up = {k: n for k, n in up.items() if k[0] not in labelled}
        for label in labels:  # (a number among words: "step 500")
            up.setdefault((label.key, label.index), Number(label.key, label.index, label.text))
        fresh = frozenset(k for k in up if k not in self._numbers_up)
        self._numbers_up = set(up)
        return Picture(tuple(grids), tuple(up.values()), fresh, charts)

    def _describe(self, seconds: float) -> Description:
        """The description of the caption that leaves, to be said in `seconds`."""
        picture = self.picture()
        Q, K, product = names(self.trace)
        words = Words(self.q_labels, self.k_labels, self.focus, Q, K, product)
        described = describe(picture, self._picture, self._caption_text, seconds, self.tr,
                             words, self.settings.pace, self._told)
        self.descriptions.append(described)
        self.described_at.append(None)  # (said: _say_description times it)
        self._picture = picture
        on_screen = {(c.kind, c.key) for c in picture.charts} | {told_number(n) for n in picture.numbers}
        self._told = frozenset(c for c in described.told if c in on_screen)  # (until it goes)
        return described

    def _says_descriptions(self) -> bool:
        return self.narrator is not None and self.settings.describe

    def _say_description(self) -> None:
        """Extended description: the caption's description, said after the caption's
        speech and a gap (in at most EXTENDED_SECONDS, the picture's time or longer), and
        the caption held until it has been said and a gap after it. Made as the picture
        stands complete, before the hold: what the hold shows is what it describes."""
        start = self._caption_start + self._cue_seconds + SPEECH_GAP
        described = self._describe(max(EXTENDED_SECONDS / self.settings.pace, self._caption_need))
        if not described.text:
            return
        speech = self.narrator.say(described.text, self.spoken_words)
        self.described_speech.append((start, speech))
        self.described_at[-1] = (start + speech.first_word, start + speech.seconds)
        self._caption_need = max(self._caption_need,
                                 start - self._caption_start + speech.seconds + SPEECH_GAP)

    def gather(self, group: Mobject) -> None:
        """Put `group` in the scene graph where its parts stand already, the drawing order
        unchanged: a chart whose marks were animated one by one (scenes.describe finds
        charts in the scene graph). It takes the place of the first object that holds its
        parts only (an animation's group of them, or a part); the others leave theirs.
        Where another object holds a part too, it is added on top, as `add` does."""
        parts = set(group.submobjects)
        holders = [m for m in self.mobjects if m in parts or parts & set(m.get_family())]
        if not holders or any(m not in parts and not set(m.submobjects) <= parts
                              for m in holders):
            self.add(group)
            return
        at = self.mobjects.index(holders[0])
        self.mobjects = [m for m in self.mobjects if m not in holders]
        self.mobjects.insert(at, group)

    def make_cover(self, top: float, bottom: float) -> Rectangle:
        """A background-coloured band: fading it in hides what is under it at the cost of
        one moving object (fading out each object would copy every glyph)."""
        return Rectangle(width=config.frame_width, height=top - bottom, stroke_width=0,
                         fill_color=self.theme.background, fill_opacity=1).move_to(
            UP * (top + bottom) / 2)

    def clear_stage(self, run_time: float = 0.4) -> None:
        """Hide everything but the title, the badge and the caption, then remove it."""
        keep = {id(self._caption), id(getattr(self, "title_mob", None)), id(getattr(self, "badge", None))}
        gone = [m for m in self.mobjects if id(m) not in keep]
        if not gone:
            return
        # The caption leaves with the picture it explains (never after it: nothing is
        # cleared under a caption), so the cover reaches down to the frame's edge.
        caption = self.caption_goes()
        title = getattr(self, "title_mob", None)
        top = title.get_bottom()[1] - 0.05 if title is not None else config.frame_height / 2
        cover = self.make_cover(top, -config.frame_height / 2)
        self.add(cover)
        if caption is not None:
            self.bring_to_front(caption)
        self._swapping = True  # the picture is covered and the caption goes: nothing to hold
        try:
            self.play(FadeIn(cover), *([FadeOut(caption)] if caption is not None else []),
                      run_time=run_time)
        finally:
            self._swapping = False
        self.remove(*gone, cover)

    def finish(self, hold: float = 1.5) -> None:
        """Hold the last frame, then fade the whole frame to the background."""
        self.wait(hold)
        self.caption_goes()
        cover = self.make_cover(config.frame_height / 2, -config.frame_height / 2)
        self.play(FadeIn(cover), run_time=0.5)
        self.remove(*self.mobjects)


def _places(grids: list[Any]) -> dict[int, tuple[int, int]]:
    """Where each grid stands among the grids of its key, as (line, place in the line):
    lines top to bottom, a new line where a grid's centre is lower than the line's by more
    than half its height (thumbnails in a line stand on one baseline, not one centre)."""
    out: dict[int, tuple[int, int]] = {}
    for key in {g.key for g in grids}:
        same = sorted((g for g in grids if g.key == key), key=lambda g: -g.get_y())
        line, top, lines = 0, None, []
        for g in same:
            if top is not None and top - g.get_y() > g.height / 2:
                line, top = line + 1, g.get_y()
            top = g.get_y() if top is None else top
            lines.append((line, g))
        for n in range(line + 1):
            row = sorted((g for k, g in lines if k == n), key=lambda g: g.get_x())
            out.update({id(g): (n, c) for c, g in enumerate(row)})
    return out


def _of_type(mob: Any, kind: type) -> Any:
    """The objects of `kind` in `mob`, outermost first, not looked into (a grid's cells
    are not searched for grids: get_family would list every glyph)."""
    if isinstance(mob, kind):
        yield mob
        return
    for sub in mob.submobjects:
        yield from _of_type(sub, kind)


def _leaves(animations: Any) -> Any:
    """The single animations inside groups (AnimationGroup, LaggedStart, Succession)."""
    for a in animations:
        inner = getattr(a, "animations", None)
        if inner is not None:
            yield from _leaves(inner)
        else:
            yield a

"""Pseudo-localisation: every chapter built (dry run) with a pseudo-language made here from
the template, each message 40% longer and accented with its placeholders kept, still fits:
no caption or label leaves the frame or overlaps another text, at every caption's complete
picture (where the storyboard takes its still). A language longer than English cannot
break the layout unnoticed."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore import settings as settings_mod
from attention_video.attncore.chapters import LEARNING, SLUGS
from attention_video.scenes import catalogue
from attention_video.scenes.base import ChapterScene
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from manim import DOWN, Text

from tests.support.paths import ROOT

PSEUDO = "qps"  # a private-use language code
ACCENTS = str.maketrans("aeiouncyAEIOUNCY", "áéíöüñçýÅÉÍÖÜÑÇÝ")
PSEUDO_LETTERS = set("áéíöüñçýÅÉÍÖÜÑÇÝ")
GROWTH = 0.4  # how much longer every message gets
PLACEHOLDER = re.compile(r"(\{\w*\})")
KEEP = {("characters read per second", "15")}  # a number, not words
CASES = {
    "tiny": dict(),
    "pretrained": dict(weights="pretrained", head="auto",
                       sentence="Sunlight warmed the old stone bridge"),
}


def pseudo(message: str) -> str:
    """`message` accented outside its placeholders and 40% longer (padding in short
    words, so that it wraps as real words do); a message with no letters stays as it is."""
    parts = PLACEHOLDER.split(message)
    letters = sum(c.isalpha() for p in parts[::2] for c in p)
    if letters == 0:
        return message
    out = "".join(p if PLACEHOLDER.fullmatch(p) else p.translate(ACCENTS) for p in parts)
    extra = math.ceil(GROWTH * len(message))
    pad = " ".join("ñéçüå"[: min(5, extra - i)] for i in range(0, extra, 6))
    return f"{out} {pad}" if not out.endswith(tuple(".:;)")) else f"{out[:-1]} {pad}{out[-1]}"


def write_pseudo_catalogue(locale_dir: Path) -> None:
    with open(ROOT / "locale" / "messages.pot", "rb") as f:
        template = read_po(f)
    cat = Catalog(locale=None, domain="messages", charset="utf-8")
    cat.mime_headers = template.mime_headers
    cat._num_plurals, cat._plural_expr = 2, "(n != 1)"
    for m in template:
        if not m.id:
            continue
        if (m.context, m.id) in KEEP:
            string = m.id
        elif isinstance(m.id, tuple):
            string = tuple(pseudo(i) for i in m.id)
        else:
            string = pseudo(m.id)
        cat.add(m.id, string, context=m.context)
    folder = locale_dir / PSEUDO / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with open(folder / "messages.po", "wb") as f:
        write_po(f, cat)


def texts_on_screen(scene: ChapterScene) -> list[Text]:
    seen, out = set(), []
    for top in scene.mobjects:
        for m in top.get_family():
            if isinstance(m, Text) and id(m) not in seen and m.has_points() is not None:
                seen.add(id(m))
                if any(sm.has_points() for sm in m.family_members_with_points()):
                    out.append(m)
    return out


def box(m) -> tuple[float, float, float, float]:
    pts = np.concatenate([sm.points for sm in m.family_members_with_points()])
    (x0, y0), (x1, y1) = pts[:, :2].min(axis=0), pts[:, :2].max(axis=0)
    return x0, y0, x1, y1


def overlap(a, b, tolerance: float = 0.02) -> bool:
    ax0, ay0, ax1, ay1 = a
    bx0, by0, bx1, by1 = b
    return (min(ax1, bx1) - max(ax0, bx0) > tolerance
            and min(ay1, by1) - max(ay0, by0) > tolerance)


def layout_problems(scene: ChapterScene) -> list[str]:
    """Texts of the catalogue (those the pseudo-language accented) that overlap another
    text on screen."""
    texts = texts_on_screen(scene)
    boxes = [box(t) for t in texts]
    problems = []
    for i, t in enumerate(texts):
        if not PSEUDO_LETTERS & set(getattr(t, "text", "")):
            continue
        for j, u in enumerate(texts):
            if j != i and overlap(boxes[i], boxes[j]) and not (
                    j < i and PSEUDO_LETTERS & set(getattr(u, "text", ""))):
                problems.append(f"{scene.renderer.time:.1f}s {t.text!r} overlaps {u.text!r}")
    return problems


@functools.cache
def build(case: str, chapter: str, language: str) -> tuple[list[str], list[tuple]]:
    """(overlaps at each caption's complete picture, objects out of the frame)."""
    from attention_video.fastmanim.encoder import TimedRenderer
    from attention_video.pipeline.run.chapter import manim_config
    from attention_video.scenes import scene_class
    from manim import tempconfig

    s = Settings(**CASES[case])
    trace = build_trace(s)
    s = dataclasses.replace(s, language=language)
    found: list[str] = []
    original = ChapterScene.caption_ends

    def caption_ends(self):
        if self._held_at is None:
            found.extend(layout_problems(self))
        original(self)

    text_dir = Path(tempfile.mkdtemp(prefix="manim-texts-"))
    try:
        ChapterScene.caption_ends = caption_ends
        with tempconfig(manim_config(s, None, None, text_dir)):
            scene = scene_class(chapter)(trace, s, SLUGS, renderer=TimedRenderer(skip_animations=True),
                                         skip_animations=True)
            scene.render()
    finally:
        ChapterScene.caption_ends = original
        shutil.rmtree(text_dir, ignore_errors=True)
    return found, scene.off_frame


@pytest.fixture(scope="module")
def pseudo_language(tmp_path_factory):
    """The pseudo-language beside copies of the real catalogues, for this module only."""
    folder = tmp_path_factory.mktemp("locale")
    shutil.copytree(ROOT / "locale", folder, dirs_exist_ok=True)
    write_pseudo_catalogue(folder)
    saved = catalogue.LOCALE_DIR, settings_mod.LANGUAGES
    catalogue.LOCALE_DIR = folder
    settings_mod.LANGUAGES = settings_mod.caption_languages(folder)  # as if it shipped
    yield PSEUDO
    catalogue.LOCALE_DIR, settings_mod.LANGUAGES = saved


def test_pseudo_messages_are_longer_accented_and_keep_their_placeholders():
    p = pseudo("Row {row}: the query of \"{word}\" against every key ({n} factors).")
    assert "{row}" in p and "{word}" in p and "{n}" in p and "Rów" not in p
    assert len(p) >= 1.4 * len("Row {row}: the query of \"{word}\" against every key ({n} factors).")
    assert PSEUDO_LETTERS & set(p)
    assert pseudo(", ") == ", " and pseudo("{first} {second}") == "{first} {second}"


@pytest.mark.slow
@pytest.mark.parametrize("case, chapter", [(c, ch) for c in CASES for ch in SLUGS
                                           if not (ch == LEARNING and c == "pretrained")])
def test_a_longer_language_keeps_every_chapter_in_frame_without_overlaps(pseudo_language, case,
                                                                          chapter):
    overlaps, off_frame = build(case, chapter, pseudo_language)
    assert off_frame == [], off_frame[:3]
    assert overlaps == [], overlaps[:3]


def test_the_overlap_check_fails_on_overlapping_labels():
    from types import SimpleNamespace

    from attention_video.scenes.text import make_text

    label, other = make_text("wéíght ñéçüå", 22), make_text("0.33", 22)
    apart = make_text("0.12", 22).next_to(label, DOWN, buff=0.3)
    scene = SimpleNamespace(mobjects=[label, other, apart], renderer=SimpleNamespace(time=0.0))
    problems = layout_problems(scene)
    assert len(problems) == 1 and "0.33" in problems[0]

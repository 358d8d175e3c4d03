"""Hostile input and faults: text from anywhere builds; failures are one line and lose
nothing."""

from __future__ import annotations

import errno
import unicodedata
from pathlib import Path

import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.tokenize import DEFAULT_MAX_TOKENS
from attention_video.pipeline.cache.keys import chapter_key
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.commands.cli import main
from attention_video.pipeline.run import render as run_mod
from attention_video.pipeline.run.chapter import ChapterJob, ChapterResult, render_chapter
from attention_video.pipeline.run.render import ChapterFailed, render_video
from attention_video.pipeline.run.workers import InlineExecutor
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.support.scene_truth import check_drawn

HOSTILE = {
    "quotes": 'I can\'t say "no".',
    "apostrophes-hyphens": "rock'n'roll state-of-the-art l’été",
    "digits-signs": "-3.14 + 2 = −1.14 ±0 1,000,000 100%",
    "accents": "Ça été très naïve, señor Müller",
    "emoji": "I ❤️ 🐈‍⬛ and 👍🏽 🇫🇷",
    "chinese-japanese": "我喜欢牛奶 日本語のテキスト",
    "arabic": "شربت القطة السوداء الحليب",
    "pango-markup": "<b>bold</b> &amp; < > &lt;span&gt;",
    "latex-specials": "$ % & _ ^ \\ { } \\frac{a}{b}",
    "very-long-word": "Pneumonoultramicroscopicsilicovolcanoconiosis is long",
    "repeated": " ".join(["buffalo"] * 12),
    "exact-limit": " ".join(f"t{i}" for i in range(32)),
}


@pytest.mark.slow
@pytest.mark.parametrize("chapter", ["input", "factor", "qkv"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_builds_with_true_numbers_and_nothing_off_frame(name, chapter):
    s = Settings(sentence=HOSTILE[name], weights="random")
    t = build_trace(s)
    r = render_chapter(ChapterJob(chapter, t, s, clip=None))
    assert r.off_frame == []
    assert check_drawn(t, r.drawn) == []


def test_one_over_the_limit_says_how_many_tokens():
    with pytest.raises(SettingsError, match="33 tokens; the limit is 32"):
        build_trace(Settings(sentence=" ".join(f"t{i}" for i in range(33)), weights="random"))


# Letters, marks, numbers, punctuation and symbols: what a reader sees as a word or a mark
# (spaces, control, format, private-use and unassigned characters are not).
VISIBLE = ("L", "M", "N", "P", "S")


def what_is_wrong(text: str) -> str | None:
    """None when `text` builds with true numbers all on the frame, or is refused in a clear
    error naming the sentence because it holds nothing visible or more characters than
    the token limit (each token takes one at least); else what went wrong."""
    try:
        s = Settings(sentence=text, weights="random")
        t = build_trace(s)
    except SettingsError as e:
        if e.field != "sentence" or not str(e):
            return f"{text!r} was refused without naming the sentence: {e.field}: {e}"
        visible = [c for c in text if unicodedata.category(c).startswith(VISIBLE)]
        too_long = len(unicodedata.normalize("NFC", text)) > DEFAULT_MAX_TOKENS
        if visible and not too_long:
            return f"{text!r} was refused ({e}) though it shows {visible!r}"
        return None
    r = render_chapter(ChapterJob("input", t, s, clip=None))
    if r.off_frame or check_drawn(t, r.drawn):
        return f"{text!r}: off frame {r.off_frame}, untrue numbers {check_drawn(t, r.drawn)}"
    return None


# Each example dry-runs chapter 1 (~0.35 CPU-seconds): a few in the fast tier, many slow.
@pytest.mark.slow
@hsettings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=30))
def test_any_unicode_text_builds_or_gets_the_clear_error(text):
    assert what_is_wrong(text) is None


@pytest.mark.slow
@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=30))
def test_any_unicode_text_of_many_builds_or_gets_the_clear_error(text):
    assert what_is_wrong(text) is None


def test_the_check_fails_on_a_refusal_of_visible_text(monkeypatch):
    """The property above can fail: a build that refused every sentence is caught."""
    def refuse(settings, **_):
        raise SettingsError("sentence", "refused")
    monkeypatch.setattr(f"{__name__}.build_trace", refuse)
    assert "though it shows" in what_is_wrong("milk")
    assert what_is_wrong("\u200b") is None  # nothing visible: a refusal is right


# ---- faults, with the renderer replaced by a fake so no frames are written ----------

def fake_render(fail: str | None = None):
    def render_chapter(job: ChapterJob) -> ChapterResult:
        if job.chapter == fail:
            raise RuntimeError("boom in the scene")
        Path(job.clip).write_bytes(b"clip of chapter %s" % job.chapter.encode())
        return ChapterResult(job.chapter, 1.0, [(0.0, 1.0, "caption")], clip=job.clip)
    return render_chapter


@pytest.fixture
def two_chapters(tmp_path):
    out = tmp_path / "video.mp4"
    out.write_bytes(b"earlier video")
    s = Settings(sentence="cats drink milk", weights="random", chapters=(1, 2), quality="l",
                 output=str(out))
    return s, ChapterCache(tmp_path / "cache"), out


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


def test_a_crash_in_one_chapter_names_it_and_keeps_the_others_cached(two_chapters, monkeypatch):
    s, cache, out = two_chapters
    monkeypatch.setattr(run_mod, "render_chapter", fake_render(fail="linear"))
    with pytest.raises(ChapterFailed, match=r"chapter 2 \(linear layers\) failed: RuntimeError: "
                                            "boom in the scene"):
        render_video(s, cache=cache, executor=InlineExecutor())
    trace = build_trace(s)
    assert cache.get(chapter_key("input", trace, s, SLUGS)) is not None
    assert cache.get(chapter_key("linear", trace, s, SLUGS)) is None
    assert out.read_bytes() == b"earlier video" and leftovers(out.parent) == []


def test_a_full_disk_while_joining_keeps_the_earlier_video(two_chapters, monkeypatch, capsys):
    s, cache, out = two_chapters
    monkeypatch.setattr(run_mod, "render_chapter", fake_render())
    monkeypatch.setattr(run_mod, "LocalPool", InlineExecutor)

    def full_disk(clips, path, **kwargs):
        Path(path).write_bytes(b"half a vid")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(run_mod, "join", full_disk)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(cache.root))
    with pytest.raises(SystemExit) as info:
        main(["cats drink milk", "--weights", "random", "--chapters", "1,2", "-o", str(out)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert info.value.code == 1 and len(errors) == 1 and "the disk is full" in errors[0]
    assert str(out) in errors[0] and ".part" not in errors[0]
    assert out.read_bytes() == b"earlier video" and leftovers(out.parent) == []


@pytest.mark.parametrize("output, expect", [
    ("missing-folder/v.mp4", "does not exist; create it"),
    ("/proc/v.mp4", "is not writable"),
])
def test_output_folder_errors_are_one_line(tmp_path, monkeypatch, capsys, output, expect):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["cats drink milk", "--weights", "random", "-o", output])
    err = capsys.readouterr().err
    assert info.value.code == 1 and expect in err and err.strip().count("\n") == 0

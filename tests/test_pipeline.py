"""The pipeline's planning, cache keys, subtitles and concurrent renders (no frames written:
the chapter renderer and the joiner are replaced by fakes where a video is not the point)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from attncore import Settings, SettingsError, build_trace
from pipeline import run as run_mod
from pipeline.cache import chapter_key, code_digest
from pipeline.chapter import ChapterJob, ChapterResult
from pipeline.files import slug
from pipeline.run import InlineExecutor, plan_chapters, render
from pipeline.subtitles import srt_time, to_srt

R = dict(weights="random")


def test_no_softmax_drops_chapter_five():
    assert 5 not in plan_chapters(Settings(**R, softmax=False))
    assert 5 in plan_chapters(Settings(**R))


def test_only_chapter_five_without_softmax_is_an_error():
    with pytest.raises(SettingsError, match="--no-softmax skips it"):
        plan_chapters(Settings(**R, softmax=False, chapters=(5,)))


def test_cache_key_follows_exactly_what_a_chapter_draws():
    s = Settings(**R, sentence="the cat drank milk")
    t = build_trace(s)
    other_focus = build_trace(s.replace(query="cat"))
    assert chapter_key(1, t, s) == chapter_key(1, other_focus, s)  # chapter 1 ignores it
    assert chapter_key(2, t, s) != chapter_key(2, other_focus, s)
    for change in (dict(theme="light"), dict(language="zh"), dict(quality="m")):
        assert chapter_key(1, t, s) != chapter_key(1, t, s.replace(**change)), change
    assert chapter_key(1, t, s) != chapter_key(1, build_trace(s.replace(seed=1)), s)
    assert chapter_key(1, t, s) == chapter_key(1, build_trace(s), s)
    assert chapter_key(1, t, s) == chapter_key(1, t, s.replace(output="elsewhere.mp4"))


def test_editing_a_scene_file_changes_only_its_chapters_code_digest(tmp_path, monkeypatch):
    import pipeline.cache as cache_mod

    scenes = Path(cache_mod.SCENES)
    copy = tmp_path / "scenes"
    copy.mkdir()
    for f in scenes.glob("*.py"):
        (copy / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(cache_mod, "SCENES", copy)
    before = {c: code_digest(c) for c in (1, 2, 3)}
    (copy / "ch2_linear.py").write_text((copy / "ch2_linear.py").read_text() + "\n# edit\n")
    after = {c: code_digest(c) for c in (1, 2, 3)}
    assert before[1] == after[1] and before[3] == after[3] and before[2] != after[2]
    (copy / "widgets.py").write_text((copy / "widgets.py").read_text() + "\n# edit\n")
    assert all(code_digest(c) != after[c] for c in (1, 2, 3))


def test_srt_cues_are_numbered_and_timed():
    text = to_srt([(0.0, 1.5, "one"), (1.5, 1.5, "empty"), (61.25, 3725.0, "two")])
    assert text == ("1\n00:00:00,000 --> 00:00:01,500\none\n\n"
                    "2\n00:01:01,250 --> 01:02:05,000\ntwo\n")
    assert srt_time(0.0004) == "00:00:00,000"


def test_default_output_name_comes_from_the_sentence():
    assert slug("The black cat drank the milk!") == "the-black-cat-drank-the-milk"
    assert slug("黑猫喝了牛奶") == "黑猫喝了牛奶"
    assert slug("?!") == "attention"


def fake_render(job: ChapterJob) -> ChapterResult:
    Path(job.clip).write_bytes(f"[{job.trace.key_tokens[0].text} ch{job.chapter}]".encode())
    return ChapterResult(job.chapter, 2.0, [(0.0, 2.0, f"caption {job.chapter}")], clip=job.clip)


def fake_join(clips, out):
    Path(out).write_bytes(b"".join(Path(c).read_bytes() for c in clips))
    return 2.0 * len(clips)


def test_two_renders_into_one_folder_at_once_do_not_mix(tmp_path, monkeypatch):
    monkeypatch.setattr(run_mod, "render_chapter", fake_render)
    monkeypatch.setattr(run_mod, "join", fake_join)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    outs, errors = {}, []

    def one(word):
        try:
            s = Settings(**R, sentence=f"{word} drinks", chapters=(1, 2, 3),
                         output=str(tmp_path / f"{word}.mp4"))
            outs[word] = render(s, executor=InlineExecutor())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=one, args=(w,)) for w in ("cat", "dog", "cow", "ant")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for w in ("cat", "dog", "cow", "ant"):
        assert (tmp_path / f"{w}.mp4").read_bytes() == f"[{w} ch1][{w} ch2][{w} ch3]".encode()
        srt = (tmp_path / f"{w}.srt").read_text(encoding="utf-8")
        assert "00:00:04,000 --> 00:00:06,000\ncaption 3" in srt
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_outputs_are_ordinary_readable_files(tmp_path):
    from pipeline.files import write_text_atomic

    write_text_atomic(tmp_path / "a.srt", "x")
    mode = (tmp_path / "a.srt").stat().st_mode & 0o777
    assert mode & 0o044 == 0o044  # group and others may read it (with the usual umask)

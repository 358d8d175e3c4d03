"""The pipeline's planning, cache keys, subtitles and concurrent renders (no frames written:
the chapter renderer and the joiner are replaced by fakes where a video is not the point)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.chapters import SLUGS, number
from attention_video.pipeline.cache import sources
from attention_video.pipeline.cache.keys import chapter_key, code_digest
from attention_video.pipeline.outputs.files import slug
from attention_video.pipeline.outputs.subtitles import srt_time, to_srt
from attention_video.pipeline.run import render as render_mod
from attention_video.pipeline.run.chapter import ChapterJob, ChapterResult, render_chapter
from attention_video.pipeline.run.render import plan_chapters, render_video
from attention_video.pipeline.run.workers import InlineExecutor

R = dict(weights="random")


def test_no_softmax_drops_chapter_five():
    assert "softmax" not in plan_chapters(Settings(**R, softmax=False))
    assert "softmax" in plan_chapters(Settings(**R))


def test_only_chapter_five_without_softmax_is_an_error():
    with pytest.raises(SettingsError, match="--no-softmax skips it"):
        plan_chapters(Settings(**R, softmax=False, chapters=("softmax",)))


def test_cache_key_follows_exactly_what_a_chapter_draws():
    s = Settings(**R, sentence="the cat drank milk")
    t = build_trace(s)
    other_focus = build_trace(s.replace(query="cat"))

    def key(slug, trace=t, settings=s, plan=SLUGS):
        return chapter_key(slug, trace, settings, plan)

    assert key("input") == key("input", other_focus)  # chapter 1 ignores it
    assert key("linear") != key("linear", other_focus)
    for change in (dict(theme="light"), dict(language="zh"), dict(quality="m")):
        assert key("input") != key("input", settings=s.replace(**change)), change
    assert key("input") != key("input", build_trace(s.replace(seed=1)))
    assert key("input") == key("input", build_trace(s))
    assert key("input") == key("input", settings=s.replace(output="elsewhere.mp4"))


def test_a_chapter_that_states_the_plan_is_keyed_on_it():
    """Chapter 7 says "The next chapter replays its training" only when chapter 8 plays:
    the plans 1-8,9,10 and 1-7,9,10 must not share its clip (they did, when the scene read
    the plan from a settings dict on the trace that the key never saw)."""
    s = Settings(sentence="The black cat drank the milk", weights="tiny")
    t = build_trace(s)
    without = tuple(c for c in SLUGS if c != "learning")
    assert chapter_key("qkv", t, s, SLUGS) != chapter_key("qkv", t, s, without)
    assert chapter_key("factor", t, s, SLUGS) == chapter_key("factor", t, s, without)
    full = render_chapter(ChapterJob("qkv", t, s, clip=None, plan=SLUGS))
    cut = render_chapter(ChapterJob("qkv", t, s, clip=None, plan=without))
    said = lambda r: " ".join(text for _, _, text in r.subtitles)  # noqa: E731
    assert "next chapter" in said(full) and "next chapter" not in said(cut)


def copy_project(tmp_path: Path) -> Path:
    """The project's packages, copied: a tree whose files a test may edit."""
    for package in sources.PACKAGES:
        shutil.copytree(sources.PROJECT_ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_editing_a_scene_file_changes_only_its_chapters_code_digest(tmp_path):
    root = copy_project(tmp_path)
    three = ("input", "linear", "factor")
    before = {c: code_digest(c, root) for c in three}
    append(root / "scenes" / "chapters" / "linear.py", "\n# edit\n")
    after = {c: code_digest(c, root) for c in three}
    assert before["input"] == after["input"] and before["factor"] == after["factor"]
    assert before["linear"] != after["linear"]
    append(root / "scenes" / "widgets.py", "\n# edit\n")
    assert all(code_digest(c, root) != after[c] for c in three)


def test_editing_a_helper_another_chapter_imports_renders_that_chapter_again(tmp_path,
                                                                           monkeypatch):
    """Chapter 4 imports a helper module (absolute import) that imports another one
    (relative import, inside a function): an edit to the inner helper changes chapter 4's
    cache key and leaves chapter 1's alone. The old digest hashed a fixed list of files."""
    root = copy_project(tmp_path)
    scenes = root / "scenes"
    (scenes / "helper_outer.py").write_text(
        "def outer():\n    from .helper_inner import inner\n    return inner()\n")
    (scenes / "helper_inner.py").write_text("def inner():\n    return 1\n")
    append(scenes / "chapters" / "dot.py", "\nfrom attention_video.scenes.helper_outer import outer  # noqa\n")
    monkeypatch.setattr(sources, "PROJECT_ROOT", root)
    s = Settings(weights="random", sentence="the cat drank milk")
    t = build_trace(s)
    before = {c: chapter_key(c, t, s, SLUGS) for c in ("input", "dot")}
    append(scenes / "helper_inner.py", "\ndef inner_two():\n    return 2\n")
    after = {c: chapter_key(c, t, s, SLUGS) for c in ("input", "dot")}
    assert after["dot"] != before["dot"]  # drawn again with the new helper
    assert after["input"] == before["input"]  # an unrelated chapter keeps its clip


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_every_project_module_a_chapter_imports_is_in_its_code_digest(slug, tmp_path):
    """Each project module named in the chapter's own import lines, when edited, changes
    the chapter's digest (the imports are read here independently, by their text)."""
    import re

    from attention_video.attncore.chapters import chapter

    root = copy_project(tmp_path)
    scene_file = root.joinpath(*chapter(slug).module.split(".")[1:]).with_suffix(".py")
    names = set(re.findall(
        r"^\s*(?:from|import) (attention_video\.(?:scenes|attncore|pipeline|fastmanim)[\w.]*)",
                           scene_file.read_text(encoding="utf-8"), re.MULTILINE))
    assert names, "a scene module imports at least the shared scene helpers"
    for name in sorted(names):
        path = sources.module_file(name, root)
        assert path is not None, name
        before = code_digest(slug, root)
        append(path, "\n# edit\n")
        assert code_digest(slug, root) != before, name


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
    n = number(job.chapter)
    Path(job.clip).write_bytes(f"[{job.trace.key_tokens[0].text} ch{n}]".encode())
    return ChapterResult(job.chapter, 2.0, [(0.0, 2.0, f"caption {n}")], clip=job.clip)


def fake_join(clips, out, **kwargs):
    Path(out).write_bytes(b"".join(Path(c).read_bytes() for c in clips))
    return 2.0 * len(clips)


def test_two_renders_into_one_folder_at_once_do_not_mix(tmp_path, monkeypatch):
    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    outs, errors = {}, []

    def one(word):
        try:
            s = Settings(**R, sentence=f"{word} drinks", chapters=(1, 2, 3), captions="soft",
                         output=str(tmp_path / f"{word}.mp4"))
            outs[word] = render_video(s, executor=InlineExecutor())
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
    from attention_video.pipeline.outputs.files import write_text_atomic

    write_text_atomic(tmp_path / "a.srt", "x")
    mode = (tmp_path / "a.srt").stat().st_mode & 0o777
    assert mode & 0o044 == 0o044  # group and others may read it (with the usual umask)


def test_the_command_renders_through_the_pipeline_and_reuses_the_cache(tmp_path, monkeypatch,
                                                                       capsys):
    """render.py → cli → app → render_video → cache → outputs, with the renderer stubbed."""
    from attention_video.pipeline.commands.cli import main

    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setattr(render_mod, "LocalPool", InlineExecutor)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "v.mp4"
    args = ["cats drink milk", "--weights", "random", "--chapters", "1-2", "-o", str(out),
            "--captions", "soft"]
    main(args)
    said = capsys.readouterr()
    assert out.read_bytes() == b"[cats ch1][cats ch2]" and out.with_suffix(".srt").exists()
    assert "chapter 2 (linear layers): rendered" in said.err and "video:     " in said.err
    assert said.out.splitlines() == [str(out), str(out.with_suffix(".srt")),
                                     str(out.with_suffix(".vtt")),
                                     str(tmp_path / "v.chapters.vtt")]  # the paths, one a line
    err = said.err
    main(args)
    err = capsys.readouterr().err
    assert "chapter 1 (input): cached" in err and "chapter 2 (linear layers): cached" in err
    assert out.read_bytes() == b"[cats ch1][cats ch2]"


def _counting_draws(monkeypatch) -> list[int]:
    """Counts every call of the camera that draws objects into a frame."""
    from attention_video.fastmanim.camera import PathCamera

    calls = [0]
    real = PathCamera.capture_mobjects

    def capture(self, *a, **k):
        calls[0] += 1
        return real(self, *a, **k)

    monkeypatch.setattr(PathCamera, "capture_mobjects", capture)
    return calls


def test_a_dry_run_draws_no_frame(monkeypatch):
    """Manim's renderer drew the static picture of every play even when skipping it: half
    of a dry run's time, for frames nobody reads."""
    calls = _counting_draws(monkeypatch)
    s = Settings(weights="random", sentence="cats drink milk")
    r = render_chapter(ChapterJob("softmax", build_trace(s), s, clip=None))
    assert r.subtitles and r.drawn
    assert calls[0] == 0


@pytest.mark.parametrize("chapter", ["input", pytest.param("dot", marks=pytest.mark.slow)])
def test_a_dry_run_records_what_the_render_records(chapter, tmp_path, monkeypatch):
    """What a dry run reports (the cache checks, --dry-run, the storyboard's captions and
    the tests) is what the rendered clip shows: captions and their times, numbers drawn,
    holds, length."""
    calls = _counting_draws(monkeypatch)
    s = Settings(weights="random", sentence="cats drink milk", quality="l")
    t = build_trace(s)
    dry = render_chapter(ChapterJob(chapter, t, s, clip=None))
    assert calls[0] == 0
    real = render_chapter(ChapterJob(chapter, t, s, clip=tmp_path / "clip.mp4",
                                     work_dir=tmp_path / "work"))
    assert calls[0] > 0 and (tmp_path / "clip.mp4").stat().st_size > 0
    assert [text for _, _, text in dry.subtitles] == [text for _, _, text in real.subtitles]
    # A render plays each animation in whole frames, a dry run in exact seconds: the times
    # stay within a frame (1/15 s at -q l), or 0.2% as the rounding adds up.
    frame, drift = 1 / 15, 2e-3
    times = [t for a, b, _ in real.subtitles for t in (a, b)]
    assert [t for a, b, _ in dry.subtitles for t in (a, b)] == pytest.approx(times, abs=frame, rel=drift)
    assert dry.holds == pytest.approx(real.holds, abs=frame, rel=drift)
    assert sorted(dry.drawn) == sorted(real.drawn)
    assert dry.off_frame == real.off_frame == []
    assert dry.duration == pytest.approx(real.duration, abs=frame, rel=drift)

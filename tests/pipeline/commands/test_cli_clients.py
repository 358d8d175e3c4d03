"""The command line as users of Manim's CLI expect it (cloup groups, --version, completion,
progress, stdout/stderr), the captions setting and its subtitle track (the real clients:
tests/pipeline/outputs/test_captions_clients.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.attncore.chapters import SCENE_SETTINGS
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.pipeline.commands import cli
from attention_video.pipeline.commands.progress import Reporter, plural
from attention_video.pipeline.outputs import audio
from attention_video.pipeline.outputs.formats import write_webm
from attention_video.pipeline.outputs.subtitles import (
    mov_text_cue,
    mov_text_payload,
    writes_sidecars,
)
from attention_video.pipeline.outputs.video import join, subtitle_track
from attention_video.pipeline.run import render as render_mod
from attention_video.pipeline.run.workers import InlineExecutor
from click.testing import CliRunner

from tests.pipeline.outputs.test_formats import make_clip
from tests.pipeline.run.test_pipeline import fake_join, fake_render


def test_help_has_option_groups_and_examples_in_the_called_name():
    out = CliRunner().invoke(cli.cli, ["--help"], prog_name="attention-video").output
    for group in ("What to say:", "Which model:", "How it looks:", "Outputs:", "Performance:",
                  "Files and other modes:", "Messages:"):
        assert group in out
    assert "--captions [burned|soft|both|none]" in out
    assert 'attention-video "The black cat drank the milk"' in out.split("Examples:")[1]
    assert "render.py" not in out


def test_version():
    r = CliRunner().invoke(cli.cli, ["--version"], prog_name="attention-video")
    assert r.exit_code == 0 and r.output.startswith("attention-video 0.")


def test_no_argument_prints_usage_and_an_example_not_a_render(capsys):
    with pytest.raises(SystemExit) as e:
        cli._main([])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Usage:" in err and "Example:" in err and "--help" in err


@pytest.mark.slow
def test_completion_prints_a_script_not_a_render():
    exe = Path(sys.executable).with_name("attention-video")
    if not exe.exists():
        pytest.skip("attention-video is not installed in this venv")
    env = dict(os.environ, _ATTENTION_VIDEO_COMPLETE="bash_source")
    r = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert "_attention_video_completion()" in r.stdout and "complete " in r.stdout


def test_quiet_and_verbose_refused_together():
    r = CliRunner().invoke(cli.cli, ["x", "--quiet", "--verbose"])
    assert r.exit_code == 2 and "contradict" in r.output


def test_reporter_plain_lines_off_a_terminal_and_nothing_when_quiet(tmp_path):
    log = tmp_path / "log"
    with open(log, "w") as f, Reporter("auto", f) as say:
        assert not say.live  # a file: plain lines
        say("chapters:  2 to play")
        say("  chapter 1 (input): cached")
    assert log.read_text().splitlines() == ["chapters:  2 to play", "  chapter 1 (input): cached"]
    with open(log, "w") as f, Reporter("quiet", f) as say:
        say("anything")
    assert log.read_text() == ""


def test_plural():
    assert plural(1, "chapter") == "1 chapter" and plural(2, "chapter") == "2 chapters"


def test_init_config_path_on_stdout_message_on_stderr(tmp_path):
    path = tmp_path / "c.toml"
    r = CliRunner().invoke(cli.cli, ["--init-config", str(path)])
    assert r.exit_code == 0
    assert r.stdout.strip() == str(path)
    assert f"wrote {path}" in r.stderr


def test_captions_setting_is_checked_and_keys_the_chapter_cache():
    assert Settings(sentence="a b").captions == "burned"
    assert "captions" in SCENE_SETTINGS  # it changes the picture: part of the cache key
    with pytest.raises(SettingsError, match="captions"):
        Settings(sentence="a b", captions="loud")
    r = CliRunner().invoke(cli.cli, ["a b", "--captions", "loud"])
    assert r.exit_code == 2


def test_sidecars_only_where_they_cannot_double_burned_captions():
    assert writes_sidecars("soft")
    assert not any(writes_sidecars(c) for c in ("burned", "both", "none"))


def test_mov_text_payload_round_trip():
    assert mov_text_cue(mov_text_payload("Σ é <b>")) == "Σ é <b>"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_reporter_on_a_terminal_counts_chapters_and_frames():
    stream = Terminal()
    with Reporter("auto", stream) as say:
        assert say.live
        say("chapters:  3 to play at 15 fps")
        say("  chapter 1 (input): cached")
        say("  chapter 2 (linear layers): rendered in 30.5 s (2.0 s of video); 1 to go")
        task = say._progress.tasks[0]
        assert (task.completed, task.total, task.fields["frames"]) == (2, 3, 30)
    assert "chapter 1 (input): cached" in stream.getvalue()  # the lines stay above the bar


def test_burned_writes_no_sidecar_and_names_one_left_from_before(tmp_path, monkeypatch, capsys):
    """Default (burned): the paths on stdout are the video's alone; an .srt already beside
    it is kept (an earlier output is never lost) and named, since VLC would add it."""
    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setattr(render_mod, "LocalPool", InlineExecutor)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "v.mp4"
    (tmp_path / "v.srt").write_text("mine", encoding="utf-8")
    cli.main(["cats drink milk", "--weights", "random", "--chapters", "1-2", "-o", str(out)])
    said = capsys.readouterr()
    assert said.out.splitlines() == [str(out)]
    assert not out.with_suffix(".vtt").exists()
    assert (tmp_path / "v.srt").read_text(encoding="utf-8") == "mine"
    assert f"note:      {tmp_path / 'v.srt'} is not this video's" in said.err
    assert said.err.count("weights:") == 1


def test_join_adds_the_track_with_the_video_copied_and_the_narration_kept(tmp_path):
    """A soft-captions join: video packets copied as they are, the AAC narration kept, a
    mov_text track with the cues; the WebM made from it carries them as WebVTT."""
    clips = [make_clip(tmp_path / f"{i}.mp4", 30) for i in range(2)]
    for clip in clips:
        n = 2 * audio.RATE
        audio.add_track(clip, (4000 * np.sin(np.arange(n) * 0.05)).astype(np.int16))
    cues = [(0.2, 1.5, "one <b> & {x}"), (2.0, 3.5, "two")]
    out = tmp_path / "v.mp4"
    join(clips, out, cues=cues, cues_on=True)
    with av.open(str(out)) as c:
        assert sorted(s.type for s in c.streams) == ["audio", "subtitle", "video"]
    with av.open(str(clips[0])) as a, av.open(str(out)) as b:
        first = [bytes(p) for p in a.demux(a.streams.video[0]) if p.size]
        joined = [bytes(p) for p in b.demux(b.streams.video[0]) if p.size]
    assert joined[:len(first)] == first  # stream copy: the same compressed frames
    got, on, language = subtitle_track(out)
    assert [t for _, _, t in got] == ["one <b> & {x}", "two"] and on and language == "eng"
    assert got[0][:2] == pytest.approx((0.2, 1.5))
    write_webm(out, tmp_path / "v.webm")
    got, on, _ = subtitle_track(tmp_path / "v.webm")
    assert [t for _, _, t in got] == ["one <b> & {x}", "two"] and on

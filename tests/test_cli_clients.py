"""The command line as users of Manim's CLI expect it (cloup groups, --version, completion,
progress, stdout/stderr), and --captions seen by real clients: VLC, Chromium, the notebook."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from attention_video.attncore.chapters import SCENE_SETTINGS
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.pipeline.commands import cli
from attention_video.pipeline.commands.progress import Reporter, plural
from attention_video.pipeline.outputs.subtitles import (
    mov_text_cue,
    mov_text_payload,
    writes_sidecars,
)
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]


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
    from attention_video.pipeline.run import render as render_mod
    from attention_video.pipeline.run.workers import InlineExecutor

    from tests.test_pipeline import fake_join, fake_render

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

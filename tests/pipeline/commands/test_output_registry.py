"""pipeline.commands.registry: an output is one row. A toy output whose row exists only in
this test gets its option in --help, reaches the request, is planned with the other
paths, is refused where no video is made, is taken by explain() and is written beside
the video, with no other file of the project knowing it."""

from __future__ import annotations

from pathlib import Path

import pytest
from attention_video.api import _check_outputs
from attention_video.pipeline.commands import app, registry
from attention_video.pipeline.commands.cli import make_command
from attention_video.pipeline.commands.modes import refused
from click.testing import CliRunner


def _write_note(job: registry.Job) -> None:
    path = job.video.with_suffix(".note.txt")
    path.write_text(f"{job.settings.sentence}\n", encoding="utf-8")
    job.wrote("note", path, "")


NOTE = registry.Output(
    "note", "extra",
    registry.Option(("--note",), "Also write the sentence into <stem>.note.txt beside the video."),
    files=lambda plan: {"the note": plan.video.with_suffix(".note.txt")},
    write=_write_note, python=bool)


@pytest.fixture
def command(monkeypatch):
    """The command as it is made with the toy row added to the table."""
    monkeypatch.setattr(registry, "OUTPUTS", (*registry.OUTPUTS, NOTE))
    return make_command()


@pytest.fixture
def handed(monkeypatch):
    """What the command hands to the library (its settings and request)."""
    seen = {}
    monkeypatch.setattr(app, "make_outputs",
                        lambda settings, request, **kw: seen.update(settings=settings,
                                                                    request=request))
    return seen


def test_the_row_alone_gives_the_command_its_option(command):
    out = CliRunner().invoke(command, ["--help"]).output
    outputs = " ".join(out.split("Outputs:")[1].split("Performance:")[0].split())
    assert "--note" in outputs and "<stem>.note.txt beside the video" in outputs


def test_the_toy_output_is_asked_planned_and_written(command, handed, tmp_path):
    video = tmp_path / "v.mp4"
    result = CliRunner().invoke(command, ["a b", "--weights", "random", "-o", str(video),
                                          "--note", "--slides"])
    assert result.exit_code == 0, result.output
    settings, request = handed["settings"], handed["request"]
    assert request.note is True and request == app.Request(note=True, slides=True)
    files, _ = app.planned_outputs(settings, request)
    assert files["the note"] == tmp_path / "v.note.txt"
    assert files["the video"] == video and "the HTML deck" in files
    # planned only where a video is made
    assert "the note" not in app.planned_outputs(settings, app.Request(note=True,
                                                                       dry_run=True))[0]
    video.write_bytes(b"")  # as the finished video: only its path is read
    shown: list[str] = []
    app.video_extras(settings, app.Request(note=True), [], video, say=shown.append,
                     show=shown.append)
    assert shown == [str(tmp_path / "v.note.txt")]
    assert (tmp_path / "v.note.txt").read_text(encoding="utf-8") == "a b\n"


def test_the_toy_output_is_refused_where_there_is_no_video(command, tmp_path):
    result = CliRunner().invoke(command, ["a b", "--storyboard", "--note"])
    assert result.exit_code == 2
    assert ("--storyboard makes stills instead of the video, and --note needs the video"
            in result.output)
    assert "--note" in refused({"lint": True, "note": True})
    assert "--note" in refused({"batch": Path("m.toml"), "note": True})
    assert refused({"note": True, "slides": True, "formats": "gif"}) is None


def test_explain_takes_the_toy_output_as_a_keyword(command):
    settings = {"note": True, "theme": "light"}
    made = _check_outputs({"slides": False, "formats": None}, settings)
    assert made == {"slides": False, "note": True} and settings == {"theme": "light"}
    with pytest.raises(ValueError, match="--storyboard makes stills instead of the video, "
                                         "and --note needs the video"):
        _check_outputs({"slides": False, "formats": None}, {"note": True, "storyboard": True})

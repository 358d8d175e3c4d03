"""Config files: the starter file, the shipped examples, and --watch."""

from __future__ import annotations

import json
import threading
import time
import tomllib

import pytest
from attention_video.attncore.chapters import CHAPTERS, SLUGS
from attention_video.attncore.settings import FIELD_NAMES, Settings, build_settings
from attention_video.pipeline.commands import app
from attention_video.pipeline.commands.cli import cli
from attention_video.pipeline.commands.starter import starter_text, write_starter
from attention_video.pipeline.commands.watch import watch_config
from click.testing import CliRunner

from tests.support.paths import ROOT

EXAMPLES = [p for p in sorted((ROOT / "examples").glob("*.toml"))
            if "video" not in tomllib.loads(p.read_text(encoding="utf-8"))]  # not --batch manifests


def test_starter_names_every_setting_with_help_and_loads_as_the_defaults(tmp_path):
    text = starter_text()
    for name in FIELD_NAMES:
        assert f"\n{name} = " in text or f"\n# {name} = " in text, name
    path = tmp_path / "s.toml"
    write_starter(path)
    s = build_settings(path)
    assert s == Settings()
    assert s.weights == "auto" and s.head == "auto"
    assert s.sentence == "The black cat drank the milk"


def test_starter_lists_exactly_the_chapters_of_the_table():
    text = starter_text()
    assert f"chapters = {json.dumps(list(SLUGS))}" in text
    for c in CHAPTERS:
        assert f"{c.number} {c.slug}" in text


@pytest.mark.parametrize("removed", SLUGS)
def test_a_starter_config_with_a_chapter_removed_works(tmp_path, removed):
    path = tmp_path / "lecture.toml"
    result = CliRunner().invoke(cli, ["--init-config", str(path)])
    assert result.exit_code == 0, result.output
    kept = [n for n in SLUGS if n != removed]
    text = path.read_text(encoding="utf-8")
    line = f"chapters = {json.dumps(list(SLUGS))}"
    assert line in text
    path.write_text(text.replace(line, f"chapters = {json.dumps(kept)}"), encoding="utf-8")
    assert app.make_settings(path, None, None, {}).chapters == tuple(kept)


def test_a_starter_switched_to_random_weights_follows_head_0(tmp_path):
    path = tmp_path / "s.toml"
    write_starter(path)
    text = path.read_text(encoding="utf-8").replace('weights = "auto"', 'weights = "random"')
    path.write_text(text, encoding="utf-8")
    s = build_settings(path)
    assert (s.weights, s.head) == ("random", 0) and s == Settings(weights="random")


def test_starter_never_overwrites(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("mine", encoding="utf-8")
    with pytest.raises(OSError, match="exists already"):
        write_starter(path)
    assert path.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_a_valid_config(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    s = build_settings(path)
    assert s.sentence == data["sentence"]


def test_examples_cover_the_promised_cases():
    names = {p.stem for p in EXAMPLES}
    assert {"default", "translation", "long", "chinese"} <= names


def test_watch_rerenders_on_save_and_survives_a_broken_config(tmp_path, monkeypatch):
    cfg = tmp_path / "lecture.toml"
    cfg.write_text('sentence = "one two"\nweights = "random"\n', encoding="utf-8")
    seen, messages = [], []
    monkeypatch.setattr(app, "make_outputs", lambda settings, *a, **kw: seen.append(settings.sentence))
    t = threading.Thread(target=watch_config, args=(cfg, {}),
                         kwargs=dict(poll=0.05, settle=0.15, max_renders=3, say=messages.append))
    t.start()

    def wait_for(cond):
        end = time.time() + 10
        while not cond() and time.time() < end:
            time.sleep(0.05)
        assert cond()

    wait_for(lambda: seen == ["one two"])
    for text in ('sentence = "three"\n', 'sentence = "three four"\nweights = "random"\n'):
        cfg.write_text(text, encoding="utf-8")  # a burst of saves: one render
        time.sleep(0.03)
    wait_for(lambda: seen == ["one two", "three four"])
    cfg.write_text('sentence = "five\n', encoding="utf-8")  # broken TOML
    t.join(timeout=10)
    assert not t.is_alive()
    assert seen == ["one two", "three four"]
    assert any("Error: config:" in m and "not valid TOML" in m for m in messages)


def test_watch_keeps_the_command_line_chapters_and_sentence_on_every_save(tmp_path, monkeypatch):
    cfg = tmp_path / "lecture.toml"
    cfg.write_text('weights = "random"\n', encoding="utf-8")
    seen = []
    monkeypatch.setattr(app, "make_outputs",
                        lambda settings, *a, **kw: seen.append((settings.sentence, settings.chapters)))
    t = threading.Thread(target=watch_config, args=(cfg, {"chapters": "1-2", "sentence": "a b"}),
                         kwargs=dict(poll=0.05, settle=0.1, max_renders=2, say=lambda m: None))
    t.start()
    end = time.time() + 10
    while not seen and time.time() < end:
        time.sleep(0.05)
    cfg.write_text('weights = "random"\ntheme = "light"\n', encoding="utf-8")
    t.join(timeout=10)
    assert not t.is_alive()
    assert seen == [("a b", ("input", "linear"))] * 2


def test_watch_makes_what_the_command_asked_for_on_every_save(tmp_path, monkeypatch):
    """--watch --storyboard --slides --format gif: each save makes the storyboard (or the
    video with its deck and GIF) again, not a bare video."""
    from attention_video.pipeline.commands import cli as cli_mod
    from attention_video.pipeline.commands import watch

    cfg = tmp_path / "lecture.toml"
    cfg.write_text('sentence = "cats drink milk"\nweights = "random"\n', encoding="utf-8")
    handed = {}
    monkeypatch.setattr(watch, "watch_config",
                        lambda config, flags, **kw: handed.update(config=config, **kw))
    result = CliRunner().invoke(cli_mod.cli, ["--watch", "--config", str(cfg), "--storyboard",
                                              "-o", str(tmp_path / "board.png")])
    assert result.exit_code == 0, result.output
    request = handed["request"]
    assert handed["config"] == cfg
    assert request.storyboard == str(tmp_path / "board.png")  # -o names its sheet
    result = CliRunner().invoke(cli_mod.cli, ["--watch", "--config", str(cfg), "--slides",
                                              "--format", "mp4,gif", "--no-cache"])
    assert result.exit_code == 0, result.output
    request = handed["request"]
    assert request.slides and request.formats == ("mp4", "gif") and not request.use_cache

    seen = []
    monkeypatch.setattr(app, "make_outputs", lambda settings, request, **kw: seen.append(request))
    watch_config(cfg, {}, request=app.Request(storyboard=True), poll=0.05, settle=0.05,
                 max_renders=1, say=lambda m: None)
    assert [r.storyboard for r in seen] == [True]


@pytest.mark.parametrize("flag", ["--list-heads", "--list-vocab", "--train-tiny"])
def test_watch_refuses_what_runs_once(tmp_path, flag):
    cfg = tmp_path / "lecture.toml"
    cfg.write_text('sentence = "cats drink milk"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--watch", "--config", str(cfg), flag])
    assert result.exit_code == 2 and "run once, without it" in result.output

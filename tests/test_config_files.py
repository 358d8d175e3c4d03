"""Config files: the starter file, the shipped examples, and --watch."""

from __future__ import annotations

import threading
import time
import tomllib
from pathlib import Path

import pytest

from attncore.settings import FIELD_NAMES, build_settings
from pipeline import cli as cli_mod
from pipeline.starter import starter_text, write_starter
from pipeline.watch import watch_config

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml"))


def test_starter_names_every_setting_with_help_and_loads_as_the_defaults(tmp_path):
    text = starter_text()
    for name in FIELD_NAMES:
        assert f"\n{name} = " in text or f"\n# {name} = " in text, name
    path = tmp_path / "s.toml"
    write_starter(path)
    s = build_settings(path)
    assert s.weights == "pretrained" and s.head == "auto"
    assert s.sentence == "The black cat drank the milk"


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
    monkeypatch.setattr(cli_mod, "run", lambda settings, **kw: seen.append(settings.sentence))
    t = threading.Thread(target=watch_config, args=(cfg, {}),
                         kwargs=dict(poll=0.05, settle=0.15, max_runs=3, say=messages.append))
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

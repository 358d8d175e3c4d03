"""Errors at the boundary (issue 30): the API names the argument, long values are cut in
error lines with their length given, a sentence in bytes that are not UTF-8 is refused in
one line, and --init-config puts a sentence typed with it in the starter file.

Before: explain(output=) said "build_settings() got multiple values"; a folder under a file
raised NotADirectoryError; a 10,000-character --query came back in a 10,075-character line;
"café" in Latin-1 became "caf" without a word; --init-config ignored the sentence.
"""

from __future__ import annotations

import os
import tomllib

import pytest
from attention_video.attncore.settings import SettingsError, build_settings, shown
from attention_video.pipeline.cache.paths import CACHE_ENV

from attention_video import api
from tests.pipeline.commands.test_cli import run_main


@pytest.fixture(autouse=True)
def nothing_renders(tmp_path, monkeypatch):
    """explain() must fail before any work: rendering or tracing here fails the test."""
    def started(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(api, "render_video", started)
    monkeypatch.setattr(api, "make_trace", started)


def test_explain_output_is_not_an_argument_and_says_which_is(tmp_path):
    with pytest.raises(TypeError) as info:
        api.explain("cats drink milk", weights="random", output=str(tmp_path / "x.mp4"))
    assert "output is not an argument; did you mean folder" in str(info.value)
    assert "build_settings" not in str(info.value)


def test_explain_folder_under_a_file_is_a_value_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError) as info:
        api.explain("cats drink milk", weights="random", folder=tmp_path / "file" / "videos")
    assert "folder" in str(info.value) and "a file, not a folder" in str(info.value)
    assert not isinstance(info.value, OSError)


def test_a_long_value_is_cut_in_the_error_line_with_its_length(capsys):
    code, _, err = run_main(["cats drink milk", "--weights", "random", "--query", "x" * 10_000,
                             "--dry-run"], capsys)
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith("Error: query:"), err
    assert len(line) < 300 and "10,000 characters" in line


def test_shown_cuts_only_long_values():
    assert shown("cat") == "'cat'"
    assert shown("é" * 500).endswith("… (500 characters)") and len(shown("é" * 500)) < 90


def latin1(text: str) -> str:
    """`text` typed in a Latin-1 terminal, as Python reads it from a UTF-8 locale's argv."""
    return os.fsdecode(text.encode("latin-1"))


def test_a_sentence_that_is_not_utf8_is_refused_in_one_line(capsys):
    sentence = latin1("the cat drank café")
    with pytest.raises(SettingsError) as info:
        build_settings(None, sentence=sentence, weights="random")
    assert info.value.field == "sentence" and "not valid UTF-8" in str(info.value)
    assert "0xe9" in str(info.value)
    code, _, err = run_main([sentence, "--weights", "random", "--chapters", "1", "--dry-run"],
                            capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not valid UTF-8" in err, err


def test_init_config_puts_the_sentence_typed_in_the_starter(tmp_path, capsys):
    path = tmp_path / "new.toml"
    code, _, err = run_main(["The dog chased the ball", "--init-config", str(path)], capsys)
    assert code == 0, err
    assert tomllib.loads(path.read_text(encoding="utf-8"))["sentence"] == "The dog chased the ball"
    assert "with the sentence given" in err
    code, _, err = run_main([latin1("café"), "--init-config", str(tmp_path / "b.toml")], capsys)
    assert code == 2 and "not valid UTF-8" in err and not (tmp_path / "b.toml").exists()


@pytest.mark.parametrize("name", ["v" * 10_000, "v/" * 3_000])
def test_a_long_voice_path_is_cut_in_its_one_line(capsys, name):
    code, _, err = run_main(["cats drink milk", "--weights", "random", "--dry-run",
                             "--voice", f"/tmp/{name}.onnx"], capsys)
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith("Error: voice:") and len(line) < 300, err
    assert f"({len(name) + 10:,} characters)" in line

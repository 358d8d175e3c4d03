"""The command line: each option reaches the settings, each error is one clear line."""

from __future__ import annotations

import json

import click
import pytest
from attention_video.attncore.chapters import SLUGS, describe
from attention_video.attncore.settings import LANGUAGES, QUALITIES, THEMES, WEIGHT_SOURCES, Settings
from attention_video.pipeline.commands import app
from attention_video.pipeline.commands.cli import cli, main
from click.testing import CliRunner

BEYOND = len(SLUGS) + 1  # the first number that is not a chapter


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return info.value.code or 0, out.out, out.err


@pytest.fixture
def captured(monkeypatch):
    """Replace the library call the command hands over to with a recorder of the
    settings and the request it was given."""
    seen = {}

    def fake_make_outputs(settings, request=None, **kwargs):
        seen["settings"], seen["request"] = settings, request

    monkeypatch.setattr(app, "make_outputs", fake_make_outputs)
    return seen


@pytest.mark.parametrize("args, field, value", [
    (["-q", "l"], "quality", "l"),
    (["--quality", "k"], "quality", "k"),
    (["-o", "out/v.mp4"], "output", "out/v.mp4"),
    (["--query", "cat"], "query", "cat"),
    (["--query-index", "4"], "query_index", 4),
    (["--target", "La bola es azul"], "target", "La bola es azul"),
    (["--chapters", "1,3,6"], "chapters", ("input", "factor", "weighted_sum")),
    (["--chapters", "2-4"], "chapters", ("linear", "factor", "dot")),
    (["--chapters", "dot,softmax"], "chapters", ("dot", "softmax")),
    (["--chapters", "summary,heads"], "chapters", ("heads", "summary")),
    (["--chapters", "8-10"], "chapters", ("learning", "heads", "summary")),
    (["--seed", "7"], "seed", 7),
    (["--d-model", "6"], "d_model", 6),
    (["--d-k", "3"], "d_k", 3),
    (["--heads", "2", "--d-model", "6"], "heads", 2),
    (["--head", "auto", "--weights", "pretrained"], "head", "auto"),
    (["--causal"], "causal", True),
    (["--no-softmax"], "softmax", False),
    (["--no-positional"], "positional", False),
    (["--theme", "light"], "theme", "light"),
    (["--language", "zh"], "language", "zh"),
    (["--max-tokens", "12"], "max_tokens", 12),
    (["--weights", "pretrained"], "weights", "pretrained"),
    (["--weights", "random"], "head", 0),
    (["--layer", "3", "--weights", "pretrained"], "layer", 3),
    (["--pace", "1.25"], "pace", 1.25),
    (["--voice", "joe"], "voice", "joe"),
    (["--voice", "voices/zh_CN-x.onnx", "--language", "zh"], "voice", "voices/zh_CN-x.onnx"),
])
def test_each_option_reaches_the_settings(captured, args, field, value):
    result = CliRunner().invoke(cli, ["The black cat drank the milk", *args])
    assert result.exit_code == 0, result.output
    assert getattr(captured["settings"], field) == value


def test_the_command_without_options_means_the_default_settings(captured):
    result = CliRunner().invoke(cli, [])
    assert result.exit_code == 0, result.output
    assert captured["settings"] == Settings()
    assert (captured["settings"].weights, captured["settings"].head) == ("auto", "auto")


def test_run_options_reach_the_pipeline(captured, tmp_path):
    result = CliRunner().invoke(cli, ["a b", "--dry-run", "--no-cache", "-j", "2",
                                      "--export-json", str(tmp_path / "t.json")])
    assert result.exit_code == 0, result.output
    assert captured["request"] == app.Request(export_json=tmp_path / "t.json", dry_run=True,
                                              jobs=2, use_cache=False)


@pytest.mark.parametrize("option, allowed", [
    ("quality", list(QUALITIES)), ("theme", list(THEMES)), ("language", list(LANGUAGES)),
    ("weights", list(WEIGHT_SOURCES)),
])
def test_choices_are_the_settings_own(option, allowed):
    param = next(p for p in cli.params if p.name == option)
    assert isinstance(param.type, click.Choice) and list(param.type.choices) == allowed


def test_flags_override_the_config_file(captured, tmp_path):
    cfg = tmp_path / "v.toml"
    cfg.write_text('sentence = "The ball is blue"\nquality = "m"\nseed = 3\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(cfg), "-q", "l"])
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert (s.sentence, s.quality, s.seed) == ("The ball is blue", "l", 3)


@pytest.mark.parametrize("args, expect", [
    (["   "], "sentence: the sentence is empty"),
    (["-q", "x", "a b"], "'x' is not one of"),
    (["a b", "--chapters", "12"], f"12 is not a chapter; allowed: {describe()}"),
    (["a b", "--chapters", f"{BEYOND}"], f"chapters: {BEYOND} is not a chapter; allowed: {describe()}"),
    (["a b", "--chapters", f"1,{BEYOND}"], f"{BEYOND} is not a chapter"),
    (["a b", "--list-heads", "--weights", "random"], "--list-heads needs --weights pretrained"),
    (["a b", "--theme", "neon"], "'neon' is not one of"),
    (["a b", "--language", "fr"], "'fr' is not one of"),
    (["a b", "--d-model", "0"], "d_model: 0 is out of range; allowed: 1 to 64"),
    (["a b", "--heads", "-1"], "heads: -1 is out of range"),
    (["a b", "--d-model", "6", "--heads", "4"], "not divisible by heads"),
    (["The cat sat", "--query", "dgo"], "'dgo' is not in the sentence"),
    (["The cat sat", "--query-index", "9", "--weights", "random"],
     "query_index: 9 is out of range; allowed: 0 to 2"),
    (["The cat sat", "--query-index", "9"], "query_index: 9 is out of range; allowed: 0 to 4 (0 is [CLS])"),
    (["a b", "--config", "/nonexistent/x.toml"], "config: /nonexistent/x.toml does not exist"),
    (["a b", "--max-tokens", "2", "--sentence-typo"], "No such option"),
    (["one two three", "--max-tokens", "2", "--weights", "random"], "3 tokens; the limit is 2"),
    (["a b", "--layer", "6"], "layer"),
    (["a b", "--model", "/nonexistent/model"], "model:"),
    (["a b", "--head", "x"], "'x' is not a head number or 'auto'"),
    (["a b", "--pace", "fast"], "'fast' is not a valid float"),
    (["a b", "--pace", "0"], "pace: 0.0 is out of range; allowed: 0.5 to 2"),
    (["a b", "--pace", "-1.25"], "pace: -1.25 is out of range"),
    (["a b", "--pace", "inf"], "pace: inf is out of range"),
    (["a b", "--pace", "nan"], "pace: nan is out of range"),
    (["a b", "--voice", "bob"], "voice: 'bob' is neither a voice name nor a Piper voice file"),
    (["a b", "--voice", "joe", "--language", "zh"], "voice: the joe voice speaks English"),
])
def test_each_error_is_one_clear_line_and_a_nonzero_exit(capsys, args, expect):
    code, out, err = run_main(args, capsys)
    assert code != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert expect in lines[0]
    assert "Traceback" not in err


def test_bad_toml_reports_the_line(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('sentence = "ok"\nquality = \n', encoding="utf-8")
    code, _, err = run_main(["--config", str(cfg)], capsys)
    assert code == 2 and "line 2" in err and len(err.strip().splitlines()) == 1


def test_unknown_config_key_suggests_the_closest(tmp_path, capsys):
    cfg = tmp_path / "typo.toml"
    cfg.write_text('sentense = "ok"\n', encoding="utf-8")
    code, _, err = run_main(["--config", str(cfg)], capsys)
    assert code == 2 and "did you mean 'sentence'" in err


def test_output_in_an_unwritable_place_fails_before_rendering(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run_main(["a b", "-o", str(blocker / "sub" / "v.mp4")], capsys)
    assert code == 1 and "is a file" in err and len(err.strip().splitlines()) == 1


def test_dry_run_builds_and_exports_the_trace(tmp_path, capsys):
    out = tmp_path / "trace.json"
    code, _, err = run_main(["The cat sat", "--dry-run", "--chapters", "1", "--weights", "random",
                             "--export-json", str(out), "--export-csv", str(tmp_path / "csv")],
                            capsys)
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [t["text"] for t in data["key_tokens"]] == ["The", "cat", "sat"]
    assert (tmp_path / "csv" / "head0_weights.csv").exists()
    assert "chapter 1 (input): builds" in err


@pytest.mark.slow
@pytest.mark.parametrize("captions, sidecars", [("burned", False), ("soft", True)])
def test_dry_run_says_what_the_run_would_write_and_writes_none_of_it(tmp_path, capsys,
                                                                     captions, sidecars):
    video = tmp_path / "talk.mp4"
    code, _, err = run_main(["The cat sat", "--dry-run", "--chapters", "1", "--weights", "random",
                             "--page", "--slides", "--captions", captions, "-o", str(video)],
                            capsys)
    assert code == 0, err
    assert f"dry run: would write the video to {video} (nothing written)" in err
    assert f"would write the companion page to {tmp_path / 'talk.page.html'}" in err
    assert f"to {tmp_path / 'talk.html'}" in err  # the deck
    assert (f"would write the subtitles to {tmp_path / 'talk.srt'}" in err) == sidecars
    assert list(tmp_path.iterdir()) == []

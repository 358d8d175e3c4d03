"""Bad inputs of every kind end in one true line (field, what is wrong, what is allowed)
and a non-zero exit; the catch-all in main() is a guard that says "bug" and saves the
traceback, never a bare exception class."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from attention_video.attncore import Settings, SettingsError
from attention_video.attncore.build import settings_for
from attention_video.attncore.pretrained.checkpoint import read_config
from attention_video.pipeline.commands import app
from attention_video.pipeline.commands.cli import main
from attention_video.pipeline.outputs.video import join, probe

from tests.attncore.test_pretrained_loader import write_checkpoint
from tests.pipeline.outputs.test_pipeline_video import make_clip

SENTENCE = "The black cat drank the milk"  # every word in the tiny model's vocabulary


def run_main(args: list[str], capsys) -> tuple[int, str]:
    """Exit code and the one stderr line (asserted to be one, without a traceback)."""
    with pytest.raises(SystemExit) as info:
        main(args)
        raise SystemExit(0)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return info.value.code or 0, lines[0]


def one_error(args: list[str], capsys) -> str:
    code, line = run_main(args, capsys)
    assert code != 0 and line.startswith("Error: ") and "this is a bug" not in line, line
    return line


# ---- a checkpoint's config.json ---------------------------------------------------------
GOOD = {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2,
        "num_hidden_layers": 2, "intermediate_size": 12, "vocab_size": 17}


@pytest.mark.parametrize("config, words", [
    ([1, 2], "holds a JSON list; it must be an object"),
    ("bert", "holds a JSON str; it must be an object"),
    (None, "holds a JSON NoneType"),
    (dict(GOOD, num_attention_heads=0), "num_attention_heads is 0; allowed: at least 1"),
    (dict(GOOD, hidden_size=-8), "hidden_size is -8; allowed: at least 1"),
    (dict(GOOD, num_hidden_layers="two"), "num_hidden_layers is 'two'; allowed: a whole number"),
    (dict(GOOD, vocab_size=1.5), "vocab_size is 1.5; allowed: a whole number"),
    (dict(GOOD, intermediate_size=True), "intermediate_size is True; allowed: a whole number"),
    (dict(GOOD, num_attention_heads=3), "not divisible by num_attention_heads 3; allowed: a multiple"),
    (dict(GOOD, layer_norm_eps="tiny"), "layer_norm_eps is 'tiny'; allowed: a number between 0 and 1"),
    (dict(GOOD, layer_norm_eps=0), "layer_norm_eps is 0"),
    (dict(GOOD, model_type=["bert"]), "model_type is ['bert']; only 'bert'"),
    (dict(GOOD, hidden_act={"x": 1}), "hidden_act is {'x': 1}; only the exact (erf) 'gelu'"),
    ({k: v for k, v in GOOD.items() if k != "vocab_size"}, "lacks 'vocab_size'; it is required"),
])
def test_a_bad_config_json_names_the_field_and_what_is_allowed(tmp_path, config, words):
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        read_config(tmp_path)
    assert info.value.field == "model" and words in info.value.message
    assert str(tmp_path / "config.json") in info.value.message


@pytest.mark.parametrize("text", ["{", "\xff\xfe", ""])
def test_a_config_json_that_is_not_json_is_a_settings_error(tmp_path, text):
    (tmp_path / "config.json").write_bytes(text.encode("latin-1"))
    with pytest.raises(SettingsError, match="config.json cannot be read"):
        read_config(tmp_path)


def test_a_checkpoint_with_zero_heads_is_one_line_from_the_command(tmp_path, capsys):
    write_checkpoint(tmp_path / "m")
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    (tmp_path / "m" / "config.json").write_text(json.dumps(dict(cfg, num_attention_heads=0)))
    line = one_error(["the cat", "--weights", "pretrained", "--model", str(tmp_path / "m"),
                      "--dry-run"], capsys)
    assert "model: " in line and "num_attention_heads is 0" in line


def test_a_config_json_that_is_a_list_is_one_line_from_the_command(tmp_path, capsys):
    write_checkpoint(tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text("[]")
    line = one_error(["the cat", "--weights", "pretrained", "--model", str(tmp_path / "m"),
                      "--dry-run"], capsys)
    assert "holds a JSON list; it must be an object" in line


# ---- --config files ---------------------------------------------------------------------
def test_a_device_is_refused_before_it_is_read(capsys):
    line = one_error(["--config", "/dev/zero"], capsys)
    assert "config: /dev/zero is not a regular file" in line


def test_a_huge_config_is_refused_before_it_is_read(tmp_path, capsys):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate((1 << 20) + 1)  # sparse: costs no disk
    line = one_error(["--config", str(big)], capsys)
    assert "may be at most 1,048,576 bytes (1 MiB)" in line


def test_a_config_with_a_byte_order_mark_is_read(tmp_path):
    cfg = tmp_path / "windows.toml"
    cfg.write_bytes(b'\xef\xbb\xbfsentence = "The ball is blue"\nquality = "l"\n')
    s = app.make_settings(cfg, None, None, {})
    assert (s.sentence, s.quality) == ("The ball is blue", "l")


# ---- options the weight source cannot read ----------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["--weights", "random", "--layer", "2"], "layer: --layer applies only to --weights pretrained"),
    (["--weights", "tiny", "--layer", "1"], "with --weights tiny"),
    (["--weights", "random", "--model", "/x"], "model: --model applies only to --weights pretrained"),
    (["--weights", "pretrained", "--d-k", "2"], "d_k: --d-k applies only to --weights random or tiny"),
    (["--weights", "pretrained", "--seed", "3"], "seed: --seed applies only to --weights random or tiny"),
    (["--weights", "pretrained", "--d-model", "8"], "d_model: --d-model applies only"),
    (["--weights", "pretrained", "--heads", "2", "--d-model", "8"], "applies only to --weights random"),
    (["--target", "La bola", "--layer", "1"], "a target sentence or causal masking"),
    (["--causal", "--model", "/x"], "(--weights auto then uses"),
])
def test_an_option_the_weights_cannot_read_is_refused(args, words, capsys):
    line = one_error([SENTENCE, *args, "--dry-run"], capsys)
    assert words in line


def test_auto_says_first_which_options_it_ignores():
    lines: list[str] = []
    app.make_trace(Settings(sentence=SENTENCE, layer=1), say=lines.append)
    assert lines[0].startswith("ignored:   --layer: --weights auto chose the tiny model")


def test_auto_drops_what_the_pretrained_model_does_not_read():
    s = settings_for(Settings(sentence="x y", seed=3, d_model=8, heads=2, d_k=3), "pretrained")
    assert (s.weights, s.seed, s.d_model, s.heads, s.d_k) == ("pretrained", 0, 4, 1, None)


# ---- outputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("name, words", [
    ("video.txt", "'.txt' is not a video extension; allowed: .mp4, .mov"),
    ("video.srt", "'.srt' is not a video extension"),
    ("video", "it has no extension; allowed: .mp4, .mov"),
])
def test_only_video_extensions_are_accepted(tmp_path, name, words, capsys):
    line = one_error(["a b", "--weights", "random", "-o", str(tmp_path / name)], capsys)
    assert line.startswith("Error: output: ") and words in line
    assert list(tmp_path.iterdir()) == []


def test_mov_output_is_a_mov_container(tmp_path):
    clips = [make_clip(tmp_path / f"c{i}.mp4", 3, 60 * i) for i in (1, 2)]
    out = tmp_path / ".v.mov.abc.part"  # the temporary name the pipeline writes to
    join(clips, out, container="mov")
    assert probe(out).frames == 6
    assert out.read_bytes()[4:12] == b"ftypqt  "  # QuickTime brand, not the MP4 one


def test_an_export_on_the_video_path_is_refused(tmp_path, capsys):
    out = tmp_path / "v.mp4"
    line = one_error(["a b", "--weights", "random", "-o", str(out), "--export-json", str(out)],
                     capsys)
    assert "the video and --export-json would both be written to" in line


def test_a_subtitle_path_that_is_a_folder_is_named(tmp_path, capsys):
    (tmp_path / "v.srt").mkdir()
    line = one_error(["a b", "--weights", "random", "-o", str(tmp_path / "v.mp4"),
                      "--chapters", "1"], capsys)
    assert f"{tmp_path / 'v.srt'}, which is a folder" in line and ".part" not in line


# ---- outputs that would overwrite each other: refused before anything is made ---------
COLLISIONS = {  # the command's outputs besides -a b --weights random -q l; the roles named
    "json-on-the-captions": (["-o", "x.mp4", "--export-json", "x.vtt"],
                             "the captions and --export-json would both be written to x.vtt"),
    "json-on-the-handout": (["--storyboard", "-o", "b.png", "--export-json", "b.pdf"],
                            "the PDF handout and --export-json would both be written to b.pdf"),
    "json-on-the-gif": (["-o", "x.mp4", "--format", "gif", "--export-json", "x.gif"],
                        "the GIF and --export-json would both be written to x.gif"),
    "json-on-the-deck": (["-o", "x.mp4", "--slides", "--export-json", "x.pptx"],
                         "the PPTX deck and --export-json would both be written to x.pptx"),
    "json-on-the-subtitles": (["-o", "x.mp4", "--export-json", "x.srt"],
                              "the subtitles and --export-json would both be written to x.srt"),
    "csv-folder-on-the-webm": (["-o", "x.mp4", "--format", "webm", "--export-csv", "x.webm"],
                               "the WEBM and --export-csv would both be written to x.webm"),
    "json-on-the-storyboard": (["--storyboard", "-o", "b.png", "--export-json", "b.png"],
                               "the storyboard and --export-json would both be written to b.png"),
    "the-same-file-spelt-twice": (["-o", "x.mp4", "--export-json", "./sub/../x.vtt"],
                                  "the captions and --export-json would both be written to"),
}


@pytest.mark.parametrize("name", COLLISIONS)
def test_two_outputs_on_one_path_are_refused_before_anything_is_written(tmp_path, capsys,
                                                                         monkeypatch, name):
    """Before, --export-json x.vtt beside -o x.mp4 was replaced by the WebVTT captions and
    --storyboard -o b.png --export-json b.pdf by the handout, without a word."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    args, words = COLLISIONS[name]
    line = one_error(["a b", "--weights", "random", "-q", "l", "--chapters", "1", *args], capsys)
    assert words in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]  # nothing written


def test_a_deck_path_that_is_a_folder_is_refused_before_the_video_is_made(tmp_path, capsys):
    """Before, the video, .srt and .vtt were written (an earlier video lost) and then the
    run failed on talk.html."""
    (tmp_path / "talk.html").mkdir()
    (tmp_path / "talk.mp4").write_bytes(b"earlier video")
    line = one_error(["a b", "--weights", "random", "-q", "l", "--chapters", "1", "--slides",
                      "-o", str(tmp_path / "talk.mp4")], capsys)
    assert f"the HTML deck goes to {tmp_path / 'talk.html'}, which is a folder" in line
    assert (tmp_path / "talk.mp4").read_bytes() == b"earlier video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["talk.html", "talk.mp4"]


@pytest.mark.parametrize("extra, named", [(["--slides"], "--slides needs"),
                                          (["--format", "gif"], "--format needs"),
                                          (["--slides", "--format", "gif"],
                                           "--slides and --format need")])
def test_a_storyboard_with_a_deck_or_formats_is_refused(tmp_path, capsys, extra, named):
    """Before, --storyboard --slides made the storyboard and silently no deck."""
    line = one_error(["a b", "--weights", "random", "--storyboard", "-o",
                      str(tmp_path / "b.png"), *extra], capsys)
    assert "--storyboard makes stills instead of the video" in line and named in line
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_a_folder_says_so(tmp_path, capsys):
    """Before: "it has no extension"."""
    line = one_error(["a b", "--weights", "random", "-o", str(tmp_path)], capsys)
    assert f"{tmp_path} is a folder; give a video file path such as" in line


def test_atomic_output_onto_a_folder_names_the_folder(tmp_path):
    from attention_video.pipeline.outputs.files import OutputError, atomic_output

    (tmp_path / "x.srt").mkdir()
    with pytest.raises(OutputError, match=re.escape(f"{tmp_path / 'x.srt'} is a folder")):
        with atomic_output(tmp_path / "x.srt") as tmp:
            tmp.write_text("1")


def test_a_cache_folder_that_cannot_be_made_says_how_to_choose_another(tmp_path, monkeypatch,
                                                                        capsys):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "file" / "cache"))
    line = one_error(["a b", "--weights", "random", "-o", str(tmp_path / "v.mp4")], capsys)
    assert f"the cache folder {tmp_path / 'file' / 'cache'} cannot be created" in line
    assert "ATTENTION_CACHE_DIR" in line


def test_a_reversed_chapter_range_says_so(capsys):
    line = one_error(["a b", "--chapters", "3-1"], capsys)
    assert "the range '3-1' is reversed; write it in story order, as 1-3" in line


# ---- the guard --------------------------------------------------------------------------
def test_the_catch_all_says_bug_and_saves_the_traceback(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a slip")

    monkeypatch.setattr(app, "make_outputs", broken)
    code, line = run_main(["a b", "--weights", "random"], capsys)
    assert code == 1 and "this is a bug, please report it" in line
    assert "`render.py 'a b' --weights random`" in line and "ZeroDivisionError" not in line
    saved = Path(line.rsplit(" ", 1)[1])
    assert saved.parent == tmp_path / "crashes"
    assert "ZeroDivisionError: a slip" in saved.read_text()

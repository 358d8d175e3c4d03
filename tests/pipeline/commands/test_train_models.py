"""pipeline.commands.train_models, the command that trains a shipped model and writes its file: both
models train and write a file that loads back as the model attncore's train() returns, the
retrain command a file stores parses back to its settings, bad sizes are one line, and
`python -m attention_video.pipeline.commands.train_models` runs under that name."""

from __future__ import annotations

import functools
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from attention_video.attncore.tiny import store as tiny_store
from attention_video.attncore.tiny.config import TrainConfig as TinyConfig
from attention_video.attncore.translate import store as translation_store
from attention_video.attncore.translate.config import TrainConfig as TranslationConfig
from attention_video.pipeline.commands import train_models

from tests.attncore import test_tiny, test_translate
from tests.support.paths import ROOT


def test_the_tiny_model_trains_and_writes_a_loadable_file(tmp_path, monkeypatch, capsys):
    short = test_tiny.SHORT
    fast = functools.partial(TinyConfig, **{k: v for k, v in short.to_dict().items()
                                            if k not in ("seed", "d_model", "heads", "restarts")})
    monkeypatch.setattr(train_models, "TinyConfig", fast)
    out = tmp_path / "tiny.safetensors"
    assert train_models.main(["tiny", "--seed", "5", "--restarts", "3", "--out", str(out)]) == 0
    written = out.read_bytes()
    assert written == tiny_store.to_bytes(test_tiny.short_model())
    assert tiny_store.from_bytes(written).train_config == short
    printed = capsys.readouterr().out
    assert "replaced-object accuracy" in printed and "milk" in printed and str(out) in printed
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.safetensors"]  # no temporary left


def test_the_translation_model_trains_and_writes_a_loadable_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(train_models, "TranslationConfig", lambda **kw: test_translate.SHORT)
    out = tmp_path / "m.safetensors"
    assert train_models.main(["translate", "--seed", "5", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "exact match" in printed.out and "wrote" in printed.out and "/" in printed.err
    assert out.read_bytes() == translation_store.to_bytes(test_translate.short_model())


@pytest.mark.parametrize("store, config, model", [
    (tiny_store, TinyConfig(seed=3, d_model=8, heads=2, restarts=4), "tiny"),
    (tiny_store, TinyConfig(), "tiny"),
    (translation_store, TranslationConfig(seed=2, restarts=5), "translate"),
])
def test_the_command_a_file_stores_trains_the_same_settings(store, config, model):
    command = store.command(config)
    prefix = f"python -m attention_video.pipeline.commands.train_models {model} "
    assert command.startswith(prefix) and command.endswith(" --out PATH")
    args = train_models._parser().parse_args([model, *shlex.split(command[len(prefix):])])
    if model == "tiny":
        again = TinyConfig(seed=args.seed, d_model=args.d_model, heads=args.heads,
                           restarts=args.restarts)
    else:
        again = TranslationConfig(seed=args.seed, restarts=args.restarts)
    assert again == config and args.out == "PATH"


def test_a_setting_the_command_line_cannot_give_is_named_as_a_call():
    c = TinyConfig(steps=10)
    assert tiny_store.command(c) == "attncore.tiny.train.train(TrainConfig(**metadata['train']))"


@pytest.mark.parametrize("argv, field", [(["tiny", "--heads", "5"], "heads"),
                                         (["tiny", "--d-model", "6", "--heads", "4"], "d_model"),
                                         (["translate", "--restarts", "0"], "restarts")])
def test_bad_settings_are_one_line_naming_the_field(argv, field, capsys):
    with pytest.raises(SystemExit) as stop:
        train_models.main([*argv, "--out", "never.safetensors"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {field}" in err and "Traceback" not in err
    assert not Path("never.safetensors").exists()


def test_it_runs_as_python_m_pipeline_train_models():
    out = subprocess.run([sys.executable, "-m", "attention_video.pipeline.commands.train_models", "--help"],
                         capture_output=True, text=True, cwd=ROOT, check=True, timeout=60)
    assert "usage: python -m attention_video.pipeline.commands.train_models" in out.stdout
    assert "tiny" in out.stdout and "translate" in out.stdout

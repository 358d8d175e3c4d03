"""Fuzzing every input a user hands over: a settings TOML file, a checkpoint's config.json,
and the words of the labels. Each case ends in success or in a one-line SettingsError that
names the field; never in another exception (which the command's catch-all would report as
a bug). Small example counts keep the whole module to a few seconds."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path

import pytest
from attention_video.attncore.pretrained.checkpoint import load_checkpoint, read_config
from attention_video.attncore.settings import FIELD_NAMES, SettingsError, build_settings
from attention_video.scenes.text import built_text, is_stand_in, make_text
from attention_video.scenes.themes import THEMES
from attention_video.scenes.widgets import make_label, make_sub
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.attncore.test_pretrained_loader import write_checkpoint
from tests.support.examples import examples

FAST = settings(max_examples=examples(40), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def one_line_error(e: SettingsError, field: str | None = None) -> None:
    text = str(e)
    assert "\n" not in text and text.strip(), f"not one line: {text!r}"
    assert e.field and (text.startswith(f"{e.field}: ") or text.startswith(f"{e.field!r}: ")), text
    if field is not None:
        assert e.field == field, text


# ---- settings TOML ------------------------------------------------------------------------
def toml_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)  # a TOML basic string is JSON's


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) \
            else repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


SCALARS = (st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12)
           | st.sampled_from(["auto", "dark", "zh", "m", "tiny", "random", "pretrained", "out.mp4",
                              "cat", "the cat", "", "x.txt"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
KEYS = st.sampled_from(FIELD_NAMES) | st.text(min_size=1, max_size=10)


def build_from(text: str | bytes):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "settings.toml"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        return build_settings(p)


def builds_or_names_the_field(text: str | bytes) -> bool:
    """True when the file builds settings; a SettingsError must be one line naming a
    field (anything else propagates and fails the test)."""
    try:
        build_from(text)
    except SettingsError as e:
        one_line_error(e)
        return False
    return True


@pytest.mark.slow
@FAST
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_toml_table_builds_or_is_one_settings_error(table):
    built = builds_or_names_the_field("\n".join(f"{toml_key(k)} = {toml_value(v)}"
                                                for k, v in table.items()))
    assert built or table  # an empty file is the default settings


@FAST
@given(st.dictionaries(st.sampled_from(FIELD_NAMES), VALUES, min_size=1, max_size=4))
def test_known_fields_with_any_value_build_or_name_the_field(table):
    text = "\n".join(f"{k} = {toml_value(v)}" for k, v in table.items())
    try:
        build_from(text)
    except SettingsError as e:
        one_line_error(e)
        assert e.field in set(table) | {"config", "chapters", "sentence"} | set(FIELD_NAMES)


@FAST
@given(st.binary(max_size=60) | st.text(max_size=60))
def test_any_bytes_as_a_settings_file_build_or_are_one_settings_error(data):
    assert builds_or_names_the_field(data) or len(data) > 0  # an empty file: the defaults


def test_a_deeply_nested_toml_file_is_one_settings_error():
    assert not builds_or_names_the_field("a = " + "[" * 5000 + "]" * 5000)


# ---- a checkpoint's config.json -------------------------------------------------------------
VALID = {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2,
         "num_hidden_layers": 2, "intermediate_size": 12, "hidden_act": "gelu",
         "layer_norm_eps": 1e-12, "max_position_embeddings": 16, "vocab_size": 17,
         "type_vocab_size": 2}
JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**70), 2**70)
                    | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
CONFIG_KEYS = st.sampled_from(sorted(VALID) + ["position_embedding_type"]) | st.text(max_size=8)


@pytest.fixture(scope="module")
def checkpoint_folder():
    d = Path(tempfile.mkdtemp(prefix="fuzz-ckpt-"))
    write_checkpoint(d / "model")
    yield d / "model"
    shutil.rmtree(d, ignore_errors=True)


def loads_or_names_the_model(folder: Path, config_text: str) -> bool:
    """True when the config reads; a SettingsError must be one line naming the model and
    its config.json (anything else propagates and fails the test)."""
    (folder / "config.json").write_text(config_text, encoding="utf-8")
    try:
        read_config(folder)
    except SettingsError as e:
        one_line_error(e, "model")
        assert "config.json" in str(e)
        return False
    return True


@FAST
@given(JSON)
def test_any_json_as_config_is_read_or_one_model_error(checkpoint_folder, value):
    loaded = loads_or_names_the_model(checkpoint_folder, json.dumps(value))
    assert not loaded or isinstance(value, dict)  # only a JSON object can be a config


@FAST
@given(st.dictionaries(CONFIG_KEYS, JSON, max_size=4), st.sets(st.sampled_from(sorted(VALID))))
def test_a_mutated_config_loads_or_names_the_model(checkpoint_folder, changes, dropped):
    """The tiny checkpoint's own config with fields changed or left out: read_config and the
    whole load (whose shapes must then match the weights) end in success or one line."""
    cfg = {k: v for k, v in VALID.items() if k not in dropped}
    cfg.update(changes)
    loaded = loads_or_names_the_model(checkpoint_folder, json.dumps(cfg))
    assert loaded or changes or dropped  # the untouched config always loads
    try:
        load_checkpoint(str(checkpoint_folder), "fuzz")
    except SettingsError as e:
        one_line_error(e, "model")


@FAST
@given(st.text(max_size=40) | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
def test_any_text_as_config_is_read_or_one_model_error(checkpoint_folder, text):
    loaded = loads_or_names_the_model(checkpoint_folder, text)
    assert not loaded or text.lstrip("\ufeff \t\n\r").startswith("{")


def test_a_deeply_nested_config_json_is_one_model_error(checkpoint_folder):
    assert not loads_or_names_the_model(checkpoint_folder, "[" * 100_000)


# ---- the words of the labels ----------------------------------------------------------------
INTERESTING = st.sampled_from(list(
    "aZ9 猫고양القطשלוםनमस्तेแมว🐈😀❤👍🏽🇫🇷🫠⌚©→"
    "\u200d\ufe0f\ufe0e\u20e3\u0301\u200f\u202e"
    "\U000e0067\U000e007f<>&'\"\\%{}\t\n\x00\x7f\u00ad\u2028"))
WORDS = st.text(INTERESTING | st.characters(codec="utf-8"), min_size=1, max_size=8)


@settings(max_examples=examples(60), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(WORDS)
def test_any_word_draws_something_on_every_label_path(word):
    theme = THEMES["dark"]
    label = make_text(word, 24, theme.text, muted=theme.muted)
    assert label.family_members_with_points(), f"{word!r} drew an empty object"
    assert label.width > 0 and label.height > 0
    if word.strip():
        assert built_text(word, 24.0).width > 0
    is_stand_in(word, 24)
    chip = make_label(word, 24, theme.accent, theme)
    assert chip.width > 0
    sub = make_sub("Z", word, 24, theme.text, theme.muted)  # aligns to the word's bottom
    assert sub.width > label.width * 0.1

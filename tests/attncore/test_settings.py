"""attncore.settings: one typed object, from flags or TOML (flags win), validated once,
each invalid value with its own error naming the field and what is allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attention_video.attncore.chapters import SLUGS, describe
from attention_video.attncore.settings import (
    ALL_CHAPTERS,
    FIELD_NAMES,
    Settings,
    SettingsError,
    build_settings,
    default_head,
    parse_chapters,
    read_toml,
)

BEYOND = len(SLUGS) + 1  # the first number that is not a chapter

R = dict(weights="random")  # the small untrained model, whose sizes the settings choose
CHAPTER_LIST = describe()  # '1-10, or by name: input, …': what the errors say is allowed


def error(**values) -> SettingsError:
    with pytest.raises(SettingsError) as info:
        Settings(**values)
    return info.value


def write(tmp_path: Path, text: str, name: str = "video.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_defaults_are_valid_and_make_the_readme_video():
    s = Settings()
    assert s.sentence == "The black cat drank the milk"
    assert (s.weights, s.head, s.layer, s.quality) == ("auto", "auto", 0, "h")
    assert s.chapters == ALL_CHAPTERS == SLUGS


def test_random_weights_default_to_a_small_model_and_head_0():
    s = Settings(**R)
    assert (s.weights, s.head, s.d_model, s.heads, s.dk, s.seed) == ("random", 0, 4, 1, 4, 0)
    assert s.d_model <= 6 and s.dk <= 6  # every number fits on screen


def test_the_default_head_follows_the_weights_and_a_given_head_stays():
    assert default_head("pretrained") == "auto" and default_head("random") == 0
    assert default_head("auto") == "auto" and default_head("tiny") == "auto"
    assert Settings(head=None).head == "auto" and Settings(**R, head=None).head == 0
    assert Settings(head=2).head == 2 and Settings(**R, head="auto").head == "auto"
    assert Settings().replace(weights="random") == Settings(**R)
    assert Settings(**R).replace(weights="auto") == Settings()
    assert Settings(head=3).replace(weights="random", heads=4).head == 3


def test_settings_are_frozen():
    with pytest.raises(AttributeError):
        Settings().seed = 3  # type: ignore[misc]


def test_replace_validates_again():
    assert Settings(**R).replace(seed=5).seed == 5
    with pytest.raises(SettingsError):
        Settings(**R).replace(heads=3)


def test_dk_defaults_to_d_model_over_heads():
    assert Settings(**R, d_model=6, heads=3).dk == 2
    assert Settings(**R, d_model=6, heads=3, d_k=5).dk == 5


@pytest.mark.parametrize("name, value, allowed", [
    ("quality", "x", ["l", "m", "h", "k"]),
    ("theme", "pink", ["dark", "light"]),
    ("language", "fr", ["en", "zh"]),
    ("weights", "trained", ["pretrained", "random"]),
])
def test_unknown_choice_names_the_field_and_the_allowed_values(name, value, allowed):
    e = error(**{name: value})
    assert e.field == name
    msg = str(e)
    assert msg.startswith(f"{name}:") and repr(value) in msg
    for a in allowed:
        assert a in msg


@pytest.mark.parametrize("name", ["d_model", "d_k", "heads", "max_tokens"])
@pytest.mark.parametrize("value", [0, -1])
def test_dimensions_zero_or_negative_are_rejected_with_the_range(name, value):
    e = error(**{name: value})
    assert e.field == name
    assert str(value) in str(e) and "allowed: 1 to" in str(e)


@pytest.mark.parametrize("name, value", [("d_model", 65), ("d_k", 65), ("heads", 17),
                                         ("max_tokens", 65)])
def test_dimensions_above_the_limit_are_rejected(name, value):
    e = error(**{name: value})
    assert e.field == name and "allowed: 1 to" in str(e)


def test_d_model_not_divisible_by_heads_lists_the_allowed_heads():
    e = error(d_model=6, heads=4)
    assert e.field == "heads"
    assert "not divisible" in str(e) and "1, 2, 3, 6" in str(e)


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_seed_out_of_range(seed):
    e = error(seed=seed)
    assert e.field == "seed" and str(2**32 - 1) in str(e)


@pytest.mark.parametrize("values, field", [
    (dict(**R, head=1), "head"),
    (dict(head=-1), "head"),
    (dict(head="best"), "head"),
    (dict(layer=-1), "layer"),
    (dict(query_index=-1), "query_index"),
    (dict(sentence="   "), "sentence"),
    (dict(target=" "), "target"),
    (dict(output=" "), "output"),
])
def test_other_out_of_range_values_name_their_field(values, field):
    assert error(**values).field == field


def test_head_must_be_below_heads_and_auto_is_allowed():
    assert Settings(**R, d_model=4, heads=2, head=1).head == 1
    assert Settings(**R, head="auto").head == "auto"
    assert "allowed: 0 to 1" in str(error(**R, d_model=4, heads=2, head=2))


@pytest.mark.parametrize("chapters", [(), (0,), (BEYOND,), (1, BEYOND), (True,), ("3",),
                                      ("Dot",), ("dot", "nine")])
def test_chapters_out_of_range(chapters):
    e = error(chapters=chapters)
    assert e.field == "chapters" and f"allowed: {CHAPTER_LIST}" in str(e)


def test_chapters_are_slugs_in_story_order_and_numbers_are_places_in_it():
    assert Settings(chapters=(1, "dot", 3)).chapters == ("input", "factor", "dot")
    assert Settings(chapters=(10, 9)).chapters == ("heads", "summary")  # 9 heads, 10 summary
    assert Settings(chapters=["summary", "input", "summary"]).chapters == ("input", "summary")
    assert Settings(chapters=SLUGS[1:]).chapters == SLUGS[1:]


def test_a_string_of_chapters_in_a_settings_object_says_a_list_belongs_there():
    e = error(chapters="1")
    assert e.field == "chapters" and "is not a list of chapters" in str(e)


@pytest.mark.parametrize("name, value, desc", [
    ("d_model", "4", "a whole number"),
    ("d_model", 4.0, "a whole number"),
    ("d_model", True, "a whole number"),
    ("seed", None, "a whole number"),
    ("causal", 1, "true or false"),
    ("causal", "yes", "true or false"),
    ("sentence", 3, "a string"),
    ("chapters", "1,3", "a list of chapters"),
])
def test_wrong_types_are_rejected_naming_the_expected_type(name, value, desc):
    e = error(**{name: value})
    assert e.field == name and desc in str(e)


def test_settings_error_is_a_value_error_with_field_and_message():
    e = SettingsError("d_k", "is wrong")
    assert isinstance(e, ValueError) and str(e) == "d_k: is wrong"
    assert (e.field, e.message) == ("d_k", "is wrong")


# ---------------------------------------------------------------- chapters flag

@pytest.mark.parametrize("text, want", [
    ("1,3,6", ("input", "factor", "weighted_sum")),
    ("2-5", ("linear", "factor", "dot", "softmax")),
    ("6,1,3,3", ("input", "factor", "weighted_sum")),
    ("1-3, 10", ("input", "linear", "factor", "summary")),
    ("10", ("summary",)),
    ("8-10", ("learning", "heads", "summary")),
    (f"1-{len(SLUGS)}", ALL_CHAPTERS),
    ("9-10", ("heads", "summary")),  # the titles count up: heads 9, summary 10
    ("dot,softmax", ("dot", "softmax")),
    ("summary,input", ("input", "summary")),
    ("linear-dot", ("linear", "factor", "dot")),
    ("qkv-10", ("qkv", "learning", "heads", "summary")),
])
def test_parse_chapters(text, want):
    assert parse_chapters(text) == want


def test_parse_chapters_reads_the_chapter_table():
    assert parse_chapters(f"1-{len(SLUGS)}") == SLUGS
    for n, slug in enumerate(SLUGS, start=1):
        assert parse_chapters(str(n)) == (slug,) == parse_chapters(slug)


@pytest.mark.parametrize("text, match", [
    ("", "no chapter chosen"),
    (",", "no chapter chosen"),
    ("5-2", "the range .5-2. is reversed; write it in story order, as 2-5"),
    ("softmax-dot", "the range .softmax-dot. is reversed; write it in story order, as dot-softmax"),
    ("0", "0 is not a chapter"),
    (f"1,{BEYOND}", f"{BEYOND} is not a chapter"),
    (f"{BEYOND}", f"{BEYOND} is not a chapter"),
    (f"1-3,{BEYOND}", f"{BEYOND} is not a chapter"),
    (f"{BEYOND}-{BEYOND}", f"{BEYOND} is not a chapter"),
    (f"1-{BEYOND}", f"{BEYOND} is not a chapter"),
    ("a", "'a' is not a chapter"),
    ("1-", "'1-' is not a chapter"),
    ("-1", "'-1' is not a chapter"),
    ("1.5", "'1.5' is not a chapter"),
    ("dots", "'dots' is not a chapter"),
])
def test_parse_chapters_errors(text, match):
    with pytest.raises(SettingsError, match=match) as info:
        parse_chapters(text)
    assert info.value.field == "chapters" and f"allowed: {CHAPTER_LIST}" in str(info.value)


# ---------------------------------------------------------------- TOML and flags

FULL = dict(sentence="The ball is blue", query="ball", target="La bola es azul", seed=7,
            d_model=6, d_k=2, heads=3, softmax=False, positional=False,
            max_tokens=20, chapters=(1, 3, 6), theme="light", language="zh", quality="l",
            output="out/video.mp4", head=2, layer=0, weights="random")

FULL_TOML = """
sentence = "The ball is blue"
query = "ball"
target = "La bola es azul"
seed = 7
d_model = 6
d_k = 2
heads = 3
softmax = false
positional = false
max_tokens = 20
chapters = [1, 3, 6]
theme = "light"
language = "zh"
quality = "l"
output = "out/video.mp4"
head = 2
layer = 0
weights = "random"
"""


def test_toml_path_and_flag_path_give_the_same_settings(tmp_path):
    from_toml = build_settings(write(tmp_path, FULL_TOML))
    from_flags = build_settings(**FULL)
    assert from_toml == from_flags == Settings(**FULL)
    assert isinstance(from_toml.chapters, tuple)


def test_no_toml_and_no_flags_gives_the_defaults():
    assert build_settings() == Settings()
    assert build_settings(None, seed=None, theme=None) == Settings()


def test_flags_override_toml_and_missing_flags_keep_toml(tmp_path):
    p = write(tmp_path, 'sentence = "a b c"\nseed = 3\ntheme = "light"\n')
    s = build_settings(p, seed=9, theme=None)
    assert (s.sentence, s.seed, s.theme) == ("a b c", 9, "light")


def test_unknown_toml_key_suggests_the_close_match(tmp_path):
    with pytest.raises(SettingsError) as info:
        build_settings(write(tmp_path, "dmodel = 4\n"))
    assert info.value.field == "dmodel"
    assert "unknown setting" in str(info.value) and "did you mean 'd_model'?" in str(info.value)


def test_unknown_key_without_a_close_match_lists_the_known_ones(tmp_path):
    with pytest.raises(SettingsError) as info:
        read_toml(write(tmp_path, "zzzzqqq = 1\n"))
    assert "did you mean" not in str(info.value)
    assert all(name in str(info.value) for name in FIELD_NAMES)


def test_unknown_flag_is_rejected_too():
    with pytest.raises(SettingsError, match="did you mean 'heads'"):
        build_settings(num_heads=2)


@pytest.mark.parametrize("line, field, desc", [
    ('d_model = "4"', "d_model", "a whole number"),
    ("d_model = 4.0", "d_model", "a whole number"),
    ('causal = "true"', "causal", "true or false"),
    ("sentence = 5", "sentence", "a string"),
    ('chapters = "1,3"', "chapters", "a list of chapters"),
    ("seed = true", "seed", "a whole number"),
])
def test_wrong_toml_types_name_the_field_and_the_expected_type(tmp_path, line, field, desc):
    with pytest.raises(SettingsError) as info:
        build_settings(write(tmp_path, line + "\n"))
    assert info.value.field == field and desc in str(info.value)


def test_out_of_range_toml_value_is_rejected(tmp_path):
    with pytest.raises(SettingsError) as info:
        build_settings(write(tmp_path, "heads = 0\n"))
    assert info.value.field == "heads"


def test_bad_toml_gives_the_line_number(tmp_path):
    p = write(tmp_path, 'sentence = "ok"\nseed = 1\nd_model = = 4\n')
    with pytest.raises(SettingsError) as info:
        build_settings(p)
    assert info.value.field == "config"
    assert "not valid TOML" in str(info.value) and "line 3" in str(info.value)
    assert str(p) in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(SettingsError, match="does not exist") as info:
        build_settings(tmp_path / "nope.toml")
    assert info.value.field == "config"


def test_a_folder_given_as_config(tmp_path):
    with pytest.raises(SettingsError, match="is a folder") as info:
        build_settings(tmp_path)
    assert info.value.field == "config"


def test_config_that_is_not_utf8(tmp_path):
    p = tmp_path / "latin1.toml"
    p.write_bytes('sentence = "café"\n'.encode("latin-1"))
    with pytest.raises(SettingsError, match="not UTF-8"):
        build_settings(p)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads files whatever their permissions")
def test_unreadable_config(tmp_path):
    p = write(tmp_path, "seed = 1\n")
    p.chmod(0)
    try:
        with pytest.raises(SettingsError, match="permission denied") as info:
            build_settings(p)
        assert info.value.field == "config"
    finally:
        p.chmod(0o644)


def test_unicode_sentence_from_toml(tmp_path):
    s = build_settings(write(tmp_path, 'sentence = "我爱你 👍🏽"\n'))
    assert s.sentence == "我爱你 👍🏽"


def test_to_dict_round_trips_through_the_constructor():
    s = Settings(**FULL)
    d = s.to_dict()
    assert set(d) == set(FIELD_NAMES)
    assert d["chapters"] == ["input", "factor", "weighted_sum"]
    assert build_settings(**d) == s


@pytest.mark.parametrize("pace", [0, 0.49, 2.01, -1, float("nan"), float("inf")])
def test_a_pace_out_of_range_names_the_field_and_the_range(pace):
    e = error(pace=pace)
    assert e.field == "pace" and "allowed: 0.5 to 2" in str(e)


def test_pace_is_a_number_in_toml_and_a_whole_one_means_the_same_video(tmp_path):
    assert build_settings(write(tmp_path, "pace = 1\n")) == Settings()
    assert build_settings(write(tmp_path, "pace = 1.25\n")).pace == 1.25
    with pytest.raises(SettingsError) as info:
        build_settings(write(tmp_path, 'pace = "fast"\n'))
    assert info.value.field == "pace" and "a number" in str(info.value)
    with pytest.raises(SettingsError):
        build_settings(write(tmp_path, "pace = true\n"))


@pytest.mark.parametrize("voice, language, message", [
    ("bob", "en", "neither a voice name nor a Piper voice file"),
    ("voice.onnx.json", "en", "neither a voice name"),
    ("", "en", "neither a voice name"),
    ("joe", "zh", "the joe voice speaks English"),
])
def test_a_voice_is_a_name_or_a_piper_file_in_the_captions_language(voice, language, message):
    e = error(voice=voice, language=language)
    assert e.field == "voice" and message in str(e)
    assert "\n" not in str(e)


def test_a_voice_file_of_any_language_passes_the_settings():
    """A path is checked when it is used (scenes.voice: the file, its .onnx.json, its
    language); the settings only check that it names an .onnx file."""
    assert Settings(voice="voices/zh_CN-huayan-medium.onnx", language="zh").voice.endswith(".onnx")


def test_a_settings_error_crosses_a_process_boundary_whole():
    """A worker process (the lint corpus, the render pool) hands its error back pickled: it
    arrives with its field and message (it broke the process pool before)."""
    import pickle

    e = pickle.loads(pickle.dumps(SettingsError("head", "'8' is not allowed")))
    assert (e.field, e.message, str(e)) == ("head", "'8' is not allowed", "head: '8' is not allowed")

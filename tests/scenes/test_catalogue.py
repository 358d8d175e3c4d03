"""Every word on screen comes from a gettext catalogue (locale/): the template holds every
message the scenes use, each catalogue translates all of them with the same placeholders,
the core holds no caption (a chapter's title only as a marked message id), the languages
are the catalogues present, and a catalogue is part of a clip's cache key."""

from __future__ import annotations

import ast
import re

import pytest
from attention_video.attncore import settings as settings_mod
from attention_video.attncore.settings import (
    LANGUAGES,
    LOCALE_DIR,
    Settings,
    SettingsError,
    caption_languages,
    validate,
)
from attention_video.pipeline.cache import sources
from attention_video.scenes.catalogue import Translate, reading_rate
from attention_video.scenes.spoken import spoken
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from tests.support.paths import ROOT

# The keywords the README's `pybabel extract` names (scenes.catalogue).
KEYWORDS = {"tr": None, "plural": (1, 2), "context": ((1, "c"), 2), "N_": None,
            "pgettext": ((1, "c"), 2)}
CJK_WORDS = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2,}")  # kana, hanzi, hangul
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
# Example input sentences the command line names (a sentence to type, not a caption).
INPUT_EXAMPLES = ("黑猫喝了牛奶",)
PLACEHOLDER = re.compile(r"\{(\w*)\}")


def template():
    with open(LOCALE_DIR / "messages.pot", "rb") as f:
        return read_po(f)


def catalogue(language: str):
    with open(LOCALE_DIR / language / "LC_MESSAGES" / "messages.po", "rb") as f:
        return read_po(f)


def key(message) -> tuple:
    return (message.context, message.id)


def test_the_template_holds_every_message_the_scenes_use():
    """What the README's `pybabel extract` reads (locale/babel.cfg): the scenes, and the
    chapters' titles in their rows."""
    with open(LOCALE_DIR / "babel.cfg", encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f)
    used = {(ctx, msgid) for _, _, msgid, _, ctx in
            extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS,
                             comment_tags=())}
    in_template = {key(m) for m in template() if m.id}
    assert used == in_template, ("run the README's `pybabel extract`, then `pybabel update`",
                                 sorted(map(str, used ^ in_template))[:5])


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_each_catalogue_translates_every_message_with_its_placeholders(language):
    cat = catalogue(language)
    assert {key(m) for m in cat if m.id} == {key(m) for m in template() if m.id}
    for m in cat:
        if not m.id or language == "en":  # English: the message ids are its text
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        assert all(strings) and not m.fuzzy, (language, m.id)
        names = set(PLACEHOLDER.findall(ids[-1])) | {"n" if isinstance(m.id, tuple) else ""}
        for s in strings:  # a translation may leave a value out (Chinese needs no "kinds"),
            # but never name one the code does not give (a typo would raise KeyError)
            assert set(PLACEHOLDER.findall(s)) <= names, (language, m.id, s)


def test_plural_forms_follow_each_language():
    one, many = "masked (weight 0): {n} later word", "masked (weight 0): {n} later words"
    assert Translate("en").plural(one, many, 1) == "masked (weight 0): 1 later word"
    assert Translate("en").plural(one, many, 3) == "masked (weight 0): 3 later words"
    assert Translate("es").plural(one, many, 1) == "enmascarada (peso 0): 1 palabra posterior"
    assert Translate("es").plural(one, many, 3) == "enmascaradas (peso 0): 3 palabras posteriores"
    zh = Translate("zh")
    assert zh.plural(one, many, 1) == "被遮住（权重 0）：后面的 1 个词"
    assert zh.plural(one, many, 3) == "被遮住（权重 0）：后面的 3 个词"


def test_placeholders_are_named_and_a_translation_may_reorder_them():
    tr = Translate("zh")
    assert tr("trained to spot an object that does not go with its verb (\"{verb} the "
              "{object}\")", verb="喝", object="面包") == "训练任务：找出被换成动词不搭配的宾语（“喝了面包”）"
    assert Translate("es")("For {word}: Z = {terms}.", word="«milk»", terms="1·V(a)") == \
        "Para «milk»: Z = 1·V(a)."


def test_reading_rates_come_from_the_catalogues():
    assert (reading_rate("en"), reading_rate("zh"), reading_rate("es")) == (15.0, 7.0, 15.0)


# ---- the core holds facts, not sentences -------------------------------------------------
def caption_fragments() -> set[str]:
    """The literal runs of four words or more of every message, placeholders cut out."""
    out = set()
    for m in template():
        for msgid in (m.id if isinstance(m.id, tuple) else (m.id,)):
            for run in PLACEHOLDER.split(msgid)[::2]:
                run = run.strip(" .,:;()\"'")
                if len(run.split()) >= 4:
                    out.add(run)
    return out


def sentences_in(source: str, fragments: set[str]) -> list[str]:
    """Caption text in Python source outside docstrings and N_ markers (a message id the
    catalogues translate, as a chapter's title in attncore.chapters): Chinese, Japanese or
    Korean words, or a message's words in a string."""
    found = []
    tree = ast.parse(source)
    skipped = {id(n.body[0].value) for n in ast.walk(tree)  # docstrings
               if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
               and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    skipped |= {id(n.args[0]) for n in ast.walk(tree)  # markers
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == "N_" and n.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            text = node.value
            for example in INPUT_EXAMPLES:
                text = text.replace(example, "")
            if CJK_WORDS.search(text):  # (a character range in a regex is no word)
                found.append(node.value)
            found += [f for f in fragments if f in node.value]
    return found


def test_the_core_holds_no_caption_or_title():
    fragments = caption_fragments()
    assert len(fragments) > 100  # (the check has something to look for)
    found = {str(p.relative_to(ROOT)): sentences_in(p.read_text(encoding="utf-8"), fragments)
             for p in sorted((ROOT / "attncore").rglob("*.py"))}
    assert {p: f for p, f in found.items() if f} == {}


def test_the_core_check_fails_on_a_caption():
    fragments = caption_fragments()
    assert sentences_in('TITLE = "Summary: the whole formula"', fragments)
    assert sentences_in('x = f"{n}: trained to translate English into Spanish, one word after the other"',
                        fragments)
    assert not sentences_in('"""Summary: the whole formula, in a docstring."""', fragments)
    assert not sentences_in('TITLE = N_("Summary: the whole formula")', fragments)  # a marker
    assert sentences_in('TITLE = N_(f"Summary: {x}") or "Summary: the whole formula"', fragments)
    assert sentences_in('ZH = "总结"', fragments)
    assert not sentences_in('TAG = "previous token"', fragments)  # a tag, not a sentence


# ---- languages are data --------------------------------------------------------------------
def test_the_languages_are_the_catalogues_present(tmp_path):
    assert LANGUAGES == ("en", "es", "zh")
    (tmp_path / "fr" / "LC_MESSAGES").mkdir(parents=True)
    (tmp_path / "fr" / "LC_MESSAGES" / "messages.po").write_text("")
    (tmp_path / "notes").mkdir()  # a folder without a catalogue is no language
    assert caption_languages(tmp_path) == ("fr",)


def test_an_unknown_language_names_the_allowed_ones():
    with pytest.raises(SettingsError, match=r"language: 'fr' is not allowed; choose one of: en, es, zh"):
        validate(Settings(language="fr"))


@pytest.mark.parametrize("language", ["zh", "es"])
def test_the_bundled_english_voice_refuses_other_caption_languages(language):
    with pytest.raises(SettingsError, match=f"voice: the joe voice speaks English .* the captions "
                                            f"are in '{language}'"):
        validate(Settings(language=language, voice="joe"))


@pytest.mark.parametrize("language", ["en", "zh", "es"])
def test_a_voice_file_is_allowed_with_any_catalogue_language(language):
    """Only the bundled voice is refused by the settings: a voice file's own language is
    checked when it is loaded (scenes.voice), so every catalogue language passes here."""
    s = Settings(language=language, voice="voices/es_ES-davefx-medium.onnx")
    assert validate(s) is None and s.voice.endswith(".onnx")
    with pytest.raises(SettingsError):  # the same check does refuse a voice it can judge
        validate(Settings(language=language, voice="joe") if language != "en"
                 else Settings(language="xx", voice="voices/es_ES-davefx-medium.onnx"))


# ---- the voice says a Spanish caption in Spanish -----------------------------------------
def test_spanish_captions_are_spoken_in_spanish():
    english_words = re.compile(r"\b(transpose|times|divided by|the square root|the sum|and so "
                               r"on|equals|plus|minus|chapter)\b")
    for m in catalogue("es"):
        for text in (m.string if isinstance(m.string, tuple) else (m.string,)):
            said = spoken(text.replace("{", "").replace("}", ""), "es")
            assert not english_words.search(said) and not CJK.search(said), (text, said)
    assert spoken("Kᵀ de 6 × 4: 0.5 × −0.3, V(leche) …", "es") == \
        "K traspuesta de 6 por 4: 0.5 por menos 0.3, V de leche etcétera"


# ---- a catalogue is part of a clip's key ---------------------------------------------------
def test_every_chapter_is_keyed_on_the_catalogues():
    from attention_video.attncore.chapters import CHAPTERS

    for c in CHAPTERS:
        files = {p.relative_to(ROOT).as_posix() for p in sources.source_files([c.module])}
        assert {f"locale/{lang}/LC_MESSAGES/messages.po" for lang in LANGUAGES} <= files, c.slug


def test_a_module_declares_its_data_files(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.po").write_text("x")
    assert sources.data_files(b'CACHE_DATA = ("data/*.po",)\n', tmp_path) == [tmp_path / "data" / "a.po"]
    assert sources.data_files(b"X = 1\n", tmp_path) == []


def test_settings_module_reads_its_languages_from_the_folder():
    assert settings_mod.LOCALE_DIR == ROOT / "locale"

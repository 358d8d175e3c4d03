"""The tiny model in the command: --weights auto's choice and its reason, the vocabulary,
sizes trained on first use and kept, and chapter 8 left out (with a reason) when the
weights have no training history."""

from __future__ import annotations

import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.build import choose_source
from attention_video.attncore.chapters import LEARNING
from attention_video.attncore.tiny.corpus import vocabulary
from attention_video.pipeline.commands.cli import cli
from attention_video.pipeline.run.render import plan_chapters
from click.testing import CliRunner


@pytest.mark.parametrize("values, source, why", [
    (dict(), "tiny", "vocabulary"),
    (dict(sentence="黑猫喝了牛奶"), "tiny", "vocabulary"),
    (dict(sentence="The zebra drank the milk"), "pretrained", "'zebra'"),
    (dict(sentence="The ball is blue", target="La bola es azul"), "translation", "vocabulary"),
    (dict(sentence="The zebra is blue", target="La cebra es azul"), "random", "cross-attention"),
    (dict(causal=True), "random", "mask"),
    (dict(d_model=32), "pretrained", "sizes"),
])
def test_auto_picks_the_weights_and_says_why(values, source, why):
    chosen, reason = choose_source(Settings(**values))
    assert chosen == source and why in reason


def test_an_explicit_weight_source_needs_no_reason():
    assert choose_source(Settings(weights="random")) == ("random", None)
    assert choose_source(Settings(weights="tiny")) == ("tiny", None)


def test_the_tiny_model_refuses_unknown_words_naming_them():
    with pytest.raises(SettingsError, match="'zebra'.*--weights pretrained"):
        build_trace(Settings(weights="tiny", sentence="the zebra drank the milk"))


@pytest.mark.parametrize("values, field", [
    (dict(causal=True), "causal"), (dict(d_model=32), "d_model"),
    (dict(heads=8, d_model=16), "heads"), (dict(positional=False), "positional"),
])
def test_the_tiny_model_refuses_what_it_was_not_trained_for(values, field):
    with pytest.raises(SettingsError) as info:
        Settings(weights="tiny", **values)
    assert info.value.field == field and "--weights random" in str(info.value)


def test_list_vocab_prints_both_languages():
    result = CliRunner().invoke(cli, ["--list-vocab"])
    assert result.exit_code == 0
    assert "milk" in result.output and "牛奶" in result.output
    assert all(w in result.output for w in vocabulary("en"))


def test_chapter_eight_is_left_out_with_a_reason_when_there_is_no_history():
    said: list[str] = []
    for weights in ("random",):
        s = Settings(weights=weights)
        plan = plan_chapters(s, build_trace(s), said.append)
        assert LEARNING not in plan and "summary" in plan
    assert len(said) == 1 and "chapter 8 (learning) left out" in said[0]
    assert "--weights tiny" in said[0]
    tiny = Settings()
    assert LEARNING in plan_chapters(tiny, build_trace(tiny), said.append)
    assert len(said) == 1  # nothing said when it is played


def test_only_chapter_eight_without_a_history_is_one_clear_error():
    s = Settings(weights="random", chapters=(LEARNING,))
    with pytest.raises(SettingsError, match="needs the tiny model's training history"):
        plan_chapters(s, build_trace(s))


def test_a_model_trained_on_first_use_records_the_platform_that_trained_it(tmp_path):
    from attention_video.attncore.tiny.config import TrainConfig
    from attention_video.attncore.tiny.store import load
    from attention_video.attncore.trained.provenance import Platform
    from attention_video.pipeline.commands.tiny_models import model_path, train_and_keep

    quick = TrainConfig(seed=3, d_model=6, heads=2, train_sentences=200,
                        validation_sentences=50, test_sentences=50, restarts=2, probe_steps=10,
                        finalists=1, steps=20, rounded_steps=10, batch=16, warmup=5,
                        snapshots=2, curve_every=10)
    said: list[str] = []
    path = model_path(quick, tmp_path)
    path.parent.mkdir(parents=True)
    trained = train_and_keep(quick, path, said.append)
    kept = load(path)
    assert trained.provenance.platform == kept.provenance.platform == Platform.current()
    assert kept.train_config == quick and any("on first use" in line for line in said)


@pytest.mark.parametrize("nudge, expected", [
    (False, "identical to the shipped weights"),
    (True, "differs from the shipped weights: the file records no platform"),
])
def test_train_tiny_compares_with_the_shipped_weights_whatever_it_records(
        monkeypatch, nudge, expected):
    """A retraining here records its platform and the shipped file none: the weights,
    history and scores are compared, and a difference says why it may be expected."""
    import dataclasses

    import attention_video.pipeline.commands.app
    from attention_video.attncore.tiny.store import load_default
    from attention_video.attncore.trained.provenance import Platform, Provenance
    from attention_video.pipeline.commands.app import retrain

    shipped = load_default()
    again = dataclasses.replace(shipped, provenance=Provenance("python -m x", Platform.current()))
    if nudge:
        again = dataclasses.replace(again, params=again.params.replace(
            b_2=again.params.b_2 + 1e-9))
    monkeypatch.setattr(attention_video.pipeline.commands.app, "train_and_keep", lambda *a: again)
    shown: list[str] = []
    retrain(Settings(), say=lambda s: None, show=shown.append)
    assert shown[-1].startswith(expected)


@pytest.mark.slow
def test_other_sizes_train_on_first_use_and_are_kept(tmp_path):
    from attention_video.attncore.tiny.trace import train_config
    from attention_video.pipeline.commands.tiny_models import model_path, tiny_model

    s = Settings(weights="tiny", d_model=6, heads=2, seed=1)
    said: list[str] = []
    first = tiny_model(s, said.append, root=tmp_path)
    assert model_path(train_config(s), tmp_path).exists()
    assert any("training the tiny model" in line for line in said)
    again = tiny_model(s, said.append, root=tmp_path)  # from disk, no training
    assert sum("training the tiny model" in line for line in said) == 1
    assert (again.params.W_Q == first.params.W_Q).all()
    assert again.provenance == first.provenance and first.provenance.platform is not None
    trace = build_trace(s, tiny_model=again)
    assert trace.source == "tiny" and len(trace.heads) == 2 and trace.history is not None


# ---- the translation model (issue 11) ---------------------------------------------------
def test_translate_decodes_the_target_and_azul_looks_at_blue():
    t = build_trace(Settings(sentence="The ball is blue", translate=True))
    assert t.source == "translation" and t.cross and t.decoder
    assert [w.text for w in t.query_tokens] == ["la", "bola", "es", "azul"]
    assert t.query_tokens[t.focus].text == "azul"  # the last written word is followed
    keys = [w.text for w in t.key_tokens]
    assert keys[int(t.head.weights[t.focus].argmax())] == "blue"
    bola = [w.text for w in t.query_tokens].index("bola")
    assert keys[int(t.head.weights[bola].argmax())] == "ball"
    # row i writes query_tokens[i] and reads the word before it
    assert [w.text for w in t.query_inputs][1:] == ["la", "bola", "es"]
    assert t.history is not None and keys[t.history.partner] == "blue"


def test_a_forced_target_keeps_its_spelling_and_the_alignment_crosses():
    t = build_trace(Settings(sentence="the blue ball", target="la bola azul"))
    assert t.source == "translation"
    q, k = [w.text for w in t.query_tokens], [w.text for w in t.key_tokens]
    assert q == ["la", "bola", "azul"]
    assert k[int(t.head.weights[q.index("azul")].argmax())] == "blue"
    assert k[int(t.head.weights[q.index("bola")].argmax())] == "ball"


def test_a_pair_outside_the_vocabulary_falls_back_to_random_weights_with_the_reason():
    chosen, reason = choose_source(Settings(sentence="The zebra is blue", target="La cebra es azul"))
    assert chosen == "random" and "'zebra'" in reason
    with pytest.raises(SettingsError, match="'zebra'"):
        build_trace(Settings(sentence="The zebra is blue", translate=True))


@pytest.mark.parametrize("values, match", [
    (dict(target="la bola es azul"), "drop one"),
    (dict(weights="random"), "needs the trained translation model"),
])
def test_translate_refuses_what_cannot_apply(values, match):
    with pytest.raises(SettingsError, match=match):
        Settings(sentence="The ball is blue", translate=True, **values)

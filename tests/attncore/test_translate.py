"""The translation model (attncore.translate): corpus and tokenizer, hand-written gradients
against central finite differences, the cross-attention against attncore.trace.compute_head,
the row convention, storage, determinism, the history, and the quality bar of the shipped
(rounded) weights.

Retraining gives the shipped file bit for bit only on the platform that trained it (numpy,
BLAS kernel, CPU), which the shipped file does not record: elsewhere a retraining is held
to the same quality bar, the same alignment and held-out scores within a stated tolerance."""

from __future__ import annotations

import functools
import subprocess
import sys

import numpy as np
import pytest
from attention_video.attncore.random_weights import on_grid
from attention_video.attncore.tokenize import TokenizeError
from attention_video.attncore.trace import compute_head
from attention_video.attncore.trained.provenance import Platform, bit_identical_here
from attention_video.attncore.translate import (
    ModelConfig,
    TrainConfig,
    UnknownWordError,
    alignment_history,
    decode,
    default_corpus,
    encode_pairs,
    evaluate,
    from_bytes,
    in_vocabulary,
    load_default,
    to_bytes,
    tokenize,
    vocabulary,
)
from attention_video.attncore.translate import train as train_module
from attention_video.attncore.translate.model import GRID_PARAMS, init_params, loss_and_grads
from attention_video.attncore.translate.store import corpus_of, corpus_sha256, default_bytes
from numpy.testing import assert_allclose, assert_array_equal

from tests.support.paths import ROOT
from tests.support.retraining import assert_retrains_bit_for_bit, assert_stored_scores_reproduced

ARTICLE = "The ball is blue"

SHORT = TrainConfig(seed=5, d_model=4, d_k=4, d_hidden=8, train_sentences=300,
                    validation_sentences=60, test_sentences=60, restarts=2, probe_steps=20,
                    finalists=1, steps=40, rounded_steps=10, batch=16, warmup=5, snapshots=3,
                    curve_every=10)


@functools.cache
def short_model():
    return train_module.train(SHORT)


@functools.cache
def retrained_default():
    """The shipped file's settings trained again here (7 s)."""
    return train_module.train(load_default().train_config)


def keys(tokens) -> list[str]:
    return [t.key for t in tokens]


# ---------------------------------------------------------------- corpus and tokenizer

def test_the_articles_pair_and_agreement_are_in_the_grammar():
    c = default_corpus()
    assert c.translate("the ball is blue") == ("la", "bola", "es", "azul")
    assert c.translate("the cat") == ("el", "gato")
    assert c.translate("the balls") == ("las", "bolas")
    assert c.translate("the blue ball") == ("la", "bola", "azul")
    assert c.translate("the white cats are small") == ("los", "gatos", "blancos", "son",
                                                        "pequeños")
    assert c.translate("the red houses are black") == ("las", "casas", "rojas", "son", "negras")
    assert c.translate("the women sing") == ("las", "mujeres", "cantan")
    assert c.translate("ball the") is None


def test_adjectives_follow_the_noun_so_the_alignment_crosses():
    p = default_corpus().pair(default_corpus().parse(("the", "blue", "ball")))
    assert p.es == ("la", "bola", "azul") and p.alignment == (0, 2, 1)


def test_the_corpus_is_large_enough():
    c = default_corpus()
    assert len(c.nouns) >= 30 and len(c.adjectives) >= 12 and len(c.verbs) >= 3
    assert {n.feminine for n in c.nouns} == {True, False}


def test_pairs_are_seeded_and_the_splits_are_disjoint_with_the_article_in_training():
    c = default_corpus()
    assert c.pairs(7, 50) == c.pairs(7, 50) and c.pairs(7, 50) != c.pairs(8, 50)
    sp = c.splits(0, 1000, 300, 500)
    sets = [{p.en for p in part} for part in (sp.train, sp.validation, sp.test)]
    assert [len(x) for x in sets] == [1000, 300, 500]
    assert not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])
    assert ("the", "ball", "is", "blue") in sets[0] and ("the", "blue", "ball") in sets[0]


def test_tokenize_folds_case_and_keeps_the_spelling():
    tokens = tokenize("THE Ball is Blue")
    assert [t.text for t in tokens] == ["THE", "Ball", "is", "Blue"]
    assert keys(tokens) == ["the", "ball", "is", "blue"]
    assert keys(tokenize("La Bola es AZUL", language="es")) == ["la", "bola", "es", "azul"]
    assert in_vocabulary(ARTICLE) and not in_vocabulary("the ball is bleu")


def test_unknown_words_are_named_in_a_value_error():
    with pytest.raises(UnknownWordError) as e:
        tokenize("The bal is bleu")
    assert e.value.unknown == ("bal", "bleu")
    assert isinstance(e.value, ValueError) and "'bleu'" in str(e.value) and "blue" in str(e.value)
    with pytest.raises(UnknownWordError) as e:
        load_default().decode("the ball is purple")
    assert e.value.unknown == ("purple",)
    with pytest.raises(TokenizeError):
        tokenize("   ")
    assert "<s>" not in vocabulary("en") and vocabulary("es")[:2] == ["<s>", "</s>"]


# ---------------------------------------------------------------- gradients

def test_every_hand_written_gradient_matches_central_differences():
    rng = np.random.default_rng(0)
    cfg = ModelConfig(d_model=4, d_k=3, d_hidden=5, init_qk=2.0)
    p = init_params(cfg, 6, 8, rng)
    p = p.replace(b_1=rng.normal(0, 0.5, 5), b_2=rng.normal(0, 0.5, 8))
    src = rng.integers(0, 6, (3, 5))
    src_mask = np.ones((3, 5), dtype=bool)
    src_mask[1, 3:] = False  # padded source words: masked keys, no gradient through them
    tgt_in = rng.integers(0, 8, (3, 4))
    tgt_out = rng.integers(1, 8, (3, 4))
    tgt_mask = np.ones((3, 4), dtype=bool)
    tgt_mask[2, 2:] = False
    args = (src, src_mask, tgt_in, tgt_out, tgt_mask)
    _, grads, _ = loss_and_grads(p, *args)
    eps = 1e-6
    for name, a in p.arrays().items():
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = a.copy(), a.copy()
            plus[idx] += eps
            minus[idx] -= eps
            lp = loss_and_grads(p.replace(**{name: plus}), *args)[0]
            lm = loss_and_grads(p.replace(**{name: minus}), *args)[0]
            numeric[idx] = (lp - lm) / (2 * eps)
        analytic = getattr(grads, name)
        assert analytic.shape == a.shape
        assert np.linalg.norm(numeric) > 1e-8, name  # the check must not be vacuous
        rel = np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)
        assert rel <= 1e-6, f"{name}: relative error {rel:.2e}"


# ---------------------------------------------------------------- the run, row by row

def test_decoder_row_i_writes_target_word_i_and_reads_word_i_minus_1():
    run = load_default().run(ARTICLE)
    assert keys(run.target_tokens) == ["la", "bola", "es", "azul"]
    assert keys(run.input_tokens) == ["<s>", "la", "bola", "es"]
    assert run.predicted == ("la", "bola", "es", "azul")  # row i's likeliest word is word i
    assert run.row_writing("azul") == 3 and run.row_writing("bola") == 1
    assert not run.forced and run.cross.weights.shape == (4, 4)
    with_eos = load_default().run(ARTICLE, "la bola es azul", eos_row=True)
    assert with_eos.forced and with_eos.predicted[-1] == "</s>"
    assert_allclose(with_eos.cross.weights[:4], run.cross.weights)


def test_cross_attention_is_what_attncore_trace_computes():
    model = load_default()
    run = model.run("the blue balls are red", "las bolas azules son rojas")
    h = run.cross
    zeros = np.zeros(h.W_Q.shape[1])
    mask = np.ones(h.weights.shape, dtype=bool)
    ref = compute_head(0, 0, run.cross_X_q, run.cross_X_kv, h.W_Q, h.W_K, h.W_V,
                       zeros, zeros, zeros, mask)
    for name in ("Q", "K", "V", "scores", "scaled", "weights", "Z"):
        assert_allclose(getattr(h, name), getattr(ref, name), atol=1e-12, err_msg=name)
    assert_allclose(run.X, run.E + run.P)
    assert_allclose(run.X_q, run.E_q + run.P_q)
    assert_allclose(run.memory, run.X + run.encoder.Z @ run.encoder_W_O)
    assert_allclose(run.Y2, run.Y1 + h.Z @ run.cross_W_O)
    causal = run.decoder_self.weights
    assert_array_equal(np.triu(causal, 1), 0.0)  # no row sees a later word
    assert_allclose(causal.sum(axis=1), 1.0)
    assert not run.cross.weights.flags.writeable


def test_the_weights_shown_are_on_the_grid():
    p = load_default().params
    for name in GRID_PARAMS:
        assert_array_equal(getattr(p, name), on_grid(getattr(p, name)), err_msg=name)
    run = load_default().run(ARTICLE)
    assert_allclose(run.X, on_grid(run.X), atol=1e-12)  # X has one decimal (E + P)


# ---------------------------------------------------------------- quality of the shipped weights

def splits_of(model):
    c = model.train_config
    return default_corpus().splits(c.seed, c.train_sentences, c.validation_sentences,
                                   c.test_sentences)


def largest(run, word: str) -> str:
    row = run.cross.weights[run.row_writing(word)]
    return run.source_tokens[int(row.argmax())].key


def assert_meets_the_bar_and_tells_the_story(model) -> None:
    """The quality bar on the held-out test pairs, and the article's story: "The ball is
    blue" becomes "La bola es azul", and the row writing azul looks most at blue."""
    s = evaluate(model.params, encode_pairs(splits_of(model).test, model.src_vocab,
                                            model.tgt_vocab))
    assert s.exact_match >= 0.95
    assert s.alignment >= 0.9
    assert keys(decode(model, ARTICLE)) == ["la", "bola", "es", "azul"]
    run = model.run(ARTICLE)
    assert largest(run, "azul") == "blue" and largest(run, "bola") == "ball"


def test_quality_bar_of_the_rounded_shipped_weights():
    model = load_default()
    assert len(splits_of(model).test) == 500
    assert_meets_the_bar_and_tells_the_story(model)


def test_the_shipped_files_held_out_scores_are_what_its_weights_score():
    model = load_default()
    sp = splits_of(model)
    assert_stored_scores_reproduced(model.scores, {
        split: evaluate(model.params, encode_pairs(pairs, model.src_vocab,
                                                   model.tgt_vocab)).to_dict()
        for split, pairs in (("validation", sp.validation), ("test", sp.test))})


def test_the_articles_pair_aligns_azul_with_blue_and_bola_with_ball():
    model = load_default()
    assert keys(decode(model, ARTICLE)) == ["la", "bola", "es", "azul"]
    assert model.translate(ARTICLE) == "La bola es azul"
    run = model.run(ARTICLE)
    assert largest(run, "azul") == "blue" and largest(run, "bola") == "ball"


def test_the_blue_ball_alignment_crosses():
    model = load_default()
    run = model.run("the blue ball")
    assert keys(run.target_tokens) == ["la", "bola", "azul"]
    assert largest(run, "azul") == "blue" and largest(run, "bola") == "ball"


# ---------------------------------------------------------------- storage, history, training

def test_shipped_file_matches_the_corpus_and_round_trips():
    data = default_bytes()
    assert corpus_of(data) == corpus_sha256()
    model = from_bytes(data)
    assert to_bytes(model) == data
    c = model.train_config
    assert c == TrainConfig(seed=c.seed)
    assert TrainConfig.from_dict(c.to_dict()) == c and c.model == model.config
    with pytest.raises(ValueError, match="not a"):
        from_bytes(b"garbage!" * 3)


def test_history_replays_the_alignment_emerging():
    model = load_default()
    h = model.history
    assert h.steps[0] == 0 and h.steps[-1] == model.train_config.total_steps
    assert len(h.steps) == model.train_config.snapshots + 1
    assert len(h.curve_step) == len(h.curve_loss) == len(h.curve_accuracy) >= 10
    for name in GRID_PARAMS:
        assert_array_equal(h.snapshots[-1].arrays[name], getattr(model.params, name))
    a = alignment_history(model, "the blue ball")
    assert a.weights.shape == (len(h.steps), 3, 3)
    azul = a.weights[:, 2, 1]  # the row writing azul, its weight on blue
    assert azul[-1] > 0.5 and azul[0] < azul[-1]


def test_training_is_deterministic_and_the_seed_matters():
    a, b = to_bytes(short_model()), to_bytes(train_module.train(SHORT))
    assert a == b
    other = train_module.train(TrainConfig(**{**SHORT.to_dict(), "seed": 6}))
    assert to_bytes(other) != a
    m = from_bytes(a)
    for name in GRID_PARAMS:
        assert_array_equal(getattr(m.params, name), on_grid(getattr(m.params, name)))


def test_bad_sizes_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="d_model"):
        ModelConfig(d_model=16)
    with pytest.raises(ValueError, match="unknown training settings: x"):
        TrainConfig.from_dict({"x": 1})


def test_attncore_translate_imports_neither_manim_nor_click():
    code = ("import sys, attention_video.attncore.translate; "
            "print('manim' in sys.modules, 'click' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.split() == ["False", "False"]


# Retraining elsewhere rounds some weights to another 0.1 step. Measured here: one ulp nudged
# into the initial weights or into one step's gradient (22 nudges; what a BLAS kernel that
# rounds a product differently does) moved weights by 0.1-0.2 and kept restart 0; exact
# match and word accuracy stayed 1.0, test alignment 0.984 -> 0.984-0.986, test crossing
# 0.975 -> 0.973-0.981, validation alignment 0.973 -> 0.971-0.977 (at most 0.007 apart).
# 0.02 holds that spread with a margin (another machine may also see another restart win);
# the quality bar stays the floor.
SCORE_TOLERANCE = 0.02


@pytest.mark.slow
def test_retraining_the_shipped_settings_meets_the_bar_and_tells_the_same_story():
    shipped, again = load_default(), retrained_default()
    assert_meets_the_bar_and_tells_the_story(again)
    for split in ("validation", "test"):
        for name in ("exact_match", "token_accuracy", "alignment", "crossing"):
            key = f"{split}_{name}"
            assert abs(again.scores[key] - shipped.scores[key]) <= SCORE_TOLERANCE, key


@pytest.mark.slow
def test_shipped_weights_are_what_training_produces_on_their_platform():
    """Bit for bit only where the file records this platform; the shipped file records
    none (it was trained before files did), so here this skips, saying so."""
    assert_retrains_bit_for_bit(default_bytes(), from_bytes, to_bytes, train_module.train)


def test_a_model_trained_here_records_its_platform_and_retrains_bit_for_bit():
    other_size = TrainConfig(**{**SHORT.to_dict(), "d_model": 3, "d_k": 2})
    data = to_bytes(train_module.train(other_size))
    model = from_bytes(data)
    assert model.train_config == other_size
    assert model.provenance.platform == Platform.current()
    assert bit_identical_here(model.provenance)[0]  # so the check below runs, not skips
    assert_retrains_bit_for_bit(data, from_bytes, to_bytes, train_module.train)


# ---- issue 28, part B: captions say only what is true -------------------------------------
def _captions(slug: str, **kw) -> list[str]:
    from attention_video.attncore import Settings, build_trace
    from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

    s = Settings(quality="l", **kw)
    return [text for _, _, text in render_chapter(ChapterJob(slug, build_trace(s), s,
                                                             clip=None)).subtitles]


@pytest.mark.slow
def test_cross_attention_says_the_target_word_has_only_a_query():
    said = " ".join(_captions("linear", sentence="The ball is blue", translate=True))
    assert "a query, a key and a value" not in said
    assert "keys and values are the source words' rows" in said


def test_the_alignment_caption_speaks_of_no_lines_it_does_not_draw():
    said = " ".join(_captions("factor", sentence="the blue ball", target="la bola azul"))
    assert "lines cross" not in said and "The order is swapped" in said

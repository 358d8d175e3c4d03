"""The tiny model (attncore.tiny): corpus and tokenizer, hand-written gradients against finite
differences, the forward pass against naive loops and against attncore.attention, storage,
determinism, the training history, and the quality bar of the shipped (rounded) weights.

Retraining gives the shipped file bit for bit only on the platform that trained it (numpy,
BLAS kernel, CPU), which the shipped file does not record: elsewhere a retraining is held
to the same quality bar, the same story and held-out scores within a stated tolerance."""

from __future__ import annotations

import functools
import math
import subprocess
import sys

import numpy as np
import pytest
from attention_video.attncore import attention as att
from attention_video.attncore.tiny import (
    ModelConfig,
    TrainConfig,
    UnknownWordError,
    default_corpus,
    encode,
    evaluate,
    from_bytes,
    history_rows,
    in_vocabulary,
    load_default,
    to_bytes,
    tokenize,
    vocabulary,
)
from attention_video.attncore.tiny.model import (
    GRID_PARAMS,
    Params,
    TinyModel,
    forward,
    init_params,
    loss_and_grads,
)
from attention_video.attncore.tiny.store import corpus_sha256, default_bytes
from attention_video.attncore.tiny.train import train
from attention_video.attncore.tokenize import TokenizeError
from attention_video.attncore.trained.layers import positions
from attention_video.attncore.trained.provenance import Platform, bit_identical_here
from numpy.testing import assert_allclose, assert_array_equal

from tests.support.paths import ROOT
from tests.support.retraining import assert_retrains_bit_for_bit, assert_stored_scores_reproduced

EN, ZH = "The black cat drank the milk", "黑猫喝了牛奶"

# A short training run: enough to exercise every part of train(), in well under a second.
SHORT = TrainConfig(seed=5, train_sentences=300, validation_sentences=100, test_sentences=100,
                    restarts=3, probe_steps=40, finalists=2, steps=60, rounded_steps=20,
                    batch=16, warmup=10, snapshots=3, curve_every=10)


@functools.cache
def short_model() -> TinyModel:
    return train(SHORT)


@functools.cache
def retrained_default() -> TinyModel:
    """The shipped file's settings trained again here (13 s)."""
    return train(load_default().train_config)


def keys(tokens) -> list[str]:
    return [t.key for t in tokens]


# ---------------------------------------------------------------- corpus and tokenizer

def test_the_articles_sentences_are_in_the_vocabulary():
    assert keys(tokenize(EN)) == ["the", "black", "cat", "drank", "the", "milk"]
    assert keys(tokenize(ZH)) == ["黑", "猫", "喝", "了", "牛奶"]
    assert in_vocabulary(EN) and in_vocabulary(ZH) and in_vocabulary(EN + ".")


def test_english_is_case_folded_and_keeps_its_spelling_for_display():
    tokens = tokenize("THE Black CAT drank the Milk.")
    assert [t.text for t in tokens] == ["THE", "Black", "CAT", "drank", "the", "Milk", "."]
    assert keys(tokens) == ["the", "black", "cat", "drank", "the", "milk", "."]
    assert tokens[-1].kind == "punct" and tokens[0].kind == "word"


def test_chinese_is_split_by_longest_match():
    assert keys(tokenize("农民打开了窗户。")) == ["农民", "打开", "了", "窗户", "。"]
    assert keys(tokenize("老老师开了公交车")) == ["老", "老师", "开", "了", "公交车"]
    assert keys(tokenize("猫追了老鼠")) == ["猫", "追", "了", "老鼠"]  # 老鼠, not 老 + 鼠
    assert keys(tokenize("the cat 喝了 milk")) == ["the", "cat", "喝", "了", "milk"]


def test_unknown_words_are_named_in_the_error():
    with pytest.raises(UnknownWordError) as e:
        tokenize("The black cat drunk the cola")
    assert e.value.unknown == ("drunk", "cola")
    assert "'drunk'" in str(e.value) and "'cola'" in str(e.value) and "drank" in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(UnknownWordError) as e:
        tokenize("黑猫喝了可乐！")
    assert e.value.unknown == ("可乐", "！")  # unknown characters gathered into one word
    assert not in_vocabulary("the cat drank the cola")


def test_an_empty_sentence_is_an_error():
    with pytest.raises(TokenizeError):
        tokenize("   ")
    assert not in_vocabulary("")


def test_vocabularies_are_large_enough_and_distinct_per_language():
    c = default_corpus()
    for lang in ("en", "zh"):
        L = c.language(lang)
        nouns_adjectives = set(L.words["subject"]) | set(L.words["subject_adjective"]) | set(
            L.words["object_adjective"]) | {o for objs in L.objects.values() for o in objs}
        assert len(nouns_adjectives) >= 40 and len(set(L.verbs.values())) >= 8
    assert "milk" in vocabulary("en") and "milk" not in vocabulary("zh")
    assert "牛奶" in vocabulary("zh")
    assert vocabulary() == list(dict.fromkeys(vocabulary("en") + vocabulary("zh")))
    with pytest.raises(ValueError, match="allowed: en, zh"):
        vocabulary("fr")


def test_every_generated_sentence_tokenizes_back_to_its_words():
    c = default_corpus()
    for s in c.sentences(11, 1500):
        text = c.language(s.language).write(s.words)
        assert tuple(keys(tokenize(text))) == s.words, text


def test_adjacent_chinese_words_never_merge_or_split():
    """Longest match must not glue the end of one word to the start of the next."""
    L = default_corpus().language("zh")
    voc = vocabulary()
    pairs = ([(a, s) for a in L.words["subject_adjective"] for s in L.words["subject"]]
             + [(s, v) for s in L.words["subject"] for v in (*L.verbs.values(), "看见")]
             + [(a, o) for a in L.words["object_adjective"] for objs in L.objects.values()
                for o in objs]
             + [("了", o) for objs in L.objects.values() for o in objs])
    for a, b in pairs:
        assert keys(tokenize(a + b, voc)) == [a, b]


def test_only_objects_are_swapped_and_swaps_break_the_verb():
    c = default_corpus()
    sentences = c.sentences(3, 2000)
    swapped = [s for s in sentences if s.replaced]
    assert 0.35 < len(swapped) / len(sentences) < 0.55
    for s in sentences:
        lang = c.language(s.language)
        assert s.labels().sum() == float(s.replaced) and s.labels()[s.obj] == float(s.replaced)
        if not s.selective:
            assert not s.replaced and s.words[s.verb] in lang.generic_verbs
            continue
        assert s.words[s.verb] == lang.verbs[s.category]
        takes = s.words[s.obj] in lang.objects[s.category]
        assert takes != s.replaced


def test_sentences_are_seeded_and_the_splits_are_disjoint():
    c = default_corpus()
    assert c.sentences(7, 50) == c.sentences(7, 50)
    assert c.sentences(7, 50) != c.sentences(8, 50)
    sp = c.splits(0, 500, 200, 200)
    sets = [{s.words for s in part} for part in (sp.train, sp.validation, sp.test)]
    assert [len(x) for x in sets] == [500, 200, 200]
    assert not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])


# ---------------------------------------------------------------- gradients

def gradient_problem(heads: int):
    rng = np.random.default_rng(heads)
    cfg = ModelConfig(d_model=4, heads=heads, d_k=3, d_hidden=5)
    p = init_params(cfg, 7, rng)
    p = p.replace(W_Q=rng.normal(0, 0.8, p.W_Q.shape), W_K=rng.normal(0, 0.8, p.W_K.shape),
                  b_1=rng.normal(0, 0.5, 5), b_2=np.asarray(0.3))
    ids = rng.integers(0, 7, (3, 6))
    mask = np.ones((3, 6), dtype=bool)
    mask[1, 4:] = False  # one padded sentence: padding must get no gradient through attention
    y = (rng.random((3, 6)) < 0.4).astype(np.float64) * mask
    return p, ids, mask, y


@pytest.mark.parametrize("heads", [1, 2])
def test_every_hand_written_gradient_matches_central_differences(heads):
    p, ids, mask, y = gradient_problem(heads)
    _, grads, _ = loss_and_grads(p, ids, mask, y)
    eps = 1e-6
    for name, a in p.arrays().items():
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = a.copy(), a.copy()
            plus[idx] += eps
            minus[idx] -= eps
            lp = loss_and_grads(p.replace(**{name: plus}), ids, mask, y)[0]
            lm = loss_and_grads(p.replace(**{name: minus}), ids, mask, y)[0]
            numeric[idx] = (lp - lm) / (2 * eps)
        analytic = getattr(grads, name)
        assert analytic.shape == a.shape
        assert np.linalg.norm(numeric) > 1e-8, name  # the check must not be vacuous
        rel = np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)
        assert rel <= 1e-6, f"{name}: relative error {rel:.2e}"


# ---------------------------------------------------------------- forward pass

def naive_forward(p: Params, ids: list[int]) -> dict:
    """The model by explicit loops over words, heads and coordinates, with `math` only."""
    n, d = len(ids), p.E.shape[1]
    H, d_k = p.W_Q.shape[0], p.W_Q.shape[2]
    X = []
    for pos, w in enumerate(ids):
        row = []
        for j in range(d):
            i2 = j - j % 2
            angle = pos / 10000.0 ** (i2 / d)
            pe = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            pe = round(pe * 10) / 10  # the 0.1 grid
            row.append(float(p.E[w][j]) + pe)
        X.append(row)

    def times(A, W):
        return [[sum(A[i][k] * float(W[k][c]) for k in range(len(W))) for c in range(len(W[0]))]
                for i in range(len(A))]

    heads = []
    for h in range(H):
        Q, K, V = times(X, p.W_Q[h]), times(X, p.W_K[h]), times(X, p.W_V[h])
        S = [[sum(Q[i][c] * K[j][c] for c in range(d_k)) for j in range(n)] for i in range(n)]
        scaled = [[s / math.sqrt(d_k) for s in row] for row in S]
        A = []
        for row in scaled:
            m = max(row)
            e = [math.exp(s - m) for s in row]
            A.append([x / math.fsum(e) for x in e])
        Z = [[sum(A[i][j] * V[j][c] for j in range(n)) for c in range(d_k)] for i in range(n)]
        heads.append({"Q": Q, "K": K, "V": V, "scores": S, "scaled": scaled, "weights": A,
                      "Z": Z})
    concat = [[x for h in heads for x in h["Z"][i]] for i in range(n)]
    out = times(concat, p.W_O)
    R = [[X[i][j] + out[i][j] for j in range(d)] for i in range(n)]
    U = times(R, p.W_1)
    logits = []
    for i in range(n):
        hidden = [max(U[i][k] + float(p.b_1[k]), 0.0) for k in range(len(p.b_1))]
        logits.append(sum(hidden[k] * float(p.w_2[k]) for k in range(len(hidden)))
                      + float(p.b_2))
    return {"X": X, "heads": heads, "output": out, "logits": logits}


@pytest.mark.parametrize("heads, d_model", [(1, 4), (2, 6)])
def test_forward_matches_naive_loops(heads, d_model):
    rng = np.random.default_rng(3)
    p = init_params(ModelConfig(d_model=d_model, heads=heads, d_hidden=6), 9, rng)
    p = p.replace(W_Q=rng.normal(0, 1, p.W_Q.shape), b_1=rng.normal(0, 0.5, 6)).rounded()
    ids = [3, 1, 4, 1, 5, 8, 2]
    f = forward(p, np.array([ids]))
    ref = naive_forward(p, ids)
    tol = dict(rtol=1e-12, atol=1e-12)
    assert_allclose(f.X[0], ref["X"], **tol)
    for h, rh in enumerate(ref["heads"]):
        for name in ("Q", "K", "V", "scores", "scaled", "weights", "Z"):
            assert_allclose(getattr(f, name)[0, h], rh[name], **tol, err_msg=name)
    assert_allclose(f.output[0], ref["output"], **tol)
    assert_allclose(f.logits[0], ref["logits"], **tol)


def test_a_run_agrees_with_attncore_attention_step_by_step():
    """What a trace builder computes from run.X and a head's weights is what the run holds."""
    model = load_default()
    run = model.run(EN)
    for h in run.heads:
        Q, K, V = att.project_qkv(run.X, run.X, h.W_Q, h.W_K, h.W_V, 0.0, 0.0, 0.0)
        S = att.scores(Q, K)
        S_scaled = att.scale(S, Q.shape[1])
        A = att.softmax(S_scaled)
        for name, want in (("Q", Q), ("K", K), ("V", V), ("scores", S), ("scaled", S_scaled),
                           ("weights", A), ("Z", att.weighted_sum(A, V))):
            assert_allclose(getattr(h, name), want, rtol=1e-12, atol=1e-12, err_msg=name)
    assert_allclose(run.output, att.multi_head([h.Z for h in run.heads], run.W_O),
                    rtol=1e-12, atol=1e-12)
    assert_array_equal(run.X, run.E + run.P)
    assert not run.X.flags.writeable and not run.heads[0].weights.flags.writeable


def test_padding_changes_nothing_for_the_real_words():
    model = load_default()
    c = default_corpus()
    sentences = c.sentences(4, 12)
    data = encode(sentences, model.vocab)
    batch = forward(model.params, data.ids, data.mask)
    for b, s in enumerate(sentences):
        n = len(s.words)
        alone = forward(model.params, data.ids[b:b + 1, :n])
        assert_allclose(batch.weights[b, :, :n, :n], alone.weights[0], rtol=1e-12, atol=1e-15)
        assert_allclose(batch.logits[b, :n], alone.logits[0], rtol=1e-12, atol=1e-12)
        assert np.all(batch.weights[b, :, :, n:] == 0.0)


def test_positions_are_the_sinusoids_on_the_grid():
    P = positions(6, 4)
    assert_array_equal(P, np.round(att.positional_encoding(6, 4) * 10) / 10)


# ---------------------------------------------------------------- the shipped model

def on_grid(a: np.ndarray, decimals: int) -> bool:
    scaled = np.asarray(a) * 10 ** decimals
    return bool(np.all(np.abs(scaled - np.round(scaled)) < 1e-9))


def test_shipped_weights_are_on_the_grid_so_q_k_v_have_two_decimals():
    model = load_default()
    assert model.config == ModelConfig(d_model=4, heads=1)
    for name in GRID_PARAMS:
        assert on_grid(getattr(model.params, name), 1), name
    run = model.run(EN)
    assert on_grid(run.X, 1) and on_grid(run.P, 1)
    for h in run.heads:
        assert on_grid(h.Q, 2) and on_grid(h.K, 2) and on_grid(h.V, 2)
    big = max(np.abs(getattr(model.params, n)).max() for n in ("W_Q", "W_K", "W_V", "W_O"))
    assert 0.5 < big < 5 and np.abs(model.params.E).max() < 12.7  # 0.1 still matters


def largest_other(run, focus: int, head: int = 0) -> tuple[str, float]:
    row = run.heads[head].weights[focus].copy()
    row[focus] = -1.0
    j = int(row.argmax())
    return run.tokens[j].key, float(row[j])


def splits_of(model: TinyModel):
    c = model.train_config
    return default_corpus().splits(c.seed, c.train_sentences, c.validation_sentences,
                                   c.test_sentences)


def assert_meets_the_bar_and_tells_the_story(model: TinyModel) -> None:
    """The quality bar on the held-out test sentences, and the article's story: "milk"
    attends most (after itself) to "drank", 牛奶 to 喝, with at least half its attention."""
    s = evaluate(model.params, encode(splits_of(model).test, model.vocab))
    assert s.accuracy >= 0.95
    assert s.object_to_verb >= 0.90
    word, weight = largest_other(model.run(EN), 5, model.verb_head)
    assert word == "drank" and weight >= 0.5
    word, weight = largest_other(model.run(ZH), 4, model.verb_head)
    assert word == "喝" and weight >= 0.5


def test_quality_bar_of_the_rounded_shipped_weights():
    model = load_default()
    assert len(splits_of(model).test) == 1000
    assert_meets_the_bar_and_tells_the_story(model)


def test_the_shipped_files_held_out_scores_are_what_its_weights_score():
    model = load_default()
    sp = splits_of(model)
    assert_stored_scores_reproduced(model.scores, {
        split: evaluate(model.params, encode(sentences, model.vocab)).to_dict()
        for split, sentences in (("validation", sp.validation), ("test", sp.test))})


def test_the_readout_judges_the_article_sentence_and_its_swap():
    model = load_default()
    assert model.run(EN).p_replaced[5] < 0.5
    assert model.run("The black cat drank the bread").p_replaced[5] > 0.5
    assert model.run("黑猫喝了面包").p_replaced[4] > 0.5


def test_shipped_file_matches_the_current_corpus_and_round_trips():
    data = default_bytes()
    assert len(data) < 16_000
    model = from_bytes(data)
    assert model.vocab == tuple(vocabulary())
    from attention_video.attncore.tiny.store import corpus_of
    assert corpus_of(data) == corpus_sha256()  # corpus.toml changed: retrain the default
    assert to_bytes(model) == data
    c = model.train_config
    assert TrainConfig.from_dict(c.to_dict()) == c and c.model == model.config
    with pytest.raises(ValueError):
        from_bytes(b"not a model")


def test_history_replays_the_alignment_of_milk_and_drank():
    model = load_default()
    h = model.history
    assert h.steps[0] == 0 and h.steps[-1] == model.train_config.total_steps
    assert len(h.steps) == model.train_config.snapshots + 1
    for name in GRID_PARAMS:
        assert_array_equal(h.snapshots[-1].arrays[name], getattr(model.params, name))
        assert all(on_grid(snap.arrays[name], 1) for snap in h.snapshots)
    assert len(h.curve_step) == len(h.curve_loss) == len(h.curve_accuracy)
    assert h.curve_accuracy[-1] > h.curve_accuracy[0] + 0.3
    run = model.run(EN)
    rows = history_rows(model, run.tokens, 5)
    assert run.tokens[rows.partner].key == "drank"
    first, last = rows.rows[0], rows.rows[-1]
    assert [r.step for r in rows.rows] == list(h.steps)
    assert_allclose(last.weights, run.heads[0].weights[5], rtol=1e-12)
    for r in rows.rows:
        assert math.isclose(r.weights.sum(), 1.0)
        assert math.isclose(r.score, float(r.q @ r.k), abs_tol=1e-12)
        assert_allclose(r.products, r.q * r.k)
    assert np.ptp(first.weights) < 0.1  # untrained: nearly uniform
    assert last.score > first.score + 5 and last.agree > first.agree
    with pytest.raises(ValueError, match="focus"):
        history_rows(model, run.tokens, 9)


# ---------------------------------------------------------------- training

def test_training_is_deterministic_and_the_seed_matters():
    a = short_model()
    b = train(SHORT)
    assert to_bytes(a) == to_bytes(b)
    other = train(TrainConfig(**{**SHORT.to_dict(), "seed": 6}))
    assert not np.array_equal(other.params.E, a.params.E)


def test_a_trained_model_stores_its_settings_history_and_scores():
    m = short_model()
    back = from_bytes(to_bytes(m))
    assert back.train_config == SHORT
    for name in Params.names():
        assert_array_equal(getattr(back.params, name), getattr(m.params, name))
    assert back.history.steps == m.history.steps and back.scores == m.scores
    assert {"test_accuracy", "test_object_to_verb", "validation_accuracy"} <= set(m.scores)


def test_progress_is_reported_up_to_the_total():
    seen = []
    train(SHORT, progress=lambda step, total, info: seen.append((step, total, info)))
    total = SHORT.restarts * SHORT.probe_steps + SHORT.finalists * (
        SHORT.total_steps - SHORT.probe_steps)
    assert seen[-1][:2] == (total, total)
    assert [s for s, _, _ in seen] == sorted(s for s, _, _ in seen)
    assert {info.phase for _, _, info in seen} == {"float", "rounded"}


@pytest.mark.parametrize("kw, field", [({"heads": 5}, "heads"), ({"d_model": 17}, "d_model"),
                                       ({"d_model": 6, "heads": 4}, "d_model")])
def test_bad_sizes_are_refused_with_the_field_named(kw, field):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**kw)


def test_attncore_tiny_imports_neither_manim_nor_click():
    code = ("import sys, attention_video.attncore.tiny, attention_video.attncore.tiny.train; "
            "print(any(m.split('.')[0] in ('manim', 'click') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# Retraining elsewhere may land on another restart. Measured here: one ulp nudged into every
# restart's initial weights (what a BLAS kernel that rounds a product differently does)
# made restart 0 win instead of 4 (E moved by up to 15.1; 11.7 on the machine of issue 21);
# held-out object -> verb went from 0.969 to 0.979-0.991 (test) and from 0.974 to
# 0.981-0.993 (validation), accuracy from 0.995 to 0.992-0.996 and from 0.998 to 0.994-1.0
# (6 nudges; a nudge to one array or to one step's gradient changed no score). 0.03 holds that
# spread with a margin; a model that learned another pattern (milk -> itself) is far
# outside it, and the quality bar stays the floor.
SCORE_TOLERANCE = 0.03


@pytest.mark.slow
def test_retraining_the_shipped_settings_meets_the_bar_and_tells_the_same_story():
    shipped, again = load_default(), retrained_default()
    assert_meets_the_bar_and_tells_the_story(again)
    for split in ("validation", "test"):
        for name in ("accuracy", "object_to_verb"):
            key = f"{split}_{name}"
            assert abs(again.scores[key] - shipped.scores[key]) <= SCORE_TOLERANCE, key


@pytest.mark.slow
def test_shipped_weights_are_what_training_produces_on_their_platform():
    """Bit for bit only where the file records this platform; the shipped file records
    none (it was trained before files did), so here this skips, saying so."""
    assert_retrains_bit_for_bit(default_bytes(), from_bytes, to_bytes, train)


def test_a_model_trained_here_records_its_platform_and_retrains_bit_for_bit():
    other_size = TrainConfig(**{**SHORT.to_dict(), "d_model": 6, "heads": 2})
    data = to_bytes(train(other_size))
    model = from_bytes(data)
    assert model.train_config == other_size
    assert model.provenance.platform == Platform.current()
    assert bit_identical_here(model.provenance)[0]  # so the check below runs, not skips
    assert_retrains_bit_for_bit(data, from_bytes, to_bytes, train)


def test_the_model_names_itself_and_its_verb_head():
    model = load_default()
    assert model.name == "tiny model (d_model 4, 1 head, seed 0)"
    assert model.verb_head == 0
    from attention_video.attncore.tiny import fingerprint
    assert fingerprint(model) == fingerprint(from_bytes(default_bytes()))
    assert fingerprint(model) != fingerprint(short_model())

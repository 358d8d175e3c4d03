"""attncore.trace: the followed word, the trace's shapes and metadata, and hypothesis
properties over random sentences and dimensions."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.attncore.build import build_trace
from attention_video.attncore.settings import Settings, SettingsError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from tests.support.examples import examples


def random_settings(**values) -> Settings:
    """Settings of the small seeded random model (the command's default is the pretrained
    one): every test here is about numbers that can be checked by hand."""
    return Settings(**{"weights": "random", **values})



def focus_word(**values) -> str:
    t = build_trace(random_settings(**values))
    return t.query_tokens[t.focus].text


# ---------------------------------------------------------------- the followed word

def test_default_followed_word_is_the_last_word():
    assert focus_word() == "milk"


def test_default_followed_word_skips_trailing_punctuation():
    assert focus_word(sentence='I can\'t say "no".') == "no"
    assert focus_word(sentence="Is it blue ?!") == "blue"


def test_default_followed_word_of_a_sentence_without_words_is_the_last_token():
    t = build_trace(random_settings(sentence="? !"))
    assert t.focus == 1


@pytest.mark.parametrize("query, index", [("cat", 2), ("CAT", 2), ("Cat", 2), ("the", 0),
                                          (" milk ", 5)])
def test_query_finds_the_first_matching_word_case_insensitively(query, index):
    assert build_trace(random_settings(query=query)).focus == index


def test_query_index_picks_a_repeated_word():
    assert build_trace(random_settings(query_index=4)).focus == 4
    assert build_trace(random_settings(query="the", query_index=4)).focus == 4


def test_query_index_that_is_another_word_is_an_error():
    with pytest.raises(SettingsError, match="token 2 is 'cat', not 'milk'") as info:
        build_trace(random_settings(query="milk", query_index=2))
    assert info.value.field == "query_index"


def test_unknown_query_suggests_close_words():
    with pytest.raises(SettingsError) as info:
        build_trace(random_settings(query="milks"))
    assert info.value.field == "query"
    assert "'milks' is not in the sentence" in str(info.value)
    assert "did you mean 'milk'" in str(info.value)


def test_unknown_query_without_close_words_lists_the_words():
    with pytest.raises(SettingsError) as info:
        build_trace(random_settings(query="zzzzz"))
    assert "the words are: 'The', 'black', 'cat'" in str(info.value)


@pytest.mark.parametrize("index", [6, 100])
def test_query_index_out_of_range_gives_the_range(index):
    with pytest.raises(SettingsError) as info:
        build_trace(random_settings(query_index=index))
    assert info.value.field == "query_index"
    assert f"{index} is out of range; allowed: 0 to 5" in str(info.value)


def test_query_in_cross_attention_is_a_word_of_the_target():
    t = build_trace(random_settings(sentence="The ball is blue", target="La bola es azul", query="bola"))
    assert t.focus == 1 and t.query_tokens[1].text == "bola"
    with pytest.raises(SettingsError, match="not in the sentence"):
        build_trace(random_settings(sentence="The ball is blue", target="La bola es azul", query="ball"))


def test_sentence_that_cannot_be_tokenized_is_a_settings_error_on_its_field():
    with pytest.raises(SettingsError) as info:
        build_trace(random_settings(sentence="\u200b"))
    assert info.value.field == "sentence"
    with pytest.raises(SettingsError) as info:
        build_trace(random_settings(sentence="a b c", target="w " * 5, max_tokens=4))
    assert info.value.field == "target" and "limit is 4" in str(info.value)


# ---------------------------------------------------------------- metadata

def test_trace_metadata_follows_the_settings():
    s = random_settings(sentence="a b c", target="x y", heads=2, head=1, softmax=False,
                 positional=False, seed=4)
    t = build_trace(s)
    assert (t.n_q, t.n_k, t.d_model, t.d_k) == (2, 3, 4, 2)
    assert (t.cross, t.causal, t.normalized, t.seed, t.head_index) == (True, False, False, 4, 1)
    assert t.head is t.heads[1]
    assert [h.head for h in t.heads] == [0, 1]
    assert t.source == "random" and not t.trained
    assert t.x_label == "E" and t.positional is False
    assert not t.head.has_bias


def test_head_auto_on_random_weights_follows_head_zero_and_says_why():
    t = build_trace(random_settings(head="auto", heads=2))
    assert t.head_index == 0 and t.head_choice.rule == t.head_choice.UNTRAINED


def test_self_attention_uses_the_same_rows_for_queries_and_keys():
    t = build_trace(random_settings())
    assert not t.cross
    assert_array_equal(t.X_q, t.X)
    assert_array_equal(t.E_q, t.E)


# ---------------------------------------------------------------- hypothesis properties

WORDS = ["The", "the", "cat", "milk", ",", ".", "!", "é", "我", "猫", "👍🏽", "can't", "3.14"]


@st.composite
def dims(draw):
    d_model = draw(st.integers(1, 8))
    heads = draw(st.sampled_from([h for h in range(1, d_model + 1) if d_model % h == 0]))
    d_k = draw(st.one_of(st.none(), st.integers(1, 6)))
    return dict(d_model=d_model, heads=heads, d_k=d_k)


sentences = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
    st.text(max_size=40),
)
flags = st.fixed_dictionaries({
    "causal": st.booleans(), "softmax": st.booleans(), "positional": st.booleans(),
    "seed": st.integers(0, 2**32 - 1),
})


def check_trace(t, s: Settings) -> None:
    n_q, n_k, d, dk = len(t.query_tokens), len(t.key_tokens), s.d_model, s.dk
    assert 1 <= n_q <= s.max_tokens and 1 <= n_k <= s.max_tokens
    assert 0 <= t.focus < n_q
    for name, shape in (("E", (n_k, d)), ("P", (n_k, d)), ("X", (n_k, d)), ("E_q", (n_q, d)),
                        ("P_q", (n_q, d)), ("X_q", (n_q, d)), ("W_O", (s.heads * dk, d)),
                        ("output", (n_q, d))):
        a = getattr(t, name)
        assert a.shape == shape, name
        assert np.all(np.isfinite(a)), name
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0, 0] = 1.0
    assert len(t.heads) == s.heads
    for h in t.heads:
        for name, shape in (("W_Q", (d, dk)), ("W_K", (d, dk)), ("W_V", (d, dk)), ("b_Q", (dk,)),
                            ("Q", (n_q, dk)), ("K", (n_k, dk)), ("V", (n_k, dk)),
                            ("scores", (n_q, n_k)), ("scaled", (n_q, n_k)),
                            ("mask", (n_q, n_k)), ("weights", (n_q, n_k)), ("Z", (n_q, dk))):
            a = getattr(h, name)
            assert a.shape == shape, name
            assert not a.flags.writeable
            with pytest.raises(ValueError):
                a[(0,) * a.ndim] = 1
        assert_array_equal(h.weights[~h.mask], 0.0)
        if s.softmax:
            assert_allclose(h.weights.sum(axis=1), 1.0, atol=1e-12)
            assert np.all(h.weights >= 0)
        else:
            assert_array_equal(h.weights[h.mask], h.scores[h.mask])
        if s.causal:
            assert_array_equal(h.mask, np.tril(np.ones((n_q, n_k), dtype=bool)))


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sentence=sentences, target=st.one_of(st.none(), sentences), dims=dims(), flags=flags)
def test_random_sentences_and_dimensions_build_or_raise_settings_error(sentence, target, dims,
                                                                       flags):
    try:
        s = random_settings(sentence=sentence, target=target, **dims, **flags)
        t = build_trace(s)
    except SettingsError as e:
        assert e.field in ("sentence", "target", "causal") and str(e)
        return
    check_trace(t, s)


@settings(max_examples=examples(50), deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=10), dims=dims(), flags=flags)
def test_word_lists_always_build_with_every_word_a_token(words, dims, flags):
    s = random_settings(sentence=" ".join(words), **dims, **flags)
    t = build_trace(s)
    assert [x.text for x in t.key_tokens] == words
    check_trace(t, s)


@settings(max_examples=examples(30), deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=8, unique=True),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_embeddings_depend_only_on_the_word_and_the_seed(words, seed, data):
    other = data.draw(st.permutations(words))
    assume(other != words)
    t = build_trace(random_settings(sentence=" ".join(words), seed=seed))
    u = build_trace(random_settings(sentence=" ".join(other), seed=seed))
    rows = {x.key: r for x, r in zip(u.key_tokens, u.E)}
    for x, r in zip(t.key_tokens, t.E):
        assert_array_equal(r, rows[x.key])

"""The tiny model's trace: its run on one sentence, every head, and its training replayed
on that sentence for chapter `learning`.

The weights are the shipped (or freshly trained) ones on the 0.1 grid, so X has one
decimal and Q, K, V have two: the numbers on screen are the numbers the model used.
"""

from __future__ import annotations

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.focus import resolve_focus
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.attncore.sources import Kept
from attention_video.attncore.tiny.config import TrainConfig
from attention_video.attncore.tiny.corpus import UnknownWordError, default_corpus
from attention_video.attncore.tiny.history import history_rows
from attention_video.attncore.tiny.model import TinyModel
from attention_video.attncore.tiny.store import load_default
from attention_video.attncore.tiny.train import train
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import AttentionTrace, HeadChoice, TrainingHistory, compute_head


def task_examples() -> tuple[tuple[str, str, str], ...]:
    """The task's example in each language of the corpus: the first category's verb with
    the second category's object, a pair the model learns to flag (words, not a sentence:
    the scenes phrase it)."""
    corpus = default_corpus()
    first, second = corpus.categories[0], corpus.categories[1]
    return tuple((code, lang.verbs[first], lang.objects[second][0])
                 for code, lang in corpus.languages.items())


def train_config(s: Settings) -> TrainConfig:
    """The training settings a video's settings ask for (seed, size)."""
    return TrainConfig(seed=s.seed, d_model=s.d_model, heads=s.heads)


def tiny_tokens(model: TinyModel, text: str, s: Settings, name: str) -> tuple[Token, ...]:
    """The sentence split by the model's own vocabulary; unknown words get one line."""
    try:
        tokens = model.tokenize(text)
    except UnknownWordError as e:
        raise SettingsError(name, f"{e}; --list-vocab prints them all, and --weights "
                            "pretrained takes any sentence") from None
    if not tokens:
        raise SettingsError(name, "the sentence is empty: type at least one word")
    if len(tokens) > s.max_tokens:
        raise SettingsError(name, f"{len(tokens)} tokens; the limit is {s.max_tokens}")
    return tokens


def choose_head(model: TinyModel, s: Settings) -> tuple[int, HeadChoice | None]:
    """The followed head: the given one, or for "auto" the head that learned verb → object."""
    if s.head != "auto":
        if int(s.head) >= model.config.heads:
            raise SettingsError("head", f"{s.head} is out of range; allowed: 0 to "
                                f"{model.config.heads - 1}")
        return int(s.head), None
    if model.config.heads == 1:
        return 0, None
    rate = model.scores.get("test_object_to_verb")
    return model.verb_head, HeadChoice(HeadChoice.VERB_HEAD, 0, model.verb_head, rate=rate)


def replay_history(model: TinyModel, tokens: tuple[Token, ...], focus: int,
                   head: int) -> TrainingHistory | None:
    """The followed word's attention at every training snapshot (None: no history kept)."""
    if model.history is None:
        return None
    rows = history_rows(model, tokens, focus, head)
    h = model.history
    return TrainingHistory(
        partner=rows.partner,
        steps=np.array([r.step for r in rows.rows], dtype=float),  # (s,)
        weights=np.stack([r.weights for r in rows.rows]),  # (s, n)
        q=np.stack([r.q for r in rows.rows]),  # (s, d_k)
        k=np.stack([r.k for r in rows.rows]),  # (s, d_k)
        products=np.stack([r.products for r in rows.rows]),  # (s, d_k)
        scores=np.array([r.score for r in rows.rows]),  # (s,)
        curve_step=np.asarray(h.curve_step, dtype=float),
        curve_loss=np.asarray(h.curve_loss, dtype=float),
        curve_accuracy=np.asarray(h.curve_accuracy, dtype=float),
        task=TrainingHistory.SWAPPED_OBJECT, examples=task_examples(),
        keys=np.stack([r.keys for r in rows.rows]))  # (s, n, d_k)


def build_tiny_trace(s: Settings, model: TinyModel, resolve_focus,
                     reason: str | None = None) -> AttentionTrace:
    """One attention layer of the tiny model, step by step, on the sentence."""
    tokens = tiny_tokens(model, s.sentence, s, "sentence")
    focus = resolve_focus(tokens, s)
    head_index, head_choice = choose_head(model, s)
    run = model.run(tokens)
    n = len(tokens)
    mask = np.ones((n, n), dtype=bool)
    heads = []
    for h, hr in enumerate(run.heads):
        zeros = np.zeros(hr.W_Q.shape[1])  # the tiny model has no biases
        heads.append(compute_head(0, h, run.X, run.X, hr.W_Q, hr.W_K, hr.W_V,
                                  zeros, zeros, zeros, mask, s.softmax))
    output = att.multi_head([h.Z for h in heads], run.W_O)  # (n, d_model)
    return AttentionTrace(
        query_tokens=tokens, key_tokens=tokens, E=run.E, P=run.P, X=run.X,
        E_q=run.E, P_q=run.P, X_q=run.X, heads=tuple(heads), W_O=run.W_O, output=output,
        focus=focus, head_index=head_index, source="tiny", model_name=model.name, layer=0,
        causal=False, cross=False, normalized=s.softmax, seed=s.seed, head_choice=head_choice,
        x_label="E + P",
        history=replay_history(model, tokens, focus, head_index), source_reason=reason)


def tiny_model_for(s: Settings, progress=None) -> TinyModel:
    """The shipped tiny model when it is the one asked for, else one trained now (seconds;
    the pipeline keeps trained ones on disk so this happens once per size and seed)."""
    shipped = load_default()
    if shipped.train_config == train_config(s):
        return shipped
    return train(train_config(s), progress=progress)


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the kept model for these settings, or the
    shipped one, or one trained now."""
    model = kept.tiny_model(s) if kept.tiny_model is not None else tiny_model_for(s)
    return build_tiny_trace(s, model, resolve_focus)

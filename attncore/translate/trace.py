"""The translation model's trace: the decoder's cross-attention, queries from the Spanish
rows and keys and values from the English words, and its training replayed (chapter `learning`).

Row i of the query side is the decoder row that WRITES target word i (its input is the
word before it, <s> for the first): query_tokens are the target words as written and
query_inputs the words each row reads.
"""

from __future__ import annotations

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.focus import resolve_focus
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.attncore.sources import Kept
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import AttentionTrace, TrainingHistory, compute_head
from attention_video.attncore.translate.corpus import UnknownWordError
from attention_video.attncore.translate.model import TranslationModel
from attention_video.attncore.translate.store import load_default

# How X was made, as a formula (the scenes word it): the encoder rows the keys and values
# are read from, and the decoder rows the queries are made from.
X_LABEL = "E + P + SelfAttention(E + P)"
X_LABEL_Q = "E + P + CausalSelfAttention(E + P)"


def _run(model: TranslationModel, s: Settings):
    """The model's run; an unknown word is one line naming the sentence it is in."""
    field = "sentence"
    try:
        model.tokenize(s.sentence)
        field = "target"
        return model.run(s.sentence, s.target if s.target else None)
    except UnknownWordError as e:
        raise SettingsError(field, f"{e}; the translation model knows only its corpus "
                            "(--list-vocab prints it); --weights random shows any pair "
                            "with untrained weights") from None


def replay_history(model: TranslationModel, source: tuple[Token, ...],
                   target: tuple[Token, ...], focus: int) -> TrainingHistory | None:
    """The followed row's cross-attention at every training snapshot."""
    if model.history is None:
        return None
    runs = []
    for snap in model.history.snapshots:
        m = TranslationModel(model.config, model.src_vocab, model.tgt_vocab,
                             snap.params(model.params))
        runs.append(m.run(source, target).cross)
    partner = int(runs[-1].weights[focus].argmax())
    q = np.stack([r.Q[focus] for r in runs])  # (s, d_k)
    k = np.stack([r.K[partner] for r in runs])  # (s, d_k)
    h = model.history
    return TrainingHistory(
        partner=partner, steps=np.array(h.steps, dtype=float),
        weights=np.stack([r.weights[focus] for r in runs]),  # (s, n_k)
        q=q, k=k, products=q * k, scores=np.array([r.scores[focus, partner] for r in runs]),
        curve_step=np.asarray(h.curve_step, dtype=float),
        curve_loss=np.asarray(h.curve_loss, dtype=float),
        curve_accuracy=np.asarray(h.curve_accuracy, dtype=float),
        task=TrainingHistory.TRANSLATE,
        keys=np.stack([r.K for r in runs]))  # (s, n_k, d_k)


def build_translation_trace(s: Settings, model: TranslationModel, resolve_focus,
                            reason: str | None = None) -> AttentionTrace:
    """The cross-attention of the decoder: the target decoded greedily (--translate) or
    forced (--target), every intermediate from the model's own run."""
    run = _run(model, s)
    if len(run.source_tokens) > s.max_tokens or len(run.target_tokens) > s.max_tokens:
        raise SettingsError("sentence", f"too many tokens; the limit is {s.max_tokens}")
    focus = resolve_focus(run.target_tokens, s)
    c = run.cross
    n_q, n_k = len(run.target_tokens), len(run.source_tokens)
    zeros = np.zeros(c.W_Q.shape[1])  # the translation model has no biases
    head = compute_head(0, 0, run.cross_X_q, run.cross_X_kv, c.W_Q, c.W_K, c.W_V,
                        zeros, zeros, zeros, np.ones((n_q, n_k), dtype=bool), s.softmax)
    output = att.multi_head([head.Z], run.cross_W_O)  # (n_q, d_model)
    how = "decoded greedily" if not run.forced else "given (teacher forcing)"
    return AttentionTrace(
        query_tokens=run.target_tokens, key_tokens=run.source_tokens,
        E=run.E, P=run.P, X=run.cross_X_kv, E_q=run.E_q, P_q=run.P_q, X_q=run.cross_X_q,
        heads=(head,), W_O=run.cross_W_O, output=output, focus=focus, head_index=0,
        source="translation", model_name=model.name, layer=0, causal=False, cross=True,
        normalized=s.softmax, seed=s.seed,
        head_choice=None, x_label=X_LABEL, x_from=AttentionTrace.ENCODER,
        history=replay_history(model, run.source_tokens, run.target_tokens, focus),
        source_reason=(f"{reason}; the translation was {how}" if reason else
                       f"the translation was {how}"),
        query_inputs=run.input_tokens, x_label_q=X_LABEL_Q)


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the shipped translation model."""
    return build_translation_trace(s, load_default(), resolve_focus)

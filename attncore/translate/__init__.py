"""A tiny English → Spanish encoder–decoder trained in numpy, so cross-attention shows a
real alignment ("The ball is blue" → "La bola es azul": azul looks at blue).

    model = load_default()                      # d_model 8, one head per attention, 0.1 grid
    model.decode("The ball is blue")            # (la, bola, es, azul) as Tokens
    run = model.run("The ball is blue")         # greedy target; run(src, "la bola es azul")
                                                # forces one (teacher forcing)
    run.source_tokens, run.target_tokens        # key tokens, query tokens (as written)
    run.E, run.P, run.X, run.encoder, run.memory            # the encoder
    run.cross.Q, .K, .V, .scores, .scaled, .weights, .Z     # the cross-attention head
    run.cross_X_q, run.cross_X_kv               # its query input (decoder) and key input
    alignment_history(model, "the blue ball")   # chapter `learning`: the alignment emerging

Decoder row i WRITES target word i (its input is word i − 1, or <s>).

Corpus (corpus.toml, corpus.py), model and hand-written gradients (model.py), training
(train.py: `python -m attention_video.pipeline.commands.train_models translate --seed 0 --out
attncore/translate/default.safetensors` made the shipped file), storage (store.py). What it
shares with attncore.tiny is in attncore.trained.
"""

from __future__ import annotations

from attention_video.attncore.trained.history import History, Snapshot
from attention_video.attncore.translate.config import ModelConfig, TrainConfig
from attention_video.attncore.translate.corpus import (
    BOS,
    EOS,
    Corpus,
    Pair,
    UnknownWordError,
    default_corpus,
    in_vocabulary,
    tokenize,
    vocabulary,
)
from attention_video.attncore.translate.evaluate import Scores, encode_pairs, evaluate
from attention_video.attncore.translate.history import AlignmentHistory, alignment_history
from attention_video.attncore.translate.model import Params, TranslationModel, TranslationRun
from attention_video.attncore.translate.store import (
    fingerprint,
    from_bytes,
    load,
    load_default,
    save,
    to_bytes,
)


def decode(model: TranslationModel, sentence: str):
    """Greedy translation of an English sentence: the Spanish Tokens, without <s>, </s>."""
    return model.decode(sentence)


__all__ = [
    "BOS", "EOS", "AlignmentHistory", "Corpus", "History", "ModelConfig", "Pair", "Params",
    "Scores", "Snapshot", "TrainConfig", "TranslationModel", "TranslationRun",
    "UnknownWordError", "alignment_history", "decode", "default_corpus", "encode_pairs",
    "evaluate", "fingerprint", "from_bytes", "in_vocabulary", "load", "load_default", "save",
    "to_bytes", "tokenize", "vocabulary",
]

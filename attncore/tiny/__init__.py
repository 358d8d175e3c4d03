"""The tiny model: one attention layer this project trains in numpy, small enough to check
by hand, trained so its attention means something.

    model = load_default()                 # d_model 4, one head, weights on the 0.1 grid
    run = model.run("The black cat drank the milk")
    run.E, run.P, run.X                    # (n, d) each
    h = run.heads[0]                       # W_Q, W_K, W_V, Q, K, V, scores, scaled, weights, Z
    run.W_O, run.concat, run.output        # Concat(Z_1…Z_H)·W_O
    rows = history_rows(model, run.tokens, focus=5)   # chapter `learning`: training aligns Q and K

    from attention_video.attncore.tiny.train import train  # other sizes: train, then save/to_bytes to cache
    model = train(TrainConfig(d_model=8, heads=2), progress=callback)

Corpus (corpus.toml), model and hand-written gradients (model.py), training (train.py:
`python -m attention_video.pipeline.commands.train_models tiny --seed 0 --out attncore/tiny/default.safetensors`
made the shipped file), history (history.py), safetensors storage (store.py). What it
shares with attncore.translate is in attncore.trained. The package does not import train.py
itself: only what trains pays for its import.
"""

from __future__ import annotations

from attention_video.attncore.tiny.config import ModelConfig, TrainConfig
from attention_video.attncore.tiny.corpus import (
    Corpus,
    Sentence,
    UnknownWordError,
    default_corpus,
    in_vocabulary,
    tokenize,
    vocabulary,
)
from attention_video.attncore.tiny.evaluate import Scores, encode, evaluate
from attention_video.attncore.tiny.history import HistoryRow, HistoryRows, history_rows
from attention_video.attncore.tiny.model import Forward, HeadRun, Params, Run, TinyModel, forward
from attention_video.attncore.tiny.store import (
    fingerprint,
    from_bytes,
    load,
    load_default,
    save,
    to_bytes,
)
from attention_video.attncore.trained.history import History, Snapshot

__all__ = [
    "Corpus", "Forward", "HeadRun", "History", "HistoryRow", "HistoryRows", "ModelConfig",
    "Params", "Run", "Scores", "Sentence", "Snapshot", "TinyModel", "TrainConfig",
    "UnknownWordError", "default_corpus", "encode", "evaluate", "fingerprint", "forward",
    "from_bytes", "history_rows", "in_vocabulary", "load", "load_default", "save", "to_bytes",
    "tokenize", "vocabulary",
]

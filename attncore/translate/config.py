"""The translation model's settings: its architecture and how it is trained."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.trained.training import TrainSettings, at_least_one, in_range

MAX_D_MODEL = 8  # the numbers on screen must stay checkable by hand


@dataclass(frozen=True)
class ModelConfig:
    """An encoder with one self-attention layer, a decoder with causal self-attention and
    cross-attention, each a single head, and a small readout."""

    d_model: int = 8  # width of E, P and every residual row
    d_k: int = 8  # width of each attention's Q, K, V
    d_hidden: int = 32  # ReLU units of the readout (not shown in the video)
    init_qk: float = 0.5  # W_Q, W_K start at init_qk/√d_model: small → near-uniform attention

    def __post_init__(self) -> None:
        in_range(self, d_model=(2, MAX_D_MODEL), d_k=(1, MAX_D_MODEL))
        at_least_one(self, "d_hidden")


@dataclass(frozen=True)
class TrainConfig(TrainSettings):
    """Everything training depends on: the same TrainConfig gives bit-identical weights."""

    seed: int = 0  # corpus split, initialisation and minibatch order
    d_model: int = 8  # see ModelConfig
    d_k: int = 8
    d_hidden: int = 32
    init_qk: float = 0.5
    train_sentences: int = 4000  # fixed training set (the corpus's `always` pairs included)
    validation_sentences: int = 500  # picks the best restart; the curves
    test_sentences: int = 500  # the quality bar, never seen while training or choosing
    restarts: int = 3  # independent initialisations, each trained for probe_steps
    probe_steps: int = 300  # then only the `finalists` best (on validation) go on
    finalists: int = 1  # trained to the end; the best on validation is kept
    steps: int = 1200  # Adam steps in full precision, per restart
    rounded_steps: int = 300  # then steps through the 0.1 grid (straight-through)
    batch: int = 64  # sentence pairs per minibatch
    lr: float = 0.02  # peak learning rate (Adam)
    warmup: int = 100  # steps of linear warm-up
    final_lr: float = 0.05  # the cosine schedule ends at final_lr · lr
    weight_decay: float = 1e-3  # decoupled (AdamW) on the grid arrays: keeps values small
    snapshots: int = 6  # parameter snapshots after step 0 (chapter `learning`)
    curve_every: int = 50  # steps between points of the loss/accuracy curves

    @property
    def model(self) -> ModelConfig:
        return ModelConfig(self.d_model, self.d_k, self.d_hidden, self.init_qk)

"""The tiny model's settings: its architecture and how it is trained, one typed object each."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.trained.training import TrainSettings, at_least_one, in_range

MAX_HEADS = 4
MAX_D_MODEL = 16


@dataclass(frozen=True)
class ModelConfig:
    """One attention layer and a small readout; small enough to check by hand."""

    d_model: int = 4  # width of E, P and X
    heads: int = 1  # attention heads
    d_k: int = 0  # width of each head's Q, K, V; 0: d_model // heads
    d_hidden: int = 16  # ReLU units of the readout (not shown in the video)
    init_qk: float = 0.1  # W_Q, W_K start at init_qk/√d_model: small → near-uniform attention

    def __post_init__(self) -> None:
        in_range(self, heads=(1, MAX_HEADS), d_model=(2, MAX_D_MODEL))
        if self.d_k == 0:
            if self.d_model % self.heads:
                raise ValueError(f"d_model: {self.d_model} does not split into {self.heads} "
                                 f"heads; give d_k, or a d_model divisible by {self.heads}")
            object.__setattr__(self, "d_k", self.d_model // self.heads)
        in_range(self, d_k=(1, MAX_D_MODEL))
        at_least_one(self, "d_hidden")


@dataclass(frozen=True)
class TrainConfig(TrainSettings):
    """Everything training depends on: the same TrainConfig gives bit-identical weights."""

    seed: int = 0  # corpus split, initialisation and minibatch order
    d_model: int = 4  # see ModelConfig
    heads: int = 1
    d_k: int = 0  # 0: d_model // heads
    d_hidden: int = 16
    init_qk: float = 0.1
    train_sentences: int = 4000  # fixed training set
    validation_sentences: int = 1000  # picks the best restart; the loss/accuracy curves
    test_sentences: int = 1000  # the quality bar, never seen while training or choosing
    restarts: int = 12  # independent initialisations, each trained for probe_steps
    probe_steps: int = 1000  # then only the `finalists` best (on validation) go on
    finalists: int = 2  # trained to the end; the best on validation is kept
    steps: int = 2400  # Adam steps in full precision, per restart
    rounded_steps: int = 600  # then steps through the 0.1 grid (straight-through estimator)
    batch: int = 64  # sentences per minibatch
    lr: float = 0.03  # peak learning rate (Adam)
    warmup: int = 100  # steps of linear warm-up
    final_lr: float = 0.1  # the cosine schedule ends at final_lr · lr
    weight_decay: float = 1e-3  # decoupled (AdamW) on E, W_Q, W_K, W_V, W_O: keeps values small
    snapshots: int = 6  # parameter snapshots after step 0 (chapter `learning`)
    curve_every: int = 50  # steps between points of the loss/accuracy curves

    @property
    def model(self) -> ModelConfig:
        return ModelConfig(self.d_model, self.heads, self.d_k, self.d_hidden, self.init_qk)

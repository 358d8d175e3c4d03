"""The training history a model file keeps, which chapter `learning` draws.

The kept restart's GRID arrays (on the 0.1 grid like the final ones) at step 0 and at a
few steps through training (`training.snapshot_steps`), with its training loss and
held-out accuracy curves. Each model has its own snapshot type; parameters, not one
sentence's attention, are kept, so any sentence in the vocabulary can be replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np


class Stepped(Protocol):
    step: int  # training steps done when the snapshot was taken


S = TypeVar("S", bound=Stepped)


@dataclass(frozen=True, eq=False)
class History(Generic[S]):
    """Snapshots of the kept restart and its curves."""

    restart: int  # which restart was kept
    snapshots: tuple[S, ...]  # step 0 first, the final weights last
    curve_step: np.ndarray  # (k,) steps at which the curves were sampled
    curve_loss: np.ndarray  # (k,) mean training loss over the steps since the last point
    curve_accuracy: np.ndarray  # (k,) held-out (validation) accuracy: the model's own measure

    @property
    def steps(self) -> tuple[int, ...]:
        return tuple(s.step for s in self.snapshots)

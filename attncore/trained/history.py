"""The training history a model file keeps, which chapter `learning` draws.

The kept restart's GRID arrays (on the 0.1 grid like the final ones) at step 0 and at a
few steps through training (`training.snapshot_steps`), with its training loss and
held-out accuracy curves. Parameters, not one sentence's attention, are kept, so any
sentence in the vocabulary can be replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from attention_video.attncore.trained.params import GridParams

P = TypeVar("P", bound=GridParams)


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A model's GRID arrays after `step` training steps, on the 0.1 grid."""

    step: int  # training steps done when the snapshot was taken
    arrays: dict[str, np.ndarray]  # GRID name → array

    @classmethod
    def of(cls, step: int, p: GridParams) -> Snapshot:
        r = p.rounded()
        return cls(step, {name: np.array(getattr(r, name)) for name in p.GRID})

    def params(self, readout: P) -> P:
        """These weights with another model's readout (which attention ignores)."""
        return readout.replace(**self.arrays)


@dataclass(frozen=True, eq=False)
class History:
    """Snapshots of the kept restart and its curves."""

    restart: int  # which restart was kept
    snapshots: tuple[Snapshot, ...]  # step 0 first, the final weights last
    curve_step: np.ndarray  # (k,) steps at which the curves were sampled
    curve_loss: np.ndarray  # (k,) mean training loss over the steps since the last point
    curve_accuracy: np.ndarray  # (k,) held-out (validation) accuracy: the model's own measure

    @property
    def steps(self) -> tuple[int, ...]:
        return tuple(s.step for s in self.snapshots)

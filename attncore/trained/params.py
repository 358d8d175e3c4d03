"""A trained model's learned arrays: one frozen dataclass per model, subclassing GridParams."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Self

import numpy as np
from attention_video.attncore.random_weights import on_grid


class GridParams:
    """What every model trained here does with its learned arrays (a frozen dataclass of
    arrays that subclasses this): GRID names those on the 0.1 grid in a finished model."""

    GRID: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.names()}

    def replace(self, **arrays: np.ndarray) -> Self:
        return dataclasses.replace(self, **arrays)

    def rounded(self) -> Self:
        """The GRID arrays on the 0.1 grid; the readout unchanged."""
        return self.replace(**{name: on_grid(getattr(self, name)) for name in self.GRID})

    def copy(self) -> Self:
        return type(self)(**{name: np.array(a, dtype=np.float64)
                             for name, a in self.arrays().items()})

    def frozen(self) -> Self:
        """Read-only float64 copies."""
        out = self.copy()
        for a in out.arrays().values():
            a.setflags(write=False)
        return out

"""How a trained model was made: the command that trains it again, and the platform it was
trained on.

Same settings give bit-identical weights only on the same numpy build, BLAS kernel and CPU:
a product that one BLAS kernel rounds 1 ulp differently moves a weight across a rounding
of the 0.1 grid, or changes which restart wins, and training goes on from there. So a model
trained here records its platform (`Platform.current()`), and a retraining is expected to
give the same bytes only where the platform matches (`bit_identical_here`). Elsewhere it
gives a model of the same quality, not the same numbers.
"""

from __future__ import annotations

import contextlib
import io
import platform as _platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Platform:
    """What bit-identical training depends on besides the settings."""

    numpy: str  # numpy.__version__
    blas: tuple[str, ...]  # numpy's BLAS as threadpoolctl reports it: "openblas 0.3.31 SkylakeX"
    cpu: str  # platform.machine(): "x86_64", "arm64"
    simd: tuple[str, ...]  # numpy's own SIMD kernels this CPU runs (its exp, log, sums)

    @classmethod
    def current(cls) -> Platform:
        return cls(np.__version__, _numpy_blas(), _platform.machine(), _numpy_simd())

    def to_dict(self) -> dict:
        return {"numpy": self.numpy, "blas": list(self.blas), "cpu": self.cpu,
                "simd": list(self.simd)}

    @classmethod
    def from_dict(cls, d: dict) -> Platform:
        return cls(str(d["numpy"]), tuple(d["blas"]), str(d["cpu"]), tuple(d["simd"]))

    def differences(self, other: Platform) -> list[str]:
        """What differs, "numpy 2.4.6 (here 2.3.1)"-style: self is the file's, other here."""
        out = []
        for name, label in (("numpy", "numpy"), ("blas", "BLAS"), ("cpu", "CPU"),
                            ("simd", "numpy SIMD")):
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                show = (lambda v: ", ".join(v) or "none") if isinstance(a, tuple) else str
                out.append(f"{label} {show(a)} (here {show(b)})")
        return out


def _numpy_blas() -> tuple[str, ...]:
    """The BLAS numpy itself calls. Other packages may load their own (SciPy, which Manim
    imports, brings a second OpenBLAS): only the one inside numpy's folder counts, when
    numpy ships one; else every BLAS loaded (a system or conda BLAS that all share)."""
    from threadpoolctl import threadpool_info

    libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    home = Path(np.__file__).resolve().parent
    own = [i for i in libs if Path(i.get("filepath") or "").resolve().parent in
           (home, home / ".dylibs", home.with_name("numpy.libs"))]
    return tuple(sorted({f"{i.get('internal_api')} {i.get('version')} "
                         f"{i.get('architecture') or '-'}" for i in own or libs}))


def _numpy_simd() -> tuple[str, ...]:
    """The SIMD extensions numpy found on this CPU and dispatches its kernels to."""
    with contextlib.redirect_stdout(io.StringIO()):  # mode="dicts" prints nothing; be sure
        config = np.show_config(mode="dicts")
    return tuple((config or {}).get("SIMD Extensions", {}).get("found", []))


@dataclass(frozen=True)
class Provenance:
    """How a model file says it was made (what it does not record is None)."""

    command: str | None = None  # how to train it again
    platform: Platform | None = None  # where it was trained; None in files older than this

    def to_meta(self) -> dict:
        """The model file's metadata entries."""
        meta: dict = {}
        if self.command is not None:
            meta["command"] = self.command
        if self.platform is not None:
            meta["platform"] = self.platform.to_dict()
        return meta

    @classmethod
    def from_meta(cls, meta: dict) -> Provenance:
        platform = meta.get("platform")
        return cls(meta.get("command"), None if platform is None else Platform.from_dict(platform))


def bit_identical_here(p: Provenance) -> tuple[bool, str]:
    """Whether retraining this model's settings here should give the same bytes, and why."""
    if p.platform is None:
        return False, ("the file records no platform (numpy, BLAS kernel, CPU) it was trained "
                       "on, so a retraining here can match it in quality, not bit for bit")
    differs = p.platform.differences(Platform.current())
    if differs:
        return False, ("trained on another platform: " + "; ".join(differs) +
                       "; a retraining here can match it in quality, not bit for bit")
    return True, "trained on this platform (numpy, BLAS kernel, CPU): the same bytes expected"

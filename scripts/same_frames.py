"""Are two videos the same picture, frame for frame? For refactors that must not change
what a viewer sees:

    python scripts/same_frames.py before.mp4 after.mp4 [more pairs ...]

Decodes both with PyAV and compares every frame's pixels and its time; prints one line
per pair (frames compared, the first difference if any) and exits 1 if any pair differs.
"""

from __future__ import annotations

import hashlib
import sys

import av


def frames(path: str) -> list[tuple[float, str]]:
    """(time in seconds, SHA-256 of the RGB pixels) of every decoded frame."""
    with av.open(path) as box:
        stream = box.streams.video[0]
        return [(float(f.time), hashlib.sha256(f.to_ndarray(format="rgb24").tobytes()).hexdigest())
                for f in box.decode(stream)]


def compare(a: str, b: str) -> str | None:
    """None when `a` and `b` show the same frames at the same times, else what differs."""
    fa, fb = frames(a), frames(b)
    if len(fa) != len(fb):
        return f"{len(fa)} frames against {len(fb)}"
    for i, ((ta, ha), (tb, hb)) in enumerate(zip(fa, fb, strict=True)):
        if abs(ta - tb) > 1e-6:
            return f"frame {i}: at {ta:.3f} s against {tb:.3f} s"
        if ha != hb:
            return f"frame {i} ({ta:.3f} s): different pixels"
    return None


def main(argv: list[str]) -> int:
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    failed = 0
    for a, b in zip(argv[::2], argv[1::2], strict=True):
        diff = compare(a, b)
        print(f"{a} vs {b}: " + (f"DIFFERENT: {diff}" if diff else f"same ({len(frames(a))} frames)"))
        failed += diff is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

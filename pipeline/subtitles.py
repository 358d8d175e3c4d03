"""Subtitles (.srt) from the captions each chapter recorded."""

from __future__ import annotations


def srt_time(t: float) -> str:
    ms = max(0, int(round(t * 1000)))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def to_srt(cues: list[tuple[float, float, str]]) -> str:
    """Numbered SRT cues; zero-length cues are dropped."""
    out, n = [], 0
    for start, end, text in cues:
        if end - start < 0.05:
            continue
        n += 1
        out.append(f"{n}\n{srt_time(start)} --> {srt_time(end)}\n{text}\n")
    return "\n".join(out)

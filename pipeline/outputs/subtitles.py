"""Subtitles (.srt and .vtt) from the captions each chapter recorded."""

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


def vtt_time(t: float) -> str:
    return srt_time(t).replace(",", ".")


def to_vtt(cues: list[tuple[float, float, str]]) -> str:
    """WebVTT cues (the same as the SRT's, for browsers and notebooks); zero-length cues
    are dropped. Text is escaped (&, <, >), and blank lines, which would end a cue, go."""
    out = ["WEBVTT\n"]
    for start, end, text in cues:
        if end - start < 0.05:
            continue
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        lines = [line for line in text.splitlines() if line.strip()]
        out.append(f"{vtt_time(start)} --> {vtt_time(end)}\n" + "\n".join(lines) + "\n")
    return "\n".join(out)

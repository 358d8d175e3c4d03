"""Subtitles from the captions each chapter recorded: .srt and .vtt files, and the
payload of a subtitle track inside the MP4 (mov_text) and the WebM (WebVTT).

Written by hand rather than with pysubs2: it would drop `{...}` from a caption as an ASS
override tag and does not escape `<` and `&` for WebVTT, so the escaping would stay."""

from __future__ import annotations

from collections.abc import Sequence

from attention_video.scenes.typeset import unicode_text


def srt_time(t: float) -> str:
    ms = max(0, int(round(t * 1000)))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def to_srt(cues: list[tuple[float, float, str]]) -> str:
    """Numbered SRT cues; zero-length cues are dropped."""
    out, n = [], 0
    for start, end, text in kept_cues(cues):
        n += 1
        out.append(f"{n}\n{srt_time(start)} --> {srt_time(end)}\n{cue_text(text)}\n")
    return "\n".join(out)


def vtt_time(t: float) -> str:
    return srt_time(t).replace(",", ".")


def to_vtt(cues: list[tuple[float, float, str]]) -> str:
    """WebVTT cues (the same as the SRT's, for browsers and notebooks); zero-length cues
    are dropped. Text is escaped (&, <, >), and blank lines, which would end a cue, go."""
    out = ["WEBVTT\n"]
    for start, end, text in kept_cues(cues):
        out.append(f"{vtt_time(start)} --> {vtt_time(end)}\n{vtt_text(text)}\n")
    return "\n".join(out)


def cue_text(text: str) -> str:
    """A caption as a subtitle file holds it, which has no markup: its maths in Unicode's
    small characters where it has them (Kᵀ, dₖ), as written where not (W_Q): scenes.typeset."""
    return unicode_text(text)


def vtt_text(text: str) -> str:
    """A cue's text as WebVTT holds it: typeset (cue_text), &, < and > escaped, and no
    blank line (which would end the cue)."""
    text = cue_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join(line for line in text.splitlines() if line.strip())


# The style header FFmpeg's text subtitle encoders (mov_text, webvtt) require to open; the
# players draw the cues in their own style, so only its presence matters.
ASS_HEADER = b"""[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
"""

SOFT_CAPTIONS = ("soft", "both")  # --captions values that put a subtitle track in the file
BURNED_CAPTIONS = ("burned", "both")  # --captions values that draw the caption in the picture


def writes_sidecars(captions: str) -> bool:
    """Whether the .srt/.vtt go beside the video. Players load a sidecar named like the
    video on their own (VLC: any subtitle file whose name starts with the video's), so
    they are written only when nothing is drawn in the picture that they would double:
    with soft captions, where they hold the same cues as the embedded track."""
    return captions == "soft"


def description_cues(cues: list[tuple[float, float, str]], descriptions: list[str],
                     said: Sequence[tuple[float, float] | None] = ()
                     ) -> list[tuple[float, float, str]]:
    """The descriptions track's cues: each caption's description (scenes.describe) timed
    while the described narration says it (`said`, one per caption: --describe --voice),
    else with its caption; a caption whose picture needs no words has no cue."""
    if len(descriptions) != len(cues):  # (a clip kept before descriptions were recorded)
        return []
    times = said if len(said) == len(cues) else [None] * len(cues)
    return [(*(t or (a, b)), d) for (a, b, _), d, t in zip(cues, descriptions, times) if d]


def kept_cues(cues: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The cues a subtitle file keeps: zero-length ones (under 50 ms) are dropped."""
    return [(a, b, text) for a, b, text in cues if b - a >= 0.05]


def mov_text_payload(text: str) -> bytes:
    """A mov_text (3GPP timed text) sample: the UTF-8 length as 16 bits, then the text."""
    data = cue_text(text).encode("utf-8")[:0xFFFF]
    return len(data).to_bytes(2, "big") + data


def mov_text_cue(payload: bytes) -> str:
    """The text of a mov_text sample (an empty sample fills a gap between cues)."""
    n = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 0
    return payload[2:2 + n].decode("utf-8", errors="replace")

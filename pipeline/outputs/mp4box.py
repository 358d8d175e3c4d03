"""Switch an MP4's subtitle tracks off, in place, in the file's own boxes.

FFmpeg's MP4 muxer marks the first track of each kind enabled (the track header's
`track_enabled` flag) when no track of that kind is flagged default, so a subtitle track
muxed off comes back enabled: FFmpeg, ffprobe and mpv then read it as default and mpv
shows it by default (over burned captions: each caption twice). The flag is one bit of
the `tkhd` box of the track (ISO/IEC 14496-12, 8.3.2); clearing it changes no size and
no offset, so the file is patched where it lies. A disabled subtitle track stays listed
and can be switched on in the player.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# hdlr handler types of a text track: MP4's timed text (tx3g/mov_text), QuickTime's, others'
SUBTITLE_HANDLERS = frozenset({b"sbtl", b"text", b"subt"})
TRACK_ENABLED = 0x01  # the tkhd flag, in the last of its three flag bytes
HEADER = 8  # a box's size (32 bits) and type (4 characters)


def _header(head: bytes, room: int) -> tuple[bytes, int, int] | None:
    """A box's type, header length and size from its first 16 bytes (`head`), `room`
    bytes being left in its parent; None when it does not fit (a damaged file)."""
    if len(head) < HEADER:
        return None
    size, kind = struct.unpack(">I4s", head[:HEADER])
    header = HEADER
    if size == 1:  # a 64-bit size follows the type
        if len(head) < HEADER + 8:
            return None
        (size,) = struct.unpack(">Q", head[HEADER:HEADER + 8])
        header += 8
    elif size == 0:  # to the end of its parent
        size = room
    return (kind, header, size) if header <= size <= room else None


def boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """The boxes laid one after another in data[start:end]: (type, where the body starts,
    where the box ends). A box that does not fit ends the walk."""
    at = start
    while (box := _header(data[at:min(at + 16, end)], end - at)) is not None:
        kind, header, size = box
        yield kind, at + header, at + size
        at += size


def _top_box(f: BinaryIO, wanted: bytes) -> tuple[int, int] | None:
    """Where the body of the top-level box `wanted` starts and where the box ends, found
    by reading only the boxes' headers (the media data is skipped, not read)."""
    length = f.seek(0, 2)
    at = 0
    while True:
        f.seek(at)
        box = _header(f.read(16), length - at)
        if box is None:
            return None
        kind, header, size = box
        if kind == wanted:
            return at + header, at + size
        at += size


def _child(data: bytes, parent: tuple[int, int], kind: bytes) -> tuple[int, int] | None:
    return next(((a, b) for k, a, b in boxes(data, *parent) if k == kind), None)


def subtitle_headers(moov: bytes) -> list[int]:
    """Where each subtitle track's tkhd body starts in the body of `moov`."""
    found = []
    for kind, a, b in boxes(moov, 0, len(moov)):
        if kind != b"trak":
            continue
        tkhd, mdia = _child(moov, (a, b), b"tkhd"), _child(moov, (a, b), b"mdia")
        hdlr = _child(moov, mdia, b"hdlr") if mdia else None
        # hdlr's body: version and flags (4 bytes), pre_defined (4), the handler type (4)
        if tkhd and hdlr and moov[hdlr[0] + 8:hdlr[0] + 12] in SUBTITLE_HANDLERS:
            found.append(tkhd[0])
    return found


def switch_off_subtitles(path: Path) -> int:
    """Clear the enabled flag of every subtitle track of the MP4 (or MOV) at `path`; returns
    how many tracks there were."""
    with open(path, "r+b") as f:
        moov = _top_box(f, b"moov")
        if moov is None:
            return 0
        f.seek(moov[0])
        body = f.read(moov[1] - moov[0])
        tracks = subtitle_headers(body)
        for tkhd in tracks:
            flags = tkhd + 3  # tkhd's version (1 byte), then its flags (3 bytes)
            f.seek(moov[0] + flags)
            f.write(bytes([body[flags] & ~TRACK_ENABLED & 0xFF]))
    return len(tracks)

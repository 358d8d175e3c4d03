"""pipeline.outputs.mp4box: the boxes are walked as laid out, and a file that is not an
MP4 (or a damaged one) is left as it was."""

from __future__ import annotations

import struct

from attention_video.pipeline.outputs.mp4box import boxes, switch_off_subtitles


def box(kind: bytes, body: bytes, wide: bool = False) -> bytes:
    if wide:  # the 64-bit size form
        return struct.pack(">I4sQ", 1, kind, 16 + len(body)) + body
    return struct.pack(">I4s", 8 + len(body), kind) + body


def test_boxes_walks_32_and_64_bit_sizes_and_stops_at_a_box_that_does_not_fit():
    data = box(b"ftyp", b"abcd") + box(b"free", b"xy", wide=True) + struct.pack(">I4s", 99, b"mdat")
    assert [(k, data[a:b]) for k, a, b in boxes(data, 0, len(data))] == [
        (b"ftyp", b"abcd"), (b"free", b"xy")]


def test_a_file_without_a_movie_box_is_left_as_it_was(tmp_path):
    path = tmp_path / "not.mp4"
    data = box(b"ftyp", b"isom") + b"\x00\x00"
    path.write_bytes(data)
    assert switch_off_subtitles(path) == 0
    assert path.read_bytes() == data

"""Kept speech and audio tracks heal themselves (issue 30): each is checked against its
record when used, a damaged one is made again with one warning line, whatever is in its
place is moved aside, --no-cache bypasses both, and with no room in the cache folder the
audio track is made in the output's own folder, so a narrated video is still made.

Before: a speech .wav cut to half its samples was used silently; a damaged .m4a failed
every narrated join until deleted by hand, with or without --no-cache; a folder in its
place, or `audio-tracks` being a file, or a full cache disk gave an error naming a hidden
temporary file.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import wave
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.pipeline.cache.paths import CACHE_ENV
from attention_video.pipeline.outputs import audio
from attention_video.pipeline.outputs.video import join
from attention_video.pipeline.records import OutputError
from attention_video.scenes import voice

from tests.pipeline.commands.test_cli import run_main
from tests.scenes.test_narration import beep, silent_clip

CAPTION = "Milk attends most to drank: 0.99."


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def mount_small(folder: Path, size: str = "600k") -> Path:
    """A small tmpfs at `folder` (root only; else the test is skipped), filled to the brim."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or 'not root'}")
    return folder


def fill(folder: Path) -> None:
    """Write into `folder` until its disk has no room left, in big then small pieces."""
    for i, piece in enumerate((65536, 512)):
        try:
            with open(folder / f"filler-{i}", "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * piece)
        except OSError as e:
            assert e.errno == errno.ENOSPC


@pytest.fixture
def small_disks(tmp_path):
    mounted: list[Path] = []

    def make(name: str) -> Path:
        folder = mount_small(tmp_path / name)
        mounted.append(folder)
        return folder

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


# ---- speech -----------------------------------------------------------------------------
def kept_wav(cache: Path) -> Path:
    (path,) = (cache / voice.SPEECH).rglob("*.wav")
    return path


@pytest.mark.slow
def test_a_file_where_the_speech_folder_belongs_is_moved_aside(cache):
    pytest.importorskip("piper", reason="the voice extra")
    cache.mkdir()
    (cache / voice.SPEECH).write_text("not a folder")
    voice.Narrator(voice.resolve("joe", "en"), "en", folder=cache).say(CAPTION)
    assert kept_wav(cache).is_file()


@pytest.mark.parametrize("how", ["file cut", pytest.param("half the samples", marks=pytest.mark.slow),
                                 pytest.param("a folder", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_a_damaged_kept_speech_is_said_again_with_one_warning(cache, capsys, how):
    pytest.importorskip("piper", reason="the voice extra")
    narrator = voice.Narrator(voice.resolve("joe", "en"), "en", folder=cache)
    first = narrator.say(CAPTION)
    path = kept_wav(cache)
    if how == "file cut":
        path.write_bytes(path.read_bytes()[:44 + len(first.samples)])  # half the samples' bytes
    elif how == "half the samples":  # a well-formed WAV, its header agreeing
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1), w.setsampwidth(2), w.setframerate(first.rate)
            w.writeframes(first.samples[:len(first.samples) // 2].astype("<i2").tobytes())
    else:
        path.unlink()
        path.mkdir()
    capsys.readouterr()
    again = voice.Narrator(voice.resolve("joe", "en"), "en", folder=cache).say(CAPTION)
    assert np.array_equal(again.samples, first.samples)
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1 and "kept speech" in warned[0] and "saying it again" in warned[0]
    assert kept_wav(cache).is_file()  # replaced
    capsys.readouterr()
    assert np.array_equal(voice.Narrator(voice.resolve("joe", "en"), "en",
                                         folder=cache).say(CAPTION).samples, first.samples)
    assert "warning" not in capsys.readouterr().err  # healed


@pytest.mark.slow
def test_no_cache_keeps_no_speech(cache, capsys):
    pytest.importorskip("piper", reason="the voice extra")
    code, _, err = run_main(["cats drink milk", "--weights", "random", "--chapters", "1",
                             "--voice", "joe", "--dry-run", "--no-cache"], capsys)
    assert code == 0, err
    assert not list(cache.rglob("*.wav"))


# ---- audio tracks -----------------------------------------------------------------------
@pytest.fixture
def clips(tmp_path) -> list[Path]:
    a, b = silent_clip(tmp_path / "a.mp4", 1.0), silent_clip(tmp_path / "b.mp4", 1.0)
    audio.add_track(a, beep(0.2, 0.3, 1.0))
    audio.add_track(b, beep(0.5, 0.3, 1.0))
    return [a, b]


def kept_tracks(cache: Path) -> list[Path]:
    folder = cache / audio.TRACKS
    return sorted(folder.glob("*.m4a")) if folder.is_dir() else []


def heard(video: Path) -> np.ndarray:
    samples = audio.read_track(video)
    assert samples is not None, f"{video} has no audio"
    return samples


def spoil(track: Path, how: str) -> None:
    if how == "cut":
        track.write_bytes(track.read_bytes()[:track.stat().st_size // 2])
    elif how == "random bytes":
        track.write_bytes(np.random.default_rng(1).bytes(track.stat().st_size))
    elif how == "a folder":
        track.unlink()
        track.mkdir()
        (track / "inside").write_text("x")
    else:
        shutil.rmtree(track.parent)
        track.parent.write_text("not a folder")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["cut", "random bytes", "a folder", "tracks a file"])
def test_a_damaged_audio_track_is_made_again_with_one_warning(cache, clips, tmp_path, how):
    reference = tmp_path / "first.mp4"
    join(clips, reference)
    (track,) = kept_tracks(cache)
    spoil(track, how)
    out = tmp_path / "again.mp4"
    join(clips, out)
    assert np.array_equal(heard(out), heard(reference))
    assert kept_tracks(cache) == [track] and track.is_file()  # healed
    spoil(track, how)
    said: list[str] = []
    join(clips, tmp_path / "third.mp4", warn=said.append)
    if how != "tracks a file":  # (a file in the folder's place holds no track to warn of)
        assert len(said) == 1 and "damaged" in said[0] and str(track) in said[0], said
    said.clear()
    join(clips, tmp_path / "fourth.mp4", warn=said.append)
    assert said == [] and track.is_file()


def test_no_cache_neither_reads_nor_keeps_an_audio_track(cache, clips, tmp_path):
    join(clips, tmp_path / "first.mp4")
    (track,) = kept_tracks(cache)
    track.write_bytes(b"damaged")
    out = tmp_path / "uncached.mp4"
    join(clips, out, keep_track=False)
    assert np.array_equal(heard(out), heard(tmp_path / "first.mp4"))
    assert track.read_bytes() == b"damaged"  # not read, not replaced
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_full_cache_disk_makes_the_audio_track_beside_the_output(tmp_path, monkeypatch,
                                                                    clips, small_disks):
    full = small_disks("cache")
    monkeypatch.setenv(CACHE_ENV, str(full))
    fill(full)
    out = tmp_path / "video.mp4"
    join(clips, out)
    assert len(heard(out)) > 0.9 * 2 * audio.RATE
    assert kept_tracks(full) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_full_output_disk_too_is_one_line_naming_it(tmp_path, monkeypatch, clips,
                                                       small_disks):
    cache, outputs = small_disks("cache"), small_disks("outputs")
    monkeypatch.setenv(CACHE_ENV, str(cache))
    fill(cache)
    fill(outputs)
    with pytest.raises(OutputError) as info:
        join(clips, outputs / "video.mp4")
    line = str(info.value)
    assert "\n" not in line and f"the disk of {outputs} is full" in line
    assert f"{os.sep}." not in line  # no hidden file named
    assert not [p for p in outputs.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_a_full_cache_disk_with_every_chapter_cached_still_makes_a_narrated_video(
        tmp_path, monkeypatch, capsys):
    """The whole command: chapter 1 narrated and cached, then the cache's disk fills."""
    pytest.importorskip("piper", reason="the voice extra")
    cache = mount_small(tmp_path / "cache", "100m")  # over MIN_FREE: cached first
    try:
        monkeypatch.setenv(CACHE_ENV, str(cache))
        args = ["cats drink milk", "--weights", "random", "-q", "l", "--chapters", "1",
                "--voice", "joe"]
        code, _, err = run_main([*args, "-o", str(tmp_path / "first.mp4")], capsys)
        assert code == 0, err
        fill(cache)
        out = tmp_path / "second.mp4"
        code, _, err = run_main([*args, "-o", str(out)], capsys)
        assert code == 0 and "Error" not in err, err
        assert "chapter 1 (" in err and ": cached" in err  # every chapter from the cache
        with av.open(str(out)) as c:
            assert c.streams.audio
        assert len(heard(out)) > audio.RATE
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)

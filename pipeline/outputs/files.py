"""Atomic outputs: a failed or interrupted render never leaves a partial file behind and
never destroys an earlier output."""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from attention_video.pipeline.records import OutputError


def slug(text: str, max_len: int = 48) -> str:
    """A file-name-safe form of a sentence: 'The black cat…' → 'the-black-cat'."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"[^\w]+", "-", t).strip("-_")
    return (t[:max_len].rstrip("-") or "attention")


def default_output(sentence: str) -> Path:
    return Path("media") / f"{slug(sentence)}.mp4"


def check_writable_folder(path: Path, create: bool = False) -> None:
    """Fail early, before any rendering, when the output folder is unusable.

    A missing folder is an error (a typo in -o should not scatter folders), except for
    the default output folder, which is created (`create`)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists() and path.is_dir():
        raise OutputError(f"{path} is a folder; give a file path such as {path / 'attention.mp4'}")
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"cannot write {path}: {probe} is a file, not a folder")
    if probe != folder and not create:
        raise OutputError(f"folder {folder} does not exist; create it or choose another output path")
    if not os.access(probe, os.W_OK | os.X_OK) or not _really_writable(probe):
        raise OutputError(f"folder {probe} is not writable; choose another output path")


# The roles of companions() written only with soft captions (writes_sidecars)
SIDECARS = ("subtitles", "captions", "chapter track")


def companions(video: Path, describe: bool = False) -> dict[str, Path]:
    """The files a video is written with, by role: itself, its subtitles, captions and
    chapters track (the last three only with soft captions: writes_sidecars), and with
    --describe its descriptions track."""
    video = Path(video)
    files = {"video": video, "subtitles": video.with_suffix(".srt"),
             "captions": video.with_suffix(".vtt"), "chapter track": chapters_track_path(video)}
    if describe:
        files["descriptions track"] = descriptions_path(video)
    return files


def chapters_track_path(video: Path) -> Path:
    """Where the WebVTT chapters track of `video` goes (pipeline.outputs.chapters): beside
    it, `<stem>.chapters.vtt`."""
    video = Path(video)
    return video.with_name(video.stem + ".chapters.vtt")


def descriptions_path(video: Path) -> Path:
    """Where the --describe WebVTT descriptions track of `video` goes: beside it,
    `<stem>.descriptions.vtt` (a player that loads sidecars by the video's name finds it;
    the kind is the page's and the player's to set, a file has none)."""
    video = Path(video)
    return video.with_name(video.stem + ".descriptions.vtt")


def deck_path(video: Path) -> Path:
    """Where the --slides HTML deck of `video` goes (pipeline.outputs.slides): beside it,
    `<stem>.html` (its PPTX: `<stem>.pptx`)."""
    return Path(video).with_suffix(".html")


def relative_href(target: Path, page: Path) -> str:
    """`target`'s address from the HTML file `page`: relative (the two travel together),
    URL-quoted."""
    relative = os.path.relpath(Path(target).resolve(), Path(page).resolve().parent)
    return quote(Path(relative).as_posix())


def page_path(video: Path) -> Path:
    """Where the companion page of `video` goes (pipeline.outputs.page): beside it,
    `<stem>.page.html`, so that it and the --slides deck (`<stem>.html`) can both be made."""
    video = Path(video)
    return video.with_name(video.stem + ".page.html")


def poster_path(page: Path) -> Path:
    """Where a companion page's poster frame goes: beside it, `<stem>.poster.png` for
    `<stem>.page.html`."""
    page = Path(page)
    return page.with_name(page.name.removesuffix(".html").removesuffix(".page") + ".poster.png")


def check_outputs(files: dict[str, Path], folders: dict[str, Path] | None = None) -> None:
    """Before anything is made: no two outputs share a path (however it is spelt, links
    followed), no file output is a folder, no folder output (--export-csv) a file. One
    OutputError line naming both roles and the path. `files` and `folders` map a role
    ('the video', '--export-json') to its path."""
    folders = folders or {}
    for role, p in files.items():
        if Path(p).is_dir():
            raise OutputError(f"{role} goes to {p}, which is a folder; move it away or "
                              "choose another output path")
    for role, p in folders.items():
        if Path(p).exists() and not Path(p).is_dir():
            raise OutputError(f"{role} is a folder of files, and {p} is a file; choose "
                              "another folder")
    seen: dict[str, str] = {}
    for role, p in [*files.items(), *folders.items()]:
        key = os.path.normcase(os.path.realpath(p))
        if key in seen:
            raise OutputError(f"{seen[key]} and {role} would both be written to {p}; "
                              "give them different paths")
        seen[key] = role


def _really_writable(folder: Path) -> bool:
    """os.access says yes to root everywhere; try to create a file to be sure."""
    try:
        fd, name = tempfile.mkstemp(prefix=".write-test-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def partial_path(final: Path) -> Path:
    """A unique temporary name beside the final file (same filesystem: rename is atomic)."""
    fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".part", dir=final.parent)
    os.close(fd)
    return Path(name)


@contextmanager
def atomic_output(final: Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces `final` in one step,
    on any failure (or Ctrl-C) it is removed and `final` is untouched."""
    final = Path(final)
    if final.is_dir():  # name the real path, not the hidden temporary one
        raise OutputError(f"{final} is a folder; move it away or choose another output path")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_path(final)
    try:
        yield tmp
        if tmp.stat().st_size == 0:
            raise OutputError(f"nothing was written for {final}")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(final: Path, text: str) -> None:
    with atomic_output(final) as tmp:
        tmp.write_text(text, encoding="utf-8")

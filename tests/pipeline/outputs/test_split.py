"""--split (pipeline.outputs.split): one playable file per chapter, each with the chapter's
frames and its one chapter mark, a playlist in playing order and an index page linking
every file; and end to end from the command, the files' frames add up to the video's."""

from __future__ import annotations

import html.parser
from pathlib import Path

import av
import pytest
from attention_video.attncore.settings import Settings
from attention_video.pipeline.outputs.split import split_folder, write_split
from attention_video.pipeline.records import ChapterResult, OutputError

from tests.pipeline.outputs.test_pipeline_video import ffprobe_chapters, make_clip


def frames(path: Path) -> int:
    with av.open(str(path)) as c:
        return sum(1 for _ in c.decode(video=0))


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.hrefs += [v for k, v in attrs if k in ("href", "src")]


def test_each_chapter_becomes_a_file_with_its_frames_mark_playlist_and_index(tmp_path):
    clips = [make_clip(tmp_path / "a.mp4", 12, 40), make_clip(tmp_path / "b.mp4", 6, 200)]
    results = [ChapterResult("input", 12 / 15, [], clip=clips[0], title="1 · Input <&>"),
               ChapterResult("dot", 6 / 15, [], clip=clips[1], title="4 · One cell")]
    video = tmp_path / "talk.mp4"
    made = write_split(video, results, Settings(sentence="The cat sat"))
    folder = split_folder(video)
    assert [p.name for p in made] == ["01-input.mp4", "04-dot.mp4", "playlist.m3u", "index.html"]
    assert [frames(p) for p in made[:2]] == [12, 6]
    assert ffprobe_chapters(made[1]) == [(0.0, pytest.approx(0.4, abs=1e-3), "4 · One cell")]
    lines = (folder / "playlist.m3u").read_text(encoding="utf-8").splitlines()
    assert lines == ["#EXTM3U", "#EXTINF:1,1 · Input <&>", "01-input.mp4",
                     "#EXTINF:0,4 · One cell", "04-dot.mp4"]
    page = Links()
    page.feed((folder / "index.html").read_text(encoding="utf-8"))
    assert set(page.hrefs) == {"playlist.m3u", "01-input.mp4", "04-dot.mp4"}
    assert "1 · Input &lt;&amp;&gt;" in (folder / "index.html").read_text(encoding="utf-8")


def test_a_clip_gone_from_the_cache_is_one_line(tmp_path):
    gone = ChapterResult("input", 1.0, [], clip=tmp_path / "missing.mp4", title="1 · Input")
    with pytest.raises(OutputError, match=r"--split: the clip of 1 · Input is no longer"):
        write_split(tmp_path / "v.mp4", [gone], Settings(sentence="x"))


@pytest.mark.slow
def test_the_command_splits_the_video_it_made(tmp_path):
    from attention_video.pipeline.commands.cli import main

    video = tmp_path / "v.mp4"
    with pytest.raises(SystemExit) as done:
        main(["The cat sat", "--weights", "random", "-q", "l", "--chapters", "1,3", "-o",
              str(video), "--split"])
        raise SystemExit(0)
    assert done.value.code in (0, None)
    files = sorted(split_folder(video).glob("*.mp4"))
    assert [p.name for p in files] == ["01-input.mp4", "03-factor.mp4"]
    assert sum(frames(p) for p in files) == frames(video)

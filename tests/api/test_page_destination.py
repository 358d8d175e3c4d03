"""The notebook result's .page(destination) gets the command line's one-line errors: a file
in the path, a folder, or the video's own path is refused before anything is written (a
file in the path raised a raw FileExistsError naming the wrong thing)."""

from __future__ import annotations

import pytest
from attention_video.api import Explanation
from attention_video.attncore import Settings, build_trace
from attention_video.pipeline.outputs.files import OutputError


@pytest.fixture
def result(tmp_path):
    settings = Settings(weights="random", chapters=("input",))
    return Explanation(settings, build_trace(settings), tmp_path / "video.mp4", None, None, [],
                       chapters=[object()])  # never read: every case fails before the page


def test_a_file_in_the_path_is_one_line(result, tmp_path):
    (tmp_path / "notes").write_text("a file")
    with pytest.raises(OutputError, match=r"notes is a file, not a folder"):
        result.page(tmp_path / "notes" / "x.page.html")
    assert (tmp_path / "notes").read_text() == "a file"


def test_a_folder_is_one_line(result, tmp_path):
    (tmp_path / "pages").mkdir()
    with pytest.raises(OutputError, match=r"pages is a folder; give a file path"):
        result.page(tmp_path / "pages")


def test_a_missing_folder_is_one_line(result, tmp_path):
    with pytest.raises(OutputError, match=r"does not exist; create it"):
        result.page(tmp_path / "nowhere" / "x.page.html")


def test_the_videos_own_path_is_refused(result, tmp_path):
    with pytest.raises(OutputError, match=r"would both be written"):
        result.page(tmp_path / "video.mp4")

"""--captions seen by real clients: each caption shows once by default in VLC (tracks it
loads and enables, sidecars included), in mpv (and ffprobe's dispositions), in Chromium (a
page using the .vtt, over http) and in the notebook's HTML. Real renders: marked slow."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from attention_video.api import Explanation
from attention_video.attncore.settings import Settings
from attention_video.pipeline.commands import cli
from attention_video.pipeline.outputs.video import subtitle_track
from click.testing import CliRunner

pytestmark = pytest.mark.alone  # VLC and Chromium play in real time

vlc = pytest.importorskip("vlc")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SENTENCE = "The black cat drank the milk"


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    """One short video per --captions value (chapter 1, 480p15), soft with a WebM too."""
    folder = tmp_path_factory.mktemp("captions")
    made = {}
    for mode in ("burned", "soft", "both"):
        (folder / mode).mkdir()
        out = folder / mode / "talk.mp4"
        args = [SENTENCE, "-q", "l", "--chapters", "1", "--captions", mode, "-o", str(out),
                "--format", "webm", "--quiet"]
        r = CliRunner().invoke(cli.cli, args)
        assert r.exit_code == 0, r.output
        made[mode] = out
    return made


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # no request lines in the log
        pass


def vlc_subtitles(path: Path) -> tuple[int, int]:
    """(subtitle tracks VLC loads, sidecars it finds on its own included; the one it shows,
    -1 for none), a second into playing."""
    instance = vlc.Instance(["--quiet", "--no-audio", "--vout=dummy", "--intf=dummy"])
    player = instance.media_player_new()
    player.set_media(instance.media_new(str(path)))
    player.play()
    deadline = time.monotonic() + 20
    while player.get_state() != vlc.State.Playing and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)  # the sidecars are probed as playing starts
    tracks = [i for i, _ in (player.video_get_spu_description() or []) if i != -1]
    shown = player.video_get_spu()
    player.stop()
    player.release()
    instance.release()
    return len(tracks), shown


@pytest.mark.slow
def test_files_written_per_captions_mode(videos):
    burned, soft, both = videos["burned"], videos["soft"], videos["both"]
    assert not burned.with_suffix(".srt").exists() and not burned.with_suffix(".vtt").exists()
    assert subtitle_track(burned) is None
    assert soft.with_suffix(".srt").exists() and soft.with_suffix(".vtt").exists()
    for video in (soft, soft.with_suffix(".webm")):
        cues, on, _ = subtitle_track(video)
        assert cues and on
    assert not both.with_suffix(".srt").exists()
    for video in (both, both.with_suffix(".webm")):
        cues, on, _ = subtitle_track(video)
        assert cues and not on  # listed, switchable, off: the picture shows them


FFPROBE, MPV = shutil.which("ffprobe"), shutil.which("mpv")


def ffprobe_subtitles(path: Path) -> list[dict[str, int]]:
    """Each subtitle track's default and forced flags, as ffprobe -show_streams reads them."""
    out = subprocess.run([FFPROBE, "-v", "error", "-select_streams", "s", "-show_streams",
                          "-of", "json", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [{k: s["disposition"][k] for k in ("default", "forced")}
            for s in json.loads(out)["streams"]]


@pytest.mark.slow
@pytest.mark.skipif(FFPROBE is None, reason="ffprobe is not installed (Debian's ffmpeg)")
def test_ffprobe_reads_both_tracks_off_and_the_soft_tracks_default(videos):
    """both: the MP4's and the WebM's track is neither default nor forced (the MP4 muxer
    had enabled it, and mpv showed it over the burned captions); soft: default."""
    for video in (videos["both"], videos["both"].with_suffix(".webm")):
        assert ffprobe_subtitles(video) == [{"default": 0, "forced": 0}], video.name
    for video in (videos["soft"], videos["soft"].with_suffix(".webm")):
        assert ffprobe_subtitles(video) == [{"default": 1, "forced": 0}], video.name


def mpv_subtitles(path: Path) -> list[str]:
    """The subtitle lines of mpv's track list on opening `path` (its own defaults: no
    config), "(+)" marking the one it shows."""
    run = subprocess.run([MPV, "--no-config", "--vo=null", "--ao=null", "--frames=1",
                          str(path)], capture_output=True, text=True, timeout=120)
    return [line for line in (run.stdout + run.stderr).splitlines() if "--sid=" in line]


@pytest.mark.slow
@pytest.mark.skipif(MPV is None, reason="mpv is not installed")
def test_mpv_lists_the_both_track_without_showing_it(videos):
    for video in (videos["both"], videos["both"].with_suffix(".webm")):
        tracks = mpv_subtitles(video)
        assert len(tracks) == 1 and "(+)" not in tracks[0], (video.name, tracks)
    shown = [line for line in mpv_subtitles(videos["soft"]) if "(+)" in line]
    assert len(shown) == 1, shown  # soft: one track shown (the embedded one or a sidecar)


@pytest.mark.slow
def test_vlc_shows_each_caption_once(videos):
    assert vlc_subtitles(videos["burned"]) == (0, -1)  # burned: nothing to add on top
    loaded, shown = vlc_subtitles(videos["both"])
    assert loaded == 1 and shown == -1  # the track is there to switch on, and off
    loaded, shown = vlc_subtitles(videos["both"].with_suffix(".webm"))
    assert loaded == 1 and shown == -1
    loaded, shown = vlc_subtitles(videos["soft"])
    assert loaded >= 1 and shown != -1  # soft: one track on (the embedded one or a sidecar)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chromium_page_with_the_vtt_shows_one_track(videos):
    """A page as a course site writes it (<track default> on the soft .vtt), over http:
    Chromium shows that track and nothing else; the MP4's own track is not a text track."""
    folder = videos["soft"].parent
    (folder / "page.html").write_text(
        '<video src="talk.mp4" muted></video><script>'
        "const v=document.querySelector('video');const t=document.createElement('track');"
        "t.kind='captions';t.src='talk.vtt';t.srclang='en';t.default=true;v.appendChild(t);"
        "setTimeout(()=>{document.body.dataset.tracks=[...v.textTracks].map(x=>x.mode).join(',');"
        "document.body.dataset.cues=v.textTracks[0].cues?v.textTracks[0].cues.length:0},2000);"
        "</script>", encoding="utf-8")
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    try:
        dom = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
             "--dump-dom", f"http://127.0.0.1:{server.server_address[1]}/page.html"],
            capture_output=True, text=True, timeout=120).stdout
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(profile, ignore_errors=True)
    tracks = re.search(r'data-tracks="([^"]*)"', dom)
    assert tracks is not None, dom[:500]
    assert tracks.group(1).split(",").count("showing") == 1
    assert int(re.search(r'data-cues="(\d+)"', dom).group(1)) > 0


def test_notebook_html_turns_on_no_track_over_burned_captions(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"\0")
    vtt = tmp_path / "v.vtt"
    vtt.write_text("WEBVTT\n", encoding="utf-8")
    burned = Explanation(Settings(sentence="a b"), None, video, None, None, [])
    assert "<track" not in burned.html()
    soft = Explanation(Settings(sentence="a b", captions="soft"), None, video,
                       tmp_path / "v.srt", vtt, [])
    track = re.search(r"<track [^>]*>", soft.html()).group(0)
    assert "default" in track and 'kind="captions"' in track
    assert 'kind="chapters"' not in soft.html()  # no chapters track beside it: none named
    (tmp_path / "v.chapters.vtt").write_text("WEBVTT\n", encoding="utf-8")
    chapters = re.findall(r'<track kind="chapters" src="([^"]*)"[^>]*>', soft.html())
    assert [Path(c).resolve() for c in chapters] == [tmp_path / "v.chapters.vtt"]
    inline = re.findall(r'<track kind="chapters" src="([^"]*)"', soft.html(embed=True))
    assert inline == ["data:text/vtt;base64," + base64.b64encode(b"WEBVTT\n").decode()]

"""--slides: the per-step clips are cut where each caption's picture is complete, by
stream copy; the HTML deck plays offline in a real browser (headless Chromium over the
DevTools protocol) and the PPTX has one slide per step with a movie, the caption as notes
and the step's held picture as its preview. Every step holds on a picture, never on a
faded frame or an emptied stage: in Chromium after each →, and in LibreOffice's PDF of the
PPTX. Nothing draws a progress bar."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.pipeline.outputs.slides import (
    Step,
    cut,
    plan_steps,
    write_slides,
)
from attention_video.pipeline.outputs.video import probe, subtitle_track
from attention_video.pipeline.run.chapter import ChapterResult
from attention_video.scenes.layout import SAFE_BOTTOM, STAGE_TOP
from pptx.oxml.ns import qn

from tests.support.paths import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SOFFICE = shutil.which("soffice")

# What a held frame must show: pixels drawn on, those that differ from the theme's
# background by more than INK in a channel (a fade's last frames, and a player's colour
# conversion, stay under it). On the default video at 480p a faded-out frame has none
# (0.34% in LibreOffice: the badge of a blank chapter opening), title and caption alone
# 1.5-3%; a cleared stage has none, the sparsest stage (one word and its label) 0.65%.
FRAME_HEIGHT = 8.0  # Manim's frame in scene units, those of STAGE_TOP and SAFE_BOTTOM
INK = 51  # of 255
FRAME_INK = 0.005  # a frame with fewer of its pixels drawn on is blank
STAGE_INK = 0.002  # a stage with fewer of its pixels drawn on is empty


def frame_content(image, background: str) -> tuple[float, float]:
    """The share of the frame's pixels drawn on, and of the stage's: the band between the
    title and the caption (scenes.layout). A 1% margin at the sides is left out (a PDF
    page's rounded edge)."""
    rgb = np.asarray(image.convert("RGB"), float)
    bg = np.array([int(background[i:i + 2], 16) for i in (1, 3, 5)])
    h, w, _ = rgb.shape
    margin = max(1, w // 100)
    drawn = np.abs(rgb - bg).max(axis=2)[:, margin:-margin] > INK  # (H, W - 2 margin)
    top = round(h * (0.5 - STAGE_TOP / FRAME_HEIGHT))
    bottom = round(h * (0.5 - SAFE_BOTTOM / FRAME_HEIGHT))
    return float(drawn.mean()), float(drawn[top:bottom].mean())


def shows_a_stage(clip: bytes, background: str) -> bool:
    """Whether any frame of the step's clip has something on its stage (a caption said
    over an empty stage, such as chapter 8's opening question, has nothing to hold)."""
    from PIL import Image

    with av.open(io.BytesIO(clip)) as c:
        return any(frame_content(Image.fromarray(f.to_ndarray(format="rgb24")), background)[1]
                   >= STAGE_INK for f in c.decode(video=0))


def make_clip(path: Path, seconds: float, fps: int = 10, keyframes: tuple[float, ...] = ()) -> Path:
    """A small H.264 clip whose grey level rises frame by frame, with keyframes forced at
    `keyframes` (as Manim's separate animation segments give)."""
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=fps, options={"crf": "30", "preset": "ultrafast"})
        s.width, s.height, s.pix_fmt = 64, 36, "yuv420p"
        n = round(seconds * fps)
        for i in range(n):
            img = np.full((36, 64, 3), int(255 * i / n), np.uint8)
            img[8:28, 16:48] = (240, 200, 40)  # a box: a frame is never one flat colour
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            if any(abs(i / fps - k) < 1e-9 for k in keyframes):
                frame.pict_type = av.video.frame.PictureType.I
            c.mux(s.encode(frame))
        c.mux(s.encode(None))
    return path


def keyframe_count(path: Path) -> int:
    with av.open(str(path)) as c:
        return sum(p.is_keyframe for p in c.demux(c.streams.video[0]) if p.pts is not None)


def test_one_step_per_caption_each_chapter_starting_at_zero():
    r3 = ChapterResult(3, 10.0, [(0.6, 3.0, "a"), (3.0, 3.01, "zero"), (3.2, 9.5, "b")])
    r5 = ChapterResult(5, 4.0, [(0.5, 4.0, "c")])
    assert plan_steps([r3, r5]) == [Step(3, 0.0, 3.2, "a"), Step(3, 3.2, 10.0, "b"),
                                    Step(5, 0.0, 4.0, "c")]


def test_a_step_ends_where_its_picture_is_complete_and_the_next_starts_there():
    """Holds (ChapterScene.caption_ends): caption "a"'s stage is cleared at 2.5 s, before
    "b" comes at 3.0 s; the chapter fades out after 9.5 s. A zero-length caption's frames
    go to the step after it."""
    r3 = ChapterResult(3, 10.0, [(0.6, 3.0, "a"), (3.0, 3.01, "zero"), (3.2, 9.5, "b")],
                       holds=[2.5, 3.0, 9.5])
    assert plan_steps([r3]) == [Step(3, 0.0, 2.5, "a"), Step(3, 2.5, 9.5, "b")]


def test_cut_on_a_keyframe_copies_the_packets(tmp_path):
    clip = make_clip(tmp_path / "c.mp4", 3.0, keyframes=(0.0, 1.2))
    with av.open(str(clip)) as c:
        s = c.streams.video[0]
        packets = {p.pts: bytes(p) for p in c.demux(s) if p.pts is not None}
        tb = s.time_base
    cut(clip, 1.2, 3.0, tmp_path / "b.mp4")
    with av.open(str(tmp_path / "b.mp4")) as c:
        s = c.streams.video[0]
        copied = [bytes(p) for p in c.demux(s) if p.pts is not None]
    assert copied == [packets[k] for k in sorted(packets) if k * tb >= 1.2]  # byte for byte
    assert probe(tmp_path / "b.mp4").duration == pytest.approx(1.8, abs=0.01)


def test_cut_off_a_keyframe_is_reencoded_from_the_right_frame(tmp_path):
    clip = make_clip(tmp_path / "c.mp4", 3.0, keyframes=(0.0,))
    cut(clip, 1.5, 2.5, tmp_path / "b.mp4")
    info = probe(tmp_path / "b.mp4")
    assert info.frames == 10 and info.width == 64
    with av.open(str(tmp_path / "b.mp4")) as c:
        first = next(c.decode(video=0)).to_ndarray(format="rgb24")
    assert abs(int(first[2, 2].mean()) - 255 * 15 // 30) <= 8  # frame 15 of 30, not frame 0


def test_cut_inside_a_hold_opens_on_the_held_frame_and_keeps_each_frames_time(tmp_path):
    """A held frame is stored once and shown until the next one (fastmanim.encoder): a
    re-encoded cut must place frames by their timestamps, not count them."""
    fps, clip = 10, tmp_path / "held.mp4"
    with av.open(str(clip), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=fps, options={"crf": "20", "preset": "ultrafast"})
        s.width, s.height, s.pix_fmt = 64, 36, "yuv420p"
        for pts, grey in [(0, 40)] + [(20 + i, 200) for i in range(10)]:  # 0–2 s held, then 1 s
            frame = av.VideoFrame.from_ndarray(np.full((36, 64, 3), grey, np.uint8), format="rgb24")
            frame.pts = pts
            c.mux(s.encode(frame))
        c.mux(s.encode(None))
    cut(clip, 1.0, 2.5, tmp_path / "step.mp4")  # 1.0 s is inside the hold, not a keyframe
    with av.open(str(tmp_path / "step.mp4")) as c:
        s = c.streams.video[0]
        shown = [(round(float(f.pts * s.time_base), 2), int(f.to_ndarray(format="rgb24").mean()))
                 for f in c.decode(s)]
    assert shown[0][0] == 0.0 and abs(shown[0][1] - 40) <= 4  # opens on the held frame
    assert shown[1][0] == 1.0 and abs(shown[1][1] - 200) <= 4  # the next picture at 2.0 − 1.0 s
    assert [t for t, _ in shown] == [0.0, 1.0, 1.1, 1.2, 1.3, 1.4]


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    """A deck of two chapters with two and one captions, from synthetic clips."""
    folder = tmp_path_factory.mktemp("deck")
    a = make_clip(folder / "a.mp4", 3.0, keyframes=(0.0, 1.5))
    b = make_clip(folder / "b.mp4", 2.0, keyframes=(0.0,))
    chapters = [ChapterResult("input", 3.0, [(0.2, 1.5, "First <step> & one"), (1.5, 3.0, "Second")],
                              clip=a),
                ChapterResult("linear", 2.0, [(0.0, 2.0, "Third")], clip=b)]
    html, pptx, n = write_slides(chapters, folder / "talk.mp4", "The cat", "#000000")
    return html, pptx, n


@pytest.mark.slow
def test_outputs_beside_the_video_with_its_stem(deck):
    html, pptx, n = deck
    assert (html.name, pptx.name, n) == ("talk.html", "talk.pptx", 3)
    text = html.read_text(encoding="utf-8")
    assert text.count("data:video/mp4;base64,") == 3  # the videos are inside the file
    outside = re.sub(r"data:[^\"]*", "", text)  # (base64 may spell anything)
    assert "cdn" not in outside.lower() and "First &lt;step&gt; &amp; one" in text


def test_html_needs_no_network_and_mutes_only_silent_steps(deck, narrated_deck):
    """The project's template (revealjs/deck.html, rendered by manim-slides' converter)
    brings reveal.js inline, as data URIs: nothing is fetched from anywhere. No step with
    sound is marked muted (manim-slides' own template mutes the first); a step without
    sound is, so that the browser plays it without asking (no "Unmute video" button)."""
    text = deck[0].read_text(encoding="utf-8")
    links = re.findall(r'(?:src|href)="([^"]*)"', text)
    # data URIs, and the chapter menu's steps (#/3: a place in the page, nothing fetched)
    assert links and all(link.startswith("data:") or re.fullmatch(r"#/\d+", link)
                         for link in links), links
    assert any(link.startswith("data:") for link in links)
    assert not re.search(r"https?://(?!github\.com/hakimel)", text)  # (a credit in a comment)
    assert "Hakim El Hattab" in base64.b64decode(
        next(link for link in links if "javascript" in link).split(",", 1)[1]).decode()
    slides = text.split("<script")[0]
    assert slides.count("data-background-video=") == 3
    assert slides.count("data-background-video-muted") == 3  # silent: every step
    assert "muted" not in narrated_deck.read_text(encoding="utf-8").split("<script")[0]


def last_frame(clip: bytes) -> np.ndarray:
    with av.open(io.BytesIO(clip)) as c:
        return deque(c.decode(video=0), maxlen=1)[0].to_ndarray(format="rgb24")


def test_pptx_previews_are_the_held_pictures(deck):
    """Each slide's poster frame is its clip's last frame (the clips brighten as they
    play: the first frame is dark), not the first one."""
    from PIL import Image
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for slide in Presentation(str(deck[1])).slides:
        movie = next(s for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.MEDIA)
        clip, poster = (slide.part.related_part(movie._element.xpath(q)[0]).blob
                        for q in (".//a:videoFile/@r:link", ".//a:blip/@r:embed"))
        shown = np.asarray(Image.open(io.BytesIO(poster)).convert("RGB"), float)
        assert np.abs(shown - last_frame(clip)).mean() < 3


def test_making_the_deck_prints_nothing(deck, tmp_path, capfd):
    """No progress bar (manim-slides' tqdm bar, or any) reaches the terminal."""
    html, _, _ = deck
    clips = [ChapterResult("input", 2.0, [(0.0, 2.0, "One")], clip=html.parent / "b.mp4")]
    write_slides(clips, tmp_path / "quiet.mp4", "Quiet", "#000000")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_pptx_one_slide_per_step_with_a_movie_and_notes(deck):
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    slides = list(Presentation(str(deck[1])).slides)
    assert len(slides) == 3
    assert all(any(s.shape_type == MSO_SHAPE_TYPE.MEDIA for s in sl.shapes) for sl in slides)
    assert [sl.notes_slide.notes_text_frame.text for sl in slides] == [
        "First <step> & one", "Second", "Third"]


def test_pptx_notes_pages_show_the_slide_at_its_own_aspect(deck):
    """The notes master's picture box has the slides' 16:9 shape (python-pptx's default is
    4:3, which letterboxed the slide) and the notes text starts below it."""
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER

    prs = Presentation(str(deck[1]))
    boxes = {p.placeholder_format.type: p for p in prs.notes_master.placeholders}
    picture, notes = boxes[PP_PLACEHOLDER.SLIDE_IMAGE], boxes[PP_PLACEHOLDER.BODY]
    assert prs.slide_width / prs.slide_height == pytest.approx(16 / 9, rel=1e-3)
    assert picture.width / picture.height == pytest.approx(16 / 9, rel=1e-3)
    assert notes.top > picture.top + picture.height
    for slide in prs.slides:  # every notes page takes its boxes from the master
        image = next(p for p in slide.notes_slide.placeholders
                     if p.placeholder_format.type == PP_PLACEHOLDER.SLIDE_IMAGE)
        assert image._element.spPr.find(qn("a:xfrm")) is None


@pytest.mark.slow
@pytest.mark.skipif(SOFFICE is None or shutil.which("pdftoppm") is None,
                    reason="LibreOffice Impress and poppler are not installed (bash "
                    "scripts/setup.sh --test installs libreoffice-impress and poppler-utils)")
def test_pptx_notes_pages_in_libreoffice_hold_the_picture_without_bands(deck, tmp_path):
    """Printed as notes pages by LibreOffice, each page's picture (the first block drawn
    from the top) is 16:9: no white bands above and below it inside a 4:3 frame."""
    from PIL import Image

    export = ('pdf:impress_pdf_Export:{"ExportNotesPages":{"type":"boolean","value":"true"},'
              '"ExportOnlyNotesPages":{"type":"boolean","value":"true"}}')
    subprocess.run([SOFFICE, f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}",
                    "--headless", "--convert-to", export, "--outdir", str(tmp_path),
                    str(deck[1])], check=True, capture_output=True, timeout=300)
    subprocess.run(["pdftoppm", "-r", "60", "-png", str(tmp_path / "talk.pdf"),
                    str(tmp_path / "notes")], check=True, timeout=120)
    pages = sorted(tmp_path.glob("notes-*.png"))
    if os.environ.get("SLIDES_SHOTS"):
        for page in pages:
            shutil.copy(page, Path(os.environ["SLIDES_SHOTS"]) / page.name)
    assert len(pages) == 3
    for page in pages:
        grey = np.asarray(Image.open(page).convert("L"), float)  # (H, W)
        h, w = grey.shape
        drawn = grey < 200  # (H, W): the picture, its frame if any, the notes, the number
        rows = np.flatnonzero(drawn.any(axis=1))
        ends = np.flatnonzero(np.diff(rows) > 1)  # white rows: the picture's block ends
        top, bottom = rows[0], rows[ends[0]] if len(ends) else rows[-1]
        cols = np.flatnonzero(drawn[top:bottom + 1].any(axis=0))
        height, width = bottom - top + 1, cols[-1] - cols[0] + 1
        assert width > 0.6 * w, page.name  # the picture spans the notes' width
        assert width / height == pytest.approx(16 / 9, rel=0.03), (page.name, width, height)


class DevTools:
    """Headless Chromium driven over --remote-debugging-pipe (fds 3 and 4)."""

    def __init__(self, profile: Path, *flags: str):
        r_in, self._w = os.pipe()  # we write, Chromium reads fd 3
        self._r, w_out = os.pipe()  # Chromium writes fd 4, we read
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--mute-audio", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "--window-size=1280,720", *flags, "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: (os.dup2(r_in, 3), os.dup2(w_out, 4)))
        os.close(r_in)
        os.close(w_out)
        self._buffer, self._id, self.session = b"", 0, None

    def send(self, method: str, session: bool = True, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._w, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> None:
        """Attach to the browser's page and load `url` in it."""
        target = next(t for t in self.send("Target.getTargets")["targetInfos"]
                      if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=target["targetId"],
                                 flatten=True)["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def screenshot(self):
        from PIL import Image

        shot = self.send("Page.captureScreenshot", format="png")["data"]
        return Image.open(io.BytesIO(base64.b64decode(shot)))

    def settled_screenshot(self, timeout: float = 5.0):
        """The page once two screenshots 0.25 s apart agree: on a loaded machine Chromium
        can paint a seeked video's last frame a moment after `ended` (a CI run caught step
        1 still on its clip's first frame). A page that stays blank stays blank, so this
        waits out the paint, not a held frame that never comes."""
        deadline = time.monotonic() + timeout
        shot = self.screenshot()
        while True:
            time.sleep(0.25)
            again = self.screenshot()
            if np.array_equal(np.asarray(shot), np.asarray(again)) or time.monotonic() > deadline:
                return again
            shot = again

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._w)
        os.close(self._r)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash scripts/setup.sh "
                    "--test installs Debian's chromium package)")
def test_deck_plays_in_a_real_browser(deck):

    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    browser = DevTools(profile)
    try:
        browser.open(deck[0].resolve().as_uri())
        browser.wait_for("typeof Reveal !== 'undefined' && Reveal.isReady()")
        video = ("document.querySelector('.backgrounds .slide-background.present video')")
        browser.wait_for(f"{video} && {video}.currentTime > 0")  # the first step plays
        image = browser.screenshot()
        if os.environ.get("SLIDES_SCREENSHOT"):  # to look at it
            image.save(os.environ["SLIDES_SCREENSHOT"])
        pixels = np.asarray(image.convert("L"))
        assert pixels.std() > 5, "the screenshot is blank"

        assert browser.evaluate("Reveal.getIndices().h") == 0
        for kind in ("keyDown", "keyUp"):
            browser.send("Input.dispatchKeyEvent", type=kind, key="ArrowRight",
                         code="ArrowRight", windowsVirtualKeyCode=39)
        browser.wait_for("Reveal.getIndices().h === 1")
        assert browser.wait_for(f"{video} && {video}.currentTime > 0 && {video}.currentTime")
        assert browser.evaluate(f"{video}.currentSrc.startsWith('data:video/mp4')")
        notes = browser.evaluate("Reveal.getSlideNotes()")
        assert notes.strip() == "<p>Second</p>"  # the caption, through the markdown plugin
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def narrated_deck(tmp_path_factory) -> Path:
    """A deck of two narrated steps (a tone under each), from a synthetic clip."""
    from attention_video.pipeline.outputs import audio

    folder = tmp_path_factory.mktemp("narrated-deck")
    clip = make_clip(folder / "a.mp4", 3.0, keyframes=(0.0, 1.5))
    n = 3 * audio.RATE
    audio.add_track(clip, (8000 * np.sin(np.arange(n) * 0.05)).astype(np.int16))
    chapters = [ChapterResult("input", 3.0, [(0.0, 1.5, "One"), (1.5, 3.0, "Two")], clip=clip)]
    return write_slides(chapters, folder / "talk.mp4", "Narrated", "#000000")[0]


FIRST = "document.querySelector('.backgrounds .slide-background.present video')"


def first_step_state(browser: DevTools) -> dict:
    return browser.evaluate(
        f"({{muted: {FIRST}.muted, volume: {FIRST}.volume, paused: {FIRST}.paused, "
        f"time: {FIRST}.currentTime, audio: {FIRST}.webkitAudioDecodedByteCount, "
        f"mutedByReveal: {FIRST}.hasAttribute('data-muted-by-reveal'), "
        f"button: !!document.querySelector('.r-media-play-button')}})")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash scripts/setup.sh "
                    "--test installs Debian's chromium package)")
def test_a_narrated_deck_speaks_from_its_first_step_where_sound_may_autoplay(narrated_deck):
    """Where the browser lets a page play sound at once (a kiosk, or a deck opened from a
    click), the first step plays unmuted at full volume and its sound is decoded."""
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    browser = DevTools(profile, "--autoplay-policy=no-user-gesture-required")
    try:
        browser.open(narrated_deck.resolve().as_uri())
        browser.wait_for("typeof Reveal !== 'undefined' && Reveal.isReady()")
        browser.wait_for(f"{FIRST} && {FIRST}.currentTime > 0.2 && "
                         f"{FIRST}.webkitAudioDecodedByteCount > 0")
        state = first_step_state(browser)
        assert reveal_index(browser) == 0
        assert state["muted"] is False and state["volume"] == 1 and not state["paused"], state
        assert not state["mutedByReveal"] and not state["button"], state
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash scripts/setup.sh "
                    "--test installs Debian's chromium package)")
def test_a_narrated_deck_opened_without_a_click_speaks_its_first_step_at_the_first_key(
        narrated_deck):
    """Chromium's default policy (named here) refuses sound before the first click or key:
    reveal.js starts the step muted and shows its "Unmute video" button. Space (the
    presenter's first key) unmutes it and plays the step again from its start, with its
    sound, still on the first step."""
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    browser = DevTools(profile, "--autoplay-policy=document-user-activation-required")
    try:
        browser.open(narrated_deck.resolve().as_uri())
        browser.wait_for("typeof Reveal !== 'undefined' && Reveal.isReady()")
        browser.wait_for(f"{FIRST} && {FIRST}.currentTime > 0.3")
        before = first_step_state(browser)
        assert before["muted"] and before["mutedByReveal"] and before["button"], before
        browser.evaluate(f"window.restarted = false; {FIRST}.addEventListener('seeked', "
                         f"() => window.restarted = {FIRST}.currentTime < 0.1, {{once: true}}); "
                         "true")
        for kind in ("keyDown", "keyUp"):
            browser.send("Input.dispatchKeyEvent", type=kind, key=" ", code="Space",
                         windowsVirtualKeyCode=32)
        browser.wait_for("window.restarted")
        browser.wait_for(f"{FIRST}.currentTime > 0.2 && "
                         f"{FIRST}.webkitAudioDecodedByteCount > {before['audio']}")
        after = first_step_state(browser)
        assert reveal_index(browser) == 0
        assert after["muted"] is False and after["volume"] == 1 and not after["paused"], after
        assert not after["mutedByReveal"] and not after["button"], after
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


def reveal_index(browser: DevTools) -> int:
    return browser.evaluate("Reveal.getIndices().h")


DARK = "#14161c"  # the default theme's background (scenes.themes.THEMES["dark"])
PROGRESS_BAR = re.compile(r"\r|\x1b\[|it/s|%\||[━█▏▎▍▌▋▊▉]")  # tqdm's, rich's, any redrawn line


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The default video's last three chapters (learning, heads, summary) with --slides,
    from the command line: steps that end a chapter, steps whose stage is cleared before
    the next caption, and a chapter's opening question (once said over an empty stage)."""
    folder = tmp_path_factory.mktemp("rendered")
    video = folder / "talk.mp4"
    run = subprocess.run([sys.executable, str(ROOT / "render.py"), "The black cat drank the milk",
                          "-q", "l", "--chapters", "8-10", "--slides", "-o", str(video),
                          "--captions", "both"],
                         capture_output=True, text=True, cwd=folder, timeout=900)
    assert run.returncode == 0, run.stderr
    page = video.with_suffix(".html").read_text(encoding="utf-8")
    clips = [base64.b64decode(c) for c in re.findall(r"data:video/mp4;base64,([A-Za-z0-9+/=]+)", page)]
    return video, run, clips


@pytest.mark.slow
def test_render_with_slides_writes_both_decks_and_no_progress_bar(rendered):
    from pptx import Presentation

    video, run, clips = rendered
    captions, _, _ = subtitle_track(video)  # --captions both: the cues are in the MP4 too
    slides = list(Presentation(str(video.with_suffix(".pptx"))).slides)
    assert len(slides) == len(captions) == len(clips)  # one step per caption
    assert run.stdout.splitlines() == [str(video), str(video.with_suffix(".html")),
                                       str(video.with_suffix(".pptx"))]  # the paths only
    assert "slides:" in run.stderr and not PROGRESS_BAR.search(run.stderr), run.stderr


def check_held(pictures: list, clips: list[bytes], where: str) -> None:
    """Every step's held picture shows something (not a faded frame), and a stage when its
    clip ever has one (not the title and caption alone after the stage was cleared)."""
    assert len(pictures) == len(clips)
    found = []
    for n, (picture, clip) in enumerate(zip(pictures, clips), 1):
        frame, stage = frame_content(picture, DARK)
        if frame < FRAME_INK or (stage < STAGE_INK and shows_a_stage(clip, DARK)):
            found.append((n, round(frame, 4), round(stage, 4)))
    assert not found, (f"{where}: steps held on a blank frame or an empty stage (step, share "
                       f"of the frame and of the stage drawn on): {found}")


@pytest.mark.slow
def test_no_step_is_said_over_an_empty_stage(rendered):
    """Every step's clip shows something between the title and the caption: the
    learning chapter's opening question draws the sentence and its arrow."""
    _, _, clips = rendered
    empty = [n for n, clip in enumerate(clips, 1) if not shows_a_stage(clip, DARK)]
    assert not empty, f"steps with nothing on the stage: {empty}"


@pytest.mark.slow
@pytest.mark.alone  # (plays each step in Chromium: under two busy workers a step can be read before its first frame is decoded)
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash scripts/setup.sh "
                    "--test installs Debian's chromium package)")
def test_every_step_holds_on_its_picture_in_the_browser(rendered):
    """Press → through the deck; when each step's clip has played to its end, the
    screenshot is the step's held picture. Each step plays its last second (from a seek):
    at a raised playbackRate Chromium skips a long held frame and stays on an earlier one."""
    video, _, clips = rendered
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
    browser = DevTools(profile)
    shots = []
    playing = "document.querySelector('.backgrounds .slide-background.present video')"
    try:
        browser.open(video.with_suffix(".html").resolve().as_uri())
        browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=720,
                     deviceScaleFactor=1, mobile=False)  # the frame fills the page
        browser.wait_for("typeof Reveal !== 'undefined' && Reveal.isReady()")
        for n in range(len(clips)):
            if n:
                for kind in ("keyDown", "keyUp"):
                    browser.send("Input.dispatchKeyEvent", type=kind, key="ArrowRight",
                                 code="ArrowRight", windowsVirtualKeyCode=39)
            browser.wait_for(f"Reveal.getIndices().h === {n}")
            browser.wait_for(f"{playing} && {playing}.currentTime > 0")
            browser.evaluate(f"{playing}.currentTime = Math.max(0, {playing}.duration - 1)")
            browser.wait_for(f"{playing}.ended && !{playing}.seeking", timeout=30)
            shots.append(browser.settled_screenshot())
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    if os.environ.get("SLIDES_SHOTS"):  # a folder to look at them in
        for n, shot in enumerate(shots, 1):
            shot.save(Path(os.environ["SLIDES_SHOTS"]) / f"step{n:02d}.png")
    check_held(shots, clips, "Chromium")


@pytest.mark.slow
@pytest.mark.skipif(SOFFICE is None or shutil.which("pdftoppm") is None,
                    reason="LibreOffice Impress and poppler are not installed (bash "
                    "scripts/setup.sh --test installs libreoffice-impress and poppler-utils)")
def test_every_pptx_preview_is_its_steps_picture_in_libreoffice(rendered, tmp_path):
    """LibreOffice draws each slide's movie as its preview: converted to PDF, every page
    shows its step's held picture."""
    from PIL import Image

    video, _, clips = rendered
    profile = (tmp_path / "lo-profile").as_uri()
    subprocess.run([SOFFICE, f"-env:UserInstallation={profile}", "--headless", "--convert-to",
                    "pdf", "--outdir", str(tmp_path), str(video.with_suffix(".pptx"))],
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(tmp_path / "talk.pdf"),
                    str(tmp_path / "page")], check=True, timeout=120)
    pages = [Image.open(p) for p in sorted(tmp_path.glob("page-*.png"))]
    if os.environ.get("SLIDES_SHOTS"):
        for n, page in enumerate(pages, 1):
            page.save(Path(os.environ["SLIDES_SHOTS"]) / f"page{n:02d}.png")
    check_held(pages, clips, "LibreOffice")


def test_a_described_decks_notes_give_each_steps_description_after_its_caption():
    """--describe: a step's notes say what its picture shows after its caption, for a
    lecturer to read out; notes are plain text, maths in Unicode's small letters."""
    r = ChapterResult("input", 10.0, [(0.5, 4.0, "Q = X · W_Q"), (4.0, 9.0, "K^T over √d_k")],
                      holds=[4.0, 9.0], descriptions=["On screen: W_Q, K^T.", ""])
    assert [s.notes for s in plan_steps([r], "The picture:")] == [
        "Q = X · W_Q\n\nThe picture: On screen: W_Q, Kᵀ.", "Kᵀ over √dₖ"]
    assert [s.notes for s in plan_steps([r])] == ["Q = X · W_Q", "Kᵀ over √dₖ"]  # not described

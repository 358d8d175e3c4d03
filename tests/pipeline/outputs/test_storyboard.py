"""The storyboard: one still per caption, taken without animating (pipeline.run.stills),
laid out as a PNG contact sheet and an A4 PDF handout beside it (pipeline.outputs.storyboard)."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.tokenize import CLOSING, OPENING
from attention_video.pipeline.commands.cli import main
from attention_video.pipeline.outputs import storyboard as sb
from attention_video.pipeline.outputs.files import OutputError
from attention_video.pipeline.run import stills as st
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from PIL import Image

S = Settings(sentence="The black cat drank the milk", quality="l")


@pytest.fixture(scope="module")
def trace():
    return build_trace(S)


@pytest.fixture(scope="module")
def stills(trace):
    """Chapters 1 and 4, built here (the cheapest pair that covers a ReplacementTransform,
    a TransformFromCopy and LaggedStart)."""
    return {ch: st.chapter_stills(ch, trace, S, SLUGS) for ch in ("input", "dot")}


def pdf_pages(path: Path) -> int:
    """The page count a PDF's page tree declares (Pillow writes one /Pages node)."""
    data = path.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b.*?/Count\s+(\d+)", data, re.S)]
    return max(counts)


@pytest.mark.slow
def test_one_still_per_caption_the_same_captions_as_a_dry_run(stills, trace):
    for ch, got in stills.items():
        dry = render_chapter(ChapterJob(ch, trace, S, clip=None))
        assert [s.caption for s in got.stills] == [text for _, _, text in dry.subtitles]
        assert got.subtitles == dry.subtitles  # fast-forwarding keeps the video's timing


def test_stills_are_drawn_at_the_small_size_and_are_not_blank(stills):
    for got in stills.values():
        for still in got.stills:
            assert still.image.shape == (sb.STILL_SIZE[1], sb.STILL_SIZE[0], 3)
            assert still.image.dtype == np.uint8 and still.image.std() > 5


def test_a_still_shows_the_final_state_of_its_animations(stills):
    """Chapter 1's last still has E, P and X (three tables); the first has only words."""
    first, last = stills["input"].stills[0].image, stills["input"].stills[-1].image

    def drawn(im: np.ndarray) -> float:  # share of pixels unlike the background
        return (np.abs(im.astype(int) - im[0, 0].astype(int)).sum(axis=2) > 60).mean()

    assert drawn(last) > 2 * drawn(first)


@pytest.mark.slow
def test_png_and_pdf_are_written_beside_each_other(stills, tmp_path):
    all_stills = [s for ch in ("input", "dot") for s in stills[ch].stills]
    pdf, pages = sb.write_storyboard(all_stills, tmp_path / "board.png")
    assert pdf == tmp_path / "board.pdf"
    sheet = Image.open(tmp_path / "board.png")
    assert sheet.format == "PNG" and sheet.width == sb.SHEET_WIDTH
    assert np.asarray(sheet.convert("L")).std() > 20  # stills and text, not a blank page
    per_page = sb.HANDOUT_GRID[0] * sb.HANDOUT_GRID[1]
    assert pages == pdf_pages(pdf) >= -(-len(all_stills) // per_page)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    if shutil.which("pdftoppm"):  # render the first page, as a reader would
        subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(pdf),
                        str(tmp_path / "page")], check=True)
        page = Image.open(next(tmp_path.glob("page*.png")))
        assert np.asarray(page.convert("L")).std() > 20


def test_the_sheet_compressed_chapter_by_chapter_is_the_sheet_drawn_whole(stills, tmp_path):
    """The composer compresses the PNG's rows in chapter order, with its own encoder, as
    chapters come in (in any order): Pillow reads back exactly the page draw_pages lays
    out in one go."""
    all_stills = [s for ch in ("dot", "input") for s in stills[ch].stills]
    composer = sb.Composer(["dot", "input"])
    composer.add(stills["input"])  # back first, as a worker may finish it first
    composer.add(stills["dot"])
    composer.write(tmp_path / "board.png")
    whole = sb.draw_pages(all_stills, sb.CONTACT_SHEET)
    assert len(whole) == 1
    with Image.open(tmp_path / "board.png") as sheet:
        sheet.load()  # checks every chunk's CRC and the zlib stream
        assert sheet.mode == "RGB"
        assert np.array_equal(np.asarray(sheet), np.asarray(whole[0]))


def test_handout_pages_are_a4_with_at_most_six_stills(stills):
    all_stills = [s for ch in ("input", "dot") for s in stills[ch].stills] * 3
    pages = sb.draw_pages(all_stills, sb.HANDOUT)
    assert all(p.size == sb.A4_PAGE for p in pages)
    assert len(pages) >= len(all_stills) / 6


def test_no_handout_page_ends_with_a_chapter_heading(stills):
    """A page full of rows (tall enough that only the row count limits it): the next
    chapter's heading starts the next page rather than closing this one."""
    tall = dataclasses.replace(sb.HANDOUT, height=4 * sb.HANDOUT.height)
    blocks = sb.draw_blocks(stills["input"].stills[:3] * 2 + stills["dot"].stills[:1] * 6, tall)
    pages = sb.paginate(blocks, tall)
    assert len(pages) > 1 and all(page[-1].kind == "row" for page in pages)
    assert all(sum(b.kind == "row" for b in page) <= tall.rows for page in pages)


def test_a_failed_storyboard_leaves_the_earlier_one(stills, tmp_path, monkeypatch):
    png = tmp_path / "board.png"
    png.write_bytes(b"earlier")
    monkeypatch.setattr(sb, "draw_blocks", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        sb.write_storyboard(stills["input"].stills, png)
    assert png.read_bytes() == b"earlier" and not png.with_suffix(".pdf").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_storyboard_paths():
    assert sb.storyboard_path("The black cat", None) == Path("media/the-black-cat-storyboard.png")
    assert sb.storyboard_path("x", "out/board.PNG") == Path("out/board.PNG")
    with pytest.raises(OutputError, match=r"board.mp4: the storyboard is a .png"):
        sb.storyboard_path("x", "board.mp4")


def test_captions_wrap_to_the_cell_and_cjk_breaks_anywhere():
    long = "The row of \"milk\" in X becomes its row of Q: (2.87, −4.40, −1.54, 0.36)."
    lines = sb.wrap(long, 20, 300)
    assert len(lines) > 1 and all(sb._width(line, 20) <= 300 for line in lines)
    assert " ".join(lines) == long
    zh = "每一行仍然属于它的词：“milk” 现在有了查询、键和值。" * 2
    assert len(sb.wrap(zh, 20, 200, max_lines=10)) > 1


def test_a_caption_line_never_starts_with_closing_nor_ends_with_opening_punctuation():
    """Under a still, "为负）。" once wrapped to a line "）。". Every width from 60 to 400
    pixels tries a break at every place."""
    zh = "每对相乘：4 对中 3 对同号（绿色，为正），1 对异号（红色，为负）。“牛奶”给“喝”的权重最大：1.00。"
    for width in range(60, 401, 4):
        lines = sb.wrap(zh, 20, width, max_lines=99)
        assert "".join(lines).replace(" ", "") == zh.replace(" ", ""), width
        assert not any(line[0] in CLOSING for line in lines), (width, lines)
        assert not any(line[-1] in OPENING for line in lines), (width, lines)


@pytest.mark.parametrize("args, expect", [
    (["cats drink", "--storyboard", "-o", "board.mp4"], "the storyboard is a .png"),
    (["cats drink", "--storyboard", "-o", "/no/such/folder/board.png"], "does not exist"),
])
def test_storyboard_errors_are_one_line(args, expect, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err.strip()
    assert e.value.code != 0 and expect in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_the_command_makes_the_storyboard(tmp_path, capsys):
    out = tmp_path / "board.png"
    main(["The black cat drank the milk", "--storyboard", "--chapters", "4", "-o", str(out),
          "-j", "1"])
    said = capsys.readouterr()
    err = said.err
    assert said.out.splitlines() == [str(out), str(out.with_suffix(".pdf"))]  # the paths
    assert out.exists() and out.with_suffix(".pdf").exists()
    n = len(render_chapter(ChapterJob("dot", build_trace(S), S, clip=None)).subtitles)
    pages = -(-n // (sb.HANDOUT_GRID[0] * sb.HANDOUT_GRID[1]))  # one still per caption
    assert f"storyboard: {n} stills, {pages} pages" in err


@pytest.mark.slow
def test_default_sentence_storyboard_has_every_caption_of_the_dry_run(tmp_path, capsys):
    from attention_video.pipeline.run.render import dry_run

    out = tmp_path / "board.png"
    main(["The black cat drank the milk", "--storyboard", "-o", str(out)])
    assert out.exists()
    trace = build_trace(S)
    captions = [text for r in dry_run(S, trace) for _, _, text in r.subtitles]
    board = st.make_storyboard(S, trace, out, jobs=2)
    assert [s.caption for s in board.stills] == captions
    assert pdf_pages(out.with_suffix(".pdf")) == board.pages


@pytest.mark.slow
def test_the_handout_is_vector_with_its_captions_as_text(stills, tmp_path):
    # it was one JPEG per page: blurred labels, no text to select or search (issue 28)
    all_stills = [s for ch in ("input", "dot") for s in stills[ch].stills]
    assert all(isinstance(s.vector, sb.VectorStill) and s.vector.ops for s in all_stills)
    pdf, _ = sb.write_storyboard(all_stills, tmp_path / "board.png")
    data = pdf.read_bytes()
    assert b"/DCTDecode" not in data  # no JPEG
    if not shutil.which("pdftotext") or not shutil.which("pdfimages"):
        pytest.skip("poppler's pdftotext and pdfimages are not installed")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    words = " ".join(text.split())
    assert all_stills[0].title in words
    assert " ".join(all_stills[0].caption.split()[:5]) in words
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True,
                            check=True).stdout.splitlines()[2:]
    assert images == []  # every still drawn as paths


def test_a_replayed_still_draws_what_the_camera_drew(stills, tmp_path):
    import cairo

    still = stills["dot"].stills[-1]
    w, h = still.image.shape[1], still.image.shape[0]
    surface = cairo.ImageSurface(cairo.FORMAT_RGB24, w, h)
    sb.replay(cairo.Context(surface), still.vector, 0, 0, w, h)
    drawn = np.ndarray((h, w, 4), np.uint8, surface.get_data())[:, :, [2, 1, 0]]
    assert np.abs(drawn.astype(int) - still.image.astype(int)).mean() < 6


@pytest.mark.parametrize("chapter", ["input", "dot"])
def test_a_still_recorded_as_it_was_drawn_replays_to_its_very_pixels(stills, chapter):
    """The vector copy is recorded in the pass that draws the still's pixels (one pass,
    not two): played again with the camera's own matrix on the camera's background, every
    still of the chapter comes out identical, bit for bit. A call left out, or objects
    recorded in another order than the camera drew them, would show."""
    import cairo

    for still in stills[chapter].stills:
        vector = still.vector
        h, w = still.image.shape[:2]
        frame = np.zeros((h, w, 4), np.uint8)  # BGRA, as Cairo keeps it
        frame[:, :] = [*(int(vector.background[i:i + 2], 16) for i in (5, 3, 1)), 255]
        surface = cairo.ImageSurface.create_for_data(memoryview(frame), cairo.FORMAT_ARGB32,
                                                     w, h)
        ctx = cairo.Context(surface)
        ctx.set_matrix(cairo.Matrix(w / vector.frame_width, 0, 0, -h / vector.frame_height,
                                    w / 2, h / 2))  # Manim's camera's, frame centred
        sb.play_ops(ctx, vector.ops)
        surface.flush()
        assert np.array_equal(frame[:, :, 2::-1], still.image), still.caption


def test_the_handout_draws_an_image_mobject_where_the_frame_has_it():
    """Chapter 9's model overview is an ImageMobject, which Manim's camera draws as pixels,
    not through Cairo: the vector still keeps its pixels and draws them in their box, the
    right way up, each pixel a sharp square."""
    import cairo
    from attention_video.fastmanim.camera import RecordingCamera
    from manim import ImageMobject, Scene, tempconfig

    pixels = np.zeros((2, 3, 4), np.uint8)  # 2 rows, 3 columns, RGBA
    pixels[..., 3] = 255
    pixels[0, 0, :3] = (255, 0, 0)  # top left: red
    pixels[1, 2, :3] = (0, 0, 255)  # bottom right: blue
    with tempconfig({"pixel_width": 160, "pixel_height": 90, "frame_width": 16.0,
                     "frame_height": 9.0}):
        scene = Scene(camera_class=RecordingCamera)
        image = ImageMobject(pixels, scale_to_resolution=90)
        image.stretch_to_fit_width(6.0).stretch_to_fit_height(4.0).move_to([2.0, 1.0, 0])
        scene.add(image)
        _, still = st.draw_still(scene)
    ops = [op for op in still.ops if op[0] == "image"]
    assert len(ops) == 1 and ops[0][1].shape == (2, 3, 4)
    surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, 160, 90)
    sb.replay(cairo.Context(surface), still, 0, 0, 160, 90)
    data = np.ndarray((90, 160, 4), np.uint8, surface.get_data())  # BGRA
    # the image spans x 2 ± 3 and y 1 ± 2 in scene units: pixels 50…110 and 20…60
    def at(x, y):
        return tuple(int(c) for c in data[int(45 - y * 10), int(80 + x * 10), 2::-1])
    assert at(-0.5, 2.5) == (255, 0, 0)  # inside the top-left pixel
    assert at(4.5, -0.5) == (0, 0, 255)  # inside the bottom-right one
    assert at(2.0, 2.5) == (0, 0, 0)  # the top middle pixel: black
    assert at(-2.0, 1.0) != (255, 0, 0)  # left of the image: the background


def test_printed_captions_write_maths_in_unicode_where_it_has_the_letters(stills):
    """The storyboard prints plain text: Kᵀ and dₖ in Unicode's small letters, W_Q as
    written (Unicode has no small capital Q), as the subtitle files do."""
    still = dataclasses.replace(stills["input"].stills[0], caption="Q·K^T / √d_k and W_Q",
                                title="2 · Q = X · W_Q, K^T")
    heading, row = sb.lay_out_blocks([still], sb.HANDOUT)
    assert heading.title == "2 · Q = X · W_Q, Kᵀ"
    assert " ".join(row.lines[0]) == "Q·Kᵀ / √dₖ and W_Q"

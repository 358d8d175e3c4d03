"""--describe: each caption's description (scenes.describe) as a WebVTT descriptions track
beside the video, timed with its caption, in the companion page's player as a track of kind
"descriptions", and in the transcript under its caption."""

from __future__ import annotations

import dataclasses
import re

import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.commands.app import Request, make_settings, planned_outputs
from attention_video.pipeline.outputs.files import descriptions_path
from attention_video.pipeline.outputs.page import page_cues, page_data
from attention_video.pipeline.outputs.subtitles import description_cues
from attention_video.pipeline.outputs.transcript import write_transcript
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.render import write_descriptions
from attention_video.scenes.spoken import spoken

from tests.pipeline.outputs.test_page import build, open_page
from tests.support.builds import trace_of

SETTINGS = Settings(sentence="The black cat drank the milk", describe=True)
CHAPTERS = [
    ChapterResult("input", 10.0, [(0.5, 4.0, "Words become rows"), (4.0, 9.0, "X = E + P")],
                  descriptions=["On screen: E.", ""]),
    ChapterResult("linear", 8.0, [(1.0, 6.0, "Q = X · W_Q")],
                  descriptions=['Q, the row of "milk": 2.87, −4.40, …']),
]


def cues_of(vtt: str) -> list[tuple[str, str, str]]:
    return re.findall(r"(\S+) --> (\S+)\n(.+)\n", vtt)


def test_a_description_is_timed_with_its_caption_and_an_empty_one_has_no_cue():
    cues = [(0.5, 4.0, "a"), (4.0, 9.0, "b"), (9.0, 12.0, "c")]
    assert description_cues(cues, ["one", "", "three"]) == [(0.5, 4.0, "one"), (9.0, 12.0, "three")]
    assert description_cues(cues, ["one"]) == []  # not one per caption: none (an old record)


def test_a_said_description_is_timed_while_it_is_said():
    """--describe --voice: a cue spans its description's speech in the described narration,
    not its caption; one not said keeps its caption's times."""
    cues = [(0.5, 4.0, "a"), (4.0, 9.0, "b"), (9.0, 12.0, "c")]
    said = [(2.25, 3.75), None, None]
    assert description_cues(cues, ["one", "", "three"], said) == [(2.25, 3.75, "one"),
                                                                  (9.0, 12.0, "three")]


def test_the_track_follows_the_described_narration_in_video_time(tmp_path):
    voiced = [ChapterResult(r.chapter, r.duration, r.subtitles, descriptions=r.descriptions,
                            described_at=said)
              for r, said in zip(CHAPTERS, [[(2.0, 3.5), None], [(5.0, 7.25)]])]
    text = write_descriptions(SETTINGS, voiced, tmp_path / "v.mp4").read_text(encoding="utf-8")
    assert cues_of(text) == [("00:00:02.000", "00:00:03.500", "On screen: E."),
                             ("00:00:15.000", "00:00:17.250",  # the second chapter at 10 s
                              'Q, the row of "milk": 2.87, −4.40, …')]
    cues = page_cues(voiced)  # the page's descriptions track and live region likewise
    assert [(c.described_start, c.described_end) for c in cues if c.description] == \
        [(2.0, 3.5), (15.0, 17.25)]
    assert [(c.described_start, c.described_end) for c in page_cues(CHAPTERS)] == \
        [(c.start, c.end) for c in page_cues(CHAPTERS)]  # not said: with the caption


def test_the_track_goes_beside_the_video_in_video_time(tmp_path):
    video = tmp_path / "lesson.mp4"
    path = write_descriptions(SETTINGS, CHAPTERS, video)
    assert path == tmp_path / "lesson.descriptions.vtt" == descriptions_path(video)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("WEBVTT")
    assert cues_of(text) == [("00:00:00.500", "00:00:04.000", "On screen: E."),
                             ("00:00:11.000", "00:00:16.000",  # the second chapter starts at 10 s
                              'Q, the row of "milk": 2.87, −4.40, …')]


def test_without_describe_no_track_is_written(tmp_path):
    plain = Settings(sentence="The black cat drank the milk")
    assert write_descriptions(plain, CHAPTERS, tmp_path / "v.mp4") is None
    assert list(tmp_path.iterdir()) == []


def test_the_track_is_planned_with_the_videos_files_before_any_work():
    request = Request()
    asked = make_settings(None, "The cat", None, {"describe": True, "output": "out/v.mp4"})
    files, _ = planned_outputs(asked, request)
    assert files["the descriptions track"].name == "v.descriptions.vtt"
    plain, _ = planned_outputs(make_settings(None, "The cat", None, {"output": "out/v.mp4"}), request)
    assert "the descriptions track" not in plain


def test_the_transcript_gives_each_caption_its_description(tmp_path):
    trace = trace_of(SETTINGS)
    html = write_transcript(tmp_path / "t.html", trace, CHAPTERS, SETTINGS).read_text()
    md = write_transcript(tmp_path / ("t" + ".md"), trace, CHAPTERS, SETTINGS).read_text()
    assert re.search(r"Words become rows<p class=\"description\">.*On screen: E\.</p></li>", html)
    assert "X = E + P</li>" in html  # no description: nothing under it
    assert "- `0:00` Words become rows\n  *The picture:* On screen: E." in md


def test_the_page_cues_carry_their_descriptions():
    cues = page_cues(CHAPTERS)
    assert [c.description for c in cues] == ["On screen: E.", "", CHAPTERS[1].descriptions[0]]


def test_the_pages_descriptions_track_follows_the_described_narration(browser, tmp_path):  # noqa: F811
    """--describe --voice: the player's descriptions track (which feeds the live region)
    has each cue while the described narration says it."""
    voiced = [dataclasses.replace(r, described_at=said)
              for r, said in zip(CHAPTERS, [[(2.0, 3.5), None], [(5.0, 7.25)]])]
    voiced[1] = dataclasses.replace(voiced[1], descriptions=["On screen: W_Q and Kᵀ; √d_k."])
    page, *_ = build(tmp_path, voiced, describe=True)
    tab = open_page(browser, page)
    cues = tab.evaluate("""() => [...document.querySelector('video').textTracks]
        .filter(t => t.kind === 'descriptions')
        .map(t => [...t.cues].map(c => [c.startTime, c.endTime, c.text]))[0]""")
    # its text is the description as it is said, not symbol by symbol
    assert cues == [[2.0, 3.5, "On screen: E."],
                    [15.0, 17.25, "On screen: W Q and K transpose; the square root of d k."]]


@pytest.mark.slow
def test_the_pages_player_has_a_descriptions_track(browser, tmp_path):  # noqa: F811
    page, *_ = build(tmp_path, CHAPTERS, describe=True)
    tab = open_page(browser, page)
    tracks = tab.evaluate("""() => [...document.querySelector('video').textTracks].map(t =>
        ({kind: t.kind, cues: t.cues ? [...t.cues].map(c => [c.startTime, c.text]) : null}))""")
    described = [t for t in tracks if t["kind"] == "descriptions"]
    assert described and described[0]["cues"] == [  # as said: "−4.40" is "minus 4.40"
        [0.5, "On screen: E."], [11.0, spoken(CHAPTERS[1].descriptions[0], "en")]]
    # the caption list shows each description under its caption, the button named by the
    # caption alone
    listed = tab.eval_on_selector_all("#cues li", """lis => lis.map(li =>
        [li.querySelector('button').textContent, (li.querySelector('.described') || {}).textContent])""")
    assert [d for _, d in listed] == ["The picture: On screen: E.", None,
                                      "The picture: " + CHAPTERS[1].descriptions[0]]
    assert all("The picture" not in b for b, _ in listed)
    # as the video plays into a described caption, the live region holds its description
    tab.evaluate("() => { const v = document.querySelector('video'); v.currentTime = 11.2; }")
    tab.wait_for_function("() => document.getElementById('described-now').textContent !== ''",
                          timeout=10_000)
    assert tab.eval_on_selector("#described-now", "e => [e.textContent, e.getAttribute('aria-live')]"
                                ) == [spoken(CHAPTERS[1].descriptions[0], "en"), "polite"]
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()
    page, *_ = build(tmp_path / "plain", CHAPTERS)
    tab = open_page(browser, page)
    kinds = tab.evaluate("() => [...document.querySelector('video').textTracks].map(t => t.kind)")
    assert "descriptions" not in kinds
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_dry_run_describes_what_the_captions_leave_out(language):
    from tests.support.builds import dry_run  # noqa: PLC0415 (builds a scene)

    settings = Settings(sentence="The black cat drank the milk", language=language, quality="l")
    r = dry_run(settings, "linear")
    assert len(r.descriptions) == len(r.subtitles)
    # The first caption ("We follow milk …") leaves X on screen unnamed
    assert r.descriptions[0] == ("On screen: X." if language == "en" else "画面上：X。")


def test_the_page_says_a_one_letter_word_repeated_as_the_video_does():
    # "a" twice in the sentence: the page's said description names "a₂" as the second a,
    # as the narration does (scenes.base hands the narrator the same labels)
    s = Settings(sentence="a cat saw a dog", describe=True)
    cues = [dataclasses.replace(page_cues(CHAPTERS)[0], description='Q, the row of "a₂": 1.0')]
    data = page_data(trace_of(s), cues, "v.mp4", s, ["input"])
    assert data["cues"][0]["said"] == "Q, the row of the second a: 1.0"

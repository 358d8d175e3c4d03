"""The quiz bank (`--quiz`, pipeline.outputs.quiz): Moodle XML and the QTI 1.2 package
re-parse to the very questions the video asks (question, options in order, the right one,
the reason), in the caption language, whatever characters the words hold; a path with
another ending is refused in one line and nothing is written.

These tests read the files back the way an importer does: by the element names and
attributes Moodle's importer (question/format/xml) and Canvas's QTI importer read. Their
validation against schemas (IMS's QTI 1.2.1 DTD; a RELAX NG grammar and Schematron rules
for Moodle XML, which has no published schema) is tests/pipeline/outputs/
test_quiz_schemas.py."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
import zipfile

import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.commands.cli import main
from attention_video.pipeline.outputs.quiz import quiz_path, write_quiz
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.questions import worded

from tests.support.builds import trace_of

pytestmark = pytest.mark.xdist_group("decoder")  # with tests/attncore/test_questions.py

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CASES = {
    "default": Settings(sentence="The black cat drank the milk"),
    "decoder, Chinese captions": Settings(sentence="The black cat drank the milk",
                                          weights="decoder", language="zh"),
    "markup in the words": Settings(sentence="a*b c_d [x] <y> &lt; & $z$ `q` #1", weights="random"),
}


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return info.value.code or 0, out.out, out.err


def expected(settings: Settings) -> list[tuple[str, tuple[str, ...], int, str]]:
    trace = trace_of(settings)
    return [(w.ask, w.options, w.answer, w.reason)
            for w in worded(trace, Translate(settings.language))]


def read_moodle(text: str) -> list[tuple[str, tuple[str, ...], int, str]]:
    root = ET.fromstring(text)
    assert root.tag == "quiz"
    found = []
    for q in root.findall("question"):
        if q.get("type") == "category":
            assert q.findtext("category/text").startswith("$course$/")
            continue
        assert q.get("type") == "multichoice" and q.findtext("single") == "true"
        answers = q.findall("answer")
        right = [k for k, a in enumerate(answers) if a.get("fraction") == "100"]
        assert len(right) == 1 and all(a.get("fraction") in ("0", "100") for a in answers)
        found.append((q.findtext("questiontext/text"),
                      tuple(a.findtext("text") for a in answers), right[0],
                      q.findtext("generalfeedback/text")))
    return found


def from_html(mattext: str) -> str:
    """Canvas shows the HTML text2qti wrote: back to the plain words (its Markdown turns
    straight quotes into typographic ones)."""
    text = html.unescape(re.sub(r"</?p>", "", mattext))
    return text.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")


def read_qti(path) -> list[tuple[str, tuple[str, ...], int, str]]:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert "imsmanifest.xml" in names
        manifest = ET.fromstring(z.read("imsmanifest.xml"))
        hrefs = {r.get("href") for r in manifest.iter() if r.get("href")}
        items_file = next(n for n in names if n.endswith(".xml") and "meta" not in n
                          and n != "imsmanifest.xml")
        assert items_file in hrefs, "the manifest names the assessment"
        root = ET.fromstring(z.read(items_file))
    assert root.tag == f"{QTI}questestinterop"
    found = []
    for item in root.iter(f"{QTI}item"):
        labels = item.findall(f".//{QTI}response_label")
        idents = [label.get("ident") for label in labels]
        right = [v.text for v in item.iter(f"{QTI}varequal")]
        assert len(right) == 1
        feedback = {f.get("ident"): f.findtext(f".//{QTI}mattext")
                    for f in item.iter(f"{QTI}itemfeedback")}
        found.append((from_html(item.findtext(f"{QTI}presentation/{QTI}material/{QTI}mattext")),
                      tuple(from_html(label.findtext(f".//{QTI}mattext")) for label in labels),
                      idents.index(right[0]), from_html(feedback["general_fb"])))
    return found


def plain_quotes(rows):
    return [(a.replace("“", '"').replace("”", '"'), tuple(o.replace("“", '"').replace("”", '"')
             for o in opts), k, r.replace("“", '"').replace("”", '"')) for a, opts, k, r in rows]


@pytest.mark.parametrize("case", list(CASES))
def test_moodle_xml_reads_back_as_the_questions_the_video_asks(tmp_path, case):
    settings = CASES[case]
    out = tmp_path / "bank.xml"
    kind, count = write_quiz(out, trace_of(settings), settings)
    assert kind == "Moodle XML" and count == len(expected(settings)) >= 4
    assert read_moodle(out.read_text(encoding="utf-8")) == expected(settings)


@pytest.mark.parametrize("case", list(CASES))
def test_qti_package_reads_back_as_the_questions_the_video_asks(tmp_path, case):
    settings = CASES[case]
    out = tmp_path / "bank.zip"
    kind, count = write_quiz(out, trace_of(settings), settings)
    assert kind.startswith("QTI 1.2") and count == len(expected(settings))
    assert read_qti(out) == plain_quotes(expected(settings))


@pytest.mark.parametrize("name", ["bank.txt", "bank", "bank.qti"])
def test_another_ending_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, name):
    with pytest.raises(ValueError, match=r"end it in \.xml \(Moodle XML\) or \.zip"):
        quiz_path(tmp_path / name)
    code, _, err = run_main(["The cat sat", "--weights", "random", "--dry-run", "--chapters",
                             "1", "--quiz", str(tmp_path / name)], capsys)
    assert code == 2 and "end it in .xml" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_dry_run_writes_the_quiz_and_does_not_claim_it_wrote_nothing(tmp_path, capsys):
    out = tmp_path / "bank.xml"
    code, _, err = run_main(["The cat sat", "--weights", "random", "--dry-run", "--chapters",
                             "1", "--quiz", str(out)], capsys)
    assert code == 0, err
    assert read_moodle(out.read_text(encoding="utf-8"))
    assert "would write --quiz" not in err and "quiz:" in err

"""The quiz bank's files against schemas (`--quiz`, pipeline.outputs.quiz); their re-parse to
the very questions the video asks is tests/pipeline/outputs/test_quiz.py.

QTI: the assessment in the .zip against IMS's own QTI 1.2.1 DTD (ims_qtiasiv1p2p1.dtd, the
final release, which `scripts/setup.sh --test` takes from pyslet's source distribution on
PyPI; IMS's XSD binding of the same structure ships in no registry package). The DTD binding
has no namespaces, so the document is checked with its namespace taken off.

Moodle XML: Moodle publishes no schema. tests/data/moodle_xml/quiz.rng (RELAX NG) and
quiz.sch (Schematron) are this project's, written from Moodle's description of the format
and its importer: every element of a multiple-choice question, the text formats, the
numbering styles, an answer's grade one of those Moodle offers, one right answer.

Each schema is shown to refuse a broken file, so that a pass means something."""

from __future__ import annotations

import copy
import os
import sys
import zipfile
from pathlib import Path

import pytest
from attention_video.pipeline.outputs.quiz import write_quiz
from lxml import etree, isoschematron

from tests.pipeline.outputs.test_quiz import CASES
from tests.support.builds import trace_of

pytestmark = pytest.mark.xdist_group("decoder")  # with tests/attncore/test_questions.py

MOODLE = Path(__file__).parents[2] / "data" / "moodle_xml"
QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"


def qti_dtd() -> etree.DTD:
    """IMS's QTI 1.2.1 DTD where setup put it (IMS_QTI_DTD: another copy)."""
    path = Path(os.environ.get("IMS_QTI_DTD")
                or Path(sys.prefix) / "share" / "ims-qti" / "ims_qtiasiv1p2p1.dtd")
    if not path.is_file():
        missing = f"IMS's QTI DTD is not at {path} (bash scripts/setup.sh --test puts it there)"
        if os.environ.get("CI"):  # CI ran setup --test: a missing DTD is a failure there
            pytest.fail(missing)
        pytest.skip(missing)
    return etree.DTD(str(path))


def moodle_problems(doc: etree._ElementTree) -> list[str]:
    """What the RELAX NG grammar and the Schematron rules find wrong (none: valid)."""
    grammar = etree.RelaxNG(etree.parse(str(MOODLE / "quiz.rng")))
    rules = isoschematron.Schematron(etree.parse(str(MOODLE / "quiz.sch")))
    problems = []
    if not grammar.validate(doc):
        problems += [e.message for e in grammar.error_log]
    if not rules.validate(doc):
        problems += [e.message for e in rules.error_log]
    return problems


def qti_problems(assessment: etree._Element) -> list[str]:
    """What the DTD finds wrong with an assessment (its namespace taken off first)."""
    bare = copy.deepcopy(assessment)
    for el in bare.iter(etree.Element):
        el.tag = etree.QName(el).localname
        for name in [a for a in el.attrib if a.startswith("{")]:  # xsi:schemaLocation
            del el.attrib[name]
    etree.cleanup_namespaces(bare)
    dtd = qti_dtd()
    return [] if dtd.validate(bare) else [e.message for e in dtd.error_log]


def assessment_of(package: Path) -> etree._Element:
    """The assessment of a QTI package: the file the manifest names that is QTI."""
    with zipfile.ZipFile(package) as z:
        manifest = etree.fromstring(z.read("imsmanifest.xml"))
        hrefs = {e.get("href") for e in manifest.iter() if e.get("href")}
        for name in sorted(hrefs & set(z.namelist())):
            root = etree.fromstring(z.read(name))
            if root.tag == f"{{{QTI_NS}}}questestinterop":
                return root
    raise AssertionError(f"{package}: no QTI assessment among {sorted(hrefs)}")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Each case's Moodle XML and QTI package."""
    out = {}
    for n, (case, settings) in enumerate(CASES.items()):
        folder = tmp_path_factory.mktemp(f"quiz{n}")
        trace = trace_of(settings)
        write_quiz(folder / "bank.xml", trace, settings)
        write_quiz(folder / "bank.zip", trace, settings)
        out[case] = (folder / "bank.xml", folder / "bank.zip")
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_moodle_xml_is_valid(written, case):
    xml, _ = written[case]
    assert moodle_problems(etree.parse(str(xml))) == []


@pytest.mark.parametrize("case", list(CASES))
def test_the_qti_assessment_is_valid_against_imss_dtd(written, case):
    _, package = written[case]
    assert qti_problems(assessment_of(package)) == []


# What each schema must refuse: a broken copy of a written file.
def _misspelt(doc):
    doc.find(".//answernumbering").tag = "answernumber"  # Moodle would drop it silently


def _odd_grade(doc):
    doc.find(".//answer").set("fraction", "99")  # no grade Moodle offers


def _two_right(doc):
    for answer in doc.find(".//question[@type='multichoice']").findall("answer")[:2]:
        answer.set("fraction", "100")


def _no_numbering_style(doc):
    doc.find(".//answernumbering").text = "abcd"


def _one_answer(doc):
    q = doc.find(".//question[@type='multichoice']")
    for answer in q.findall("answer")[1:]:
        q.remove(answer)


@pytest.mark.parametrize("breaking", [_misspelt, _odd_grade, _two_right, _no_numbering_style,
                                      _one_answer])
def test_the_moodle_schemas_refuse_a_broken_file(written, breaking):
    doc = etree.parse(str(written["default"][0]))
    breaking(doc)
    assert moodle_problems(doc)


def _label_without_ident(root):
    next(root.iter(f"{{{QTI_NS}}}response_label")).attrib.pop("ident")


def _right_answer_of_no_response(root):
    next(root.iter(f"{{{QTI_NS}}}varequal")).attrib.pop("respident")


def _feedback_before_processing(root):
    item = next(root.iter(f"{{{QTI_NS}}}item"))
    feedback = item.find(f"{{{QTI_NS}}}itemfeedback")
    item.remove(feedback)
    item.insert(0, feedback)


@pytest.mark.parametrize("breaking", [_label_without_ident, _right_answer_of_no_response,
                                      _feedback_before_processing])
def test_the_qti_dtd_refuses_a_broken_assessment(written, breaking):
    root = assessment_of(written["default"][1])
    breaking(root)
    assert qti_problems(root)

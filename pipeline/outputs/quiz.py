"""The questions of a video as a quiz bank a course platform imports (`--quiz FILE`).

    .xml  Moodle XML (Moodle's own import format, "Moodle XML format" in its question bank)
    .zip  a QTI 1.2 package (Canvas: Settings → Import course content → "QTI .zip file"),
          written by text2qti, which Canvas users have relied on for years

Each question is a single-answer multiple choice in the caption language, its options in
the order the video shows them (not shuffled: word options stand in sentence order), the
reason as general feedback, and the right answer marked. Both are written from the same
records the video's cards read (attncore.questions, worded by scenes.questions).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.outputs.files import (
    atomic_output,
    check_writable_folder,
    write_text_atomic,
)
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.questions import Worded, worded

FORMATS = {".xml": "Moodle XML", ".zip": "QTI 1.2 package (Canvas)"}


def quiz_path(value: str | Path) -> Path:
    """The --quiz path, if its ending names a format; ValueError in one line if not."""
    path = Path(value)
    if path.suffix.lower() not in FORMATS:
        allowed = " or ".join(f"{suffix} ({name})" for suffix, name in FORMATS.items())
        ending = f"ends in {path.suffix!r}" if path.suffix else "has no ending"
        raise ValueError(f"{str(path)!r} {ending}; end it in {allowed}")
    return path


def quiz_title(trace: AttentionTrace, settings: Settings) -> str:
    word = trace.query_tokens[trace.focus].text
    return f"Attention: {settings.sentence} ({word})"


def write_quiz(path: Path, trace: AttentionTrace, settings: Settings) -> tuple[str, int]:
    """Write the quiz bank; (the format's name, how many questions) for the progress line."""
    path = quiz_path(path)
    check_writable_folder(path)
    questions = worded(trace, Translate(settings.language))
    title = quiz_title(trace, settings)
    if path.suffix.lower() == ".xml":
        write_text_atomic(path, moodle_xml(questions, title))
    else:
        with atomic_output(path) as tmp:
            write_qti(questions, title, tmp)
    return FORMATS[path.suffix.lower()], len(questions)


# ---- Moodle XML --------------------------------------------------------------------------
def moodle_xml(questions: Sequence[Worded], title: str) -> str:
    """Moodle's question-bank XML: one category named after the video, then one
    multichoice question (one right answer) per record."""
    quiz = ET.Element("quiz")
    category = ET.SubElement(ET.SubElement(quiz, "question", type="category"), "category")
    ET.SubElement(category, "text").text = f"$course$/{title}"
    for n, q in enumerate(questions, 1):
        item = ET.SubElement(quiz, "question", type="multichoice")
        _text(ET.SubElement(item, "name"), f"{n}. {shortened(q.ask)}")
        _text(ET.SubElement(item, "questiontext", format="plain_text"), q.ask)
        _text(ET.SubElement(item, "generalfeedback", format="plain_text"), q.reason)
        for tag, value in (("defaultgrade", "1"), ("penalty", "0"), ("hidden", "0"),
                           ("single", "true"), ("shuffleanswers", "false"),
                           ("answernumbering", "abc")):
            ET.SubElement(item, tag).text = value
        for k, option in enumerate(q.options):
            answer = ET.SubElement(item, "answer", fraction="100" if k == q.answer else "0",
                                   format="plain_text")
            _text(answer, option)
    ET.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, "unicode") + "\n"


def shortened(text: str, most: int = 60) -> str:
    """A question's name in the bank's list: its first words."""
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def _text(parent: ET.Element, value: str) -> None:
    ET.SubElement(parent, "text").text = value


# ---- QTI 1.2 (Canvas) --------------------------------------------------------------------
# Python-Markdown's backslash escapes, and text2qti's own for "$" (its LaTeX); "<" has no
# escape, so it is written as an entity (else "<y>" would be read as an HTML tag).
MARKDOWN = re.compile(r"([\\`*_{}\[\]()>#+\-.!$])")


def plain(text: str) -> str:
    """Text for text2qti's Markdown, every character it would read as markup escaped."""
    text = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;")
    return MARKDOWN.sub(r"\\\1", text)


def qti_source(questions: Sequence[Worded], title: str) -> str:
    """The quiz in text2qti's plain-text format: numbered questions, lettered options with
    `*` on the right one, `...` before the general feedback."""
    lines = [f"Quiz title: {' '.join(title.split())}", ""]
    for n, q in enumerate(questions, 1):
        lines.append(f"{n}.  {plain(q.ask)}")
        lines.append(f"... {plain(q.reason)}")
        for k, option in enumerate(q.options):
            mark = "*" if k == q.answer else ""
            lines.append(f"{mark}{'abcdefghij'[k]}) {plain(option)}")
        lines.append("")
    return "\n".join(lines)


def write_qti(questions: Sequence[Worded], title: str, out: Path) -> None:
    """The QTI 1.2 .zip Canvas imports, made by text2qti from qti_source (its Config is
    used as built: loading it would write a settings file into the user's home)."""
    from text2qti.config import Config
    from text2qti.qti import QTI
    from text2qti.quiz import Quiz

    quiz = Quiz(qti_source(questions, title), config=Config(), source_name=str(out))
    QTI(quiz).save(str(out))

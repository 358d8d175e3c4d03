"""Every word the transcript (pipeline.outputs.transcript) writes, from the caption catalogue,
in the video's caption language."""

from __future__ import annotations

from attention_video.scenes.catalogue import Translate


def transcript_words(tr: Translate, sentence: str, word: str, normalized: bool) -> dict[str, str]:
    """The transcript's headings, table captions and column heads, by key."""
    return {
        "title": tr("Transcript: {sentence}", sentence=sentence),
        "chapters": tr("Chapters"),
        "picture": tr("The picture:"),  # before a caption's description
        "numbers": tr("The numbers"),
        "rows": tr("The rows of {word}", word=word),
        "row": tr("row"),
        "gives": tr("What {word} gives every word", word=word),
        "word": tr("word"),
        "scaled": tr("scaled"),
        "weight": tr("weight") if normalized else tr("raw factor"),
    }

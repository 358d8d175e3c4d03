"""The words the --slides deck (pipeline.outputs.slides) shows besides its captions, from
the caption catalogue: the deck is written in the video's caption language."""

from __future__ import annotations

from attention_video.scenes.catalogue import Translate


def deck_words(tr: Translate) -> dict[str, str]:
    """The deck's words by key (its template looks them up by key)."""
    return {
        "page": tr("Companion page"),  # the link to <stem>.page.html, when it is made too
        "page_hint": tr("Every number of the video, cell by cell"),  # the link's tooltip
        "chapters": tr("Chapters"),  # the chapter menu: each chapter's first step
        "chapter_keys": tr("[ and ] go to the previous and the next chapter."),
        "previous_chapter": tr("Previous chapter"),  # the keys' lines in reveal.js's help (?)
        "next_chapter": tr("Next chapter"),
        "picture": tr("The picture:"),  # before a step's description in its notes (--describe)
    }

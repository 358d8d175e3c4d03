"""The chapters' titles on screen: "9 · Every head: …", the number being the chapter's place
in the story. Each title's message id is in its chapter's row (attncore.chapters, marked for
extraction there); this module translates it in the caption language."""

from __future__ import annotations

from attention_video.attncore.chapters import chapter
from attention_video.scenes.catalogue import Translate


def chapter_title(slug: str, tr: Translate, heads: int, rotary: bool = False) -> str:
    """The title on screen and on the storyboard, in tr's language, for a model of `heads`
    heads; `rotary`: its scores use Q and K turned by RoPE, so a title naming them says
    Q_rot and K_rot."""
    c = chapter(slug)
    message = (c.one_head_title if heads == 1 else None) or (c.rotary_title if rotary else None)
    return f"{c.number} · {tr(message or c.title)}"

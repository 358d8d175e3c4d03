"""The chapters' titles, as catalogue messages (attncore.chapters holds the story, not its
words): "9 · Every head: …", the number being the chapter's place in the story."""

from __future__ import annotations

from attention_video.attncore.chapters import number
from attention_video.scenes.catalogue import N_, Translate

TITLES = {
    "input": N_("Input: words become rows of numbers"),
    "linear": N_("Linear layers: X becomes Q, K and V"),
    "factor": N_("The factor matrix Q·Kᵀ"),
    "dot": N_("One cell: a dot product"),
    "softmax": N_("Scale and softmax: scores become weights"),
    "weighted_sum": N_("Weighted sum: mixing the values"),
    "qkv": N_("Query, key, value: who gets attention?"),
    "learning": N_("Learning: training aligns the vectors"),
    "heads": N_("Every head: patterns side by side, then joined"),
    "summary": N_("Summary: the whole formula"),
}
# A chapter whose title differs for a model of a single head.
ONE_HEAD_TITLES = {
    "heads": N_("One head: its Z row times W_O"),
}


def chapter_title(slug: str, tr: Translate, heads: int) -> str:
    """The title on screen and on the storyboard, in tr's language, for a model of `heads`
    heads."""
    message = ONE_HEAD_TITLES.get(slug) if heads == 1 else None
    return f"{number(slug)} · {tr(message or TITLES[slug])}"

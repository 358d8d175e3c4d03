"""The words of the sentence as the picture labels them: shortened where long, and a word
that occurs twice numbered by its occurrence (flies₁, flies₂). No Manim here: the voice,
the page and the descriptions name the words as the picture does."""

from __future__ import annotations

from collections.abc import Sequence

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(n: int | str) -> str:
    """A number as subscript digits: 12 → "₁₂" (for Z₁ and q₁k₁)."""
    return str(n).translate(_SUBSCRIPTS)


def short_label(text: str, max_chars: int = 10) -> str:
    """Shorten a long word visibly: 'extraordinarily' → 'extraordi…'."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def word_labels(words: Sequence[str], max_chars: int = 10) -> list[str]:
    """Each token's label as the picture names it: shortened (short_label), and a word that
    occurs more than once (case aside: "The", "the") numbered by occurrence, flies₁ and
    flies₂, so two rows are told apart by more than their colours."""
    counts: dict[str, int] = {}
    for w in words:
        counts[w.casefold()] = counts.get(w.casefold(), 0) + 1
    seen: dict[str, int] = {}
    out = []
    for w in words:
        key = w.casefold()
        if counts[key] == 1:
            out.append(short_label(w, max_chars))
            continue
        seen[key] = seen.get(key, 0) + 1
        index = subscript(seen[key])
        out.append(short_label(w, max_chars - len(index)) + index)
    return out

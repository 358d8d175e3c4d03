"""Plain-text maths typeset: "Q_rot·K_rot^T", "d_k", "W_Q", "base^(−2m/d_k)" as the video
draws them, and as the text outputs write them (the transcript, the subtitle files, the
storyboard's printed captions). Without Manim: the outputs read it too.

A subscript or a superscript is written in Unicode's small characters where it has one
for each character (dₖ, Kᵀ, Qᵣₒₜ); where it has not (Unicode has no small capital Q), the
video lowers or raises it (Pango's <sub>, <sup>), HTML does the same, and plain text keeps
it as it was written (W_Q). A subscript follows a one-letter name ("snake_case" is a word,
and stays as it is).
"""

from __future__ import annotations

import re
from collections.abc import Callable

SUB = dict(zip("0123456789aehijklmnoprstuvx+−=()", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎"))
SUP = dict(zip("0123456789abcdefghijklmnoprstuvwxyzT+−=()/",
               "⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ⁺⁻⁼⁽⁾ᐟ"))
_SUBSCRIPT = re.compile(r"(?<![^\W\d_])([A-Za-z])_([A-Za-z0-9]+)")  # d_k, W_Q, d_model
# K^T, base^(−2m/d_k) (not around a subscript with no small form: x^(W_Q) stays as written)
_SUPERSCRIPT = re.compile(r"\^(?:\(([^()\0]*)\)|([A-Za-z0-9]+))")
_MARKED = re.compile("\0(sub|sup)\1(.*?)\1(.*?)\0")  # a part Unicode has no small form for

Part = tuple[str, str, str]  # (tag: "", "sub" or "sup"; its characters; as it was written)


def parts(text: str) -> list[Part]:
    """`text` cut into runs: plain text (tag ""), its sub- and superscripts already in
    Unicode's small characters, and between them each sub- or superscript Unicode has no
    small form for, with its characters and the notation it was written in ("_Q")."""
    if "_" not in text and "^" not in text:
        return [("", text, text)] if text else []
    lowered = _SUBSCRIPT.sub(lambda m: m[1] + _small(m[2], SUB, "sub", "_" + m[2]), text)
    raised = _SUPERSCRIPT.sub(
        lambda m: _small(m[1] if m[1] is not None else m[2], SUP, "sup", m[0]), lowered)
    pieces = _MARKED.split(raised)  # text, tag, characters, written, text, …
    out = [("", piece, piece) if n % 4 == 0 else None for n, piece in enumerate(pieces)]
    for n in range(1, len(pieces), 4):
        out[n] = (pieces[n], pieces[n + 1], pieces[n + 2])
    return [p for p in out if p is not None and p[1]]


def _small(chars: str, table: dict[str, str], tag: str, written: str) -> str:
    """`chars` in Unicode's small characters, or marked (NUL, tag, chars, written, NUL)
    where one of them has none."""
    if all(c in table for c in chars):
        return "".join(table[c] for c in chars)
    return f"\0{tag}\1{chars}\1{written}\0"


def joined(text: str, marked: Callable[[str, str], str],
           escape: Callable[[str], str] = lambda s: s) -> str:
    """`text` typeset in a markup: each plain run escaped, each part Unicode has no small
    form for as `marked(tag, escaped characters)`."""
    return "".join(marked(tag, escape(chars)) if tag else escape(chars)
                   for tag, chars, _ in parts(text))


def typeset(text: str, escape: Callable[[str], str]) -> tuple[str, str | None]:
    """(plain, markup): `text` with its sub- and superscripts in Unicode's small
    characters, and None; or, where some of them have none, a markup string that lowers
    (<sub>) or raises (<sup>) them (Pango's and HTML's tags alike, `escape` its text), and
    `plain` is the text as a reader takes it in. Text without "_" or "^" comes back as it is."""
    cut = parts(text)
    plain = "".join(chars for _, chars, _ in cut)
    if all(not tag for tag, _, _ in cut):
        return plain, None
    return plain, joined(text, lambda tag, inner: f"<{tag}>{inner}</{tag}>", escape)


def unicode_text(text: str) -> str:
    """`text` for plain text, which has no markup (SRT, WebVTT, a printed caption): its
    sub- and superscripts in Unicode's small characters where it has them (Kᵀ, dₖ), and as
    written where it has not (W_Q: a small capital Q Unicode lacks)."""
    return "".join(written if tag else chars for tag, chars, written in parts(text))

"""Why --head auto followed a head, phrased in the caption language from the core's
HeadChoice (attncore.trace), which holds the reason as data."""

from __future__ import annotations

from attention_video.attncore.heads import ENDS, NEXT, PREVIOUS, STRIPE
from attention_video.attncore.trace import HeadChoice
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.precision import WEIGHTS


def head_reason(c: HeadChoice | None, tr: Translate, brief: bool = False) -> str | None:
    """Why --head auto followed this head, in the caption language, generated from the
    core's HeadChoice (None when the head was given); `brief`: without the heads skipped."""
    why = head_why(c, tr, brief)
    if c is None or why is None:
        return None
    if c.rule == c.UNTRAINED:
        return why
    if c.rule == c.VERB_HEAD:
        return tr("head {head}: {why}", head=c.head, why=why)
    return tr("layer {layer}, head {head}: {why}", layer=c.layer, head=c.head, why=why)


def head_why(c: HeadChoice | None, tr: Translate, brief: bool = False) -> str | None:
    """The reason without the head it names (head_reason): what chapter `heads` quotes."""
    if c is None:
        return None
    if c.rule == c.UNTRAINED:
        return tr("untrained weights have no meaningful head to pick")
    if c.rule == c.NO_OTHER_WORD:
        return tr("the sentence has no other word for {word} to attend to", word=c.focus_name)
    if c.rule == c.VERB_HEAD:
        rate = (tr(" ({rate} of held-out objects attend most to their verb there)",
                   rate=f"{c.rate:.0%}") if c.rate else "")
        return tr("the head where objects find their verbs{rate}", rate=rate)
    where = {-1: tr(", the token just before it"),
             1: tr(", the token just after it")}.get(c.offset, "")
    text = tr("{word} gives {weight} of its attention to {other}{where}, the highest to "
              "another word of any head", word=c.focus_name, weight=f"{c.weight:.{WEIGHTS}f}",
              other=c.word_name, where=where)
    if c.sink_name is not None and not brief:
        text += tr("; the first token {sink} is not counted (the heads give it {share} of their "
                   "attention on average)",
                   sink=c.sink_name, share=f"{c.sink_share:.{WEIGHTS}f}")
    if c.kind is not None:
        text += tr("; every head of this sentence has a fixed pattern ({kind}), so this link "
                   "says little about the words", kind=pattern_name(c.kind, tr))
    if c.skipped and not brief:
        kinds = tr.context("list separator", ", ").join(
            pattern_name(k, tr) for k in c.skipped_kinds)
        text += tr.plural("; {n} head with a fixed pattern whatever the words ({kinds}) is "
                          "left out",
                          "; {n} heads with a fixed pattern whatever the words ({kinds}) are "
                          "left out", len(c.skipped), kinds=kinds)
    return text


def pattern_name(kind: str, tr: Translate) -> str:
    """A fixed pattern of attncore.heads, worded: what such a head looks at."""
    return {PREVIOUS: tr("previous token"), NEXT: tr("next token"), STRIPE: tr("one column"),
            ENDS: tr("end tokens")}[kind]

"""Why --head auto followed a head, phrased in the caption language from the core's
HeadChoice (attncore.trace), which holds the reason as data."""

from __future__ import annotations

from attention_video.attncore.trace import HeadChoice
from attention_video.scenes.catalogue import Translate


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
              "another word of any head", word=c.focus_name, weight=f"{c.weight:.2f}",
              other=c.word_name, where=where)
    if c.sink_name is not None and not brief:
        text += tr("; the first token {sink} is not counted (the heads give it {share} of their "
                   "attention on average)",
                   sink=c.sink_name, share=f"{c.sink_share:.2f}")
    if c.skipped and not brief:
        names = tr.context("list separator", ", ").join(
            f"{layer}.{head}" for layer, head in c.skipped)
        kinds = (tr("previous or next token") if len(c.skipped_sides) == 2 else
                 {-1: tr("previous token"), 1: tr("next token")}[c.skipped_sides[0]])
        text += tr("; positional heads (layer.head {heads}) that mostly look at the {kinds} "
                   "are left out", heads=names, kinds=kinds)
    return text

"""The questions of attncore.questions, worded in the caption language: the question, each
option and the one-line reason, all from the record's numbers (the video's cards, the
deck, the page and the quiz bank read these)."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore import questions as qs
from attention_video.attncore.questions import Option, Question
from attention_video.attncore.trace import AttentionTrace
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.labels import subscript
from attention_video.scenes.precision import SCORES, WEIGHTS


@dataclass(frozen=True)
class Worded:
    """One question in words: what is asked, the options, which is right, and why."""

    kind: str
    before: str  # the chapter it is asked in, as it opens
    ask: str
    options: tuple[str, ...]
    answer: int
    reason: str


def worded(trace: AttentionTrace, tr: Translate) -> tuple[Worded, ...]:
    """Every question of the trace, in words."""
    return tuple(word_question(q, trace, tr) for q in qs.questions(trace))


def word_question(q: Question, trace: AttentionTrace, tr: Translate) -> Worded:
    options = tuple(option_text(o, trace, tr) for o in q.options)
    return Worded(q.kind, q.before, ask_text(q, trace, tr), options, q.answer,
                  reason_text(q, trace, tr, options[q.answer]))


def token_name(tokens, j: int, tr: Translate) -> str:
    """A token in quotes; a word the sentence holds more than once is numbered by its
    occurrence ("flies₁", "flies₂"), so the options never hold two identical words."""
    key = tokens[j].key
    same = [i for i, t in enumerate(tokens) if t.key == key]
    text = tokens[j].text + (subscript(same.index(j) + 1) if len(same) > 1 else "")
    return tr("\"{word}\"", word=text)


def query_name(trace: AttentionTrace, i: int, tr: Translate) -> str:
    return token_name(trace.query_tokens, i, tr)


def key_name(trace: AttentionTrace, j: int, tr: Translate) -> str:
    return token_name(trace.key_tokens, j, tr)


def number(x: float, decimals: int = SCORES) -> str:
    """A number as the video prints it (scenes.precision: a score two decimals, a softmax
    weight three), a true minus sign."""
    return f"{x:.{decimals}f}".replace("-", "−")


def option_text(o: Option, trace: AttentionTrace, tr: Translate) -> str:
    if o.token is not None:
        return key_name(trace, o.token, tr)
    if o.label is not None:
        return {qs.POSITIVE: tr("positive"), qs.NEGATIVE: tr("negative"),
                qs.SAME: tr("the same"), qs.DIFFERENT: tr("different")}[o.label]
    if o.low == 0.0:
        return tr("under {high}", high=number(o.high))
    if o.high == 1.0:
        return tr("{low} or more", low=number(o.low))
    return tr("{low} to {high}", low=number(o.low), high=number(o.high))


def names(trace: AttentionTrace) -> tuple[str, str, str]:
    """The names of the query rows, the key rows and their product, as the video writes
    them: turned rows have their own names (chapter `linear`)."""
    if trace.rope is not None:
        return "Q_rot", "K_rot", "Q_rot·K_rotᵀ"
    return "Q", "K", "Q·Kᵀ"


def ask_text(q: Question, trace: AttentionTrace, tr: Translate) -> str:
    word = query_name(trace, q.query, tr)
    key = key_name(trace, q.key, tr) if q.key is not None else ""
    Q, K, product = names(trace)
    if q.kind == qs.TOP_KEY:
        return tr("Which of these words will {word} score highest in {product}?", word=word,
                  product=product)
    if q.kind == qs.SIGN:
        return tr.plural(
            "The {Q} row of {word} and the {K} row of {key} have the same sign in {same} "
            "pair of {d}. Will their dot product be positive or negative?",
            "The {Q} row of {word} and the {K} row of {key} have the same sign in {same} "
            "pairs of {d}. Will their dot product be positive or negative?",
            int(q.fact("same")), Q=Q, K=K, word=word, key=key, same=int(q.fact("same")),
            d=trace.d_k)
    if q.kind == qs.CLOSEST_ANGLE:
        return tr("Which key points most nearly the way the query of {word} points "
                  "(the smallest angle)?", word=word)
    if q.kind == qs.TOP_WEIGHT:
        return tr("After scaling and softmax, about how much of the weight of {word} goes "
                  "to its top word?", word=word)
    if q.kind == qs.ROPE_SHIFT:
        return tr.plural(
            "If {word} and {key} both stood {n} place later, as far apart as now, would "
            "their score stay the same?",
            "If {word} and {key} both stood {n} places later, as far apart as now, would "
            "their score stay the same?", int(q.fact("shift")), word=word, key=key)
    if q.kind == qs.ROPE_DISTANCE:
        return tr("If {word} stood {further} places after {key} instead of {distance}, "
                  "would their score stay the same?", word=word, key=key,
                  further=int(q.fact("further_distance")), distance=int(q.fact("distance")))
    if q.kind == qs.STEP_ZERO:
        return tr("Before training (step 0), about how much of the weight of {word} went "
                  "to {key}?", word=word, key=key)
    raise ValueError(f"no words for question kind {q.kind!r}")


def reason_text(q: Question, trace: AttentionTrace, tr: Translate, answer: str) -> str:
    key = key_name(trace, q.key, tr) if q.key is not None else ""
    word = query_name(trace, q.query, tr)
    if q.kind == qs.TOP_KEY:
        return tr("{answer}: its score {score} is the highest of the row; next comes {other} "
                  "with {runner}.", answer=answer, score=number(q.fact("score")),
                  other=key_name(trace, int(q.fact("runner_up_key")), tr),
                  runner=number(q.fact("runner_up")))
    if q.kind == qs.SIGN:
        return tr("{answer}: {product}[{word}, {key}] = {score}: the pairs whose signs agree "
                  "add {agreeing}, the others {opposing}.", answer=answer.capitalize(),
                  product=names(trace)[2], word=word, key=key, score=number(q.fact("score")),
                  agreeing=number(q.fact("plus")), opposing=number(q.fact("minus")))
    if q.kind == qs.CLOSEST_ANGLE:
        text = tr("{answer}, at {angle}°.", answer=answer, angle=f"{q.fact('angle'):.0f}")
        top = int(q.fact("top_key"))
        if top != q.key:
            text += " " + tr("{top} scores higher at {angle}°: its key is longer.",
                             top=key_name(trace, top, tr),
                             angle=f"{q.fact('top_key_angle'):.0f}")
        return text
    if q.kind == qs.TOP_WEIGHT:
        return tr("{answer}: {weight} goes to {key}.", answer=answer.capitalize(),
                  weight=number(q.fact("weight"), WEIGHTS), key=key)
    if q.kind == qs.ROPE_SHIFT:
        return tr("{answer}: {score} both times. RoPE turns both rows by the same extra "
                  "angle, so only their distance counts.", answer=answer.capitalize(),
                  score=number(q.fact("score")))
    if q.kind == qs.ROPE_DISTANCE:
        return tr("{answer}: {score} becomes {further}. The angle between their pairs "
                  "grows with the distance.", answer=answer.capitalize(),
                  score=number(q.fact("score")), further=number(q.fact("further")))
    if q.kind == qs.STEP_ZERO:
        return tr("{answer}: {weight}, about an even share ({even}); after training, {final}.",
                  answer=answer.capitalize(), weight=number(q.fact("weight"), WEIGHTS),
                  even=number(q.fact("even"), WEIGHTS), final=number(q.fact("final"), WEIGHTS))
    raise ValueError(f"no words for question kind {q.kind!r}")

"""--head auto means something: on a set of sentences (Latin, CJK, right-to-left, long; the
encoders and the decoder) the chosen head is not one whose pattern is the same whatever the
words: not positional (previous or next token), not a stripe (one word that most words weigh
most), not an end-token head, unless every head is one, and then the choice says which kind.

The rules are checked here with loops over the trace's own weights, not with the code that
chose the head."""

from __future__ import annotations

import pytest
from attention_video.attncore import heads as common
from attention_video.attncore.decoder.gguf_file import find_gguf
from attention_video.attncore.decoder.run import reading as decoder_reading
from attention_video.attncore.decoder.run import run as decoder_run
from attention_video.attncore.encoder_heads import reading as encoder_reading
from attention_video.attncore.multilingual import locate
from attention_video.attncore.multilingual.run import run as multilingual_run
from attention_video.attncore.pretrained import find_model
from attention_video.attncore.pretrained.run import run as pretrained_run
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import HeadChoice
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.reasons import head_why


def _installed(find) -> bool:
    try:
        return find() is not None
    except Exception:
        return False


LONG = ("The old fisherman who lived by the sea told the children a story about the storm "
        "that sank his first boat many years ago")
CASES = [  # (weights, sentence, query)
    ("pretrained", "Time flies like an arrow and fruit flies like a banana", None),
    ("pretrained", LONG, "boat"),
    ("pretrained", "The black cat drank the milk", "milk"),
    ("multilingual", "小狗在公园里跑", "狗"),
    ("multilingual", "القطة السوداء شربت الحليب البارد", None),
    ("multilingual", "El gato negro bebió la leche fría", "leche"),
    ("decoder", "Time flies like an arrow and fruit flies like a banana", None),
    ("decoder", "The black cat drank the milk", None),
]
RUNS = {"pretrained": (pretrained_run, encoder_reading, lambda: find_model(None)),
        "multilingual": (multilingual_run, encoder_reading, lambda: locate.from_package()),
        "decoder": (decoder_run, decoder_reading, find_gguf)}


def words_of(r: common.Reading) -> list[int]:
    return [j for j, t in enumerate(r.tokens)
            if t.kind in ("word", "subword") and j != r.sink]


def fixed_pattern(A, r: common.Reading) -> str | None:
    """The rules of the module docstring, by loops: which fixed pattern the head has."""
    inner = list(r.inner)
    for o, name in ((-1, "previous"), (1, "next")):
        rows = [i for i in inner if 0 <= i + o < A.shape[0]]
        if len(rows) < 2:
            continue
        mean = sum(A[i, i + o] for i in rows) / len(rows)
        top_is_neighbour = [max((j for j in inner if j != i), key=lambda j: A[i, j]) == i + o
                            for i in rows]
        if mean >= 0.5 or (mean >= 0.25 and sum(top_is_neighbour) >= 0.75 * len(rows)):
            return name
    words = words_of(r)
    tops = {}
    for i in words:
        seen = [j for j in words if j != i and A[i, j] > 0]
        if seen:
            tops[i] = max(seen, key=lambda j: A[i, j])
    if len(tops) >= 4:
        for c in set(tops.values()):
            others = sum(1 for i in tops if i != c)
            if sum(1 for t in tops.values() if t == c) >= 2 / 3 * others:
                return "stripe"
    if r.sink is None:  # an encoder: the end tokens
        n = A.shape[0]
        ends = sum(A[i, 0] + A[i, n - 1] for i in range(1, n - 1)) / max(n - 2, 1)
        if n - 2 >= 2 and ends >= 0.75:
            return "ends"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("weights, sentence, query", CASES)
def test_auto_never_picks_a_head_with_a_fixed_pattern_while_another_qualifies(
        weights, sentence, query):
    run, reading, find = RUNS[weights]
    if not _installed(find):
        pytest.skip(f"the {weights} model is not installed")
    r = reading(run(Settings(sentence=sentence, query=query, weights=weights)))
    choice = common.choose_head(r)
    A = r.attention  # (L, H, n, n)
    kinds = {(layer, head): fixed_pattern(A[layer, head], r)
             for layer in range(A.shape[0]) for head in range(A.shape[1])}
    plain = [lh for lh, k in kinds.items() if k is None]
    chosen = kinds[(choice.layer, choice.head)]
    if plain:
        assert chosen is None, f"{weights}: head {choice.layer}.{choice.head} is a {chosen} head"
        assert choice.kind is None
        # the strongest link among the plain heads (to another real word), as the rule says
        others = common.other_words(r)
        best = max(max(A[lh][r.focus, j] for j in others) for lh in plain)
        assert choice.weight == pytest.approx(best)
    else:
        assert choice.kind == chosen  # every head has one: the choice says which
    left_out = {k for k in kinds.values() if k is not None}
    assert set(choice.skipped_kinds) == (left_out if plain else set())


def test_the_table_tags_every_fixed_pattern():
    if not _installed(lambda: find_model(None)):
        pytest.skip("the pretrained model is not installed")
    r = encoder_reading(pretrained_run(Settings(sentence=CASES[0][1], weights="pretrained")))
    rows = common.summaries(r)
    table = common.format_heads(rows, "banana", (0, 0))
    for h in rows:
        line = next(x for x in table.splitlines()
                    if x[1:].split()[:2] == [str(h.layer), str(h.head)])
        if h.kind == common.STRIPE:
            assert f"one column ('{h.stripe_word}')" in line
        elif h.kind is None:
            assert "token" not in line.split()[-1] and "column" not in line


def test_a_forced_choice_says_what_kind_of_head_it_shows():
    tr = Translate("en")
    c = HeadChoice(HeadChoice.STRONGEST_LINK, 3, 1, "'banana'", word=4, word_name="'arrow'",
                   weight=0.41, kind=common.STRIPE)
    assert "every head of this sentence has a fixed pattern (one column)" in head_why(c, tr)
    c = HeadChoice(HeadChoice.STRONGEST_LINK, 3, 1, "'banana'", word=4, word_name="'arrow'",
                   weight=0.41, skipped=((0, 1), (2, 3)), skipped_kinds=(common.PREVIOUS,
                                                                           common.STRIPE))
    why = head_why(c, tr)
    assert "2 heads with a fixed pattern whatever the words (previous token, one column)" in why

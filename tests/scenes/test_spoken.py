"""The spoken form of a caption: each rule of scenes.spoken, and every caption of the
default video read without a symbol left over."""

from __future__ import annotations

import re

import pytest
from attention_video.scenes.spoken import SUBSCRIPT, spoken


@pytest.mark.parametrize("caption, said", [
    ("Q·Kᵀ", "Q times K transpose"),
    ("Kᵀ: one column per key word", "K transpose: one column per key word"),
    ("Q = X · W_Q: every row", "Q equals X times W Q: every row"),
    ("the same learned 4 × 4 matrix", "the same learned 4 by 4 matrix"),
    ("one row per word, 6 × 4.", "one row per word, 6 by 4."),
    ("0.989 × V(drank)", "0.989 times the value of drank"),
    ("2 × 0.5", "2 times 0.5"),
    ("softmax(Q·Kᵀ / √d_k)·V", "softmax of Q times K transpose divided by the square root of "
                               "d k times V"),
    ("√d_k = √4 = 2.00", "the square root of d k equals the square root of 4 equals 2.00"),
    ("fill one bar: Σ = 1.00.", "fill one bar: the sum equals 1.00."),
    ("0.008 × V(black), …", "0.008 times the value of black, and so on"),
    ("0.01·V(black) + …", "0.01 times the value of black, and so on"),
    ("a b … c", "a b and so on c"),
    ("the label extraordi… is cut", "the label extraordi is cut"),
    ("the linear layer (ch. 2), the factor matrix (ch. 3)",
     "the linear layer, chapter 2, the factor matrix, chapter 3"),
    ("leans most towards V(drank).", "leans most towards the value of drank."),
    # a function's arguments said as a list, the last joined by "and" (Q, K, V: the last
    # V heard as "B"); an index in square brackets keeps its comma
    ("Attention(Q, K, V) = x", "Attention of Q, K and V equals x"),
    ("f(x, y) and g(x)", "f of x and y and g of x"),
    ("Q[i, m]", "Q of i, m"),
    ('"milk" attends most to "drank" (0.99), then', "milk attends most to drank, 0.99, then"),
    ("its row of Q: (2.87, −4.40, −1.54, 0.36).", "its row of Q: 2.87, minus 4.40, minus 1.54, 0.36."),
    ("the sum is −0.03; after", "the sum is minus 0.03; after"),
    ("X = E + P", "X equals E plus P"),
    ("a − b", "a minus b"),
    ("(d_model 4, 1 head, seed 0)", "d model 4, 1 head, seed 0"),
    ("W_O's first column", "W O's first column"),
    ("[CLS] and [SEP]", "CLS and SEP"),
    ("blue → azul", "blue to azul"),
    ("the well-known cat", "the well-known cat"),
    # brackets that index: a row named by its word
    ("There Q[milk] and K[drank] keep", "There the query of milk and the key of drank keep"),
    ("K[[CLS]] answers", "the key of CLS answers"),
    # a word's row of the attention's matrices by the matrix's name (a lone V is heard as
    # "D"): in brackets, after "of", before "row"; the letter after its own name goes
    ('Z of "milk": its encoded value', "the output of milk: its encoded value"),
    ("Each V row and their Z rows", "Each value row and their output rows"),
    ("how much of each value row V it takes", "how much of each value row it takes"),
    ("the key K of drank", "the key of drank"),
    ("a row of X, the row of Q: one", "a row of X, the row of Q: one"),  # letters stay
    ("softmax(Q·Kᵀ)·V and so Z is", "softmax of Q times K transpose times V and so Z is"),
    ("X(milk) and W[milk]", "X of milk and W of milk"),  # not the attention's matrices
    # bars: a vector's length
    ("|q| · |k| · cos θ", "the length of q times the length of k times the cosine of theta"),
    ("the score is |q| times it", "the score is the length of q times it"),
    ("‖x‖ = 1", "the length of x equals 1"),
    # two vectors' dot product (a matrix product stays "times")
    ("q·k = −0.03", "q dot k equals minus 0.03"),
    ("Q·K, pair by pair", "Q times K, pair by pair"),
    # functions and Greek letters
    ("cos(θ) and sin φ", "the cosine of theta and the sine of phi"),
    ("α, β, λ and Δ", "alpha, beta, lambda and delta"),
    # exponentials: "exp" said as a word is heard as "hex"
    ("exp(x_j − max x)", "e to the x j minus max x"),
    ("e^x and e^(x − m) and eˣ", "e to the x and e to the x minus m and e to the x"),
    ("subtract the row's max (12.07) and take exp: all positive",
     "subtract the row's max, 12.07, and take the exponential: all positive"),
    # powers, subscripts, roots
    ("x² + y³ and W⁻¹ and xⁿ", "x squared plus y cubed and W inverse and x to the n"),
    ("Σₘ Q[i, m] and Σ_k x_k and xᵢ", "the sum over m Q of i, m and the sum over k x k and x i"),
    ("√d_k", "the square root of d k"),
    # degrees and infinity
    ("11° from the query (from 125°); 1°", "11 degrees from the query, from 125 degrees; 1 degree"),
    ("masked: −∞", "masked: minus infinity"),
    ("Concat(Z₁…Z₁₂)·W_O", "Concat of Z 1 to Z 12 times W O"),
])
def test_each_symbol_is_read_by_rule(caption, said):
    assert spoken(caption) == said


@pytest.mark.parametrize("caption, said", [
    ("Q·Kᵀ 中的一行", "Q 乘 K 转置 中的一行"),
    ("一行 4 个数字（E）。", "一行 4 个数字，E。"),
    ("4 × 4 矩阵", "4 乘 4 矩阵"),
    ("0.989 × V(drank)，…", "0.989 乘 drank 的 V，等等"),
    ("除以 √d_k = √4 = 2.00", "除以 根号 d k 等于 根号 4 等于 2.00"),
    ("和为 −0.03", "和为 负 0.03"),
    ("Q[milk] 和 K[drank]", "milk 的 Q 和 drank 的 K"),
    ("|k| · cos θ", "k 的长度 乘 theta 的余弦"),
    ("q·k，11°", "q 点乘 k，11 度"),
    ("exp(x) 与 x²", "e 的 x 次方 与 x 的平方"),
    ("|k| · cos θ：6.73 × 5.94", "k 的长度 乘 theta 的余弦：6.73 乘 5.94"),
    ("Attention(Q, K, V)", "Q, K 和 V 的 Attention"),
])
def test_chinese_captions_are_read_in_chinese_words(caption, said):
    assert spoken(caption, "zh") == said


def default_captions(case: str) -> list[str]:
    """The captions of every chapter of a video of tests/scenes/test_scenes.py (its dry runs,
    shared with that module's tests)."""
    from tests.scenes.test_scenes import build, params

    return [text for c, ch in params([case]) for _, _, text in build(c, ch)[1].subtitles]


def check_said_without_a_symbol(captions: list[str], language: str) -> None:
    """Once spoken, each caption keeps its numbers in order and has no symbol left that a
    voice would misread or skip."""
    assert len(captions) > 30
    for text in captions:
        said = spoken(text, language)
        assert not re.search(r"[ᵀ·×/√Σ…=+−_()\[\]（）\"“”|‖°∞^α-ωΑ-Ω₀-₉ₐ-ₜᵢⱼ⁰-⁹²³¹]", said), (
            text, said)
        assert not re.search(r"\bexp\b", said), (text, said)
        # Z₁₂ is said "Z 12"; a repeated word's occurrence, the₂, by its ordinal
        unnumbered = re.sub(r"(?<=[^\W\d_₀-₉]{2})[₀-₉]+", "", text)
        shown = "".join(SUBSCRIPT.get(c, c) for c in unnumbered)
        numbers = re.findall(r"\d+(?:\.\d+)?", shown)
        assert re.findall(r"\d+(?:\.\d+)?", said) == numbers, (text, said)


@pytest.mark.xdist_group("scene-builds")  # (the builds are tests/scenes/test_scenes.py's)
def test_every_caption_of_the_default_video_is_said_without_a_symbol():
    check_said_without_a_symbol(default_captions("tiny"), "en")


@pytest.mark.slow
@pytest.mark.xdist_group("scene-builds")
@pytest.mark.parametrize("case, language", [("tiny-chinese", "zh"), ("pretrained-auto", "en"),
                                            ("translate", "en"), ("causal-2-heads", "en")])
def test_every_caption_of_other_videos_is_said_without_a_symbol(case, language):
    check_said_without_a_symbol(default_captions(case), language)


def test_a_word_after_sin_is_not_a_sines_argument():
    """Spanish 'sin' is 'without': "sin softmax" stays words; "sin θ" is still a sine."""
    assert "sin softmax" in spoken("Con pesos, sin softmax.", "es").lower()
    assert "seno" not in spoken("sin softmax", "es").lower()
    assert spoken("sin φ", "en") == "the sine of phi"


@pytest.mark.parametrize("text, language, said", [
    ("Heads tagged [CLS]/[SEP] (4, 7) look at [CLS] and [SEP].", "en",
     "Heads tagged CLS and SEP, 4, 7, look at CLS and SEP."),
    ("标注 <s>/</s> 的头", "zh", "标注 <s> 和 </s> 的头"),
])
def test_a_tag_naming_two_tokens_is_said_as_both(text, language, said):
    assert spoken(text, language) == said


@pytest.mark.parametrize("caption, language, said", [
    # a repeated word as the picture labels it: its occurrence by an ordinal, not a digit
    # ("the 2" is heard as "the tube"), the word's own capital kept
    ("The₁ attends to the₂ (0.31)", "en", "the first The attends to the second the, 0.31"),
    ("flies₁ and flies₂", "en", "the first flies and the second flies"),
    ("Z of the₂ and V(the₁)", "en", "the output of the second the and the value of the first the"),
    ("don't₂ and extraord…₃", "en", "the second don't and the third extraord"),
    ("the₁₁", "en", "occurrence 11 of the"),
    ("猫₂ 的行", "zh", "第二个 猫 的行"),
    # Spanish contracts a preposition with the ordinal's article (catalogue: "de el=del")
    ("la fila de the₂", "es", "la fila del segundo the"),
    ("De the₂ y a the₁", "es", "Del segundo the y al primer the"),
    ("the₃ y the₁", "es", "el tercer the y el primer the"),
    # a symbol's index stays a number: a lone letter with subscript digits
    ("Z₁…Z₁₂ and θ₂", "en", "Z 1 to Z 12 and theta 2"),
])
def test_a_repeated_words_occurrence_is_said_as_an_ordinal(caption, language, said):
    assert spoken(caption, language) == said


@pytest.mark.parametrize("caption, language, said", [
    # a one-letter word of the sentence, repeated: an occurrence too, Q[a₂] by its matrix
    ("a₂ looks at I₂ and Q[a₂]", "en",
     "the second a looks at the second I and the query of the second a"),
    ("la fila de a₂", "es", "la fila del segundo a"),
    ("a₂ 的行", "zh", "第二个 a 的行"),
    # ... while a letter that is no word of the sentence stays a symbol's index
    ("Z₁ and θ₂ beside a₂", "en", "Z 1 and theta 2 beside the second a"),
])
def test_a_one_letter_word_repeated_is_said_as_an_ordinal(caption, language, said):
    words = ("a", "I", "cat", "a₂", "I₂", "the₂")
    assert spoken(caption, language, words) == said
    assert spoken(caption, language) != said  # without the sentence: a symbol's index


def test_a_word_of_the_sentence_never_contracts_with_a_preposition():
    # "el" is the sentence's word: "la fila de el" keeps its "de el" (the word, not the
    # ordinal's article), and its second occurrence's ordinal contracts as any other
    assert spoken("la fila de el y de el₂", "es", ("el", "el₂")) == (
        "la fila de el y del segundo el")

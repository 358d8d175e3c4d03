"""A caption as it is said: the same text, its symbols read out by rule, as a lecturer
reads them aloud.

The voice reads the caption on screen (scenes.base.say), so what is said is made from the
same text that is shown, by the rules below, never typed by hand for a particular caption:

    Kᵀ → "K transpose"      X · W_Q → "X times W Q"     6 × 4 → "6 by 4"
    q·k → "q dot k"          |q| → "the length of q"     cos θ → "the cosine of theta"
    / → "divided by"         √d_k → "the square root of d k"
    exp(x) → "e to the x"    eˣ → "e to the x"           x² → "x squared"
    Σ → "the sum"            Σₘ → "the sum over m"       xᵢ → "x i"
    the₂ → "the second the" (a repeated word's occurrence; Z₁, θ₂ stay symbols: "Z 1",
        unless the sentence has that one-letter word twice: a₂ → "the second a")
    V(drank) → "the value of drank"    Q[milk] → "the query of milk"    f(x) → "f of x"
    Attention(Q, K, V) → "Attention of Q, K and V"
    Z of "milk" → "the output of milk"   each V row → "each value row"   11° → "11 degrees"
    = → "equals"  + → "plus"   −0.27 → "minus 0.27"     −∞ → "minus infinity"
    … → "and so on"          ch. 2 → "chapter 2"         θ → "theta" (every Greek letter)

Quotation marks and square brackets go, and round brackets become the pauses of commas.
A voice left to read symbols itself says `Q[milk]` as "Qmilk" (heard as "chemo can"),
drops the bars of |q| and reads "exp" as a word ("hex"). Chinese captions get the same
rules in Chinese words (for a Chinese Piper voice the user provides).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

from attention_video.scenes.spoken_words import ORDINAL_MARK, occurrence, spoken_words

Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
         "ζ": "zeta", "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda",
         "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau",
         "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "gamma",
         "Δ": "delta", "Θ": "theta", "Λ": "lambda", "Π": "pi", "Φ": "phi", "Ψ": "psi",
         "Ω": "omega"}  # Σ is the sum sign, read by its own rule
SUBSCRIPT = dict(zip("₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ", "0123456789aeoxhklmnpstijruv"))
SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹ⁱⁿˣʸᵏ", "0123456789inxyk"))  # ᵀ is the transpose
_SUB = f"[{''.join(SUBSCRIPT)}]"
_SUP = f"[{''.join(SUPERSCRIPT)}]"


def _plain(chars: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in chars)


@dataclass(frozen=True)
class Words:
    """The words a language reads the symbols with."""

    transpose: str
    times: str
    by: str  # the × of a shape, 6 × 4
    dot: str  # the · between two vectors, q·k
    divided: str
    root: str  # √
    total: str  # Σ
    total_over: Callable[[str], str]  # Σₘ: the index → words
    more: str  # …
    chapter: str
    equals: str
    plus: str
    minus: str  # − before a number
    less: str  # − between two terms
    to: str  # →
    about: str  # ≈
    infinity: str
    of: Callable[[str, str], str]  # V(drank), Q[milk]: (function, argument) → words
    length: Callable[[str], str]  # |q|
    exp: Callable[[str], str]  # exp(x), e^x, eˣ: the exponent → words
    exponential: str  # exp on its own ("take exp")
    function: Callable[[str, str], str]  # cos θ: (cos, θ) → words
    functions: dict[str, str]  # cos, sin, tan, log: their names said
    power: Callable[[str, str], str]  # x², xⁿ: (base, exponent) → words
    degrees: Callable[[str], str]  # 11°: the number → words
    greek: dict[str, str]  # θ → theta
    pause: str  # what brackets become
    occurrence: Callable[[str, int], str]  # the₂: (word, 2) → "the second the"
    # The attention's matrices by name, for a word's row of one: V(drank) is "the value of
    # drank". Said as a lone letter, V is heard as "D" or "B" and Z as "see" (letters that
    # differ only in their first sound); a language without names keeps the letters.
    names: dict[str, str] = field(default_factory=dict)
    named: Callable[[str, str], str] = lambda name, x: f"{name} {x}"  # (name, word) → words
    # A function's arguments, "Q, K, V", as a list is said: "Q, K and V". Said as three
    # letters in a row, the last V is heard as "B" (Whisper tiny.en, the default video's
    # closing formula: that cue's word error fell from 15% to 4%); a language without its
    # word for "and" keeps the commas.
    listed: Callable[[str], str] = lambda arguments: arguments
    # A preposition and an ordinal's article said as one word ("de el" → "del"): pairs.
    contractions: tuple[tuple[str, str], ...] = ()


def _joined(word: str) -> Callable[[str], str]:
    """'Q, K, V' → 'Q, K <word> V': a list's last item joined by the language's 'and'."""
    def listed(arguments: str) -> str:
        head, comma, last = arguments.rpartition(",")
        return f"{head}{word}{last.lstrip()}" if comma and head.strip() else arguments
    return listed


def _english_power(base: str, exponent: str) -> str:
    said = {"2": "squared", "3": "cubed", "-1": "inverse"}.get(exponent)
    return f"{base} {said}" if said else f"{base} to the {exponent}"


_CHINESE_POWERS = {"2": "平方", "3": "立方", "-1": "逆"}
ENGLISH = Words(transpose=" transpose", times=" times ", by=" by ", dot=" dot ",
                divided=" divided by ", root=" the square root of ", total=" the sum ",
                total_over=lambda m: f" the sum over {m} ", more=" and so on",
                chapter="chapter ", equals=" equals ", plus=" plus ", minus="minus ",
                less=" minus ", to=" to ", about=" about ", infinity="infinity",
                of=lambda f, x: f"{f} of {x}", length=lambda x: f"the length of {x}",
                exp=lambda x: f"e to the {x}", exponential="the exponential",
                function=lambda f, x: f"the {f} of {x}",
                functions={"cos": "cosine", "sin": "sine", "tan": "tangent", "log": "log"},
                power=_english_power,
                degrees=lambda n: f"{n} degree" if n == "1" else f"{n} degrees",
                greek=GREEK, pause=", ", occurrence=occurrence("en"),
                names={"Q": "query", "K": "key", "V": "value", "Z": "output"},
                named=lambda name, x: f"the {name} of {x}", listed=_joined(" and "))
CHINESE = Words(transpose=" 转置", times=" 乘 ", by=" 乘 ", dot=" 点乘 ", divided=" 除以 ",
                root=" 根号 ", total=" 总和 ", total_over=lambda m: f" 对 {m} 求和 ",
                more="等等", chapter="第 ", equals=" 等于 ", plus=" 加 ", minus="负 ",
                less=" 减 ", to=" 到 ", about=" 约 ", infinity="无穷大",
                of=lambda f, x: f"{x} 的 {f}", length=lambda x: f"{x} 的长度",
                exp=lambda x: f"e 的 {x} 次方", exponential="指数",
                function=lambda f, x: f"{x} 的{f}",
                functions={"cos": "余弦", "sin": "正弦", "tan": "正切", "log": "对数"},
                power=lambda b, e: f"{b} 的{_CHINESE_POWERS.get(e, f' {e} 次方')}",
                degrees=lambda n: f"{n} 度", greek=GREEK, pause="，", occurrence=occurrence("zh"),
                listed=_joined(" 和 "))
WORDS = {"en": ENGLISH, "zh": CHINESE}

_QUOTES = "\"“”„«»「」『』"
_SHAPE = re.compile(r"(?<![\d.])(\d+)\s*×\s*(\d+)(?!\.?\d)")  # a shape: whole numbers
# A name applied to what follows in brackets without a space: V(drank), Attention(Q, K, V).
_APPLIED = re.compile(r"(?<![\w.])([A-Za-z][\w']*)\(([^()]*)\)")
# A name indexed by a word in square brackets: Q[milk], K[[CLS]] (a token's own brackets).
_INDEXED = re.compile(r"(?<![\w.])([A-Za-z][\w']*)\[((?:[^\[\]]|\[[^\[\]]*\])+)\]")
_WORD_ARGUMENT = re.compile(r"\[?[^\W\d_][^\s,]*")  # a word (Q[milk]), not an index (Q[i, m])
# A repeated word as the picture labels it (scenes.labels.word_labels), its occurrence in
# subscript digits: "the₂", "don't₂", "extraord…₂" (a word cut short), one CJK character
# "猫₂" (a token of its own). A lone Latin or Greek letter is a symbol's name: Z₁, θ₂.
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER = f"(?:(?![{_CJK}₀-₉])[^\\W\\d_])"  # (subscript digits are \w, not \d)
_LONE_REPEATED = re.compile(rf"{_LETTER}[₀-₉]+")  # a one-letter word's label: a₂, I₃
_REPEATED = re.compile(rf"((?<![^\W{_CJK}])(?<!['’-]){_LETTER}(?:{_LETTER}|['’-](?={_LETTER}))+…?"
                       rf"|[{_CJK}])([₀-₉]+)")
_FUNCTION = r"\b(cos|sin|tan|log)"
_OPERAND = r"[^\s,.;:!?()，。；：！？、（）]+"  # an exponent or a function's argument, unbracketed
# An unbracketed function's argument: a Greek letter, one Latin letter or a number ("cos θ",
# "log 2"); a word is not one (Spanish "sin softmax" is "without softmax", not a sine).
_ANGLE = r"[\u0370-\u03ff]|[A-Za-z]|\d+(?:\.\d+)?"


def _of(w: Words, f: str, x: str) -> str:
    """f(x), f[x]: a matrix's row for a word by the matrix's name, else 'f of x'."""
    if f in w.names and _WORD_ARGUMENT.fullmatch(x) and len(x.strip("[]")) > 1:
        return w.named(w.names[f], x)
    return w.of(f, x)


def _named(w: Words) -> list[Rule]:
    """A word's row of the attention's matrices said by the matrix's name: 'Z of milk',
    'each V row' (the row's own letter said after its name, 'value row V', goes)."""
    if not w.names:
        return []
    letters = "".join(w.names)
    by_name = {name: letter for letter, name in w.names.items()}
    return [
        (re.compile(rf"\b({'|'.join(by_name)})( rows?)? ([{letters}])\b(?![\w'(\[·⋅])"),
         lambda m: m[0] if by_name[m[1]] != m[3] else f"{m[1]}{m[2] or ''}"),
        (re.compile(rf"(?<![\w.'])([{letters}]) of ([^\W\d_][^\s,.;:!?]*)"),
         lambda m: _of(w, m[1], m[2])),
        (re.compile(rf"(?<![\w.'])([{letters}])(?= rows?\b)"), lambda m: w.names[m[1]]),
    ]


def _rules(w: Words) -> list[Rule]:
    return [
        (re.compile(f"[{_QUOTES}]"), ""),
        *_named(w),
        (re.compile(r"\bch\.\s*(\d+)"), lambda m: f"{w.chapter}{m[1]}"),
        (re.compile(r"\be\.g\.", re.IGNORECASE), "for example" if w is ENGLISH else "例如"),
        (re.compile(r"\bi\.e\.", re.IGNORECASE), "that is" if w is ENGLISH else "也就是"),
        (_INDEXED, lambda m: _of(w, m[1], m[2])),
        # exponentials: exp(x), e^(x), e^x, eˣ; a lone exp ("take exp") is the function
        (re.compile(r"\bexp\(([^()]*)\)"), lambda m: w.exp(m[1])),
        (re.compile(r"(?<![\w.])e\^\(([^()]*)\)"), lambda m: w.exp(m[1])),
        (re.compile(rf"(?<![\w.])e\^({_OPERAND})"), lambda m: w.exp(m[1])),
        (re.compile(rf"(?<![\w.])e({_SUP}+)"), lambda m: w.exp(_plain(m[1], SUPERSCRIPT))),
        (re.compile(r"\bexp\b"), w.exponential),
        # powers: x², x⁻¹, xⁿ
        (re.compile(r"(\S)⁻¹"), lambda m: w.power(m[1], "-1")),
        (re.compile(rf"([\w)])({_SUP}+)"), lambda m: w.power(m[1], _plain(m[2], SUPERSCRIPT))),
        # lengths: |q|, ‖q‖
        (re.compile(r"‖([^‖]+)‖"), lambda m: w.length(m[1].strip())),
        (re.compile(r"\|([^|\s][^|]*?)\|"), lambda m: w.length(m[1].strip())),
        # cos θ, cos(θ): the cosine of theta
        (re.compile(_FUNCTION + r"\(([^()]*)\)"), lambda m: w.function(w.functions[m[1]], m[2])),
        (re.compile(_FUNCTION + rf"\s+({_ANGLE})(?![\w(\[])"),
         lambda m: w.function(w.functions[m[1]], m[2])),
        (re.compile("ᵀ"), w.transpose),
        (re.compile("√"), w.root),
        (_APPLIED, lambda m: _of(w, m[1], w.listed(m[2]))),  # not an index: Q[i, m]
        (_SHAPE, lambda m: f"{m[1]}{w.by}{m[2]}"),
        (re.compile("×"), w.times),
        (re.compile(r"(?<![\w.])([a-z])\s*[·⋅]\s*([a-z])(?![\w(\[])"),
         lambda m: f"{m[1]}{w.dot}{m[2]}"),  # two vectors: q·k
        (re.compile("[·⋅]"), w.times),
        # a tag naming two tokens, [CLS]/[SEP] or <s>/</s>: "CLS and SEP"
        (re.compile(r"(\[[^\[\]\s]+\]|<[^<>\s]+>)/(\[[^\[\]\s]+\]|<[^<>\s]+>)"),
         lambda m: w.listed(f"{m[1]}, {m[2]}")),
        (re.compile(r"\s/\s|(?<=\w)/(?=[\s√])"), w.divided),
        (_REPEATED, lambda m: w.occurrence(m[1].rstrip("…"), int(_plain(m[2], SUBSCRIPT)))),
        (re.compile(f"Σ({_SUB}+)"), lambda m: w.total_over(_plain(m[1], SUBSCRIPT))),
        (re.compile(r"Σ_(\w+)"), lambda m: w.total_over(m[1])),
        (re.compile("Σ"), w.total),
        (re.compile(f"{_SUB}+"), lambda m: " " + _plain(m[0], SUBSCRIPT)),  # xᵢ: x i
        (re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*°"), lambda m: w.degrees(m[1])),
        (re.compile(r"(?<=\d)…(?=[A-Za-z\d])"), w.to),  # a range: Z₁…Z₁₂, 1…12
        (re.compile(r"(?<=\w)…"), ""),  # a word cut short on screen: 'extraordi…'
        (re.compile(r"\s*[,，+]\s*…"), w.pause.strip() + w.more),
        (re.compile("…"), w.more),
        (re.compile(r"(?<![\w.])[−-](?=[\d∞])"), w.minus),  # a negative number
        (re.compile(r"\s[−-]\s"), w.less),
        (re.compile("∞"), w.infinity),
        (re.compile("="), w.equals),
        (re.compile(r"\+"), w.plus),
        (re.compile("→"), w.to),
        (re.compile("≈"), w.about),
        (re.compile(f"[{''.join(w.greek)}]"), lambda m: f" {w.greek[m[0]]} "),
        (re.compile(r"(?<=[A-Za-z\d])_(?=[A-Za-z\d])"), " "),  # W_Q, d_k, d_model
        (re.compile(r"[(（]"), w.pause),  # brackets: the pauses of commas
        (re.compile(r"[)）]"), w.pause),
        (re.compile(r"[\[\]]"), ""),  # [CLS]: a token's name
        *[(_contracting(words), _keeping_case(said)) for words, said in w.contractions],
    ]


def _keeping_case(said: str) -> Callable[[re.Match[str]], str]:
    """`said` for a match, capitalised where the match starts a sentence ("De el" → "Del")."""
    return lambda m: said[:1].upper() + said[1:] if m[0][:1].isupper() else said


def _contracting(words: str) -> re.Pattern[str]:
    """A preposition and the article of the ordinal after it ("de el": "de el segundo"),
    as `spoken_words.occurrence` marks the ordinal's start; the sentence's own words, not
    marked, are left alone."""
    *before, article = words.split()
    preposition = "".join(re.escape(b) + r"\s+" for b in before)
    return re.compile(rf"(?<!\w){preposition}{ORDINAL_MARK}{re.escape(article)}(?!\w)",
                      re.IGNORECASE)


_TIDY: list[Rule] = [
    (re.compile(ORDINAL_MARK), ""),
    (re.compile(r"\s+"), " "),
    (re.compile(r"\s+([,.;:!?，。；：！？、])"), r"\1"),
    (re.compile(r"([,，])(?:\s*[,，])+"), r"\1"),  # ", ," from brackets after a comma
    (re.compile(r"[,，]\s*([.;:!?。；：！？、])"), r"\1"),  # a comma before a full stop
    (re.compile(r"([;:；：、])\s*[,，]"), r"\1"),  # a comma after a colon
    (re.compile(r"^[\s,，]+|[\s,，]+$"), ""),
]
_COMPILED = {lang: _rules(w) for lang, w in WORDS.items()}


def spoken(text: str, language: str = "en", words: Iterable[str] = ()) -> str:
    """`text` as the voice says it: its symbols in words of `language` (en, zh). `words`:
    the sentence's words as the picture labels them (scenes.labels.word_labels); a lone
    letter repeated ("a₂", "I₂") is then said as a word's occurrence, not as a symbol's
    index."""
    out = text
    for pattern, replacement in _with_words(language, _lone_letters(words)) + _TIDY:
        out = pattern.sub(replacement, out)
    return out


def _lone_letters(words: Iterable[str]) -> tuple[str, ...]:
    """The labels among `words` of a one-letter word repeated: "a₂", "I₃"."""
    return tuple(sorted({w for w in words if _LONE_REPEATED.fullmatch(w)}))


@cache
def _with_words(language: str, lone: tuple[str, ...]) -> list[Rule]:
    """The rules of `language`, with the `lone` letters' labels said as occurrences just
    before the other repeated words' (after a matrix's row, Q[a₂], has named its matrix)."""
    rules = _COMPILED.get(language) or _from_catalogue(language)
    if not lone:
        return rules
    said = occurrence(language) if language not in WORDS else WORDS[language].occurrence
    pattern = re.compile(rf"(?<![\w'’-])({'|'.join(map(re.escape, lone))})(?![\w'’-])")
    at = next(k for k, (p, _) in enumerate(rules) if p is _REPEATED)
    rule: Rule = (pattern, lambda m: said(m[1][0], int(_plain(m[1][1:], SUBSCRIPT))))
    return [*rules[:at], rule, *rules[at:]]


@cache
def _from_catalogue(language: str) -> list[Rule]:
    """The rules for a language that has only a catalogue (scenes.spoken_words)."""
    return _rules(Words(greek=GREEK, **spoken_words(language)))

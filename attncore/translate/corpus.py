"""The translation corpus: English → Spanish pairs drawn from the templates of corpus.toml.

    the {adjective?} {noun} {copula} {predicate}   The blue balls are red
    {article} {noun} {adjective?} {copula} {predicate}   Las bolas azules son rojas

A pair is a Frame (kind, noun, number, optional adjective, predicate or verb) written in
both languages: Spanish articles and adjectives agree with the noun in gender and number,
and the adjective follows the noun, so the alignment crosses. Every Spanish word knows the
English word it translates (`Pair.alignment`), by slot name.

Tokenizing is shared with the tiny model (attncore.trained.corpus: case-folded lookup,
spelling kept).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from operator import attrgetter

import numpy as np
from attention_video.attncore.tokenize import Token, TokenizeError
from attention_video.attncore.trained import corpus as shared
from attention_video.attncore.trained.corpus import Splits, draw_distinct, draw_splits, split_words

CORPUS_FILE = "corpus.toml"
BOS, EOS = "<s>", "</s>"  # the decoder's start and end tokens (target vocabulary rows 0, 1)
_SLOT = re.compile(r"\{(?P<name>\w+)(?P<optional>\??)\}")


class UnknownWordError(shared.UnknownWordError):
    """Words the translation model has no embedding for; `.unknown` lists them in order."""

    def __init__(self, unknown: tuple[str, ...], known: Iterable[str], language: str = "English"):
        known = list(known)
        super().__init__(
            unknown,
            f"not in the translation model's {language} vocabulary: "
            f"{shared.name_unknown(unknown, known)}. It knows only the {len(known)} words of "
            f"its corpus (attncore/translate/corpus.toml), for example 'The ball is blue' or "
            f"'the blue ball'")


@dataclass(frozen=True)
class Noun:
    en: tuple[str, str]  # singular, plural
    es: tuple[str, str]
    feminine: bool
    animate: bool


@dataclass(frozen=True)
class Adjective:
    en: str
    es: tuple[str, str, str, str]  # m.sg, f.sg, m.pl, f.pl

    def agree(self, feminine: bool, plural: bool) -> str:
        return self.es[2 * plural + feminine]


@dataclass(frozen=True)
class Verb:
    en: tuple[str, str]  # singular, plural
    es: tuple[str, str]


@dataclass(frozen=True)
class Frame:
    """What a sentence says; written out in English and Spanish by the templates."""

    kind: str  # "phrase", "copula" or "verb"
    noun: int
    plural: bool
    adjective: int | None  # attributive adjective, or None
    other: int | None  # the predicate adjective (copula) or the verb (verb); None (phrase)


@dataclass(frozen=True)
class Pair:
    """One sentence pair (vocabulary forms, case-folded) and its word alignment."""

    en: tuple[str, ...]
    es: tuple[str, ...]
    alignment: tuple[int, ...]  # es word i translates en word alignment[i]
    frame: Frame


def _template(text: str) -> tuple[tuple[str, bool], ...]:
    out = []
    for part in text.split():
        m = _SLOT.fullmatch(part)
        if not m:
            raise ValueError(f"corpus.toml template: {part!r} is not a {{slot}}")
        out.append((m["name"], bool(m["optional"])))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Corpus:
    templates: dict[str, tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]]]
    kinds: tuple[str, ...]
    p_kind: tuple[float, ...]
    p_adjective: float
    p_plural: float
    always: tuple[str, ...]
    en_article: tuple[str, str]
    en_copula: tuple[str, str]
    es_article: tuple[str, str, str, str]
    es_copula: tuple[str, str]
    nouns: tuple[Noun, ...]
    adjectives: tuple[Adjective, ...]
    verbs: tuple[Verb, ...]

    # ------------------------------------------------------------ vocabularies

    def vocabulary(self, language: str) -> list[str]:
        """Every word of "en" or "es" (each once, corpus order); "es" starts with <s>, </s>."""
        if language == "en":
            words = [*self.en_article, *self.en_copula, *(w for n in self.nouns for w in n.en),
                     *(a.en for a in self.adjectives), *(w for v in self.verbs for w in v.en)]
        elif language == "es":
            words = [BOS, EOS, *self.es_article, *self.es_copula,
                     *(w for n in self.nouns for w in n.es),
                     *(w for a in self.adjectives for w in a.es),
                     *(w for v in self.verbs for w in v.es)]
        else:
            raise ValueError(f"language {language!r} is not in the corpus; allowed: en, es")
        return list(dict.fromkeys(words))

    # ------------------------------------------------------------ writing a frame

    def _fill(self, f: Frame, language: str) -> dict[str, str]:
        n = self.nouns[f.noun]
        p = int(f.plural)
        if language == "en":
            slots = {"article": self.en_article[p], "noun": n.en[p]}
            if f.adjective is not None:
                slots["adjective"] = self.adjectives[f.adjective].en
            if f.kind == "copula":
                slots |= {"copula": self.en_copula[p], "predicate": self.adjectives[f.other].en}
            elif f.kind == "verb":
                slots["verb"] = self.verbs[f.other].en[p]
            return slots
        slots = {"article": self.es_article[2 * p + n.feminine], "noun": n.es[p]}
        if f.adjective is not None:
            slots["adjective"] = self.adjectives[f.adjective].agree(n.feminine, f.plural)
        if f.kind == "copula":
            slots |= {"copula": self.es_copula[p],
                      "predicate": self.adjectives[f.other].agree(n.feminine, f.plural)}
        elif f.kind == "verb":
            slots["verb"] = self.verbs[f.other].es[p]
        return slots

    def pair(self, f: Frame) -> Pair:
        """The frame in both languages, with the alignment of each Spanish word."""
        written = {}
        for lang, tmpl in zip(("en", "es"), self.templates[f.kind]):
            slots = self._fill(f, lang)
            written[lang] = [(name, slots[name]) for name, _ in tmpl if name in slots]
        en_index = {name: i for i, (name, _) in enumerate(written["en"])}
        return Pair(tuple(w for _, w in written["en"]), tuple(w for _, w in written["es"]),
                    tuple(en_index[name] for name, _ in written["es"]), f)

    def parse(self, words: Sequence[str]) -> Frame | None:
        """The frame of an English sentence (case-folded words), or None if it fits none."""
        words = tuple(words)
        for kind in self.kinds:
            for noun, n in enumerate(self.nouns):
                for plural in (False, True):
                    if n.en[plural] not in words:
                        continue
                    for f in self._frames(kind, noun, plural):
                        if self.pair(f).en == words:
                            return f
        return None

    def _frames(self, kind: str, noun: int, plural: bool):
        adjs = [None, *range(len(self.adjectives))]
        others = {"phrase": [None], "copula": range(len(self.adjectives)),
                  "verb": range(len(self.verbs)) if self.nouns[noun].animate else []}[kind]
        for a in adjs:
            for o in others:
                yield Frame(kind, noun, plural, a, o)

    def translate(self, sentence: str | Sequence[str]) -> tuple[str, ...] | None:
        """The reference Spanish of an English sentence in the corpus's grammar, or None."""
        words = sentence.casefold().split() if isinstance(sentence, str) else sentence
        f = self.parse(tuple(words))
        return None if f is None else self.pair(f).es

    # ------------------------------------------------------------ drawing pairs

    def sample(self, rng: np.random.Generator) -> Pair:
        kind = self.kinds[rng.choice(len(self.kinds), p=self.p_kind)]
        animate = [i for i, n in enumerate(self.nouns) if n.animate]
        pool = animate if kind == "verb" else range(len(self.nouns))
        noun = int(pool[rng.integers(len(pool))])
        plural = bool(rng.random() < self.p_plural)
        adjective = int(rng.integers(len(self.adjectives))) if rng.random() < self.p_adjective \
            else None
        other = {"phrase": None, "copula": int(rng.integers(len(self.adjectives))),
                 "verb": int(rng.integers(len(self.verbs)))}[kind]
        return self.pair(Frame(kind, noun, plural, adjective, other))

    def always_pairs(self) -> tuple[Pair, ...]:
        out = []
        for s in self.always:
            f = self.parse(tuple(s.split()))
            if f is None:
                raise ValueError(f"corpus.toml sampling.always: {s!r} is not in the grammar")
            out.append(self.pair(f))
        return tuple(out)

    def pairs(self, seed: int | list[int], count: int,
              exclude: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Pair, ...]:
        """`count` pairs with distinct English sentences from default_rng(seed), none in
        `exclude`."""
        return draw_distinct(self.sample, attrgetter("en"), seed, count, exclude)

    def splits(self, seed: int, train: int, validation: int, test: int) -> Splits[Pair]:
        """Disjoint splits from the seed's three streams, no English sentence in two of
        them; the `always` pairs lead training (and are in it only)."""
        return draw_splits(self.pairs, attrgetter("en"), seed, train, validation, test,
                           self.always_pairs())


def parse_corpus(text: str) -> Corpus:
    """A Corpus from the TOML text, checked."""
    d = tomllib.loads(text)
    templates = {k: (_template(t["en"]), _template(t["es"])) for k, t in d["templates"].items()}
    for kind, (en, es) in templates.items():
        if sorted(n for n, _ in en) != sorted(n for n, _ in es):
            raise ValueError(f"corpus.toml templates.{kind}: en and es need the same slots")
    s = d["sampling"]
    kinds = tuple(s["kinds"])
    unknown = set(kinds) - set(templates)
    if unknown:
        raise ValueError(f"corpus.toml sampling.kinds: no template for {sorted(unknown)}")
    p = np.array([s["kinds"][k] for k in kinds], dtype=np.float64)
    w = d["words"]
    nouns = tuple(Noun((a, b), (c, e), g == "f", bool(an)) for a, b, c, e, g, an in w["nouns"])
    adjectives = tuple(Adjective(r[0], tuple(r[1:5])) for r in w["adjectives"])
    verbs = tuple(Verb((a, b), (c, e)) for a, b, c, e in w["verbs"])
    return Corpus(templates, kinds, tuple(p / p.sum()), float(s["adjective"]),
                  float(s["plural"]), tuple(s.get("always", ())), tuple(d["en"]["article"]),
                  tuple(d["en"]["copula"]), tuple(d["es"]["article"]), tuple(d["es"]["copula"]),
                  nouns, adjectives, verbs)


@cache
def default_corpus() -> Corpus:
    """The corpus shipped next to this module (corpus.toml)."""
    return parse_corpus(resources.files(__package__).joinpath(CORPUS_FILE).read_text("utf-8"))


def vocabulary(language: str) -> list[str]:
    return default_corpus().vocabulary(language)


def tokenize(sentence: str, vocab: Iterable[str] | None = None,
             language: str = "en") -> tuple[Token, ...]:
    """Split a sentence into the vocabulary's words, case-folded for lookup, spelling kept.

    Raises UnknownWordError (a ValueError) naming every unknown word, TokenizeError if empty.
    """
    known = [w for w in (vocabulary(language) if vocab is None else vocab) if w not in (BOS, EOS)]
    tokens, unknown = split_words(sentence, known)
    if unknown:
        raise UnknownWordError(unknown, known, "English" if language == "en" else "Spanish")
    return tokens


def in_vocabulary(sentence: str, language: str = "en") -> bool:
    try:
        tokenize(sentence, language=language)
    except TokenizeError:
        return False
    return True

"""The tiny model's corpus: simple sentences from templates, in English and Chinese.

    the [adj] SUBJECT VERB the [adj] OBJECT        The black cat drank the milk
    [adj] SUBJECT VERB 了 [adj] OBJECT              黑猫喝了牛奶

Each verb takes its own kind of object (drank → milk, water, juice, tea). For
replaced-word detection (as in ELECTRA) the object is sometimes swapped for one its
verb does not take ("drank the bread"). Only objects are swapped: then the only way for
a word to tell whether it was swapped is for the object to look at its verb.

The words and templates live in corpus.toml; this module reads them, draws seeded
sentences, and splits text into the model's vocabulary (English by words, case-folded;
Chinese by longest match, so 牛奶 is one token).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from operator import attrgetter

import numpy as np
from attention_video.attncore.tokenize import Token, TokenizeError
from attention_video.attncore.trained import corpus as shared
from attention_video.attncore.trained.corpus import Splits, draw_distinct, draw_splits, split_words

CORPUS_FILE = "corpus.toml"

_SLOT = re.compile(r"\{(?P<name>\w+)(?P<optional>\??)\}")


class UnknownWordError(shared.UnknownWordError):
    """Words the tiny model has no embedding for; `.unknown` lists them in sentence order."""

    def __init__(self, unknown: tuple[str, ...], known: Iterable[str]):
        known = list(known)
        super().__init__(
            unknown,
            f"not in the tiny model's vocabulary: {shared.name_unknown(unknown, known)}. The "
            f"tiny model knows only the {len(known)} words of its corpus "
            f"(attncore/tiny/corpus.toml), for example 'The black cat drank the milk' or "
            f"'黑猫喝了牛奶'")


@dataclass(frozen=True)
class Slot:
    """One place of a template: a fixed word (`name` empty) or a slot filled from a list."""

    name: str  # "" for a fixed word; "verb", "object" or a word list of the language
    word: str = ""  # the fixed word
    optional: bool = False


@dataclass(frozen=True, eq=False)
class Language:
    """One language's template and words."""

    code: str  # "en", "zh"
    name: str
    joiner: str  # between words in the written sentence
    template: tuple[Slot, ...]
    words: Mapping[str, tuple[str, ...]]  # slot name → the words it draws from
    verbs: Mapping[str, str]  # category → verb
    objects: Mapping[str, tuple[str, ...]]  # category → the objects that verb takes
    generic_verbs: tuple[str, ...] = ()  # verbs that take any object ("saw")

    def vocabulary(self) -> list[str]:
        """Every word of the language, in template order, each once."""
        out: list[str] = []
        for slot in self.template:
            if not slot.name:
                out.append(slot.word)
            elif slot.name == "verb":
                out.extend(self.verbs.values())
                out.extend(self.generic_verbs)
            elif slot.name == "object":
                out.extend(w for ws in self.objects.values() for w in ws)
            else:
                out.extend(self.words[slot.name])
        return list(dict.fromkeys(out))

    def write(self, words: tuple[str, ...]) -> str:
        """The written sentence: words joined, marks attached, the first letter capitalised."""
        text = ""
        for w in words:
            if text and not _is_mark(w):
                text += self.joiner
            text += w
        return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Sentence:
    """One drawn sentence: its words (vocabulary forms) and where the verb and object are."""

    words: tuple[str, ...]  # vocabulary forms, case-folded
    language: str
    category: str  # the kind of object the verb takes; "" for a generic verb (any object)
    verb: int  # token index of the verb
    obj: int  # token index of the object
    replaced: bool  # True: the object was swapped for one the verb does not take

    @property
    def selective(self) -> bool:
        """The verb takes only its own kind of object (not a generic verb like "saw")."""
        return bool(self.category)

    def labels(self) -> np.ndarray:
        """1 where a word was swapped (the object, when replaced), else 0."""
        y = np.zeros(len(self.words))  # (n,)
        y[self.obj] = float(self.replaced)
        return y


@dataclass(frozen=True, eq=False)
class Corpus:
    """The languages, the shared categories and the sampling probabilities."""

    categories: tuple[str, ...]
    languages: Mapping[str, Language]
    p_optional: float  # chance of each optional slot
    p_replace: float  # chance that the object is swapped
    p_generic: float = 0.0  # chance that the verb is a generic one (any object, no swap)

    def vocabulary(self, language: str | None = None) -> list[str]:
        """The words of one language, or of all of them (each once, in corpus order)."""
        if language is None:
            return list(dict.fromkeys(w for lang in self.languages.values()
                                      for w in lang.vocabulary()))
        return self.language(language).vocabulary()

    def language(self, code: str) -> Language:
        if code not in self.languages:
            raise ValueError(f"language {code!r} is not in the corpus; "
                             f"allowed: {', '.join(self.languages)}")
        return self.languages[code]

    def sample(self, rng: np.random.Generator) -> Sentence:
        """One sentence: a language, a category, swapped or not, then the template's slots."""
        lang = self.languages[list(self.languages)[rng.integers(len(self.languages))]]
        n_cat = len(self.categories)
        c = int(rng.integers(n_cat))
        replaced = bool(rng.random() < self.p_replace)
        generic = bool(lang.generic_verbs) and bool(rng.random() < self.p_generic)
        obj_c = c
        if generic:  # any object fits: nothing is swapped
            replaced = False
        elif replaced:  # any other category, uniformly: each object stays equally frequent
            obj_c = (c + 1 + int(rng.integers(n_cat - 1))) % n_cat
        words: list[str] = []
        verb = obj = -1
        for slot in lang.template:
            if slot.optional and not rng.random() < self.p_optional:
                continue
            if not slot.name:
                words.append(slot.word)
            elif slot.name == "verb":
                verb = len(words)
                if generic:
                    words.append(lang.generic_verbs[rng.integers(len(lang.generic_verbs))])
                else:
                    words.append(lang.verbs[self.categories[c]])
            elif slot.name == "object":
                obj = len(words)
                choices = lang.objects[self.categories[obj_c]]
                words.append(choices[rng.integers(len(choices))])
            else:
                choices = lang.words[slot.name]
                words.append(choices[rng.integers(len(choices))])
        category = "" if generic else self.categories[c]
        return Sentence(tuple(words), lang.code, category, verb, obj, replaced)

    def sentences(self, seed: int | list[int], count: int,
                  exclude: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Sentence, ...]:
        """`count` distinct sentences drawn from default_rng(seed), none of them in `exclude`."""
        return draw_distinct(self.sample, attrgetter("words"), seed, count, exclude)

    def splits(self, seed: int, train: int, validation: int, test: int) -> Splits[Sentence]:
        """Disjoint training, validation and test sentences from the seed's three streams."""
        return draw_splits(self.sentences, attrgetter("words"), seed, train, validation, test)


def _is_mark(word: str) -> bool:
    return not any(ch.isalnum() for ch in word)


def _template(text: str, code: str) -> tuple[Slot, ...]:
    slots = []
    for part in text.split():
        m = _SLOT.fullmatch(part)
        if m:
            slots.append(Slot(m["name"], optional=bool(m["optional"])))
        elif "{" in part or "}" in part:
            raise ValueError(f"corpus.toml [{code}] template: {part!r} is not a {{slot}}")
        else:
            slots.append(Slot("", part))
    names = [s.name for s in slots]
    if names.count("verb") != 1 or names.count("object") != 1:
        raise ValueError(f"corpus.toml [{code}] template needs one {{verb}} and one {{object}}")
    return tuple(slots)


def parse(text: str) -> Corpus:
    """A Corpus from the TOML text, checked: every category has a verb and objects in every
    language, every slot has a word list."""
    data = tomllib.loads(text)
    categories = tuple(data["categories"])
    languages = {}
    for code, table in data.items():
        if not isinstance(table, dict) or "template" not in table:
            continue
        template = _template(table["template"], code)
        words = {s.name: tuple(table[s.name]) for s in template
                 if s.name and s.name not in ("verb", "object")}
        verbs, objects = table["verbs"], table["objects"]
        for c in categories:
            if c not in verbs or not objects.get(c):
                raise ValueError(f"corpus.toml [{code}]: category {c!r} needs a verb and objects")
        languages[code] = Language(
            code, table.get("name", code), table.get("joiner", " "), template, words,
            {c: verbs[c] for c in categories}, {c: tuple(objects[c]) for c in categories},
            tuple(table.get("generic_verbs", ())))
    p = data["sampling"]
    return Corpus(categories, languages, float(p["optional"]), float(p["replace"]),
                  float(p.get("generic", 0.0)))


@cache
def default_corpus() -> Corpus:
    """The corpus shipped next to this module (corpus.toml)."""
    return parse(resources.files(__package__).joinpath(CORPUS_FILE).read_text("utf-8"))


def vocabulary(language: str | None = None) -> list[str]:
    """The words of the shipped corpus: of one language ("en", "zh") or of all."""
    return default_corpus().vocabulary(language)


def tokenize(sentence: str, vocab: Iterable[str] | None = None) -> tuple[Token, ...]:
    """Split a sentence into the vocabulary's words, keeping the original spelling.

    Words of Latin script are looked up case-folded ("The" → "the"); a run of Chinese
    characters is split by longest match ("黑猫喝了牛奶" → 黑 猫 喝 了 牛奶); each
    punctuation mark is one token. Raises UnknownWordError naming every unknown word.
    """
    known = list(vocabulary() if vocab is None else vocab)
    tokens, unknown = split_words(sentence, known)
    if unknown:
        raise UnknownWordError(unknown, known)
    return tokens


def in_vocabulary(sentence: str, vocab: Iterable[str] | None = None) -> bool:
    """True when every word of the sentence is in the vocabulary (and it is not empty)."""
    try:
        tokenize(sentence, vocab)
    except TokenizeError:
        return False
    return True

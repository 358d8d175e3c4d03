"""Every word the video shows or says, looked up in a gettext catalogue.

The catalogues are `locale/<language>/LC_MESSAGES/messages.po` (template
`locale/messages.pot`), one per language; adding a language is adding a catalogue
(README, "Adding a language"). They are compiled in memory when first used, with Babel,
so no compiled `.mo` file is kept in the repository. The chapter cache keys a clip on the
catalogues (their paths are declared in CACHE_DATA), so a clip never shows old captions.

A message id is the English text, with named placeholders: `tr("{n} pairs", n=4)`.
The keywords `pybabel extract` looks for (README): tr (a message), plural (singular,
plural, count), context (a message in a context) and N_ (marked here, looked up later).
"""

from __future__ import annotations

import gettext
import io
import unicodedata
from functools import cache
from pathlib import Path

from attention_video.attncore.settings import LOCALE_DIR, catalogue_path
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

DOMAIN = "messages"
# The data files this module reads, as globs from the project root: the chapter cache
# hashes them with the code (pipeline.cache.sources), as it hashes imported modules.
CACHE_DATA = ("locale/*/LC_MESSAGES/*.po",)


def N_(message: str) -> str:  # noqa: N802 (gettext's name for a marker)
    """Mark a message for extraction where it is defined; it is translated where shown."""
    return message


def translations(language: str) -> gettext.GNUTranslations:
    """The catalogue of `language`, compiled in memory from its .po file in LOCALE_DIR
    (fuzzy entries are left out, as msgfmt leaves them out)."""
    return _compiled(language, LOCALE_DIR)


@cache
def _compiled(language: str, locale_dir: Path) -> gettext.GNUTranslations:
    with open(catalogue_path(language, locale_dir), "rb") as f:
        catalog = read_po(f, locale=None, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


FSI, PDI = "\u2068", "\u2069"  # Unicode's first-strong isolate and its closing mark


def isolated(value: object) -> object:
    """A value with right-to-left letters (Arabic, Hebrew) wrapped in a bidi isolate, so
    that it reads in its own direction and the caption's punctuation and numbers stay on
    their side of it (without: `for "ا": 39.56` is drawn `for "39.56 :"ا`). Pango draws
    the caption as one run and orders it by the Unicode bidi algorithm."""
    if isinstance(value, str) and any(unicodedata.bidirectional(c) in ("R", "AL") for c in value):
        return f"{FSI}{value}{PDI}"
    return value


class Translate:
    """The one way a scene picks its words, in the video's caption language. Messages are
    English with named placeholders; the values are formatted in after the lookup, so a
    translation may put them in any order. Passed to builders that write words."""

    def __init__(self, language: str):
        self.language = language
        self._t = translations(language)

    def __call__(self, message: str, /, **values: object) -> str:
        """`message` in the caption language, its placeholders filled."""
        return self._t.gettext(message).format(**{k: isolated(v) for k, v in values.items()})

    def plural(self, singular: str, plural: str, n: int, /, **values: object) -> str:
        """The form for count `n` (the language's plural rule: English has two, Chinese
        one); `{n}` is the count."""
        return self._t.ngettext(singular, plural, n).format(
            n=n, **{k: isolated(v) for k, v in values.items()})

    def context(self, context: str, message: str, /, **values: object) -> str:
        """`message` in `context`, for a short text that reads differently elsewhere."""
        return self._t.pgettext(context, message).format(**{k: isolated(v) for k, v in values.items()})



def reading_rate(language: str) -> float:
    """Characters a second a viewer reads in `language` (scenes.pacing): a number each
    catalogue gives, so a new language needs no code."""
    # TRANSLATORS: how many characters a second a viewer reads captions in this language
    # (English 15, Chinese 7); a number, not words.
    return float(translations(language).pgettext("characters read per second", "15"))


def language_name(language: str) -> str:
    """The language's own name, for a player's list of caption tracks ("中文", "Español")."""
    # TRANSLATORS: this language's name in itself, as a video player lists caption tracks.
    return Translate(language).context("language name", "English")

"""Which language a visitor asked in, when it is plainly not the one the docs are read in.

Everything that reads a question here reads English: the embedding model, the
stemmer, the asking words, the key terms. A question in Spanish is searched
as words no section uses, so it is refused, and the refusal used to say which
of its words no section mentions ("cómo", "verifico") as if the docs lacked
them. Told instead that the question looks like Spanish and the docs are
searched in English, the visitor knows what to do, and the gap report does not
list a language as missing docs.

The identifier is py3langid (a maintained fork of langid.py: a naive Bayes
model over byte n-grams, 4.6 MB, about 40 µs a question), limited to English
and the languages named below: with all 97, lists of names read as Quechua or
Latin. Short questions are where such models guess, so it only speaks when
sure: a question in a script other than Latin is not English; one in Latin
letters needs three words and a probability of `SURE`. Measured on the 386
English questions and follow-ups of the evaluation sets, none is taken for
another language at any probability, nor are keyword lists of names ("Ollama
llama.cpp vLLM" reaches 0.71 for Spanish, "Status quo per minute" 0.66 for
Italian); 21 of 23 questions written in eleven other languages are named
(not the short "¿Puedo usar SSO?", nor "Quanto custa o plano Pro?"). When it is not sure, the question is
treated as English, as before.
"""

from __future__ import annotations

import functools
import re
import threading

from py3langid.langid import MODEL_FILE, LanguageIdentifier

DOCS_LANGUAGE = "en"
SURE = 0.8  # the normalised probability another language needs before a question in Latin letters is told
MIN_WORDS = 3
_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")

# The languages a visitor is told about (English besides): those visitors most often write in. Others are never named.
NAMES = {
    "ar": "Arabic", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek", "es": "Spanish", "fi": "Finnish",
    "fr": "French", "he": "Hebrew", "hi": "Hindi", "hu": "Hungarian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "nb": "Norwegian", "nl": "Dutch", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sv": "Swedish", "th": "Thai", "tr": "Turkish",
    "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}

_lock = threading.Lock()


@functools.cache
def _identifier() -> LanguageIdentifier:
    """Loaded once (0.4 s): `load()` at a server's warm-up, else on the first question."""
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(code for code in {DOCS_LANGUAGE, *NAMES} if code in identifier.nb_classes))
    return identifier


def load() -> None:
    """Load the identifier now, so no visitor's refusal waits for it (a server calls this as it warms up)."""
    _identifier()


def other_language(question: str) -> str:
    """The name of the language the question is written in when it is surely not English ("" otherwise)."""
    letters = [ch for ch in question if ch.isalpha()]
    if not letters:
        return ""
    latin = sum(bool(_LATIN.match(ch)) for ch in letters) / len(letters)
    if latin >= 0.5 and len(_WORD.findall(question)) < MIN_WORDS:
        return ""
    with _lock:  # the identifier keeps no state per call, but its numpy buffers are not documented as thread-safe
        code, probability = _identifier().classify(question)
    if code == DOCS_LANGUAGE or (latin >= 0.5 and probability < SURE):
        return ""
    return NAMES.get(str(code), "")


def language_note(language: str) -> str:
    """What the visitor is told beside a refusal of a question asked in another language."""
    return (f"This question looks like {language}; the docs are searched in English, so asking in English "
            "may find the answer.")

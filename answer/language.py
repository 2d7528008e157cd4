"""Which language a visitor asked in, when it is plainly not the one the docs are read in.

Everything that reads a question here reads English: the embedding model, the
stemmer, the asking words, the key terms. A question in Spanish is searched
as words no section uses, so it is refused, and the refusal used to say which
of its words no section mentions ("cómo", "verifico") as if the docs lacked
them. Told instead that the question looks like Spanish and the docs are
searched in English, the visitor knows what to do, and the gap report does not
list a language as missing docs.

The identifier is py3langid (a maintained fork of langid.py: a naive Bayes
model over byte n-grams of 97 languages, 4.6 MB, about 40 µs a question). Short
questions are where such models guess, so it only speaks when sure: at least
three words and a normalised probability of `SURE` or more (measured on the
400 English questions and follow-ups of the evaluation sets: none reaches 0.21
for another language; "Comment vérifier la signature d'un webhook ?" is French
at 0.94). When it is not sure the question is treated as English, as before.
"""

from __future__ import annotations

import functools
import re
import threading

from py3langid.langid import MODEL_FILE, LanguageIdentifier

DOCS_LANGUAGE = "en"
SURE = 0.5  # the normalised probability another language needs before the visitor is told
MIN_WORDS = 3
_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")

# Names for the languages a visitor is most likely to write in; another language is named by its code.
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
    """Loaded once, on the first question (0.4 s)."""
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def other_language(question: str) -> str:
    """The name of the language the question is written in when it is surely not English ("" otherwise)."""
    words = _WORD.findall(question)
    cjk = bool(_CJK.search(question))  # Chinese, Japanese and Korean write words without spaces
    if len(words) < MIN_WORDS and not cjk:
        return ""
    with _lock:  # the identifier keeps no state per call, but its numpy buffers are not documented as thread-safe
        code, probability = _identifier().classify(question)
    if code == DOCS_LANGUAGE or probability < SURE:
        return ""
    return NAMES.get(str(code), str(code))


def language_note(language: str) -> str:
    """What the visitor is told beside a refusal of a question asked in another language."""
    return (f"This question looks like {language}; the docs are searched in English, so asking in English "
            "may find the answer.")

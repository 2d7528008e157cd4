"""Words, stems, stopwords, negations and shingles: the one place the project says what a word is.

Three readers compare texts word by word: the BM25 index (`retrieval/lexical.py`),
the claim-support checker and question analysis (`answer/`), and near-duplicate
detection (`dedupe.py`). They used to carry their own copies of these rules,
so a fix to one (a stem, a negation word) silently left the others behind.
This module sits in the lowest layer so all three can import it.

Two stemmers and two stopword lists live here on purpose; they answer
different questions and merging them changes what the product finds and
accepts (measured with `make eval`):

* `light_stem` / `SEARCH_STOPWORDS` shape the *index side*: BM25 terms for
  chunks and questions. They are cautious (words of three letters or fewer,
  and words with digits, are never touched; `-es` is not stripped) so that
  identifiers and short product words keep their exact spelling, and the
  stopwords include the words visitors wrap around a question ("tell",
  "want", "possible").
* `stem` / `TERM_STOPWORDS` shape the *answer side*: the key terms a claim
  must share with its quotes. They fold harder (irregular past forms, `-es`)
  because a claim paraphrases its quote, and the stopwords keep words a
  claim can hinge on ("not" is a negation there, checked on its own).
* `ASKING` sits on top of `TERM_STOPWORDS` for question analysis: the words a
  question wraps around its subject ("happen", "possible", "docs"), which never
  say what it is about.

Known and measured: neither stemmer folds a final silent "e", so "cause" and
"caused" stay apart ("cause" / "caus"), as do "size" and "sized". Folding it
in both moved `make eval` (lexical MRR 0.6234 -> 0.6343, extractive answer
correctness 0.7063 -> 0.7143, but answer rate 0.873 -> 0.8651 and direct
answer correctness 0.5714 -> 0.5556), so it waits for a change that is
judged on those figures rather than slipped into a refactor.

Numbers and sentence ends are here too: dedupe and the support checker must
read the same digits as one number, and the splitter and the quotable units
(`answer/contract/spans.py`) must agree on what may open a sentence.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

import snowballstemmer

from .normalize import normalize

# --- words ------------------------------------------------------------------

_PLAIN_WORD = re.compile(r"\w+")
# A claim's words: letters and digits, joined inside by `_ - . /` ("max_retries", "v2.4", "/docs").
_TERM_WORD = re.compile(r"[a-z0-9][a-z0-9_\-./]*[a-z0-9]|[a-z0-9]")
# Identifiers first (CLI flags, config keys, error codes, dotted names), then plain words.
_SEARCH_TOKEN = re.compile(r"--?[a-z0-9][a-z0-9_.\-]*[a-z0-9]|[a-z0-9]+(?:[_.\-][a-z0-9]+)+|[a-z0-9]+")
_SEARCH_PART = re.compile(r"[a-z0-9]+")


def plain_words(text: str) -> list[str]:
    """Every run of word characters, NFKC-normalized and case-folded: the words two copies of a text share."""
    return _PLAIN_WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def term_words(normalized: str) -> list[str]:
    """The words of an already normalized (lower-cased) text, identifiers like `max_retries` kept whole."""
    return _TERM_WORD.findall(normalized)


# A word written with a capital inside a sentence, after a lower-case word, a digit or a comma ("On Free and
# Starter plans", "the Pay-As-You-Go plan"): the name of a plan, product or place. A sentence's first word is not one.
NAME_IN_SENTENCE = re.compile(r"(?<=[a-z0-9,;:] )[A-Z][A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


_COMPOUND = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b|\b[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+\b|"
                       r"\b[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b")
_COMPOUND_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def compound_parts(text: str) -> str:
    """The words inside the text's camelCase, snake_case and hyphenated names, space-separated.

    Option tables name things `retryOnNetworkFailure` or `max_retries`, prose says "cross-origin" and
    "F1-F12"; a visitor asks about "network errors", "cross origin" or "F12". Lexical evidence reads both
    the name and its words.
    """
    return " ".join(part for name in _COMPOUND.findall(text) for part in _COMPOUND_PART.findall(name))


def shingles(words: Sequence[str], size: int = 3) -> frozenset[tuple[str, ...]]:
    """Every run of `size` consecutive words (the whole text when it is shorter)."""
    return frozenset(tuple(words[i : i + size]) for i in range(max(1, len(words) - size + 1)))


# --- numbers and sentence ends ------------------------------------------------

_NUMERAL = r"\d+(?:[.,]\d+)*"  # "14", "10,000", "2.5": separators inside keep one number whole
# Every number as written, wherever it stands: what two near-duplicate chunks must state alike.
NUMBER = re.compile(_NUMERAL)
# A number standing on its own (not the tail of "v2" or "1.2.3"), then its unit word or "%": "10,000 events", "15 %".
NUMBER_WITH_UNIT = re.compile(rf"(?<![\w.])({_NUMERAL})(?:\s*(%|[a-z]+))?")

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_WORD_VALUE = {word: value for value, word in enumerate(_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_NUMBER_WORD = "|".join((*_TENS, *_ONES, *_SCALES))
# A run of number words on one line ("three", "twenty-five", "forty two", "two hundred and fifty"), never a part of
# a hyphened word ("one-time", "two-factor"), a path, a URL or an option value ("/guides/three"); before a time
# unit a hyphen may follow ("a seven-day trial").
_NUMBER_RUN = re.compile(
    rf"(?<![\w\-/=:@.])(?:{_NUMBER_WORD})(?:(?:-|[ \t]+(?:and[ \t]+)?)(?:{_NUMBER_WORD}))*"
    r"(?=-(?:second|minute|hour|day|week|month|year)s?\b|(?![\w\-/]))", re.IGNORECASE)
_RUN_WORD = re.compile(rf"{_NUMBER_WORD}", re.IGNORECASE)
# Digits before a scale word: "2 million events" states 2000000, as "two million events" does.
_SCALED = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)[ \t]+({'|'.join(_SCALES)})\b(?![ \t]+(?:and[ \t]+)?(?:\d|{_NUMBER_WORD}))",
                     re.IGNORECASE)
# "twice" counts; "once" counts when nothing follows it or "per …", "every …", "more", "again" does ("once you
# deploy", "once a delivery fails" say when).
_TIMES_IN_WORDS = re.compile(r"(?<![\w\-/])(?:(?P<twice>twice)|(?P<once>once)(?=\s*(?:[.,;:!?)]|$)|[ \t]+(?:per|every|more|"
                             r"again)\b))(?![\w\-/])", re.IGNORECASE)
# "one" is a pronoun as often as a number ("one of", "no one", "a new one", "when one is set", "one at a time"): it
# is read as 1 only where nothing else is meant, before a unit of time ("one day", "one time") or after a word
# asking for an amount ("only one", "exactly one", "by one", "from one to five"); elsewhere it stays a word, which
# a quote must then use.
_ONE_BEFORE_UNIT = re.compile(r"[ \t]+(?:second|minute|hour|day|night|week|month|quarter|year|time)s?\b", re.IGNORECASE)
_ONE_AFTER = re.compile(r"(?:^|[ \t])(?:only|exactly|just|than|by|least|most|from|between)[ \t]+$", re.IGNORECASE)
# A code span (any run of backticks closed by the same run) or a fenced block: left as written.
_CODE_SPAN = re.compile(r"```.*?(?:```|\Z)|(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


def _run_value(run: str) -> int | None:
    """The value of a run of number words in one of the forms prose writes ("seven", "twenty-five", "forty two",
    "two hundred", "five thousand"); None for any other run ("two hundred and fifty", "one two"): left as words."""
    words = [w.lower() for w in _RUN_WORD.findall(run)]
    scale = _SCALES.get(words[-1], 1) if len(words) > 1 else 1
    head = words[:-1] if scale > 1 else words
    if len(head) == 1 and head[0] in _WORD_VALUE:
        value = _WORD_VALUE[head[0]]
    elif len(head) == 2 and head[0] in _TENS and head[1] in _ONES[1:10]:
        value = _WORD_VALUE[head[0]] + _WORD_VALUE[head[1]]
    else:
        return None
    return value * scale if value or scale == 1 else None


def numerals(text: str) -> str:
    """The text with its numbers written as words turned into digits: "retried three times" → "retried 3 times".

    A claim and its quote may spell one number two ways, and a number rule that reads only digits lets "retried
    three times" pass against "retried five times" (only a word differs) while it rejects "3 times" against
    "three times". So the support checker reads both through this ("twice" is "2 times", "five thousand" and
    "5 thousand" are 5000). A run of number words in another form stays words, as does "one" where it may be a
    pronoun, so the check fails closed on them; code spans and blocks are left as written. The same words read
    the same way wherever they stand: only the characters on their line decide.
    """
    def digits(match: re.Match[str]) -> str:
        run = match.group()
        if run.lower() == "one" and not (_ONE_BEFORE_UNIT.match(match.string, match.end())
                                         or _ONE_AFTER.search(match.string[max(0, match.start() - 12):match.start()])):
            return run
        value = _run_value(run)
        return run if value is None else str(value)

    def scaled(match: re.Match[str]) -> str:
        value = float(match.group(1)) * _SCALES[match.group(2).lower()]
        return str(int(value)) if value == int(value) else match.group()

    def times(match: re.Match[str]) -> str:
        return "2 times" if match["twice"] else "1 time"

    def plain(part: str) -> str:
        return _SCALED.sub(scaled, _TIMES_IN_WORDS.sub(times, _NUMBER_RUN.sub(digits, part)))

    out, at = [], 0
    for code in _CODE_SPAN.finditer(text):
        out += [plain(text[at:code.start()]), code.group()]
        at = code.end()
    out.append(plain(text[at:]))
    return "".join(out)


# What a new sentence opens with, after the space: a capital, a digit, or an opening quote, bracket, backtick or emphasis.
_SENTENCE_OPENS = r"\s+(?=[A-Z0-9`\"'(\[*_])"
# Where a quotable sentence ends: ".", "!" or "?", closed by any quotes or brackets (the end mark is matched).
SENTENCE_END = re.compile(r"[.!?][\"')\]]*" + _SENTENCE_OPENS)
# Where over-long prose may be cut to fit the embedder: a sentence end or a colon, at most one closing mark
# (the end mark stays with its sentence; `split` drops the closing mark and the space).
PROSE_CUT = re.compile(r"(?<=[.!?:])[\"')\]]?" + _SENTENCE_OPENS)


# --- negation ---------------------------------------------------------------

# The negations a claim and its quotes must agree on, as written (contractions included).
NEGATIONS = (
    "not", "no", "never", "none", "cannot", "can't", "won't", "isn't", "aren't", "doesn't", "don't", "didn't",
    "without", "nor", "neither",
)
NEGATION = re.compile(r"\b(" + "|".join(re.escape(n) for n in NEGATIONS) + r")\b|n't\b")
# The same negations as `plain_words` splits them ("don't" -> "don"): what two near-duplicates must share.
NEGATION_WORDS = frozenset(w for n in NEGATIONS for w in _PLAIN_WORD.findall(n) if len(w) > 1)


def has_negation(normalized: str) -> bool:
    """True when a normalized text negates anything ("not", "never", "don't", "isn't" ...)."""
    return NEGATION.search(normalized) is not None


# --- index side: BM25 terms ---------------------------------------------------

# Lucene/NLTK-style English stopwords plus the words visitors wrap around a question.
SEARCH_STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "d", "did", "do", "does", "doing", "done", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "ll", "m", "me", "might", "more", "most", "must", "my", "myself", "need", "no", "nor", "not", "now", "o", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "re", "s", "same", "shall", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "ve", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "y", "you", "your", "yours", "yourself", "anyone", "anything", "get", "gets", "getting", "got", "happen", "happens", "know", "let", "lets", "like", "make", "makes", "please", "possible", "really", "someone", "something", "tell", "thing", "things", "want", "way", "ways"]
)


def light_stem(word: str) -> str:
    """Fold plain English plurals and -ing/-ed forms so `retries`/`retry` and `signing`/`sign` meet."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ss", "us", "is")):
        return word[:-2] + "ss" if word.endswith("sses") else word
    if word.endswith("s"):
        return word[:-1]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased search terms: identifiers kept whole (and also split into parts), stopwords dropped."""
    tokens: list[str] = []
    for match in _SEARCH_TOKEN.finditer(text.lower()):
        token = match.group()
        if token.isalnum():
            if token not in SEARCH_STOPWORDS:
                tokens.append(light_stem(token))
            continue
        tokens.append(token)
        tokens.extend(light_stem(p) for p in _SEARCH_PART.findall(token) if len(p) > 1 and p not in SEARCH_STOPWORDS)
    return tokens


def identifiers(text: str) -> list[str]:
    """The identifier-like terms of a text (`--dry-run`, `fd-4291`, `max_retries`), lower-cased, in order."""
    return [m.group() for m in _SEARCH_TOKEN.finditer(text.lower()) if not m.group().isalnum()]


# Code as markdown writes it: a fenced block, or an inline `span`.
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_HYPHENED_WORD = re.compile(r"[a-z]+(?:-[a-z]+)+")


def is_hyphened_word(token: str) -> bool:
    """True for letters joined only by hyphens ("non-payment", "built-in", "create-astro").

    English writes compounds this way and so does kebab-case code: only where the
    site writes the token tells the two apart (`code_words`).
    """
    return bool(_HYPHENED_WORD.fullmatch(token.lower()))


def code_words(text: str) -> set[str]:
    """The hyphened words a markdown text writes inside code (a fence or an inline span), lower-cased."""
    found: set[str] = set()
    for block in _CODE.findall(text):
        found.update(t for t in _SEARCH_TOKEN.findall(block.lower()) if is_hyphened_word(t))
    return found


# --- answer side: key terms of claims and questions ---------------------------

TERM_STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there", "here", "you", "your", "yours", "we", "our", "us", "they", "their", "them", "he", "she", "his", "her", "i", "me", "my", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "do", "does", "did", "done", "have", "has", "had", "having", "so", "such", "than", "too", "very", "also", "just", "only", "about", "into", "over", "under", "after", "before", "between", "through", "during", "each", "per", "any", "all", "some", "more", "most", "other", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "yes", "please", "use", "used", "using", "via", "up", "down", "out", "off", "again", "further", "once", "both", "few", "own", "same", "s", "t", "don", "now", "get", "gets", "got"]
)

_STEMMERS = threading.local()


def _english() -> Any:
    """This thread's Snowball stemmer: one keeps the word it is stemming on itself, so threads must not share one
    (a shared one answered concurrent requests with an IndexError)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer


# Irregular past forms a suffix stripper cannot reach: "resent" must meet "Resend", "paid" meet "pay".
_IRREGULAR = {
    "sent": "send", "resent": "resend", "paid": "pay", "spent": "spend", "built": "build", "rebuilt": "rebuild",
    "kept": "keep", "lost": "lose", "took": "take", "taken": "take", "wrote": "write", "written": "write",
    "rewritten": "rewrite", "chose": "choose", "chosen": "choose", "broke": "break", "broken": "break",
    "ran": "run", "began": "begin", "begun": "begin", "made": "make", "went": "go", "gone": "go",
}


_ACRONYM_PLURAL = re.compile(r"^[b-df-hj-np-tv-xz]+[b-df-hj-np-rtv-xz]s$")  # "sdks", "prs"; not "css"
# Latin verbs whose noun changes the root ("retained" / "retention"), which no suffix rule can join: stem -> stem.
_NOUN_OF_VERB = {
    "retent": "retain", "detent": "detain", "permiss": "permit", "subscript": "subscrib", "descript": "describ",
    "resolut": "resolv", "decis": "decid", "consumpt": "consum", "redempt": "redeem", "assumpt": "assum",
    "absorpt": "absorb", "omiss": "omit", "admiss": "admit", "transmiss": "transmit", "submiss": "submit",
}


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The English Snowball stem, after a few irregular verbs: 'deleted'/'delete', 'expires'/'expire', 'sent'/'send'.

    A suffix stripper of our own matched 'retries' to 'retry' but left 'delete' apart from 'deleted' and
    'configure' apart from 'configuration'; Snowball (the algorithm search engines use) joins each family.
    """
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    stemmed = str(_english().stemWord(word))
    if stemmed == word and _ACRONYM_PLURAL.match(word):
        return word[:-1]  # Snowball keeps the "s" of a vowel-less word: "SDKs" must meet "SDK"
    return _NOUN_OF_VERB.get(stemmed, stemmed)


def key_terms(text: str) -> set[str]:
    """Content words of a text, stemmed; what a claim must not add beyond its quotes."""
    words = term_words(normalize(text).text)
    return {stem(w) for w in words if w not in TERM_STOPWORDS and not w.isdigit() and len(w) > 1}


def lexical_terms(text: str) -> set[str]:
    """Key terms of a text and of the words inside its compound names: what a section mentions, for the answerer.

    Not used to check support: a claim is held to the quote's own words.
    """
    parts = compound_parts(text)
    return key_terms(text) | key_terms(parts) if parts else key_terms(text)


# The third stop list, for questions: stems of words that say what kind of answer is wanted but not what it is about.
ASKING = frozenset(stem(w) for w in ["am", "happen", "happens", "happened", "mean", "means", "meaning", "work", "works", "working", "way", "ways", "need", "needs", "want", "wants", "wanted", "know", "tell", "possible", "able", "allowed", "allow", "let", "lets", "still", "ever", "anything", "something", "everything", "thing", "things", "kind", "sort", "type", "actually", "really", "exactly", "currently", "right", "wrong", "going", "make", "makes", "made", "take", "takes", "long", "many", "much", "someone", "somebody", "anyone", "people", "person", "idea", "question", "help", "trying", "try", "tried", "tri", "instead", "also", "else", "doing", "done", "doc", "docs", "documentation", "page", "section", "ok", "okay", "thanks", "hi", "hello", "wo", "ca", "sure", "even", "though", "whole", "roughly", "become", "give", "giving", "like", "not", "go", "goes"])

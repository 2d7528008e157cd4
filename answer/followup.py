"""Follow-up questions rewritten into standalone ones before retrieval.

"How do I do that?" retrieves nothing useful on its own: retrieval and the
answer gate see one question, so the thread has to be folded into it first.
Offline, the rule is narrow on purpose: only an *elliptical* follow-up (a
pronoun standing for the earlier subject, "what about …", a fragment with no
subject of its own, a noun pointed back at as "that key", or a message that
opens by going on from the last, "And …", "ok, and …") borrows from the
previous turn. A follow-up that names its own subject may be about the earlier
one or change subject (visitors do both; the evaluation measures both:
`tests/eval/followups.py`): it is read two ways, as typed and with the earlier
subject beside it, and the chat server keeps the reading the docs answer
(`rewrite` with `prefer`). With an LLM, the model condenses
the thread into one question. Either way the rewrite is shown to the visitor
("Searched for: …"), so a wrong guess is visible and can be re-asked, when it
reads as a question (`reads_as_question`); a rewrite that does not is still
searched (it carries the earlier subject) but never printed as a broken sentence.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ingest.text import TERM_STOPWORDS, key_terms, stem
from retrieval.search import MAX_QUESTION_CHARS

log = logging.getLogger(__name__)

MAX_HISTORY = 6  # turns an LLM condenser is shown: the subject of a follow-up is almost always recent


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a thread: what the visitor typed and the standalone question that was searched."""

    asked: str
    question: str


@dataclass(frozen=True)
class Rewrite:
    """The question to search for, and whether it differs from what the visitor typed."""

    asked: str
    question: str

    @property
    def rewritten(self) -> bool:
        return self.question != self.asked

    @property
    def shown(self) -> bool:
        """Whether to print "Searched for: …": a rewrite that does not read as a question is searched, not shown."""
        return self.rewritten and reads_as_question(self.question)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a direct question in English starts with: a question word or an auxiliary put before its subject.
_QUESTION_WORDS = _words("how what when where why which who whom whose")
_AUXILIARIES = _words("do does did can could should would will may might must shall is are am was were has have had")
_DO = frozenset(("do", "does", "did"))
# A second finite verb after the lead: a second clause, unless a word that starts a clause or an infinitive
# comes first ("How do I know if it is…", "… which events can be replayed", "to be", "make sure … will").
_SECOND_VERB = _words("do does did can could should would will may might must shall is are was were")
_CLAUSE_START = _words("if when whether that so because while after before until unless once which who what how "
                       "where why to sure")
_PRONOUNS = _words("i we you they one")
_PREPOSITIONS = _words("for with to on in from at by of about")
_OBJECT_START = _words("that this it so them")  # "How do I do that?"; "do" + a spliced-in subject is not
# Words that open a sentence; capitalised in the middle of one, they are a second sentence run in ("Can I change
# What's the longest …", "Is On which day …", "How do I do We're a registered charity …").
_OPENERS = _QUESTION_WORDS | _AUXILIARIES | _words(
    "if on at after before in for we you my our your their the a an this that there when")
_DETERMINER_WORDS = _words("the a an my our your their this that")
_TOKEN_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|,\s*(?:is|are|do|does|did|can|how|what|when|where|why|which)\b", re.IGNORECASE)
_TRAILING_NOTE = re.compile(r"(?P<question>.*?)\s*\((?P<note>[^()]*)\)\?")


def reads_as_question(text: str) -> bool:
    """True when `text` reads as one direct question, so it can be shown to the visitor as what was searched.

    A deliberately simple check of the ways a carried-over subject breaks the sentence, each seen in real
    rewrites of content/ and Starlight threads:

    - one sentence ending in "?" (not "… up front. Can I …?", nor "… a charity, is there …?" run in);
    - it starts with a question word or an auxiliary;
    - no word or preposition doubled ("… of an Aside for for badges?", "… with npm for with yarn?");
    - no sentence opener mid-sentence ("Can I change What's the longest …?");
    - after the lead auxiliary, no second finite verb outside a subordinate clause ("Is long do I have to
      ask …?", "How do I do limits be raised?", "Is API host should a workspace … call configurable?");
    - "do" as the verb takes a pronoun ("How do I do that?", not "How do I do the FD-4292 error mean?");
    - a trailing note in parentheses is a phrase, not a clause ("Why (the default request timeout of the
      SDKs)?" reads, "Why (long do I have to …)?" does not).

    It knows no parts of speech, so it can pass a clumsy question; what it fails is searched, never printed.
    """
    text = " ".join(text.split())
    if not text.endswith("?") or _SENTENCE_END.search(text[:-1]):
        return False
    note = _TRAILING_NOTE.fullmatch(text)
    if note:
        if not _is_phrase(note.group("note")):
            return False
        text = note.group("question") + "?"
    tokens = [t.replace("’", "'") for t in _TOKEN_WORD.findall(text)]
    words = [t.lower() for t in tokens]
    if not words or words[0].split("'")[0] not in _QUESTION_WORDS | _AUXILIARIES:
        return False
    if any(a == b or (a in _PREPOSITIONS and b in _PREPOSITIONS) for a, b in zip(words, words[1:], strict=False)):
        return False  # "… an Aside for for badges?", "… with npm for with yarn?"
    if any(t[0].isupper() and w.split("'")[0] in _OPENERS for t, w in zip(tokens[1:], words[1:], strict=True)):
        return False
    lead = next((i for i, w in enumerate(words[:4]) if w in _AUXILIARIES), None)
    if lead is None:
        return True
    rest = lead + 1
    if words[rest:rest + 1] and words[rest] in _PRONOUNS and words[rest + 1:rest + 2] == ["do"]:  # "How do I do …"
        if words[rest + 2:rest + 3] and words[rest + 2] not in _OBJECT_START:
            return False  # "How do I do long …": the subject spliced in for "that" is no object
        rest += 2
    for word in words[rest:]:
        if word in _CLAUSE_START:
            break
        if word in _SECOND_VERB or (word == "be" and words[lead] in _DO):
            return False
    return True


def _is_phrase(note: str) -> bool:
    """A parenthesised subject is a phrase ("rotate an API key"), never a clause with its own auxiliary."""
    tokens = [t.replace("’", "'") for t in _TOKEN_WORD.findall(note)]
    if not tokens or "," in note or tokens[0].lower() in _OPENERS - _DETERMINER_WORDS:
        return False
    return not any(t.lower() in _AUXILIARIES or (t[0].isupper() and t.lower().split("'")[0] in _OPENERS)
                   for t in tokens[1:]) and tokens[0].lower() not in _AUXILIARIES


class Condenser(Protocol):
    def condense(self, question: str, history: Sequence[Turn]) -> str: ...


# "Can I / How do I / What is / What's …": the lead that asks, before the subject.
_LEAD = re.compile(
    r"^\s*(?:(?:how|when|where|why|what|which|who)(?:['’]s)?\s+)?"
    r"(?:(?:do|does|did|can|could|should|would|will|may|must|is|are|was|were)\s+)?"
    r"(?:(?:i|we|you|one|it|there)\s+)?(?:(?:be\s+able\s+to|need\s+to|have\s+to|want\s+to)\s+)?", re.IGNORECASE)
_VERB_LEAD = re.compile(r"^\s*(?:how\s+(?:do|can|should|would)|can|could|should|may|do|does)\s+(?:i|we|you|one)\b", re.IGNORECASE)
# "What about …?", "And with pnpm?", and a bare phrase of up to four words that only names where or with what
# ("With yarn?", "On the Pro plan?"): a phrase asking something itself ("In which file do I …?") is a question.
_WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<rest>.+?)\s*\??\s*$|"
                         r"^\s*(?:and\s+(?P<prep>for|in|on|with|to|from|under|inside)\s+(?P<rest2>.+?)|"
                         r"(?P<prep3>for|in|on|with|to|from|under|inside|using)\s+(?P<rest3>(?![^?]*\b(?:do|does|did|can|"
                         r"could|should|would|will|is|are|was|were|how|what|which|when|where|why|who|i|we|you)\b)"
                         r"[^\s?]+(?:\s+[^\s?]+){0,3}))\s*\??\s*$", re.IGNORECASE)
# "Is that also true on Netlify?", "Does it work with Netlify as well?", "Does that apply to the Growth plan too?":
# the earlier question asked again of the thing the trailing phrase names.
_AGAIN_OF = re.compile(r"\b(?P<prep>on|for|in|with|to|from|under|using|at|via)\s+(?P<part>[^?]+?)"
                       r"(?:\s+(?:too|also|as\s+well|either|instead))?\s*\??\s*$", re.IGNORECASE)
_LEADING_PREPOSITION = re.compile(r"^(?P<prep>for|in|on|with|to|from|under|inside|at|via|using)\s+", re.IGNORECASE)
_DETERMINERS = re.compile(r"^(?:(?:my|our|your|their|its|the|a|an|this|that|these|those)\s+)+", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#-]*(?<![.])")
_DO_THAT = re.compile(r"\bdo\s+(?:that|this|it|so)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(it|that|this|they|them|these|those|there)\b", re.IGNORECASE)
_PRONOUN_SUBJECT = re.compile(r"^\s*(?:(?:how|when|where|why|what|which)\s+)?(?:do|does|did|can|could|will|would|should|is|are|was|were|has|have)\s+"
                              r"(?:it|that|this|they|these|those)\b", re.IGNORECASE)
# "that key", "this option", "the same auth option": a determiner that points back, then up to two words.
_POINTER = re.compile(r"\b(?:that|this|those|these|the\s+same)\s+(?P<words>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)",
                      re.IGNORECASE)
_THE_LONE_TERM = re.compile(r"\b(?:the|its|their)\s+[A-Za-z][\w-]*\s*\??\s*$", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[._/()`]|\d|[a-z][A-Z]")
_CONJUNCTION_THAT = re.compile(r"\b(?:so|such|now|given|assuming|means|mean|say|says|sure)\s+that\b", re.IGNORECASE)
# Words of a follow-up that ask but do not name a subject ("how", "change", "configure" still name an action).
_ASKING = frozenset(key_terms("how what which when where why who can could should would will do does did is are "
                              "was were i we you one me my please also too then so ok okay thanks about there "
                              "possible way work works happen happens mean means"))


def subject(question: str) -> tuple[str, bool]:
    """The earlier question's subject without its asking lead, and whether it is an action ("move my workspace …").

    It is an action when the visitor is the one asking to do it: "How do I move …", and any lead that names them
    before the verb ("Where do I find …", "What do I need to verify …"); not "When does it expire?".
    """
    text = _BESIDE.sub("", question.strip()).rstrip("?!. ").strip()  # not the subject an earlier turn carried
    lead = _LEAD.match(text)
    asked_by = lead.group() if lead else ""
    is_action = bool(_VERB_LEAD.match(text) or _ASKER.search(asked_by))
    rest = text[len(asked_by):].strip()
    return (rest or text), is_action


_ASKER = re.compile(r"\b(?:i|we|you|one)\b", re.IGNORECASE)
# Words that finish a verb rather than start its object ("set up", "back up", "opt out", "get started"): after one,
# a follow-up's pronoun is not the thing acted on, so it stays as typed with the earlier subject beside it.
_PARTICLES = _words("up down out off back over away in on through around along started going rid")


_BESIDE = re.compile(r"\s+\([^()]*(?:\([^()]*\)[^()]*)*\)\s*\?\s*$")  # "… (the earlier subject)?" at the end


def own_terms(question: str) -> set[str]:
    """Content words of a question besides the asking words and pronouns."""
    return {t for t in key_terms(_PRONOUN.sub(" ", question)) if t not in _ASKING}


def is_elliptical(question: str, previous: str = "") -> bool:
    """True when the question leans on an earlier turn (`leans_on_earlier_turn`), opens by going on from it
    ("ok, and …"), or points back at a noun the previous question named more fully ("if that key leaks")."""
    return (leans_on_earlier_turn(question) or bool(_CONTINUES.match(question))
            or bool(previous and pointed_back(question, previous)))


def leans_on_earlier_turn(question: str) -> bool:
    """A pronoun for the subject, "what about …", no subject of its own, or one lone term taken as known
    ("What's the default?": the default of what the thread was about)."""
    if _WHAT_ABOUT.match(question) or _PRONOUN_SUBJECT.match(question):
        return True
    stripped = _CONJUNCTION_THAT.sub(" ", question)
    own = own_terms(question)
    if _PRONOUN.search(stripped) and len(own) <= 2:
        return True
    return not own or (len(own) == 1 and bool(_THE_LONE_TERM.search(question)) and not _names(question))


def _names(question: str) -> bool:
    """Whether the question names something of its own: a capitalised word past the first, or an identifier."""
    tokens = _TOKEN.findall(question)
    return any(t[:1].isupper() and t != "I" for t in tokens[1:]) or any(_IDENTIFIER.search(t) for t in tokens)


def pointed_back(question: str, previous: str) -> tuple[int, int, str] | None:
    """Where the follow-up points back at a noun ("that key", "the same auth option") and the fuller phrase the
    previous question gave it ("record key"), when the previous one says more; the span ends at the noun."""
    for match in _POINTER.finditer(question):
        words = list(re.finditer(r"\S+", match.group("words")))
        if words[0].group().lower() in TERM_STOPWORDS or not own_terms(words[0].group()):
            continue  # "so that the …": a conjunction; "does that mean": a pronoun before a verb that asks
        for word in words:
            phrase = _phrase_ending_in(previous, word.group())
            if phrase and len(phrase.split()) > 1:
                return match.start(), match.start("words") + word.end(), phrase
    return None


def _phrase_ending_in(text: str, head: str) -> str | None:
    """The last phrase of `text` ending in a word with `head`'s stem, with up to two modifiers before it."""
    tokens = list(_TOKEN.finditer(text.strip().rstrip("?!. ")))
    found = _head_phrase(tokens, head, most=2)
    return text[tokens[found[0]].start(): tokens[found[1]].end()] if found else None


def _head_phrase(tokens: Sequence[re.Match[str]], head: str, *, first: int = 0,
                 most: int | None = None) -> tuple[int, int] | None:
    """(first token, head token) of the last phrase ending in a word with `head`'s stem: the head and the
    modifiers before it up to a stopword (at most `most`), never before token `first`."""
    stemmed = stem(head.lower())
    for i in range(len(tokens) - 1, first - 1, -1):
        if stem(tokens[i].group().lower()) == stemmed:
            j, floor = i, first if most is None else max(first, i - most)
            while j > floor and tokens[j - 1].group().lower() not in TERM_STOPWORDS:  # the modifiers before it
                j -= 1
            return j, i
    return None


def carried_readings(question: str, previous: str) -> tuple[str, ...]:
    """What an elliptical follow-up may mean with the previous subject folded in (the offline rewrite), likeliest
    first.

    One reading, except for a name brought with a preposition of its own that replaces a name the same
    preposition does not govern: "And with MySQL?" after "Does Ferry support Postgres?" asks of MySQL in Postgres'
    place, "And with Homebrew?" after "How do I install the ferry CLI?" asks how to install the CLI with Homebrew,
    and no rule of grammar tells the two apart. Both are read, and the chat server searches the one the docs
    answer (`rewrite` with `prefer`). First comes the name added when nothing governed the earlier one (it drops
    nothing), else the name swapped ("And on Netlify?" after "… deploy to Vercel?"), as before either was read.
    """
    about = _WHAT_ABOUT.match(question)
    if not about:
        again = _AGAIN_OF.search(question) if _PRONOUN_SUBJECT.match(question) else None
        swapped = swap_part(previous, again.group("part")) if again else None
        if again and swapped:  # "Is that also true on Netlify?" asks the earlier question again, of Netlify
            otherwise = _carried(question, previous)  # "Does it work with Homebrew too?": it, with Homebrew
            governor = _name_governor(previous) if swapped[1] else ""
            if not swapped[1] or governor == again.group("prep").lower() or otherwise == swapped[0]:
                return (swapped[0],)
            return (swapped[0], otherwise) if governor else (otherwise, swapped[0])
        return (_carried(question, previous),)
    extra = (about.group("rest") or about.group("rest2") or about.group("rest3") or "").strip()
    if not extra:
        return (previous,)
    named = about.group("prep") or about.group("prep3")
    preposition = (named or "for").lower()
    led = _LEADING_PREPOSITION.match(extra)  # "What about in MDX pages?": the phrase brings its own preposition
    if led:
        preposition, extra = led.group("prep").lower(), extra[led.end():]
    explicit = bool(led or named)  # "And with pnpm?" names the preposition too
    found = swap_part(previous, extra)
    if found and (not explicit or not found[1]):
        return (found[0],)
    added = ((swap_object(previous, preposition, extra) if explicit else None)
             or f"{previous.strip().rstrip('?')} {preposition} {extra}?")
    if not found or found[0] == added:
        return (added,)
    governor = _name_governor(previous)
    if governor == preposition:
        return (found[0],)
    return (found[0], added) if governor else (added, found[0])


def _carried(question: str, previous: str) -> str:
    """A follow-up that leans on the previous question by a pronoun, a fragment or a term taken as known."""
    topic, is_action = subject(previous)
    if is_action and _DO_THAT.search(question):
        return _DO_THAT.sub(topic, question, count=1)
    stripped = _CONJUNCTION_THAT.sub(lambda m: m.group(0).replace("that", "\x00"), question)
    match = _PRONOUN.search(stripped)
    if match and match.group(1).lower() != "there":
        before, after = stripped[: match.start()], stripped[match.end():]
        if is_action:
            thing = _object_of(topic, before, after)
            if thing:  # "Can I also hide it from search?" after "How do I hide a page from the navigation?"
                return (before + thing + after).replace("\x00", "that")
        else:
            split = _subject_and_rest(topic, after)
            if split:  # "Does it support Linux?" after "Does the CLI support Windows?": "the CLI", not "… Windows"
                topic, rest = split
                said = after.strip().rstrip("?!. ").split()
                if len(said) == 1 and rest:  # "How often should it be?" after "… be rotated?": the object stays
                    after = f" {said[0]} {rest}?"
            else:
                topic = _without_final_verb(previous, topic)
            return (before + topic + after).replace("\x00", "that")
    return f"{question.strip().rstrip('?')} ({topic})?"


# Words that anchor nothing: said in passing ("Does it also …") or pointing at no word of the earlier question
# ("Is it the default?", "Is it the same on Pro?").
_UNANCHORED = _words("also still even ever really already then the a an same")


def _anchor(text: str) -> str:
    """The first word of `text` that can be looked for in the earlier question ("" when none)."""
    return next((w for w in _TOKEN.findall(text) if w.lower() not in _UNANCHORED), "")


def _word_in(text: str, word: str) -> re.Match[str] | None:
    """The first token of `text` with `word`'s stem, past its first word (a subject or an object has one)."""
    wanted = stem(word.lower())
    return next((t for t in list(_TOKEN.finditer(text))[1:] if stem(t.group().lower()) == wanted), None)


def _object_of(action: str, before: str, after: str) -> str | None:
    """What a pronoun stands for when the follow-up repeats the earlier action's verb right before it: the words
    the earlier question put between that verb and the follow-up's next word ("hide it from search" after "hide
    a page from the navigation" → "a page"), else up to its first preposition ("rotate it from the CLI" after
    "rotate an API key" → "an API key"; "move it back" after "move a page to a folder" → "a page").
    """
    said = [w for w in _TOKEN.findall(before) if w.lower() not in _UNANCHORED]
    verb = _TOKEN.search(action)
    if not said or verb is None or said[-1].lower() in TERM_STOPWORDS:
        return None
    rest = action[verb.end():]
    if stem(said[-1].lower()) != stem(verb.group().lower()):  # "How do I rotate it?" after "… find the signing
        # secret of a webhook?": another verb, the same thing, up to its first preposition ("the signing secret")
        first = _TOKEN.search(rest)
        if first is None or first.group().lower() in _PARTICLES:  # "set up SSO", "get started": no thing to take
            return None
        stop = next((t for t in _TOKEN.finditer(rest) if t.group().lower() in _PREPOSITIONS), None)
        return (rest[: stop.start()] if stop else rest).strip() or None
    following = _anchor(after)
    stop = (_word_in(rest, following) if following else None) or next(
        (t for t in _TOKEN.finditer(rest) if t.group().lower() in _PREPOSITIONS), None)
    return (rest[: stop.start()] if stop else rest).strip() or None


# "When does the signing secret expire?": a question word, then "do" before the subject, whose verb ends the question.
_ASKS_WITH_DO = re.compile(r"^\s*(?:how|when|where|why)\s+(?:do|does|did)\s+", re.IGNORECASE)
_NOUN_PHRASE_AND_VERB = re.compile(r"^(?P<phrase>(?:the|my|our|your|their|its|this|that|a|an)\s+[\w.-]+(?:\s+[\w.-]+){0,3})"
                                   r"\s+(?P<verb>[a-z]+)$")
# Verbs that end such a question with nothing after them. Without a part-of-speech tagger the last word of "How
# does the API handle pagination?" looks the same as that of "When does the trial end?"; only a verb known to
# close one is taken off, so an object ("pagination", "data", "loop") always stays.
_CLOSING_VERBS = _words("expire fail work run happen start stop end change break apply occur exist load crash hang "
                        "reset renew update sync retry last matter differ")


def _without_final_verb(previous: str, topic: str) -> str:
    """The earlier subject without the verb that closed its question, for a pronoun that stands for the thing.

    "Can I rotate it?" after "When does the signing secret expire?" asks about "the signing secret", not
    "the signing secret expire". Only when the earlier question asked with "do" after a question word and ended
    on a verb of `_CLOSING_VERBS` after a phrase opened by a determiner, with no other determiner or preposition.
    """
    found = _NOUN_PHRASE_AND_VERB.match(topic) if _ASKS_WITH_DO.match(previous) else None
    if not found or found.group("verb") not in _CLOSING_VERBS:
        return topic
    inside = found.group("phrase").lower().split()[1:]
    if any(w in _DETERMINER_WORDS or w in _PREPOSITIONS for w in inside):
        return topic
    return found.group("phrase")


def _subject_and_rest(topic: str, after: str) -> tuple[str, str] | None:
    """The earlier subject split where a follow-up's pronoun stops standing for it, when the follow-up repeats
    the word that came after it: "Does it include images too?" after "Does the search index include code
    blocks?" repeats "include", so "it" is "the search index" and "code blocks" is the part replaced.

    None when the follow-up's next word is not in the earlier question (the pronoun then stands for all of it).
    """
    following = _anchor(after)
    split = _word_in(topic, following) if following else None
    return (topic[: split.start()].strip(), topic[split.end():].strip()) if split else None


def swap_part(previous: str, replacement: str) -> tuple[str, bool] | None:
    """The previous question with the part a follow-up replaces swapped for it, and whether that part was the
    previous question's last name; None when no part matches.

    "And for my Vue components?" after "How do I open the devtools for React components?" asks the same
    question of another object: the phrase ending in the same head word ("components") is replaced. A
    follow-up naming another product or plan ("And on Netlify?" after "… deploy to Vercel?") replaces the
    previous question's last name. Searching "…React components, for Vue components" would find React.
    """
    base = previous.strip().rstrip("?!. ").rstrip()
    part = _DETERMINERS.sub("", replacement.strip().rstrip("?!. ")).strip()
    words = part.split()
    if not words:
        return None
    tokens = list(_TOKEN.finditer(base))
    found = _head_phrase(tokens, words[-1], first=1)  # never the question's first word ("How", "Can")
    names = _names_in(tokens)
    if (found and names and len(words) > 1 and all(w[:1].isupper() for w in words)
            and not any(tokens[k].group()[:1].isupper() for k in range(found[0], found[1] + 1))):
        found = None  # "Google Analytics" after "… enable analytics with PostHog?" is a name, not the analytics
    if found:
        j, i = found
        if j == i and len(words) == 1:
            return None  # the same word alone: nothing is replaced
        return f"{base[: tokens[j].start()]}{part}{base[tokens[i].end():]}?", False
    if words[-1][:1].isupper() and names:  # a name ("Netlify", "Enterprise"); not "API playground" (a noun's head)
        return f"{base[: names[-1].start()]}{part}{base[names[-1].end():]}?", True
    return None


def _names_in(tokens: Sequence[re.Match[str]]) -> list[re.Match[str]]:
    return [t for t in tokens[1:] if t.group()[:1].isupper() and t.group() != "I"]


_MODIFIER = "modifier"


def _name_governor(previous: str, reach: int = 3) -> str:
    """How the previous question's last name sits, for a follow-up that brings another with a preposition of its
    own: the preposition governing it, past at most `reach` determiners and modifiers ("to" in "deploy to
    Vercel", "on" in "on the Pro plan"); `_MODIFIER` when it modifies the noun after it ("the Growth plan"); ""
    when it is the thing itself ("install the ferry CLI", "support Postgres")."""
    tokens = list(_TOKEN.finditer(previous.strip().rstrip("?!. ")))
    names = _names_in(tokens)
    if not names:
        return ""
    index = tokens.index(names[-1])
    following = tokens[index + 1].group() if index + 1 < len(tokens) else ""
    if following[:1].islower() and following.lower() not in TERM_STOPWORDS and not following.endswith("ly"):
        return _MODIFIER
    for k in range(index - 1, max(0, index - 1 - reach), -1):
        word = tokens[k].group().lower()
        if word in _PREPOSITIONS:
            return word
        if word in TERM_STOPWORDS and word not in _DETERMINER_WORDS:
            break
    return ""



def swap_object(previous: str, preposition: str, replacement: str) -> str | None:
    """The previous question with what its last `preposition` governs replaced, when that phrase ends it.

    "What about with yarn?" after "How do I start the dev server with npm?" asks of yarn what was asked of
    npm: the phrase after the same preposition is the part replaced ("… with yarn?", not "… with npm with yarn?").
    """
    base = previous.strip().rstrip("?!. ").rstrip()
    found = list(re.finditer(rf"\b{re.escape(preposition)}\s+", base, re.IGNORECASE))
    if not found or len(base[found[-1].end():].split()) > 4:
        return None  # no such phrase, or it runs on past a short object: not the part this follow-up replaces
    return f"{base[: found[-1].end()]}{replacement}?"


# A message that opens by going on from the last one ("And …", "ok, and …", "Also, …", "So …"). Weaker signs
# ("it", "the same", "instead") are not taken: standalone questions use them as often (measured: carrying the
# earlier subject on them too lost 1 of 20 questions that changed subject on content/, 2 of 20 on cypress).
_CONTINUES = re.compile(r"^\s*(?:ok(?:ay)?\s*,?\s*)?(?:and|also|so|then|plus)\b", re.IGNORECASE)


class CarrySubject:
    """The offline condenser: the previous turn's subject, carried only into elliptical follow-ups."""

    name = "carry-subject"

    def condense(self, question: str, history: Sequence[Turn]) -> str:
        return self._condensed(question, history)[0]

    def _condensed(self, question: str, history: Sequence[Turn]) -> tuple[str, ...]:
        if not history:
            return (question,)
        previous = history[-1].question
        if not is_elliptical(question, previous):  # one definition of what borrows from the thread
            return (question,)
        pointer = pointed_back(question, previous)  # "that secret": the previous question says which one
        if pointer:
            start, end, phrase = pointer
            return (f"{question[:start]}the {phrase}{question[end:]}",)
        if leans_on_earlier_turn(question):
            return carried_readings(question, previous)
        return (beside_subject(question, previous),)  # "ok and which role …?" goes on

    def readings(self, question: str, history: Sequence[Turn]) -> tuple[str, ...]:
        """What the follow-up may mean: the condensed question (two, when `carried_readings` cannot tell), and for
        one that names its own subject in a thread, also the typed question with the earlier subject beside it
        (`rewrite` asks which one answers)."""
        condensed = self._condensed(question, history)
        if not history or condensed != (question,):
            return condensed
        topic = subject(history[-1].question)[0]
        if not own_terms(topic):  # the earlier question names nothing to carry
            return condensed
        return (question, beside_subject(question, history[-1].question))


def beside_subject(question: str, previous: str) -> str:
    """The typed question, its words kept, with the previous question's subject beside it in brackets."""
    return f"{question.strip().rstrip('?')} ({subject(previous)[0]})?"[:MAX_QUESTION_CHARS]


CONDENSE_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"], "additionalProperties": False,
}
CONDENSE_PROMPT = (
    "Rewrite the visitor's last message as one standalone question about the documentation, using the earlier "
    "questions only to resolve what it refers to. Keep the visitor's wording where you can; do not answer it and do "
    "not add facts. If it is already standalone, return it unchanged. Reply as JSON: {\"question\": \"...\"}."
)


class LLMCondenser:
    """Condenses a thread with any model that has `complete(messages, schema=…, name=…)` (the LLM generator does).

    A failed or empty reply falls back to the offline rule: a follow-up is never lost to a model error.
    """

    name = "llm"

    def __init__(self, model: Any, fallback: Condenser | None = None) -> None:
        self.model = model
        self.fallback = fallback or CarrySubject()

    def condense(self, question: str, history: Sequence[Turn]) -> str:
        if not history:
            return question
        earlier = "\n".join(f"- {t.question}" for t in history[-MAX_HISTORY:])
        messages = [{"role": "system", "content": CONDENSE_PROMPT},
                    {"role": "user", "content": f"Earlier questions:\n{earlier}\n\nLast message: {question}"}]
        try:
            reply = json.loads(self.model.complete(messages, schema=CONDENSE_SCHEMA, name="condense"))
            text = " ".join(str(reply.get("question", "")).split()) if isinstance(reply, dict) else ""
        except Exception as exc:  # noqa: BLE001 - any model or format failure falls back to the offline rule
            log.warning("condensing a follow-up failed (%s); using the offline rule", exc)
            text = ""
        return text[:MAX_QUESTION_CHARS] if text else self.fallback.condense(question, history)


# Given a follow-up's readings (the one searched when nothing tells them apart comes first), the one to search.
Prefer = Callable[[Sequence[str]], str]


def rewrite(question: str, history: Sequence[Turn], condenser: Condenser | None = None,
            prefer: Prefer | None = None) -> Rewrite:
    """The standalone question to search for a follow-up in a thread (unchanged when nothing needs carrying).

    A follow-up that names its own subject may still be about the earlier one ("Which role should they get?")
    or may change the subject; no rule tells the two apart (docs/performance.mdx, Follow-ups). With `prefer`
    (the answerer's `likelier`: both readings searched, the one the gate answers more surely kept, the typed
    question on a tie), the offline condenser lets the docs decide.
    """
    condenser = condenser or CarrySubject()
    if prefer is not None and isinstance(condenser, CarrySubject):
        readings = condenser.readings(question, history)
        standalone = prefer(readings) if len(readings) > 1 else readings[0]
    else:
        standalone = condenser.condense(question, history)
    return Rewrite(asked=question, question=" ".join(standalone.split()) or question)

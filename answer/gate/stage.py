"""The "answers the question" gate: verbatim and supported is not enough, the quote must be to the point.

A quote can be true, verbatim and beside the point: a product blurb for "Is
there a Terraform provider?". This gate judges the direct answer of any
generator against the question, from evidence a test can show, never from a
retrieval score alone:

- every *name* the question uses (Terraform, Acme, GraphQL) appears in the
  cited section: the docs cannot answer a question about a thing they never
  mention;
- the question's focus is not mostly absent from everything retrieved
  (rarity-weighted, so "webhook" on every page counts for little);
- a question asking for a quantity is answered by a span that states one;
- the span's extraction score (meaning, headings, terms, identifiers, type)
  reaches a floor.

Each failed test is a reason in the verdict, shown in the audit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ingest.context_sentences import asks_history, is_history
from ingest.text import key_terms, lexical_terms
from retrieval.search import Hit, RetrievalSet

from ..contract.findings import Finding
from ..contract.verify import DIRECT, SUPPORTING, Claim
from .confidence import confidence, signals
from .conflicts import disagree
from .features import AnswerExtractor, Scored, Span, coverage, readable_hits, type_fit
from .question import NAME, YESNO, Question, analyze, asks_a_measure, question_parts, same_release
from .shape import MEASURES, counts, measures_only
from .vocabulary import Vocabulary
from .weights import FITTED, MAX_QUOTES, MAX_RELATED, Confidence, Thresholds

_NAME = re.compile(r"(?<![\w.`-])([A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}\w*|[A-Z][a-z]{2,})(?![\w`])")
_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s+|[\"'(]\s*)$")
# A capitalised name qualifying the lower-case noun after it: "the Business plan", "the Growth tier", "an Express app".
_QUALIFIED = re.compile(r"\b([A-Z][\w-]*[a-z][\w-]*)\s+([a-z]{3,})\b")
# A name and the release it is at: "WCAG 3.0", "Node 22", "Python 3.12", "Chrome v120".
_RELEASE = re.compile(r"\b([A-Z][\w.+-]*)\s+v?(\d+(?:\.\d+)*)\b")
# A release stated as a bound ("TLS 1.2 or newer", "Node 18+"): the docs speak of every release past it as well.
_OPEN_ENDED = re.compile(r"\+|\s+(?:or|and) (?:newer|later|higher|above|greater|up|older|earlier|lower|below)\b",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """Whether a span answers the question, and why not when it does not."""

    answers: bool
    score: float
    reasons: tuple[str, ...] = ()
    beside: bool = False  # the question names what the docs found never mention, or another thing of its kind


@dataclass(frozen=True)
class RetrievedFocus:
    """What the whole retrieval set says about the question's focus, computed once per set.

    `absent`: rarity-weighted share of the focus no readable section contains; `release`:
    `names_another_release`'s reason ("" for none).
    """

    absent: float = 0.0
    release: str = ""
    missing: tuple[str, ...] = ()  # the question's own words for the absent focus, weightiest first

    @classmethod
    def of(cls, question: Question, hits: Sequence[Hit], vocabulary: Vocabulary) -> RetrievedFocus:
        present: set[str] = set()
        for hit in hits:
            present |= lexical_terms(_section_text(hit))
        total = sum(vocabulary.weight(t) for t in question.focus)
        gone = question.focus - present
        absent = sum(vocabulary.weight(t) for t in gone) / total if total else 0.0
        return cls(absent, names_another_release(question, hits), _words_for(question.text, gone, vocabulary))

    def reason(self) -> str:
        """Why the focus test failed, for a support person: the words no section found uses, then the figure."""
        figure = f"{self.absent:.0%} of what the question asks about"
        if not self.missing:
            return f"the sections found do not mention what the question asks about ({figure})"
        return f"none of the sections found mentions {quoted_list(self.missing)} ({figure})"


MAX_WORDS_NAMED = 3


def _words_for(text: str, terms: frozenset[str], vocabulary: Vocabulary) -> tuple[str, ...]:
    """The question's words (as the visitor wrote them) whose terms are `terms`, the rarest on the site first."""
    found: dict[str, str] = {}
    for word in re.findall(r"[\w.+/-]+", text):
        for term in lexical_terms(word):
            if term in terms and term not in found:
                found[term] = word.strip(".")
    ranked = sorted(found, key=lambda t: -vocabulary.weight(t))
    return tuple(found[t] for t in ranked[:MAX_WORDS_NAMED])


def quoted_list(words: Sequence[str]) -> str:
    """“a”, “b” or “c”: words as a reason names them to support staff and to the visitor."""
    quoted = [f"“{w}”" for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" or {quoted[-1]}"


def direct_verdict(question: Question, scored: Scored, hit: Hit, focus: RetrievedFocus, vocabulary: Vocabulary,
                   t: Thresholds) -> Verdict:
    """Does this span answer the question on its own? `focus` is `RetrievedFocus.of` this retrieval set."""
    reasons = _unnamed_reasons(question, hit, vocabulary)
    sibling = names_a_sibling(question, scored.span.statement) or focus.release
    if sibling:
        reasons.append(sibling)
    beside = bool(reasons)  # a name, or another thing of its kind: the absent focus alone is often the wording
    if focus.absent >= t.max_absent:
        reasons.append(focus.reason())
    if question.wants_number and type_fit(question, scored.span) < 0:
        reasons.append("the question asks for a number and the closest passage states none")
    elif question.wants_number and not _quantity_of_focus(question, scored.span, vocabulary, t):
        reasons.append("the closest passage gives a number for something other than what the question asks about")
    if scored.score < t.floor:
        reasons.append(f"the closest passage found does not address the question closely enough "
                       f"(score {scored.score:.2f}, an answer needs {t.floor})")
    return Verdict(not reasons, scored.score, tuple(reasons), beside=beside)


def _quantity_of_focus(question: Question, span: Span, vocabulary: Vocabulary, t: Thresholds) -> bool:
    """Is the amount a span states one of what the question asks about?

    Enough of the focus named around it says so; so does a count of the very thing "how many …" counts ("how
    many times will it retry?", "retries up to 4 times") in a span naming a smaller share of the rest of the
    focus (the unit it counts is no evidence of what it counts: "30 days" of a trial is not of retention).
    """
    counts_a_thing = question.counted and question.counted not in MEASURES and not asks_a_measure(question.text)
    if counts_a_thing and measures_only(span.statement):
        return False  # "how many exceptions?" is not answered by "within 30 days"
    if coverage(question, span, vocabulary) >= t.quantity_focus:
        return True
    rest = question.focus - {question.counted}
    return counts(span.statement, question.counted) and coverage(question, span, vocabulary, rest) >= t.counted_focus


def supporting_verdict(question: Question, scored: Scored, hit: Hit, best: float, vocabulary: Vocabulary,
                       t: Thresholds) -> Verdict:
    """May this span stand after the direct answer? It must be nearly as relevant and name what it is about."""
    reasons = _unnamed_reasons(question, hit, vocabulary)
    if scored.score < max(t.support_floor, best - t.support_within):
        reasons.append(f"less relevant than the direct answer (score {scored.score:.2f}, best {best:.2f})")
    elif not names_focus(question, scored.span.text):
        reasons.append("the quote itself names nothing the question asks about")
    return Verdict(not reasons, scored.score, tuple(reasons))


def _unnamed_reasons(question: Question, hit: Hit, vocabulary: Vocabulary) -> list[str]:
    """The first reason of either verdict, when the question names what the cited section never mentions."""
    unnamed = unnamed_in(question, hit, vocabulary)
    return [f"the cited section never mentions {', '.join(unnamed)}"] if unnamed else []


def names(question: str) -> list[str]:
    """Proper names and acronyms the question uses, except a capital that only starts a sentence."""
    found: list[str] = []
    for match in _NAME.finditer(question):
        word = match.group(1)
        if _SENTENCE_START.search(question[: match.start()]) and not (word.isupper() or _camel(word)):
            continue
        if word in ("I", "OK") or word in found:
            continue
        found.append(word)
    return found


def names_a_sibling(question: Question, statement: str) -> str:
    """Why the statement is about another thing of the kind the question asks about, or "" when it is not.

    "How many days are runs kept on the Business plan?" is not answered by "The Starter plan keeps data for 30
    days.": the question qualifies a noun with one name, the quote the same noun with another, and never uses the
    question's. No list of nouns: any capitalised name before a lower-case noun, in the question and the quote.
    """
    lowered = statement.lower()
    for match in _QUALIFIED.finditer(question.text):
        name, noun = match.group(1), match.group(2)
        if _SENTENCE_START.search(question.text[: match.start()]) or name.lower() in lowered:
            continue  # a sentence's first word is no qualifier; a quote that uses the name may be about it
        # "The Open Source Software (OSS) plan …": an abbreviation in brackets names the thing as well as a word does
        for other in re.finditer(rf"\(?\b([A-Z][\w-]*)\)?\s+{re.escape(noun)}\b", statement):
            if not _SENTENCE_START.search(statement[: other.start()]):
                return f"the quote is about the {other.group(1)} {noun}, the question about the {name} {noun}"
    return ""


def names_another_release(question: Question, hits: Sequence[Hit]) -> str:
    """Why the retrieved sections are about other releases of what the question names, or "" when they are not.

    "Does it test against WCAG 3.0?" is not answered from sections about WCAG 2.1 and 2.2 that never say 3.0:
    the question names a thing at one release, the docs found for it the same thing at others and never the
    question's, so a sentence near it ("No tool can determine conformance") answers another question. Sections
    that name the thing without any release leave it open (they may hold for every release), and so do sections
    that state a bound ("TLS 1.2 or newer" says what becomes of TLS 1.1).
    """
    asked = list(_RELEASE.finditer(question.text))
    if not asked:
        return ""
    text = " ".join(_section_text(hit) for hit in hits)
    for match in asked:
        name, release = match.group(1), match.group(2)
        mentions = [m for m in _RELEASE.finditer(text) if m.group(1).lower() == name.lower()]
        if any(_OPEN_ENDED.match(text, m.end()) for m in mentions):
            continue  # "TLS 1.2 or newer" answers "Is TLS 1.1 accepted?"
        stated = {m.group(2) for m in mentions}
        if stated and not any(same_release(release, other) for other in stated):
            return f"the docs found are about {name} {', '.join(sorted(stated))}, the question about {name} {release}"
    return ""


def unnamed_in(question: Question, hit: Hit, vocabulary: Vocabulary) -> list[str]:
    """The question's names that neither the cited section nor any public page ever mentions.

    "Is there a Terraform provider?" cannot be answered by docs that never say "Terraform". A name the
    docs do use elsewhere ("Germany", a plan name) is left to the other tests: the section may answer
    the question in its own words.
    """
    text = _section_text(hit).lower()
    return [n for n in names(question.text) if n.lower() not in text and vocabulary.share(n.lower()) == 0]


def names_focus(question: Question, text: str) -> bool:
    """True when the text itself (not only its headings) uses a focus term or identifier of the question.

    "Free | 10 | 20" under a rate-limit header supports nothing for a question about the Growth plan.
    """
    lowered = text.lower()
    return bool(question.focus & key_terms(text)) or any(i in lowered for i in question.identifiers)


def _camel(word: str) -> bool:
    return any(c.isupper() for c in word[1:])


def _section_text(hit: Hit) -> str:
    chunk = hit.chunk
    return " ".join((chunk.title, *chunk.heading_path, chunk.text))


@dataclass(frozen=True)
class Judgement:
    """The gate's verdict on a verified answer: which claims answer, in what order, and what was set aside."""

    claims: tuple[Claim, ...]  # the direct answer first, then supporting claims, in the generator's order
    answered: bool
    reasons: tuple[str, ...] = ()  # why nothing answers, when nothing does
    set_aside: tuple[Finding, ...] = ()  # "claim 2 does not answer the question: …", for the audit
    disagree: bool = False  # two sources state different values for the same thing: both shown, neither verified
    related: bool = False  # the claims are the passages that came closest, shown as such: not an answer
    confidence: float | None = None  # how sure the gate is that the direct answer answers (None: nothing passed)


class AnswerGate:
    """The one stage between retrieval and the verifier's output that decides what answers.

    `pick` proposes the spans the extractive generator drafts from; `judge` orders any generator's verified
    claims direct-first and sets aside those beside the point. Both score spans the same way (`features.py`)
    and apply the same tests (`direct_verdict`, `supporting_verdict`), so an LLM's quote and the extractor's
    own proposal of the same text are judged alike. It never adds a quote: it only orders and drops.
    """

    def __init__(
        self,
        extractor: AnswerExtractor,
        thresholds: Thresholds | None = None,
        *,
        site_terms: frozenset[str] = frozenset(),
        confidence: Confidence | None = None,
    ) -> None:
        self.extractor = extractor
        self.thresholds = thresholds or Thresholds()
        self.site_terms = site_terms
        self.confidence = confidence or FITTED

    @property
    def versioned(self) -> bool:
        """True when the site declares a current docs version: only sections of one version can contradict."""
        return bool(self.extractor.current_version)

    def question(self, text: str) -> Question:
        vocabulary = self.extractor.vocabulary()
        return analyze(text, ignore=self.unremarkable(), code=vocabulary.code)

    def unremarkable(self) -> frozenset[str]:
        """Terms that say nothing about a question on this site: its product name, words on most of its pages."""
        return frozenset(self.site_terms | self.extractor.vocabulary().common)

    def pick(self, question: Question, rset: RetrievalSet, *,
             max_spans: int = MAX_QUOTES) -> tuple[list[Scored], tuple[str, ...]]:
        """The extractor's best spans that pass the gate (direct answer first), or none and the reasons.

        A question asking two things ("…, and how …?") leads with the best passing span for each part, in the
        order asked, when the whole question passes: the whole's best span alone often answers one part only.
        """
        ranked = self.extractor.rank(question, rset)
        if not ranked:
            return [], ("no retrieved section has a quotable sentence",)
        direct, reasons = self._direct(question, ranked, rset)
        if direct is None:
            return [], reasons
        chosen: list[Scored] = []
        for scored in [*self._part_answers(question, rset), direct]:
            if len(chosen) < max_spans and not _repeats(scored, chosen):
                chosen.append(scored)
        direct = chosen[0]
        vocabulary = self.extractor.vocabulary()
        # A span stating another value for what the direct answer states is shown beside it, whatever it scores.
        rival = next((s for s in ranked if _rivals(direct, s, rset, self.versioned) and not _repeats(s, chosen)), None)
        for scored in supports_in_order(ranked, chosen, self.extractor.weights.continues):
            if len(chosen) >= max_spans - (rival is not None):
                break
            if scored is rival or _repeats(scored, chosen):
                continue  # a sentence the answer already quotes (from this section or a copy elsewhere) adds nothing
            verdict = supporting_verdict(question, scored, _cited(rset, scored.span.handle), direct.score, vocabulary,
                                         self.thresholds)
            if verdict.answers:
                chosen.append(scored)
        return chosen[: max_spans - (rival is not None)] + ([rival] if rival is not None else []), ()

    def unmentioned(self, question: Question, rset: RetrievalSet) -> tuple[str, ...]:
        """The question's own words no section found mentions, when that is why nothing answers (else ()).

        Said to the visitor beside "Not in the docs": "PayPal" named by no section found tells them what the docs
        do not cover, or which word to put another way.
        """
        focus = RetrievedFocus.of(question, readable_hits(rset), self.extractor.vocabulary())
        return focus.missing if focus.absent >= self.thresholds.max_absent else ()

    def closest(self, question: Question, rset: RetrievalSet, *, max_spans: int = MAX_RELATED) -> list[Scored]:
        """When nothing answers: the best span of each section that came closest, to show as Related passages.

        Only spans of sections about what was asked: none when the question names something the docs found
        never mention ("PayPal"), or another thing of the kind it asks about; each span must itself name a focus
        term and reach `Thresholds.related_floor`. Most of the question's words in no section found is no reason
        to show nothing: that is as often the visitor's wording ("teammates" for the docs' "seats") as a topic
        the docs lack, so the closest passages are shown, never as an answer, with those words named; but only
        passages that score as an answer must (`Thresholds.floor`): near the few words the docs do use is not
        close to what was asked.
        """
        vocabulary = self.extractor.vocabulary()
        focus = RetrievedFocus.of(question, readable_hits(rset), vocabulary)
        found: list[Scored] = []
        for scored in self.extractor.rank(question, rset):
            hit = rset.get(scored.span.handle)
            if hit is None or any(s.span.handle == scored.span.handle for s in found):
                continue
            if scored.score < self._related_floor(focus):
                break  # ranked best first: nothing after it is closer
            if direct_verdict(question, scored, hit, focus, vocabulary, self.thresholds).beside:
                continue
            if names_focus(question, scored.span.text) and not _repeats(scored, found):
                found.append(scored)
            if len(found) == max_spans:
                break
        return found

    def sure(self, question: Question, direct: Scored, rset: RetrievalSet) -> float:
        """The confidence that `direct` answers, weighed from how it stands among every span the gate scored."""
        return confidence(signals(question, [direct], self.extractor.rank(question, rset), rset), self.confidence)

    def _parts(self, question: Question) -> list[Question]:
        """The parts of a question asking several things, each analysed as a question; [] for a single question."""
        parts = question_parts(question.text)
        return [self.question(part) for part in parts] if len(parts) > 1 else []

    def _part_answers(self, question: Question, rset: RetrievalSet) -> list[Scored]:
        """The direct answer to each part of a question asking several things, in order; [] for a single question."""
        found: list[Scored] = []
        for asked in self._parts(question):
            direct, _ = self._direct(asked, self.extractor.rank(asked, rset), rset)
            found += [direct] if direct is not None else []
        return found

    def _direct(self, question: Question, ranked: Sequence[Scored],
                rset: RetrievalSet) -> tuple[Scored | None, tuple[str, ...]]:
        """The best of the top spans that answers `question` on its own, or None and the first one's reasons."""
        vocabulary = self.extractor.vocabulary()
        focus = RetrievedFocus.of(question, readable_hits(rset), vocabulary)
        first_reasons: tuple[str, ...] = ()
        # Not only the best: a span failing only on a name may have a neighbour that passes.
        for scored in current_first(question, ranked[: self.thresholds.direct_tries]):
            verdict = direct_verdict(question, scored, _cited(rset, scored.span.handle), focus, vocabulary,
                                     self.thresholds)
            if verdict.answers:
                return scored, ()
            first_reasons = first_reasons or verdict.reasons
        return None, first_reasons

    def judge(self, question_text: str, claims: Sequence[Claim], rset: RetrievalSet, *,
              committed: int = 0) -> Judgement:
        """Order verified claims direct-first and set aside those that do not address the question.

        `committed`: the first claims are already on the page (streamed as the model wrote them): they stay,
        first and in their roles, and every later claim is judged as support for the first.
        """
        if committed:
            return self._judge_after(question_text, claims, rset, committed)
        if not claims:
            return Judgement((), False, ("no verified claim",))
        question = self.question(question_text)
        vocabulary = self.extractor.vocabulary()
        focus = RetrievedFocus.of(question, readable_hits(rset), vocabulary)
        best = self._best(question, claims, rset)
        verdicts = [direct_verdict(question, s, h, focus, vocabulary, self.thresholds) for s, h in best]
        passing = [i for i, v in enumerate(verdicts) if v.answers]
        if not passing:
            strongest = max(range(len(claims)), key=lambda i: best[i][0].score)
            set_aside = tuple(Finding(f"claim {i + 1} does not answer the question: {'; '.join(v.reasons)}", i + 1)
                              for i, v in enumerate(verdicts))
            near = self._near(question, best, verdicts, self._related_floor(focus))
            shown_aside = tuple(f for f in set_aside if f.claim is None or f.claim - 1 not in near)
            return Judgement(tuple(replace(claims[i], role=SUPPORTING) for i in near), False,
                             verdicts[strongest].reasons, shown_aside, related=bool(near))
        strongest_passing = max(passing, key=lambda i: best[i][0].order)
        leads = list(dict.fromkeys([*self._part_leads(question, claims, rset), strongest_passing]))
        others = [*leads[1:], *(i for i in range(len(claims)) if i not in leads)]  # the other parts' answers next
        judged = self._behind(question, claims, best, leads[0], [replace(claims[leads[0]], role=DIRECT)], others,
                              rset, answers_a_part=leads[1:])
        return self._weigh(judged, question, best[leads[0]][0], rset)

    def _near(self, question: Question, best: list[tuple[Scored, Hit]], verdicts: Sequence[Verdict],
              floor: float) -> list[int]:
        """Of claims none of which answers, those to show as Related passages (see `closest`), best first."""
        near = sorted((i for i, v in enumerate(verdicts)
                       if not v.beside and best[i][0].score >= floor and names_focus(question, best[i][0].span.text)),
                      key=lambda i: -best[i][0].order)
        return near[:MAX_RELATED]

    def _related_floor(self, focus: RetrievedFocus) -> float:
        """The score a Related passage needs: an answer's when most of the question is in no section found."""
        t = self.thresholds
        return max(t.related_floor, t.floor) if focus.absent >= t.max_absent else t.related_floor

    def _weigh(self, judged: Judgement, question: Question, direct: Scored, rset: RetrievalSet) -> Judgement:
        """The judgement with the gate's confidence in its direct answer: below the line, Related passages.

        So is a yes/no or "which flag …?" answer that says nothing of what was asked (`says_neither_way`).
        """
        sure = round(self.sure(question, direct, rset), 4)
        if says_neither_way(question, direct):  # the reason goes to the audit and the gap report, as a refusal's does
            return replace(judged, confidence=sure, related=True, reasons=(neither_way_reason(question),))
        return replace(judged, confidence=sure, related=sure < self.confidence.answer_at)

    def _judge_after(self, question_text: str, claims: Sequence[Claim], rset: RetrievalSet,
                     committed: int) -> Judgement:
        question = self.question(question_text)
        best = self._best(question, claims, rset)
        judged = self._behind(question, claims, best, 0, list(claims[:committed]), range(committed, len(claims)),
                              rset, answers_a_part=self._part_leads(question, claims, rset))
        return self._weigh(judged, question, best[0][0], rset)

    def _part_leads(self, question: Question, claims: Sequence[Claim], rset: RetrievalSet) -> list[int]:
        """For a question asking several things, the claim answering each part best, in the order asked ([] else)."""
        leads: list[int] = []
        vocabulary = self.extractor.vocabulary()
        for asked in self._parts(question):
            focus = RetrievedFocus.of(asked, readable_hits(rset), vocabulary)
            best = self._best(asked, claims, rset)
            passing = [i for i, (s, h) in enumerate(best)
                       if direct_verdict(asked, s, h, focus, vocabulary, self.thresholds).answers]
            if passing and (lead := max(passing, key=lambda i: best[i][0].order)) not in leads:
                leads.append(lead)
        return leads

    def _behind(self, question: Question, claims: Sequence[Claim], best: list[tuple[Scored, Hit]], lead: int,
                kept: list[Claim], others: Iterable[int], rset: RetrievalSet, *,
                answers_a_part: Sequence[int] = ()) -> Judgement:
        """The claims `others` judged as support for the claim at `lead`, after those already `kept`.

        `best` is each claim's best citation, scored, and the hit it quotes (`_best`).

        A claim in `answers_a_part` (the direct answer to one part of the question) stands whatever it scores
        against the whole question, and is not compared with the lead for a disagreement: the parts ask different
        things ("the Python SDK's timeout, and the Node SDK's?"), so their answers may state different values.
        """
        set_aside: list[Finding] = []
        rivals = False
        vocabulary = self.extractor.vocabulary()
        for i in others:
            if i in answers_a_part:
                kept.append(replace(claims[i], role=SUPPORTING))
                continue
            if _claims_disagree(claims[lead], claims[i], rset, self.versioned):
                kept.append(replace(claims[i], role=SUPPORTING))  # the docs disagree: shown too, never dropped
                rivals = True
                continue
            scored, hit = best[i]
            verdict = supporting_verdict(question, scored, hit, best[lead][0].score, vocabulary, self.thresholds)
            if verdict.answers:
                kept.append(replace(claims[i], role=SUPPORTING))
            else:
                why = "; ".join(verdict.reasons)
                set_aside.append(Finding(f"claim {i + 1} does not answer the question: {why}", i + 1))
        return Judgement(tuple(kept), True, (), tuple(set_aside), disagree=rivals)

    def _best(self, question: Question, claims: Sequence[Claim], rset: RetrievalSet) -> list[tuple[Scored, Hit]]:
        """Each claim's best-scoring citation (a claim stands on it) and the hit it quotes."""
        cited = [c for claim in claims for c in claim.citations]
        scores = iter(self.extractor.score_quotes(question, rset, [(c.handle, c.start, c.end) for c in cited]))
        best: list[tuple[Scored, Hit]] = []
        for claim in claims:
            scored = [(next(scores), c) for c in claim.citations]
            top, citation = max(scored, key=lambda pair: pair[0].order)
            best.append((top, _cited(rset, citation.handle)))
        return best


def says_neither_way(question: Question, direct: Scored) -> bool:
    """A direct answer that does not have the shape its yes/no or "which flag …?" question asks for and names
    nothing the question asks beyond its subject: a true sentence about the subject, not an answer.

    "Can I turn off the command log?" was answered, with the badge, by "Print messages with arguments to the Command
    Log.": it passes every test of `direct_verdict` (near the question, about its subject) and says nothing either
    way. A yes/no answer states a condition, limit or refusal (`shape.POLARITY`: "not", "only", "must",
    "supports"), an answer to "Which environment variable …?" names one (`shape.NAMES`), or either speaks of what
    the question asks beyond the subject all retrieved sections share (the `asks` feature); with neither it is
    shown as Related passages. Either alone, or the same test for how-to questions, was measured as too strict
    (docs/performance.mdx, 2026-12-07).
    """
    features = direct.features
    return question.kind in (YESNO, NAME) and features.get("type", 0.0) <= 0 and features.get("asks", 1.0) == 0


def neither_way_reason(question: Question) -> str:
    """Why `says_neither_way` showed Related passages, in the words of the other reasons the gate gives."""
    said = f"names no {_SORT_WORDS.get(question.named, question.named)}" if question.kind == NAME else \
        "states no condition, limit or refusal"
    return f"the closest passage {said} and nothing the question asks beyond its subject"


_SORT_WORDS = {"variable": "environment variable"}  # `Question.named` as a visitor would say it


def supports_in_order(ranked: Sequence[Scored], leads: Sequence[Scored], continues: float) -> list[Scored]:
    """Candidate supporting spans in the order tried: by `order`, those of a lead's section lifted by `continues`.

    The leads are the spans already chosen (the direct answer, and each part's answer for a question asking
    several things). A lead's own section goes on from it ("A new endpoint does not receive events that happened
    before it existed." is followed by "To backfill it, create a replay job for that endpoint only."), where a
    sentence of another section scoring a little higher often restates the lead in other words. The sort is
    stable: spans of equal standing keep their rank order.
    """
    sections = {lead.span.handle for lead in leads}
    return sorted(ranked, key=lambda s: -(s.order + (continues if s.span.handle in sections else 0.0)))


def current_first(question: Question, ranked: Sequence[Scored]) -> list[Scored]:
    """The spans in rank order, those about how things were (a past version, a changelog) after every current one.

    History is context: "3.5.0 | Increased max viewport size" must not lead while a current statement of the
    same thing also answers. It still leads when nothing current passes the gate, or when the question asks
    about versions and changes.
    """
    if asks_history(question.text):
        return list(ranked)
    past = [s for s in ranked if is_history(s.span.statement, s.span.context)]
    return [s for s in ranked if s not in past] + past


def _rivals(direct: Scored, other: Scored, rset: RetrievalSet, versioned: bool) -> bool:
    """A span of another section of the same docs version stating another value for what the direct answer states."""
    a, b = rset.get(direct.span.handle), rset.get(other.span.handle)
    if a is None or b is None or not _comparable(a, b, versioned):
        return False
    return disagree(direct.span.statement, other.span.statement)


def _claims_disagree(first: Claim, second: Claim, rset: RetrievalSet, versioned: bool) -> bool:
    """Two verified claims whose quotes, from different sections of one docs version, state different values."""
    for x in first.citations:
        for y in second.citations:
            a, b = rset.get(x.handle), rset.get(y.handle)
            if a is not None and b is not None and _comparable(a, b, versioned) and disagree(x.quote, y.quote):
                return True
    return False


def _comparable(a: Hit, b: Hit, versioned: bool) -> bool:
    """Two different sections that describe the same docs, so different values in them contradict each other.

    On a versioned site that means one docs version ("v1: 10 s" beside "v2: 30 s" is no contradiction). On a
    site that declares no versions a page's `doc_version` is its content hash, different on every page, and
    every two pages describe the same product.
    """
    if a.chunk.id == b.chunk.id:
        return False
    return a.chunk.doc_version == b.chunk.doc_version or not versioned


def _repeats(span: Scored, chosen: Sequence[Scored]) -> bool:
    """The span overlaps one already chosen, or says the same words (a copy of it in another section)."""
    return any(_overlaps(span, c) or _same_words(span, c) for c in chosen)


def _same_words(a: Scored, b: Scored) -> bool:
    return " ".join(a.span.text.lower().split()) == " ".join(b.span.text.lower().split())


def _overlaps(a: Scored, b: Scored) -> bool:
    return a.span.handle == b.span.handle and a.span.start < b.span.end and b.span.start < a.span.end


def _cited(rset: RetrievalSet, handle: str) -> Hit:
    """The hit a candidate span or a verified citation names: it is in this set, or the caller has a bug."""
    hit = rset.get(handle)
    if hit is None:
        raise LookupError(f"{handle} names no section of retrieval set {rset.id}")
    return hit

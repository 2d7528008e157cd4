"""Sentences and sections that are context, not an answer: navigation, version history.

Docs pages carry sentences a visitor should never be handed as "the answer":
"See Pagination." or "For more details, read the deployment guide." point
elsewhere and state nothing; "In v2.x, the dev server ran on port 3000." is
history beside the current fact, and so is a changelog's every sentence. These are signals of the sentence's own
form, true on any site, so they carry to sites the answerer was never tuned
on. Navigation is never a candidate; history is a penalty, so it still
answers when no current statement competes, or when the question asks about
versions and changes.

Retrieval reads the same signals a section at a time (a "See also" list of
links, a changelog entry for a question that does not ask about changes ranks
below the sections that state the thing), the answer gate a sentence at a time.
"""

from __future__ import annotations

import re

_NAVIGATION = re.compile(
    r"^(?:\*\*)?(?:see(?: also)?|for (?:more|further|full|additional|a full|the full|an overview|details|information|examples?)|"
    r"learn (?:more|how)|read (?:more|the|our|about)|more (?:details|information|on|about)|refer to|check out|visit|"
    r"find out (?:more|how)|head (?:over )?to|jump to|go to the|continue (?:to|with)|next:|previous:|"
    # "For a task-oriented walkthrough with SDK examples, see …": whatever the reader is sent for, it is sent away
    r"for [^,.;:]{1,80},\s*see(?=\s))\b",  # only "see": "For large files, read the data in chunks" instructs
    re.IGNORECASE)
# An outline line: a topic a page or list announces ("How to enable SSO for your organization", "What the Jira
# integration does and when to use it", a "What you'll learn" list), worded as a question without its mark or a
# verb phrase, and ending without a sentence's punctuation. It names a topic and states nothing about it.
_OUTLINE = re.compile(r"^(?:how to|how (?:do|does|can|is|are)|what|why|when|where|which|who)\b[^.!?:;]*$", re.IGNORECASE)
_HISTORY = re.compile(
    r"\b(?:in|before|prior to|until|up to|through) (?:v\d+(?:\.(?:\d+|x))*|(?:version|release) \d+(?:\.(?:\d+|x))*|"
    r"\d+\.(?:\d+|x)(?:\.(?:\d+|x))*(?!\s?(?:ms|s|seconds?|minutes?|hours?|days?|[kmg]b|%)\b))\b|"
    r"\b(?:previously|formerly|used to|no longer|earlier versions?|older versions?|legacy|was renamed|were renamed|"
    r"has been (?:removed|deprecated|replaced)|deprecated)\b", re.IGNORECASE)
# A changelog is history by construction; a migration guide is not: it states how things are now (measured: penalising
# its sentences lost cypress-docs' current Node.js support).
_HISTORY_PAGE = re.compile(r"\b(?:changelog|release notes?|what'?s new|history)\b", re.IGNORECASE)
_ASKS_HISTORY = re.compile(
    r"\b(?:changelog|releases?|released|changed?|changes|new in|introduced|added|removed|deprecated|upgrad\w*|migrat\w*|"
    r"(?:moving|switching|coming|porting) from|"
    r"when (?:was|were|did)|history|previous(?:ly)?|old|older|earlier|legacy|used to|v\d+(?:\.(?:\d+|x))*|\d+(?:\.(?:\d+|x))+)\b", re.IGNORECASE)


_NAVIGATION_HEADING = re.compile(
    r"^(?:see also|related(?: \w+)?|next steps?|what'?s next|further reading|learn more|more resources|resources)$",
    re.IGNORECASE)


def is_navigation_heading(heading: str) -> bool:
    """A section heading that announces links to elsewhere ("See also", "Next steps"): its section states nothing."""
    return bool(_NAVIGATION_HEADING.match(heading.strip()))


def is_history_section(title: str, headings: tuple[str, ...] = ()) -> bool:
    """A section of a changelog or release notes, or a "History" section: about how things were or changed."""
    return bool(_HISTORY_PAGE.search(" ".join((title, *headings))))


def is_navigation(text: str) -> bool:
    """A sentence that sends the reader elsewhere ("See Pagination.", "For more details, read …") or an outline line
    that only names a topic ("How to enable SSO"): never a claim."""
    return sends_elsewhere(text) or bool(_OUTLINE.match(text.strip().strip("*_ ")))


def sends_elsewhere(text: str) -> bool:
    """A sentence sending the reader elsewhere ("See Pagination."), not an outline line: a table cell reading "Where
    your data is stored" describes its row."""
    return bool(_NAVIGATION.match(text.strip()))


def is_history(text: str, context: str) -> bool:
    """A statement about how things were (a past version, a rename, a changelog or migration page)."""
    return bool(_HISTORY.search(text) or _HISTORY_PAGE.search(context))


def asks_history(question: str) -> bool:
    """A question about versions, releases or changes, which history answers."""
    return bool(_ASKS_HISTORY.search(question))


# Openers that point back at the sentence before: alone, the quote says the opposite of the page or nothing.
LEANS_BACK = re.compile(r"^(?:\*\*)?(?:however|but|otherwise|instead|conversely|still|even so|in (?:that|this|either) case|"
                        r"if (?:so|not)|on other|for other|other|unlike|as a result|therefore|thus|this|that|these|those|"
                        r"they|it|such|then|both|neither)\b", re.IGNORECASE)


def leans_back(sentence: str) -> bool:
    """Whether a sentence opens by pointing back at the one before ("They are deleted after 30 days."): alone,
    it says the opposite of its page or nothing."""
    return bool(LEANS_BACK.match(sentence))

"""Heading text -> HTML ``id``, exactly as the rendered docs site computes it.

Why this exists: every answer the chatbot gives cites a deep link such as
``/docs/install#configure-the-cli``.  The fragment must be the id that the
site's MDX pipeline (rehype-slug, Docusaurus, Next.js MDX, ...) put on the
heading, and those pipelines use the JavaScript package **github-slugger 2**.
A link whose fragment is off by one character silently lands on the top of
the page, or worse on a *different* heading (``intro-1`` vs ``intro-2``), and
a citation that lands on the wrong heading destroys trust in every other
answer.  So this module is a dependency-free, character-exact Python
re-implementation, checked against the real npm package.

The rule of github-slugger 2 (``slug(value, maintainCase)``)
----------------------------------------------------------------
1. Unless ``maintainCase``: lower-case with JavaScript ``toLowerCase()``.
   That is the locale-independent *full* Unicode lower-case mapping with the
   context-sensitive Final_Sigma rule (``"ΟΔΟΣ"`` -> ``"οδος"``,
   ``"İ"`` -> ``"i"`` + U+0307).  Python's ``str.lower()`` implements the same
   mappings, including Final_Sigma; it was compared code point by code point
   with Node 20 (ICU 78) and differs only on code points that Python 3.11 does
   not know yet (see "Deviations").  Lower-casing happens *before* stripping,
   so Final_Sigma sees the punctuation that is stripped afterwards.
2. Delete every code point whose Unicode General Category (Unicode **13.0**,
   the ``@unicode/unicode-13.0.0`` data the package's generator script used)
   is one of

   * ``No``                            other numbers (``²``, ``½``, ``①``)
   * ``Ps Pe Pi Pf Po``                brackets, quotes, ``. , : ; ! ? & # @`` ...
   * ``Pd``                            dashes (``– — ‐``) but NOT ASCII ``-``
   * ``Sm Sc Sk So``                   all symbols: math, currency, emoji, ``©``
   * ``Cc Cf Co Cn``                   controls, format (ZWJ, soft hyphen, tag
                                       characters), private use, unassigned
   * ``Zs Zl Zp``                      separators (NBSP, em space) but NOT the
                                       ASCII space ``" "``

   ...except code points with the Unicode *Alphabetic* property, which are
   kept.  Among the deleted categories only four ``So`` ranges are Alphabetic:
   the circled and squared Latin letters (``Ⓐ``, ``🄰``, ``🅐``, ``🅰``).
   Everything else survives: letters ``L*``, marks ``Mn Mc Me`` (so combining
   accents, Devanagari vowel signs and emoji variation selector U+FE0F stay),
   ``Nd``, ``Nl`` (``Ⅻ``), connector punctuation ``Pc`` (``_``, ``‿``), and
   lone surrogates ``Cs``.
3. Replace each ASCII space with ``-``.  No collapsing, no trimming:
   ``" a  b "`` -> ``"-a--b-"``; ``"Tom & Jerry"`` -> ``"tom--jerry"``.

``Slugger.slug`` (one per page) then de-duplicates with an occurrences map,
see :meth:`Slugger.slug`.

Deviations
----------
The only source of deviation is the Unicode database.  The JS regex is frozen
at Unicode 13.0; this module uses ``unicodedata`` (Unicode 14.0.0 on Python
3.11).  Code points first assigned in Unicode 14 are "unassigned" to the JS
regex and therefore stripped, while Python calls many of them letters or
marks; :data:`_NEW_IN_UNICODE_14` lists those ranges so that they are
stripped here too.  With that table, all 1,114,112 code points were checked
one by one against the published ``regex.js`` of github-slugger 2.0.0 with
zero differences.  Remaining, knowingly accepted deviations:

* On a Python whose Unicode database is newer than 14 (3.12+), letters added
  in Unicode 15+ are kept here but stripped by github-slugger.
* JS ``toLowerCase()`` follows the *JavaScript engine's* Unicode version, so
  it can differ between Node releases: Node 20 maps two Unicode 16 capitals
  (U+A7CB, U+A7DC) to the old letters ``ɤ``/``ƛ``, which then survive; Python
  3.11 strips them as unassigned.
* JS strings are UTF-16: a Python ``str`` holding a surrogate *pair* as two
  separate code points (only possible with ``surrogatepass``-style decoding)
  is kept here, while JS would see one astral character.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Mapping
from types import MappingProxyType

__all__ = ["SLUGGERS", "MintlifySlugger", "Slugger", "make_slugger", "mintlify_slug", "slug"]

#: Python's Unicode database version (the JS regex is Unicode 13.0).

#: General categories github-slugger 2 deletes (see the module docstring).
_REMOVED_CATEGORIES: frozenset[str] = frozenset(
    {
        "No",
        "Ps", "Pe", "Pi", "Pf", "Po", "Pd",
        "Sm", "Sc", "Sk", "So",
        "Cc", "Cf", "Co", "Cn",
        "Zs", "Zl", "Zp",
    }
)

#: Explicitly kept although their category is deleted: space becomes ``-``,
#: and the ASCII hyphen-minus is the one dash that survives.
_KEPT_CHARACTERS: frozenset[str] = frozenset({" ", "-"})

#: Code points in a deleted category (``So``) that carry the Unicode
#: Alphabetic property (PropList ``Other_Alphabetic``) and are therefore kept.
_ALPHABETIC_SYMBOLS: tuple[tuple[int, int], ...] = (
    (0x24B6, 0x24E9),    # CIRCLED LATIN CAPITAL/SMALL LETTER A..Z
    (0x1F130, 0x1F149),  # SQUARED LATIN CAPITAL LETTER A..Z
    (0x1F150, 0x1F169),  # NEGATIVE CIRCLED LATIN CAPITAL LETTER A..Z
    (0x1F170, 0x1F189),  # NEGATIVE SQUARED LATIN CAPITAL LETTER A..Z
)

#: Ranges that Unicode 14.0 newly filled with letters, marks or digits.  They
#: were unassigned (``Cn``) in the Unicode 13.0 data behind github-slugger's
#: regex, so the JS package strips them.  Gaps inside a range hold only code
#: points that are stripped anyway, so the ranges are kept coarse.
_NEW_IN_UNICODE_14: tuple[tuple[int, int], ...] = (
    (0x0870, 0x089F), (0x08B5, 0x08B5), (0x08C8, 0x08D2), (0x0C3C, 0x0C3C),
    (0x0C5D, 0x0C5D), (0x0CDD, 0x0CDD), (0x170D, 0x170D), (0x1715, 0x171F),
    (0x180F, 0x180F), (0x1AC1, 0x1ACE), (0x1B4C, 0x1B4C), (0x1DFA, 0x1DFA),
    (0x2C2F, 0x2C2F), (0x2C5F, 0x2C5F), (0x9FFD, 0x9FFF), (0xA7C0, 0xA7C1),
    (0xA7D0, 0xA7F4), (0x10570, 0x105BC), (0x10780, 0x107BA), (0x10F70, 0x10F85),
    (0x11070, 0x11075), (0x110C2, 0x110C2), (0x11740, 0x11746), (0x11AB0, 0x11ABF),
    (0x12F90, 0x12FF0), (0x16A70, 0x16AC9), (0x1AFF0, 0x1AFFE), (0x1B11F, 0x1B122),
    (0x1CF00, 0x1CF46), (0x1DF00, 0x1DF1E), (0x1E290, 0x1E2AE), (0x1E7E0, 0x1E7FE),
    (0x2A6DE, 0x2A6DF), (0x2B735, 0x2B738),
)


def _in_ranges(code_point: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(start <= code_point <= end for start, end in ranges)


@functools.lru_cache(maxsize=8192)
def _is_kept(char: str) -> bool:
    """Whether github-slugger 2's regex leaves this single code point alone."""
    if char in _KEPT_CHARACTERS:
        return True
    code_point = ord(char)
    if _in_ranges(code_point, _NEW_IN_UNICODE_14):
        return False
    if unicodedata.category(char) not in _REMOVED_CATEGORIES:
        return True
    return _in_ranges(code_point, _ALPHABETIC_SYMBOLS)


def slug(text: str, *, maintain_case: bool = False) -> str:
    """github-slugger 2's stateless ``slug()``: the id for one heading text.

    Pass the heading's *rendered plain text* (``Tom & Jerry``, not
    ``Tom &amp; Jerry`` or ``**Tom**``).  Like the JS function, a non-string
    argument yields ``""``.
    """
    if not isinstance(text, str):
        return ""
    if not maintain_case:
        text = text.lower()
    return "".join(char for char in text if _is_kept(char)).replace(" ", "-")


class Slugger:
    """One per page: tracks occurrences so duplicate headings get -1, -2..."""

    def __init__(self, *, maintain_case: bool = False) -> None:
        self._maintain_case = maintain_case
        self._occurrences: dict[str, int] = {}

    @property
    def maintain_case(self) -> bool:
        return self._maintain_case

    def slug(self, text: str) -> str:
        """github-slugger 2's ``Slugger#slug``: a slug unique on this page.

        Every id handed out is remembered with a counter.  When the base slug
        is taken, the counter *of the base slug* is bumped and ``base-N`` is
        tried until a free id is found.  So ``Intro, Intro, Intro-1, Intro``
        gives ``intro, intro-1, intro-1-1, intro-2``: the literal heading
        ``Intro-1`` collides with the generated ``intro-1`` and becomes
        ``intro-1-1``, and ``intro``'s own counter goes on at 2.
        """
        base = slug(text, maintain_case=self._maintain_case)
        candidate = base
        while candidate in self._occurrences:
            self._occurrences[base] += 1
            candidate = f"{base}-{self._occurrences[base]}"
        self._occurrences[candidate] = 0
        return candidate

    def reserve(self, explicit_id: str) -> None:
        """Note an explicit ``{#id}`` heading; deliberately changes nothing.

        The explicit id is used verbatim by the caller.  It is *not* counted as
        an occurrence because the site does not count it either: rehype-slug
        only slugs headings that have no id yet, so explicit ids never reach
        github-slugger.  Counting it here would shift the ``-N`` suffixes of
        later headings away from the ids the site really renders (a later
        ``## Setup`` next to ``{#setup}`` really does get ``setup`` again).
        """
        del explicit_id  # documented no-op, see above

    def reset(self) -> None:
        """Forget all slugs handed out so far (start a new page)."""
        self._occurrences = {}


_MINTLIFY_KEPT = frozenset("-_’/&")  # besides letters and digits: what Mintlify's documented rules keep


def mintlify_slug(text: str) -> str:
    """A heading's id by Mintlify's documented rules (its docs' "Automatic anchor IDs"), not github-slugger's.

    Lower case; a straight apostrophe becomes `’` and is kept; a period becomes `-`; parentheses go; `/` and `&`
    stay; whitespace becomes `-`. Punctuation the rules do not name is dropped, as github-slugger drops it.
    """
    text = text.strip().lower().replace("'", "’").replace(".", "-")
    kept = "".join("-" if ch.isspace() else ch for ch in text if ch.isalnum() or ch.isspace() or ch in _MINTLIFY_KEPT)
    return kept


class MintlifySlugger(Slugger):
    """Mintlify's ids: `mintlify_slug`, a repeated id numbered `-2`, `-3` … across the whole page."""

    def slug(self, text: str) -> str:
        base = mintlify_slug(text)
        candidate, n = base, 1
        while candidate in self._occurrences:
            n += 1
            candidate = f"{base}-{n}"
        self._occurrences[candidate] = 0
        return candidate


#: Rule name -> factory returning a fresh :class:`Slugger`.
SLUGGERS: Mapping[str, Callable[[], Slugger]] = MappingProxyType(
    {
        "github": Slugger,
        "github-case": functools.partial(Slugger, maintain_case=True),
        "mintlify": MintlifySlugger,
    }
)

DEFAULT_SLUGGER = "github"


def make_slugger(name: str) -> Slugger:
    """A fresh :class:`Slugger` for the named rule; ValueError if unknown."""
    try:
        factory = SLUGGERS[name]
    except KeyError:
        known = ", ".join(sorted(SLUGGERS))
        raise ValueError(f"unknown slugger rule {name!r}; known rules: {known}") from None
    return factory()

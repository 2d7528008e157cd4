"""The English the gate reads: every word list it matches, in one place.

The gate's numbers are in `weights.py`; its words are here. Each pattern below is a
phrase family of English documentation and questions ("how many", "by default",
"If not specified, …", "up to"), never one site's names: a site in another language
replaces this module, not the logic that uses it. Each section names the module
that matches its patterns.
"""

from __future__ import annotations

import re

# What a question asks for (`question.py`)

ASKS_QUANTITY = re.compile(
    r"\b(how (many|much|long|often|big|large|fast|soon|far|old|frequently)|what('s| is)? the (max|maximum|min|minimum|"
    r"limit|size|number|amount|percentage|price|cost|timeout|duration|length)|at (most|least)|up to|"
    r"max(imum)?|min(imum)?|which port|what port|how quickly|by when|until when|what deadline)\b", re.IGNORECASE)
# "What size is the viewport if I never call cy.viewport?" asks for the default as surely as "default" does.
ASKS_DEFAULT = re.compile(r"\bdefaults?\b|\bby default\b|\bout of the box\b|"
                          r"\b(?:if|when|unless) (?:i|we|you) (?:never|don't|do not|haven't|have not) (?:call|set|specify|pass|"
                          r"configure|change|provide|give|touch|override)\b|"
                          r"\bwithout (?:setting|specifying|passing|configuring|changing|calling|providing|overriding)\b",
                          re.IGNORECASE)
ASKS_HOWTO = re.compile(
    r"^\s*(how (do|can|should|would) (i|we|you|one)|how to|what (do|can|should) (i|we) do|what steps|"
    r"steps to|where do i|is there a way to)\b|\bwhat can we do\b|\bany idea\b", re.IGNORECASE)
ASKS_REASON = re.compile(r"^\s*why\b|\bwhat (happened|went wrong|causes|caused)\b|\bwhat am i doing wrong\b", re.IGNORECASE)
ASKS_YES_NO = re.compile(
    r"^\s*(is|are|can|could|does|do|did|will|would|should|may|must|has|have|was|were|am)\b", re.IGNORECASE)
# A condition or a time set before what is asked: "If I cancel halfway, do I get the unused part back?" asks
# yes or no as surely as "Do I get … if I cancel?".
LEADING_CLAUSE = re.compile(r"^\s*(?:if|when|whenever|once|after|before|while|since|unless)\b[^,?]*,\s*", re.IGNORECASE)
# "Which environment variable …?", "What flag …?", "Which file …?": the answer is a name in code of that kind, and a
# sentence naming none ("If you don't want to set an environment variable, pass the key inline") is beside it.
_WHICH = r"\b(?:which|what)\s+(?:[\w.-]+\s+){0,2}?"
ASKS_A_NAME = {
    "variable": re.compile(_WHICH + r"(?:environment|env)\s+var(?:iable)?s?\b", re.IGNORECASE),
    "flag": re.compile(_WHICH + r"(?:flags?|switch(?:es)?|(?:cli|command[- ]line) (?:options?|arguments?))\b",
                       re.IGNORECASE),
    "header": re.compile(_WHICH + r"headers?\b(?!\s+(?:component|bar|links?|logo))", re.IGNORECASE),
    "file": re.compile(_WHICH + r"files?\b(?!\s+(?:size|type|format)s?\b)", re.IGNORECASE),
    "command": re.compile(_WHICH + r"commands?\b", re.IGNORECASE),
}
# "Where do I find my API key?" asks where the key is: the verb of looking says nothing about which section answers,
# and, rare on a docs page, it outweighed the key itself ("none of the sections found mentions find").
LOOKING_FOR = re.compile(r"\b(where|how) (?:do|can|could|should|would|will) (?:i|we|you|one) (?:go to )?"
                         r"(?:find|get to|see|locate|view|look up|look for|look at)\b", re.IGNORECASE)
ASKS_HOW_MANY = re.compile(r"\bhow (many times|many|much|long|often|soon|far)\b|\b(the )?number of\b", re.IGNORECASE)
ASKS_A_MEASURE = re.compile(r"\bhow (long|much|big|large|often|soon|far|old)\b|\bwhen\b", re.IGNORECASE)
# "…, and what/how/can …?": one sentence asking a second question, which needs an answer of its own.
SECOND_ASK = re.compile(r",?\s+and\s+(?=(?:what|which|how|when|where|why|who|can|could|does|do|did|is|are|will|would|"
                        r"should|may)\b)", re.IGNORECASE)

# What a span states (`shape.py`)

POLARITY = re.compile(r"\b(not|no|never|cannot|can't|only|must|unless|except|always|supports?|supported|"
                      r"isn't|aren't|doesn't|don't|won't)\b", re.IGNORECASE)
CAUSE = re.compile(r"\b(because|cause[ds]?|reason|due to|since|so that|means|result of|likely)\b", re.IGNORECASE)
# "The command will fail if `undefined` is returned" answers "why does it fail?": a failure and its condition.
FAILS_WHEN = re.compile(r"\b(?:fail(?:s|ed)?|errors?|throws?|time[sd]? out|breaks?)\b[^.;:]{0,60}?\b(?:if|when|unless)\b",
                        re.IGNORECASE)
# "If not specified, the port is 4321." states the default without the word: what happens when nothing is given.
STATES_DEFAULT = re.compile(r"\bdefaults?\b|\bif (?:not|none is|no \w+ is|omitted|unset|left (?:out|empty|blank))\b|"
                            r"\bwhen (?:not (?:set|specified|given|provided)|omitted|unset)\b|\bfalls? back (?:to|on)\b|"
                            r"\b(?:unless|until) (?:you|it is) (?:set|specif|pass|configur|overrid)\w*", re.IGNORECASE)
# "24/7" says "always", not an amount: "24/7 support" does not answer "for how long?".
ROUND_THE_CLOCK = re.compile(r"(?<![\w/])24/7(?:/365)?(?![\w/])")
COUNTING_WORDS = "two|three|four|five|six|seven|eight|nine|ten|twelve"  # numbers written out, as prose counts
NUMBER_WORD = re.compile(rf"\b({COUNTING_WORDS}|twice|once|unlimited|no limit)\b",
                         re.IGNORECASE)
# "There is no explicit file size limit" answers "Is there a maximum file size?": the amount is none.
NO_LIMIT = re.compile(r"\b(?:no|without(?: an?| any)?)(?:\s+[\w-]+){0,3}?\s+(?:limits?|maximum|max|cap|quota|ceiling)\b|"
                      r"\b(?:is|are)\s+not\s+(?:limited|capped)\b", re.IGNORECASE)

# Amounts that are bounds, not values (`conflicts.py`)

BOUND = re.compile(r"(?:up to|at most|at least|max(?:imum)?|min(?:imum)?|no more than|no less than|between|within|"
                   r"from|under|over|[–-]|to)\s*$", re.IGNORECASE)

# Sentences that lean on the one before (`features.py`)


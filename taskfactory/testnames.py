"""Which test an answer's METHOD line names.

A :class:`TestName` is a test as people write it: a label and the phrases that
name it ("Welch", "unequal variance t-test", ``t.test(var.equal = FALSE)``).
A family names its canonical test (``Family.test_name``), its naive test
(``Family.naive_name``) and each accepted alternative (``Alternative.name``);
:func:`identify` reads a METHOD line against every name the registered
families know and returns the one it names.

Matching is on words: the text and the phrases are lower-cased, accents,
possessives and punctuation dropped (``t.test`` reads as "t test", ``one-way``
and ``oneway`` as "one way"); a phrase matches when all its words occur in the
text, and the match with the most words (then the most letters) wins, so
"Welch one-way ANOVA" names Welch's F rather than the classical F, and
``t.test(y ~ g, var.equal = TRUE)`` names Student's test rather than Welch's.

A name that a negation governs is not named: after "not", "never",
"instead of", "rather than", "as opposed to" and "in place of", to the end of
the clause (``, ; : ( ) [ ] { }``, a full stop, or "but"), words count only
for phrases that hold a negation themselves (R's "One-way analysis of means
(not assuming equal variances)" names Welch's F). So "classical one-way ANOVA
(not Welch)" names the classical F, and "Welch t-test (not Student's)" Welch's
t. ("without" is not a negation here: "without continuity correction" names
a test.)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

#: A negation, and where the clause it governs ends.
_NEGATION = re.compile(r"\b(?:not|never|instead\s+of|rather\s+than|as\s+opposed\s+to|in\s+place\s+of)\b", re.I)
_CLAUSE_END = re.compile(r"[,;:()\[\]{}]|\.(?:\s|$)|\bbut\b", re.I)
#: Words of a phrase that make it a negated name itself, matched on the whole text.
_NEGATING = frozenset({"not", "never", "instead", "rather"})
_POSSESSIVE = re.compile(r"(\w)['\u2019`]s\b")
_NON_WORD = re.compile(r"[^a-z0-9]+")
#: Words written several ways, read as one.
_SAME_WORD = {"oneway": "one way", "2": "two", "chisq": "chi square", "squared": "square", "versus": "vs", "samples": "sample", "proportions": "proportion",
              "variances": "variance", "tests": "test", "ranks": "rank", "means": "mean", "ttest": "t test", "utest": "u test"}


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as names are compared (see the module docstring)."""
    text = text.replace("χ²", " chisq ").replace("χ2", " chisq ")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    text = _POSSESSIVE.sub(r"\1", text)
    out: list[str] = []
    for word in _NON_WORD.split(text):
        if word:
            out.extend(_SAME_WORD.get(word, word).split())
    return tuple(out)


@dataclass(frozen=True)
class TestName:
    """A test as answers name it: ``label`` (how R's output or a textbook
    names it) and the ``phrases`` that name it (the label is one of them)."""

    label: str
    phrases: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.label.strip():
            raise ValueError("a test name needs a label")

    def match(self, text_words: frozenset[str], free_words: frozenset[str] | None = None) -> tuple[int, int]:
        """(words, letters) of the longest phrase all of whose words are in
        ``free_words`` (the words no negation governs; all of ``text_words``
        when None), or in ``text_words`` for a phrase holding a negation
        itself; (0, 0) when none is."""
        best = (0, 0)
        for phrase in (self.label, *self.phrases):
            ws = _phrase_words(phrase)
            within = text_words if free_words is None or ws & _NEGATING else free_words
            if ws and ws <= within:
                best = max(best, (len(ws), sum(map(len, ws))))
        return best


def free_text(text: str) -> str:
    """``text`` without the clauses that a negation governs (see the module
    docstring); linear in the length of ``text``."""
    kept, pos = [], 0
    while (neg := _NEGATION.search(text, pos)) is not None:
        end = _CLAUSE_END.search(text, neg.end())
        kept.append(text[pos:neg.start()])
        pos = end.start() if end else len(text)
    kept.append(text[pos:])
    return " ".join(kept)


@lru_cache(maxsize=4096)
def _phrase_words(phrase: str) -> frozenset[str]:
    return frozenset(words(phrase))


def identify(text: str, names, prefer=()) -> TestName | None:
    """The test of ``names`` (an iterable of :class:`TestName`) that ``text``
    names, or None when it names none (negated names aside). On a tie the first of ``prefer`` wins,
    then the first of ``names``."""
    text_words = frozenset(words(text or ""))
    if not text_words:
        return None
    free_words = frozenset(words(free_text(text)))
    order = list(prefer) + [n for n in names if n not in prefer]
    best, best_score = None, (0, 0)
    for name in order:
        score = name.match(text_words, free_words)
        if score > best_score:
            best, best_score = name, score
    return best

"""Which test an answer's METHOD line names.

A :class:`TestName` is a test as people write it: a label and the phrases that
name it ("Welch", "unequal variance t-test", ``t.test(var.equal = FALSE)``).
A family names its canonical test (``Family.test_name``), its naive test
(``Family.naive_name``) and each accepted alternative (``Alternative.name``);
:func:`identify` reads a METHOD line against every name the registered
families know and returns the one it names.

Matching is on words: the text and the phrases are lower-cased, accents,
possessives and punctuation dropped (``t.test`` reads as "t test", ``one-way``
and ``oneway`` as "one way"; R's ``T``, ``F``, ``1`` and ``0`` after ``=`` as
"true" and "false", but not ``0.05``); a phrase matches when its words occur in the text in
its order (an argument's value right after its name), and the match with
the most words (then the most letters) wins, so "Welch one-way ANOVA" names
Welch's F rather than the classical F (and "one-way ANOVA (Welch also
reported)" does not), ``t.test(y ~ g, var.equal = TRUE)`` names Student's
test rather than Welch's, and ``wilcox.test(exact = TRUE, correct = FALSE)``
is not ``exact = FALSE``.

A line names no test when it is ambiguous or unreadable:

- Negated names are not named. "not", "never", "no", "without", "sans",
  "excluding", "except", "instead of", "rather than", "as opposed to" and "in
  place of" govern the words after them to the end of the clause (``, ; : (
  ) [ ] { }``, a full stop, a question mark or "but"); "non" governs the next
  word; "... not used" (needed, applied, chosen, ...) governs its clause back
  to where it starts; ``~~struck~~`` text is governed too. A phrase that holds
  a negation itself ("One-way analysis of means (not assuming equal
  variances)", "Poisson regression without offset") is matched instead as a
  run of consecutive words of the whole line. So "classical one-way ANOVA (not
  Welch)" names the classical F and "Welch t-test (not Student's)" Welch's t.
- A line whose free words name two tests, neither phrase inside the other
  ("Spearman (Kendall's tau would also do)"), names none, as does one that
  names a test again apart from the words of the best match ("one-way ANOVA
  and Welch one-way ANOVA"), or whose sides of "or", "either", "vs" name
  different tests ("either Welch ANOVA or one-way ANOVA"; "Mann-Whitney U (or
  Wilcoxon rank sum) test" names one).
- A line holding letters outside ASCII that are not accented Latin letters or
  the Greek letters of statistics (a Cyrillic "о" in "nоt") names none.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

#: A negation, and where the clause it governs ends.
_NEGATION = re.compile(r"\b(?:not|never|no|without|sans|excluding|except|\w+n't|instead\s+of|rather\s+than"
                       r"|as\s+opposed\s+to|in\s+place\s+of)\b|~~", re.I)
_NON = re.compile(r"\bnon[\s-]*\w+", re.I)
_NOT_USED = re.compile(r"\b(?:not|never)\s+(?:used|needed|applied|required|chosen|appropriate|run|done|performed"
                       r"|considered|valid|suitable)\b", re.I)
#: Words that set one test against another: each side must name the same test.
_ALTERNATIVES = re.compile(r"\b(?:or|either|vs|versus)\b", re.I)
_CLAUSE_END = re.compile(r"[,;:()\[\]{}?]|\.(?:\s|$)|\bbut\b|~~", re.I)
#: Words of a phrase that make it a negated name itself, matched as a run of the line's words.
_NEGATING = frozenset({"not", "never", "no", "without", "sans", "excluding", "except", "instead", "rather", "non"})
_POSSESSIVE = re.compile(r"(\w)['\u2019`]s\b")
_NON_WORD = re.compile(r"[^a-z0-9]+")
#: Greek letters statistics is written with, by name (other letters outside ASCII are
#: unreadable), and typographic apostrophes as plain ones.
_READ = str.maketrans({"\u2019": "'", "\u2018": "'", "χ": " chi ", "τ": " tau ", "ρ": " rho ", "α": " alpha ",
                        "β": " beta ", "μ": " mu ", "σ": " sigma ", "θ": " theta ", "λ": " lambda ", "ε": " epsilon ",
                        "η": " eta "})
#: Words written several ways, read as one.
_SAME_WORD = {"oneway": "one way", "2": "two", "chisq": "chi square", "squared": "square", "versus": "vs",
              "samples": "sample", "proportions": "proportion", "variances": "variance", "tests": "test",
              "ranks": "rank", "means": "mean", "terms": "term", "differences": "difference", "changes": "change",
              "ttest": "t test", "utest": "u test", "errors": "error"}


_TRUE = re.compile(r"=\s*(?:T|1)\b(?!\.[0-9])")
_FALSE = re.compile(r"=\s*(?:F|0)\b(?!\.[0-9])")


def plain(text: str) -> str | None:
    """``text`` in ASCII as names are read (accents, combining marks and
    invisible characters dropped, Greek letters by name, ``χ²`` as "chisq"),
    or None when it holds letters this reading does not know."""
    text = text.replace("χ²", " chisq ").replace("χ2", " chisq ").translate(_READ)
    text = _FALSE.sub("= false", _TRUE.sub("= true", text))   # R's T and F, and 1 and 0, as argument values
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) not in ("Mn", "Cf"))
    if not text.isascii():
        if any(not c.isascii() and c.isalpha() for c in text):
            return None
        text = "".join(c if c.isascii() else " " for c in text)   # a dash or a sign parts words
    return text


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as names are compared (see the module docstring);
    none when it holds letters this reading does not know."""
    text = plain(text)
    if text is None:
        return ()
    text = _POSSESSIVE.sub(r"\1", text.lower())
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

    def matches(self, line: "Line") -> list[tuple[tuple[int, int], frozenset[str]]]:
        """((words, letters), words) of each phrase of this name that ``line``
        holds: its words in order among the line's free words (an argument's
        ``true`` or ``false`` right after its name), or for a phrase holding a
        negation, as a run of the line's words."""
        found = []
        for phrase in (self.label, *self.phrases):
            ws = _phrase_words(phrase)
            if ws & _NEGATING:
                held = line.has_run(_phrase_run(phrase))
            else:
                held = ws <= line.free and _in_order(line.free_sequence, _phrase_run(phrase))
            if ws and held:
                found.append(((len(ws), sum(map(len, ws))), ws))
        return found


#: Words that give an argument's value: in a phrase, they must follow its name at once.
_ARGUMENT_VALUES = frozenset({"true", "false"})


def _in_order(sequence: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """True when ``phrase``'s words occur in ``sequence`` in order, each
    ``true`` or ``false`` right after the word before it."""
    return _places(sequence, phrase) is not None


def _places(sequence: tuple[str, ...], phrase: tuple[str, ...]) -> list[int] | None:
    """Where ``phrase``'s words occur in ``sequence`` in order (the earliest
    place of each word, or word and value, is the one to take), or None."""
    pos, k, places = 0, 0, []
    while k < len(phrase):
        pair = k + 1 < len(phrase) and phrase[k + 1] in _ARGUMENT_VALUES
        unit = phrase[k:k + 2] if pair else phrase[k:k + 1]
        while pos < len(sequence) and sequence[pos:pos + len(unit)] != unit:
            pos += 1
        if pos >= len(sequence):
            return None
        places.extend(range(pos, pos + len(unit)))
        pos, k = pos + len(unit), k + len(unit)
    return places


@dataclass(frozen=True)
class Line:
    """A METHOD line's words: all of them in order, and those no negation
    governs, as a set and in order."""

    sequence: tuple[str, ...]
    free: frozenset[str]
    free_sequence: tuple[str, ...]

    def has_run(self, run: tuple[str, ...]) -> bool:
        """True when ``run`` occurs as consecutive words of the line."""
        n = len(run)
        return n > 0 and any(self.sequence[i:i + n] == run for i in range(len(self.sequence) - n + 1))


def free_text(text: str) -> str:
    """``text`` with what a negation governs blanked out (see the module
    docstring); linear in the length of ``text``."""
    governed = [(m.start(), m.end()) for m in _NON.finditer(text)]
    pos = 0
    while (neg := _NEGATION.search(text, pos)) is not None:
        end = _CLAUSE_END.search(text, neg.end())
        pos = end.start() if end else len(text)
        governed.append((neg.start(), pos))
    starts = [0] + [m.end() for m in _CLAUSE_END.finditer(text)]
    for m in _NOT_USED.finditer(text):
        governed.append((starts[bisect.bisect_right(starts, m.start()) - 1], m.end()))
    kept, pos = [], 0
    for start, end in sorted(governed):
        if start > pos:
            kept.append(text[pos:start])
        pos = max(pos, end)
    kept.append(text[pos:])
    return " ".join(kept)


@lru_cache(maxsize=4096)
def _phrase_words(phrase: str) -> frozenset[str]:
    return frozenset(words(phrase))


@lru_cache(maxsize=4096)
def _phrase_run(phrase: str) -> tuple[str, ...]:
    return words(phrase)


def identify(text: str, names, prefer=()) -> TestName | None:
    """The test of ``names`` (an iterable of :class:`TestName`) that ``text``
    names, or None when it names none, is ambiguous or unreadable (see the
    module docstring). On a tie the first of ``prefer`` wins, then the first
    of ``names``."""
    readable = plain(text or "")
    if readable is None:
        return None
    order = list(prefer) + [n for n in names if n not in prefer]
    free = free_text(readable)
    parts = [part for part in _ALTERNATIVES.split(free) if part.strip()]
    if len(parts) > 1 and len({_named(words(part), part, order) for part in parts} - {None}) > 1:
        return None
    return _named(words(readable), free, order)


def _named(sequence: tuple[str, ...], free: str, order: list[TestName]) -> TestName | None:
    """The test the words ``sequence`` name, ``free`` being their text with
    negations blanked out: the best match, unless a second test is named
    beside it."""
    if not sequence:
        return None
    free_sequence = words(free)
    line = Line(sequence, frozenset(free_sequence), free_sequence)
    found = [(name, phrases) for name in order if (phrases := name.matches(line))]
    if not found:
        return None
    best, phrases = max(found, key=lambda item: max(score for score, _ in item[1]))   # max keeps the first on a tie
    best_words = frozenset().union(*(ws for _, ws in phrases))
    for name, others in found:
        if name != best and any(not ws <= best_words for _, ws in others):
            return None   # a second test named beside the best, not inside its phrases
    rest = _rest(line, best)
    if rest is not None and any(name != best and name.matches(rest) for name, _ in found):
        return None   # a second test named again apart from the best ("ANOVA and Welch ANOVA")
    return best


def _rest(line: Line, best: TestName) -> Line | None:
    """``line`` without the free words the phrases of ``best`` match in it
    (of a phrase holding a negation, its words before the negation)."""
    used = set()
    for phrase in (best.label, *best.phrases):
        run = _phrase_run(phrase)
        negation = next((i for i, w in enumerate(run) if w in _NEGATING), None)
        if negation is None:
            used.update(_places(line.free_sequence, run) or ())
        elif line.has_run(run):   # a negated name the line holds: its words before the negation are free
            used.update(_places(line.free_sequence, run[:negation]) or ())
    rest = tuple(w for i, w in enumerate(line.free_sequence) if i not in used)
    return Line(rest, frozenset(rest), rest) if rest else None

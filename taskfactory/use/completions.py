"""Reading an answer out of a completion: the grammar the grader accepts.

The grader reads text that a policy under optimisation writes, so reading is
total, bounded and strict:

- :func:`parse_answer` takes any value and returns an :class:`Answer` or an
  :class:`Invalid` with its reason; it never raises for a known answer kind.
- Only the answer region is read (:func:`answer_region`): the last
  :data:`ANSWER_REGION` characters (trailing blanks aside; the prompt asks
  for the answer at the end), after the last ``</think>``, closed HTML
  comments dropped, split at every line break :meth:`str.splitlines` knows. Every pattern is linear in what it reads, a field's value longer
  than :data:`MAX_VALUE_CHARS` is not read, and at most
  :data:`MAX_JSON_OBJECTS` JSON objects are, from the end.
- Ambiguity is invalid, never credit: an answer block giving a field twice;
  anything after the answer that gives another (an answer line, a number or
  a decision; a yes, no, true or false after a yes/no answer), in digits or
  letters of any script, fullwidth or mathematical forms and invisible
  characters read as a reader sees them, or letters this grammar does not
  read; a closed-form last line against a labelled answer before it, or
  after one that does not read; a decision line naming both decisions,
  hedged, negated or withdrawn in a way this grammar does not read, or
  copying the template; a METHOD line with an answer label or a clause
  deciding otherwise, a DECISION line stating another p-value; METHOD lines
  before and after a block that differ; a number qualified in parentheses (``0.03 (or 0.3)``); an
  arithmetic expression; a JSON answer giving a field twice (``answer`` and
  ``final_answer``); a yes/no answer that is not a plain yes or no.

The grammar, field by field (labels are case-blind and may carry ``Final``,
``Corrected`` and the like before them; markdown, bullets and list numbers
around a label or a value are ignored):

- An answer block: the labelled lines of the kind (``P_VALUE:`` and
  ``DECISION:``, with an optional ``METHOD:``) as one run of lines, blank
  lines allowed between them; after a blank line, a METHOD line or a label
  the block already has starts a new block, and a label repeated without one
  makes the block ambiguous. A METHOD line alone after the block, only blank
  lines between, joins it.
- p-value: a number in [0, 1] (``0.0132``, ``.03``, ``3.1e-07``, ``1.2 x
  10^-5``, ``1.2×10⁻⁵``, ``1.2*10**-5``, ``$1.2 \\times 10^{-5}$``),
  optionally after ``p``, ``p-value`` or ``Pr(>|t|)`` and ``=``, ``:`` or
  ``≈``; an upper bound at most :data:`MAX_BOUND` (``p < 2.2e-16``, R's
  printout) is read as the bound. A trailing remark in parentheses without a
  number or a qualifier (``(two-sided)``) is dropped.
- decision: ``reject`` (also "rejected", "accept the alternative") or ``fail
  to reject`` ("do not reject", "cannot be rejected", "not rejected",
  "retain H0", "accept the null"), with other words around it; a negation
  before it in its clause ("not enough evidence to reject", "do not retain
  H0", "too large to reject"), a denial right after it ("rejecting H0 is not
  warranted", "reject = FALSE"), a clause of denial alone after a rejection
  ("reject (not)", "Reject H0: no") or a withdrawal anywhere ("wait",
  "nope", "just kidding", struck out) makes it invalid, as does rejecting
  the alternative. Apostrophes are read in every form (``can´t``, ``don′t``,
  ``do n't``). A p-value the line states must be the answer's, as rounded.
- yes/no: ``yes`` or ``no`` and nothing else but a final ``.`` or ``!``; a
  JSON ``true`` or ``false``.
- numbers of the closed-form kinds: one number as above, optionally assigned
  (``z = -2.45``); an interval as two numbers separated by ``,``, ``;``,
  ``to``, `` - `` or an en dash, optionally in brackets; a whole number as an
  integer, read exactly (``1068``, ``1.068e3``; not ``1,068``).
"""

from __future__ import annotations

import json
import math
import numbers
import re
import unicodedata
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, localcontext

from ..answers import FAIL, KINDS, REJECT
from ..testnames import plain

#: The answer is read from this many characters at the end of a completion.
ANSWER_REGION = 16_384
#: A field's value longer than this (after trimming) is not read as a number or decision.
MAX_VALUE_CHARS = 256
#: A METHOD line longer than this names no test; an answer keeps one character more of it.
MAX_METHOD_CHARS = 300
#: JSON objects read, the last ones of the answer region.
MAX_JSON_OBJECTS = 64
#: Exponent digits a number may have (1e-9999 is already 0 as a double).
MAX_EXPONENT_DIGITS = 4
#: An upper bound ``p < b`` is read as ``b`` only when ``b`` is at most this (R
#: prints such floors: ``< 2.2e-16``, ``<2e-16``, ``<1e-04``); a larger one is a range.
MAX_BOUND = 1e-4
#: The largest whole number an answer may give.
MAX_INTEGER = 10**18


@dataclass(frozen=True)
class Answer:
    """What a completion answers: the fields of its kind (``p_value`` and
    ``decision``; ``estimate``; ``low`` and ``high``; ``integer``;
    ``yes_no``) and the METHOD line, when there is one."""

    values: dict
    method: str | None = None


@dataclass(frozen=True)
class Invalid:
    """A completion without a usable answer, and why."""

    reason: str


def _shown(text: str, width: int = 60) -> str:
    """``text`` trimmed and shortened for a reason."""
    text = text.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def _unread(text, what: str) -> Invalid | None:
    """Invalid when ``text`` is not text, or longer than :data:`MAX_VALUE_CHARS`, to be read as ``what``."""
    if not isinstance(text, str):
        return Invalid(f"{type(text).__name__} is not {what}")
    size = len(text.strip())
    return Invalid(f"a value of {size} characters is not {what}") if size > MAX_VALUE_CHARS else None


# -- numbers ------------------------------------------------------------------------

_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
#: Minus and dash signs read as "-", multiplication signs as "x", invisible characters dropped.
_PLAIN = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                        "\ufe63": "-", "\uff0d": "-", "×": "x", "·": "x", "⋅": "x", "∙": "x", "\u200b": None,
                        "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None})
_PYTHON_POWER = re.compile(r"(?<=[0-9])\s*\*\*\s*(?=[-+({0-9])")
_LATEX_TIMES = re.compile(r"\\(?:times|cdot)(?![a-z])")
_LATEX_WRAP = re.compile(r"\\(?:boxed|mathbf|textbf|mathrm|text|bm)\s*\{")
#: Markup a value may be wrapped in (besides white space): markdown emphasis and code, LaTeX dollars.
_WRAPPING = "*_`$"
_EXP = rf"[+-]?[0-9]{{1,{MAX_EXPONENT_DIGITS}}}"


def _ten_power(group: str) -> str:
    """``10^k``, ``10^{k}`` or ``10^(k)``, the exponent in ``group``."""
    return rf"10\s*\^\s*(?:\{{\s*(?P<{group}>{_EXP})\s*\}}|\(\s*(?P<{group}_p>{_EXP})\s*\)|(?P<{group}_b>{_EXP}))"


_NUMBER = re.compile(
    r"(?P<sign>[+-]?)\s*(?:(?P<m>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    rf"(?:\s*e\s*(?P<e1>{_EXP})|\s*(?:x|\*)\s*{_ten_power('e2')})?|{_ten_power('e3')})")
_EXPONENT_GROUPS = ("e1", "e2", "e2_p", "e2_b", "e3", "e3_p", "e3_b")
_DIGITS = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")
_OPERATOR = re.compile(r"[x*/^+]")
_LONG_EXPONENT = re.compile(rf"(?:e|\^)\s*[{{(]?\s*[+-]?[0-9]{{{MAX_EXPONENT_DIGITS + 1}}}")
#: Words that make a remark in parentheses qualify the number before it.
_QUALIFIER = re.compile(r"\b(?:or|at|most|least|less|lower|higher|more|greater|smaller|larger|above|below|under"
                        r"|over|about|around|approx\w*|roughly|nearly|almost|circa|uncertain|unsure|maybe|perhaps"
                        r"|possibly|probably|likely|guess\w*|estimated|percent|zero|one|two|three|four|five|six"
                        r"|seven|eight|nine|ten|half|quarter|third|wrong|incorrect|not|if|tentative\w*|placeholder"
                        r"|dummy|unverified|unchecked)\b", re.I)
_SIDED = re.compile(r"\b(?:one|two|1|2)[\s-]*(?:sided|tailed)\b", re.I)


def _trim(value: str) -> str:
    """``value`` without white space and markdown or LaTeX wrapping characters around it."""
    while value != (trimmed := value.strip().strip(_WRAPPING)):
        value = trimmed
    return value


def _unwrap(value: str) -> str:
    """``value`` without the markup around it (markdown emphasis and code,
    LaTeX dollars, ``\\(...\\)`` and ``\\boxed{...}``) and a final ``.``, ``,``
    or ``;``."""
    value = _trim(value)
    if value.startswith(("\\(", "\\[")):
        value = value[2:]
    if value.endswith(("\\)", "\\]")):
        value = value[:-2]
    value = _trim(value)
    wrap = _LATEX_WRAP.match(value)
    if wrap and value.endswith("}"):
        value = _trim(value[wrap.end():-1])
    return _trim(value.rstrip(".,;"))


def _plain_number_text(value: str) -> str:
    """A number's text with markdown, LaTeX and unicode signs written plainly:
    superscript exponents as ``^``, ``**`` between digits as ``^``."""
    value = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT), value.translate(_PLAIN))
    value = _LATEX_TIMES.sub(" x ", _PYTHON_POWER.sub("^", value))
    return _unwrap(value)


def _drop_remark(value: str) -> str | Invalid:
    """``value`` without a trailing remark in parentheses (``(two-sided)``);
    Invalid when the parentheses hold a number or qualify the one before
    (``0.03 (or 0.3)``, ``0.03 (or lower)``). Parentheses right after ``^``
    belong to an exponent."""
    if not value.endswith(")"):
        return value
    start = value.rfind("(")
    if start <= 0 or value[:start].rstrip().endswith("^"):
        return value
    remark = _SIDED.sub(" ", value[start + 1:-1])
    if any(c.isnumeric() for c in remark):
        return Invalid("gives a second number in parentheses")
    if _QUALIFIER.search(remark):
        return Invalid("qualifies the number in parentheses")
    return _unwrap(value[:start])


def _read_number(value: str, text: str) -> tuple[str, str, int] | Invalid:
    """(sign, mantissa, exponent) of the number ``value`` (plain text, see
    :func:`_plain_number_text`) writes; a reason quotes ``text``, what the
    completion wrote."""
    value = _drop_remark(value)
    if isinstance(value, Invalid):
        return Invalid(f"'{_shown(text)}' {value.reason}")
    if not value:
        return Invalid("the value is empty")
    if "%" in value:
        return Invalid(f"'{_shown(text)}' is a percentage")
    lowered = value.lower()
    m = _NUMBER.fullmatch(lowered)
    if not m:
        return Invalid(f"'{_shown(text)}' {_why_not_a_number(lowered)}")
    exponent = next((m.group(g) for g in _EXPONENT_GROUPS if m.group(g)), "0")
    return m.group("sign"), m.group("m") or "1", int(exponent)


def _why_not_a_number(lowered: str) -> str:
    if _LONG_EXPONENT.search(lowered):
        return f"has an exponent of more than {MAX_EXPONENT_DIGITS} digits"
    if len(_DIGITS.findall(lowered)) > 1:
        if _OPERATOR.search(lowered):
            return "is an arithmetic expression, not a number"
        return "is several numbers or a range"
    return "is not a number"


def _number(value: str, text: str) -> float | Invalid:
    read = _read_number(value, text)
    if isinstance(read, Invalid):
        return read
    sign, mantissa, exponent = read
    x = float(f"{mantissa}e{exponent}")   # never raises: 1e9999 is inf, 1e-9999 is 0
    if not math.isfinite(x):
        return Invalid(f"'{_shown(text)}' is out of range")
    return -x if sign == "-" else x


_ASSIGNED = re.compile(r"[a-z]{1,12}\s*(?:=|≈|\\approx)\s*", re.I)


def _value_text(text: str) -> str:
    """A closed-form answer's number written plainly, a variable it is
    assigned to (``z = -2.45``, ``$n = 1068$``) dropped."""
    value = _plain_number_text(text)
    assigned = _ASSIGNED.match(value)
    return _unwrap(value[assigned.end():]) if assigned else value


def parse_number(text: str) -> float | Invalid:
    """One real number written as people write them (``1.2e-05``, ``.03``,
    ``1.2 x 10^-5``, ``1.2×10⁻⁵``, ``-3.5``, ``z = -3.5``); see the module docstring."""
    return _unread(text, "a number") or _number(_value_text(text), text)


def parse_integer(text: str) -> int | Invalid:
    """A whole number, read exactly (``1068``, ``1.068e3``); ``1067.9999999999999999``
    is not one, whatever double it rounds to."""
    read = _unread(text, "a whole number") or _read_number(_value_text(text), text)
    if isinstance(read, Invalid):
        return read
    sign, mantissa, exponent = read
    with localcontext(prec=MAX_VALUE_CHARS + 1):   # every digit the value may hold, none rounded away
        value = Decimal(mantissa).scaleb(exponent)
        whole = value == value.to_integral_value()
    if not whole:
        return Invalid(f"'{_shown(text)}' is not a whole number")
    if value > MAX_INTEGER:
        return Invalid(f"'{_shown(text)}' is out of range")
    return -int(value) if sign == "-" else int(value)


_P_LABEL = re.compile(r"(?:pr?\s{0,3}\(\s{0,3}>\s{0,3}\|?\w{1,12}\|?\s{0,3}\)|p(?:[ ._-]{0,3}values?)?)\s*", re.I)
_RELATION = re.compile(r"(<=|>=|==|≤|≥|<|>|=|≈|~|:|\\approx|\\sim|\\leq?|\\geq?|\\lt|\\gt)\s*")
_UPPER = ("<", "<=", "≤", "\\le", "\\leq", "\\lt")
_LOWER = (">", ">=", "≥", "\\ge", "\\geq", "\\gt")


def parse_p_value(text: str) -> float | Invalid:
    """A p-value: a number in [0, 1], optionally after ``p``, ``p-value`` and
    ``=``, or an upper bound of at most :data:`MAX_BOUND` (``p < 2.2e-16``,
    R's printout, read as the bound). A lower bound (``p > 0.05``), a larger
    upper bound (``p < 0.05``), a percentage, a range or a number above 1 is
    not a p-value."""
    unread = _unread(text, "a p-value")
    if unread:
        return unread
    value = _plain_number_text(text)
    label = _P_LABEL.match(value)
    value = _unwrap(value[label.end():]) if label else value
    relation = None
    while (rel := _RELATION.match(value)) is not None and relation in (None, "=", ":", "=="):
        relation, value = rel.group(1), _unwrap(value[rel.end():])
    if relation in _LOWER:
        return Invalid(f"'{_shown(text)}' is a lower bound, not a p-value")
    x = _number(value, text)
    if isinstance(x, Invalid):
        return x
    if not 0.0 <= x <= 1.0:
        return Invalid(f"p-value {x:g} is outside [0, 1]")
    if relation in _UPPER and x > MAX_BOUND:
        return Invalid(f"'{_shown(text)}' is an upper bound above {MAX_BOUND:g}, not a p-value")
    return x


# -- decisions and yes/no ----------------------------------------------------------------

#: Decisions named in a clause's words (lower case, letters and digits only),
#: longest phrase first at each place, so "fail to reject" is not also a "reject".
_DECISION = re.compile(
    r"\b(?:(?P<fail>(?:fail(?:s|ed|ing|ure)? to|do not|does not|did not|dont|doesnt|didnt|cannot|can not|cant"
    r"|could not|couldnt|unable to|not to|(?:insufficient|not enough|not sufficient|no|little|lack of) evidence to"
    r"|not) reject(?:ed)?|(?:cannot|can not|cant|could not|couldnt|is not|was not|isnt|wasnt|not) be(?:en)? rejected"
    r"|(?:is|was) not rejected|retain(?:s|ed|ing)?|accept(?:s|ed|ing)?(?: the)? (?:null|h0|h 0|ho))"
    r"|(?P<alternative>reject(?:s|ed|ing)?(?: the)? (?:alternative|h1|h 1|ha|h a))"
    r"|(?P<reject>reject(?:s|ed|ing)?|accept(?:s|ed|ing)?(?: the)? (?:alternative|h1|h 1|ha|h a)))\b")
_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably|likely|unlikely|might|may|unsure|unclear"
                    r"|uncertain|whether|undecided|tentative|tentatively|think|guess|suppose|seems?|if|marginal"
                    r"|marginally|borderline)\b")
#: Words that negate a decision when they come before it in its clause.
_NEGATION = re.compile(r"\b(?:not|no|non|never|nor|neither|none|nothing|cannot|cant|dont|doesnt|didnt|isnt|arent"
                       r"|wasnt|werent|wont|wouldnt|shouldnt|couldnt|hardly|lack|lacking|failure|fail|fails|failed"
                       r"|impossible|unable|insufficient|without|instead|too)\b")
#: Words that withdraw or refuse a decision wherever they stand in its line.
_WITHDRAWAL = re.compile(r"\b(?:wait|nope|jk|mistake|mistaken|wrong|incorrect|premature|unwarranted|unjustified"
                         r"|decline|declines|refuse|refuses|refrain|avoid|avoiding|short of|hold off|too weak"
                         r"|scratch that|actually|kidding|joking|joke|retract\w*|never ?mind|disregard\w*|ignore"
                         r"|cancel\w*|revoke\w*|undo|undone|erroneous\w*|incorrectly|unjustifiabl\w*|unsupported"
                         r"|unfounded|overstat\w*|lacking|absent)\b")
#: A denial right after a decision, within :data:`_DENIAL_WORDS` words of it
#: ("rejecting H0 is not warranted", "reject H0 cannot be justified", "reject = FALSE").
_DENIAL = re.compile(r"\b(?:(?:is|are|was|were|be|being)\s+not|cannot|cant|isnt|arent|wasnt|werent|wont|wouldnt"
                     r"|shouldnt|couldnt|false|untrue)\b")
_DENIAL_WORDS = 3
#: A clause after a rejection made of these words alone denies it ("reject (not)", "Reject H0: no").
_DENYING = frozenset({"not", "no", "nope", "nah", "never", "false", "untrue", "n", "hardly", "mind"})
#: Apostrophes as people and tokenisers write them, read as ``'`` (``don´t``,
#: ``don′t``); invisible characters part words (``do\u200bnot``).
_WORD_MARKS = str.maketrans({"\u00b4": "'", "\u2032": "'", "\u02bc": "'", "\u2019": "'", "\u2018": "'",
                             "`": "'", "\uff07": "'", "\u200b": " ", "\u200c": " ", "\u200d": " ",
                             "\u2060": " ", "\ufeff": " ", "\u00ad": ""})
#: A contraction split by a tokeniser (``do n't``, ``ca n't``), joined again.
_SPLIT_NOT = re.compile(r"\b(\w+)\s+n't\b")
#: Where a clause of a decision line ends, for what a negation governs.
_DECISION_CLAUSE = re.compile(r"[,;:()\[\]\u2013\u2014]|\s-\s|\.(?:\s|$)")
#: Markup that strikes a decision out.
_STRUCK = ("~~", "<del>", "<s>", "<strike>")
_TEMPLATE = ("reject fail to reject", "fail to reject reject")


def _words_of(text: str) -> str | None:
    """``text`` as lower-case ASCII words separated by single spaces; None when
    it holds letters this reading does not know (see :func:`taskfactory.testnames.plain`)."""
    text = plain(text.translate(_WORD_MARKS).translate(_PLAIN))
    if text is None:
        return None
    text = _SPLIT_NOT.sub(r"\1n't", text.lower())
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.replace("'", "")).split())


def _decisions_named(text: str) -> tuple[set[str], bool]:
    """(the decisions ``text`` names, clause by clause; whether a negation
    comes before one in its clause, or a denial after it, see :data:`_DENIAL`)."""
    named, negated = set(), False
    clauses = [_words_of(clause) or "" for clause in _DECISION_CLAUSE.split(text)]
    for k, words in enumerate(clauses):
        for m in _DECISION.finditer(words):
            named.add(m.lastgroup)
            after = " ".join(words[m.end():].split()[:_DENIAL_WORDS])
            following = next((c for c in clauses[k + 1:] if c), "") if m.lastgroup == "reject" else ""
            negated = (negated or _NEGATION.search(words, 0, m.start()) is not None
                       or _DENIAL.search(after) is not None
                       or (following != "" and set(following.split()) <= _DENYING))
    return named, negated


def parse_decision(text: str) -> str | Invalid:
    """``reject`` or ``fail to reject`` (also "do not reject", "retain H0",
    "reject the null hypothesis"); see the module docstring for what is
    invalid."""
    unread = _unread(text, "a decision")
    if unread:
        return unread
    shown = _shown(text)
    phrase = _words_of(text)
    if phrase is None:
        return Invalid(f"decision '{shown}' holds letters this grader does not read")
    if phrase in _TEMPLATE:
        return Invalid(f"decision '{shown}' is the template's choice, not a decision")
    named, negated = _decisions_named(text)
    if not named:
        return Invalid(f"decision '{shown}' is neither reject nor fail to reject")
    if _HEDGE.search(phrase) or "?" in text:
        return Invalid(f"decision '{shown}' is hedged")
    if "alternative" in named:
        return Invalid(f"decision '{shown}' rejects the alternative, not the null hypothesis")
    if len(named) > 1:
        return Invalid(f"decision '{shown}' names both reject and fail to reject")
    if negated or _WITHDRAWAL.search(phrase) or any(mark in text.lower() for mark in _STRUCK):
        return Invalid(f"decision '{shown}' negates or withdraws it in words this grader does not read")
    return FAIL if "fail" in named else REJECT


def parse_yes_no(text: str) -> bool | Invalid:
    """``yes`` or ``no`` on its own (markdown and a final ``.`` or ``!`` aside)."""
    unread = _unread(text, "yes or no")
    if unread:
        return unread
    value = _trim(_unwrap(text).rstrip(".!")).lower()
    if value in ("yes", "no"):
        return value == "yes"
    return Invalid(f"'{_shown(text)}' is not a plain yes or no")


# -- answer blocks ---------------------------------------------------------------------

#: The labels a line of an answer block may carry (lower case; spaces,
#: underscores and hyphens equivalent), by what the line holds.
_LABELS = {
    "method": ("method", "method used", "test", "test used"),
    "p_value": ("p_value", "p value", "pvalue", "p"),
    "decision": ("decision",),
    "estimate": ("estimate",),
    "low": ("lower", "low", "lower bound"),
    "high": ("upper", "high", "upper bound"),
    "answer": ("answer",),
    "count": ("count",),
}
#: Per answer kind: (label, field of the answer) of the lines of its block.
_BLOCK = {
    "p_value": (("p_value", "p_value"), ("decision", "decision")),
    "estimate": (("estimate", "estimate"),),
    "interval": (("low", "low"), ("high", "high")),
    "integer": (("answer", "integer"),),
    "count": (("count", "integer"),),
    "yes_no": (("answer", "yes_no"),),
}
_LABEL_SPACE = re.compile(r"[\s_-]+")


def _label(text: str) -> str:
    return _LABEL_SPACE.sub(" ", text.strip().lower())


#: Per answer kind: {label as :func:`_label` writes it: the answer field (or ``method``) it gives}.
_FIELD_OF = {kind: {_label(lbl): dict(block).get(key, key) for key in ("method", *dict(block))
                    for lbl in _LABELS[key]} for kind, block in _BLOCK.items()}
#: A labelled line: ``LABEL: value`` with markdown, a bullet or a list number
#: or letter before it (labels are short, so matching stays linear in the
#: line's length).
_LINE = re.compile(r"^[\s>*#_`\u2022\u00b7\u25aa\u2023\u25e6-]{0,8}(?:(?:[0-9]{1,2}|[a-z])[.)]\s{1,3})?[\s*_`]{0,4}"
                   r"(?P<label>[a-z][a-z _-]{0,40}?)[\s*_`]{0,4}[:=\uff1a\u2248](?P<value>.*)$", re.I)
#: Words a label may carry before it and still be the label (``Final ANSWER:``, ``Corrected P_VALUE:``).
_QUALIFIED = re.compile(r"^(?:(?:final|corrected|revised|updated|actual|new|my|correct|real|true) ){1,2}")
#: A line that neither answers nor ends a block: blank, or markup only (a code fence, a rule).
_SPACER = re.compile(r"^[\s`*_~=#>|-]*$")
#: Line breaks: those :meth:`str.splitlines` knows (a renderer shows a line
#: separator or a form feed as a new line too).
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


@dataclass
class _Run:
    """Answer lines in one run: {field: [values]} and the lines it spans."""

    fields: dict = field(default_factory=dict)
    first: int = 0
    last: int = 0

    def add(self, name: str, value: str, line: int) -> None:
        if not self.fields:
            self.first = line
        self.fields.setdefault(name, []).append(value)
        self.last = line

    def method_only(self) -> bool:
        return list(self.fields) == ["method"] and len(self.fields["method"]) == 1


def _field_named(label: str, kind: str) -> str | None:
    """The answer field (or ``method``) a line's ``label`` gives for ``kind``, or None."""
    label, field_of = _label(label), _FIELD_OF[kind]
    qualified = _QUALIFIED.match(label)
    return field_of.get(label) or (field_of.get(label[qualified.end():]) if qualified else None)


def _runs(lines: list[str], kind: str) -> list[_Run]:
    """The runs of answer lines of ``kind`` (see the module docstring)."""
    runs: list[_Run] = []
    current, gap = None, False
    for i, line in enumerate(lines):
        if not line or line.isspace():
            gap = True
            continue
        m = _LINE.match(line)
        name = _field_named(m.group("label"), kind) if m else None
        if name is None:
            if _SPACER.match(line):
                gap = True
            else:
                current = None
            continue
        if current is None or (gap and (name == "method" or name in current.fields)):
            current = _Run()
            runs.append(current)
        current.add(name, _trim(m.group("value")), i)
        gap = False
    return runs


def _block_answer(lines: list[str], runs: list[_Run], fields: tuple[str, ...]) -> tuple[int, dict | Invalid] | None:
    """(the last line, {field: text} or Invalid) of the last complete run; a
    lone METHOD line after it, only blank lines between, joins a run without
    one, unless a lone METHOD line before the run says otherwise. None
    without a complete run."""
    complete = [i for i, run in enumerate(runs) if all(f in run.fields for f in fields)]
    if not complete:
        return None
    i = complete[-1]
    run = runs[i]
    twice = next((name for name, values in run.fields.items() if len(values) > 1), None)
    if twice:
        return run.last, Invalid(f"the answer block gives {twice.upper()} twice")
    found = {name: values[0] for name, values in run.fields.items()}
    after = runs[i + 1] if i + 1 < len(runs) else None
    if "method" not in found and after is not None and after.method_only() and \
            all(_SPACER.match(line) for line in lines[run.last + 1:after.first]):
        before = runs[i - 1] if i > 0 else None
        if before is not None and before.method_only() and before.fields["method"] != after.fields["method"]:
            return after.last, Invalid("METHOD lines before and after the answer block differ")
        found["method"] = after.fields["method"][0]
        return after.last, found
    return run.last, found


_FIELD_PARSERS = {"p_value": parse_p_value, "decision": parse_decision, "estimate": parse_number,
                  "low": parse_number, "high": parse_number, "integer": parse_integer, "yes_no": parse_yes_no}


def _field_text(name: str, value) -> str | Invalid:
    """The text a field's value is read from: text as it is, a number as
    Python writes it, a boolean only as a yes/no."""
    if isinstance(value, bool):
        return ("yes" if value else "no") if name == "yes_no" else Invalid(f"{name} is {value!r}")
    if isinstance(value, numbers.Integral):
        return str(value) if int(value).bit_length() <= 64 else Invalid(f"{name} is too large a whole number")
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return value if value.strip() else Invalid(f"{name} is empty")
    return Invalid(f"{name} is a {type(value).__name__}, not text or a number")


def _fields_answer(raw: Mapping, fields: tuple[str, ...]) -> Answer | Invalid:
    values = {}
    for f in fields:
        v = raw.get(f)
        if v is None:
            return Invalid(f"the answer has no {f}")
        text = _field_text(f, v)
        parsed = text if isinstance(text, Invalid) else _FIELD_PARSERS[f](text)
        if isinstance(parsed, Invalid):
            return parsed
        values[f] = parsed
    method = raw.get("method")
    if method is not None and not isinstance(method, str):
        return Invalid(f"method is a {type(method).__name__}, not text")
    return Answer(values, method[: MAX_METHOD_CHARS + 1] if method is not None else None)


def gold_fields(kind: str) -> tuple[str, ...]:
    """The answer fields of ``kind`` (ValueError for an unknown kind)."""
    spec = KINDS.get(kind)
    if spec is None:
        raise ValueError(f"unknown answer kind {kind!r}; known: {', '.join(KINDS)}")
    return tuple(f for f in spec.fields if f != "kind")


def _key_field(key, kind: str) -> str:
    """The field a JSON key names for ``kind``: read as a block's label is
    (``P-value`` and ``p`` as ``p_value``, ``answer`` as the field of
    ``kind``'s block, ``final_answer`` too), any other key lower-cased with
    ``_`` for spaces and hyphens."""
    label = _label(str(key))
    return _field_named(label, kind) or label.replace(" ", "_")


def _named_fields(pairs, kind: str) -> dict | Invalid:
    """{field: value} of ``pairs``, each key read by :func:`_key_field`;
    Invalid when two keys give one answer field."""
    answer_fields = ("method", *gold_fields(kind))
    out: dict = {}
    for key, value in pairs:
        name = _key_field(key, kind)
        if name in out and name in answer_fields:
            return Invalid(f"the answer gives {name} twice")
        out[name] = value
    return out


def answer_from_fields(raw: Mapping, kind: str = "p_value") -> Answer | Invalid:
    """An answer given as fields (a JSON object, a predictions row): those of
    ``kind`` (``p_value`` and ``decision``; ``estimate``; ``low`` and
    ``high``; ``integer`` or ``answer``/``count``; ``yes_no`` or ``answer``)
    and an optional ``method``. A field given twice (``p-value`` beside
    ``p_value``, ``answer`` beside ``yes_no``) is ambiguous: invalid."""
    named = _named_fields(raw.items(), kind)
    return named if isinstance(named, Invalid) else _fields_answer(named, gold_fields(kind))


def gives_fields(raw: Mapping, kind: str) -> bool:
    """Whether ``raw`` (a predictions row) has a key that names a field of ``kind``'s answer."""
    answer_fields = gold_fields(kind)
    return any(_key_field(key, kind) in answer_fields for key in raw)


_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


def _json_answer(text: str, kind: str, fields: tuple[str, ...]) -> tuple[int, dict | Invalid] | None:
    """(the offset it ends at, {field: value} or Invalid) of the last flat JSON
    object of ``text`` holding every field of ``kind``, among the last
    :data:`MAX_JSON_OBJECTS` that hold a key; None without one."""
    last = deque((m for m in _FLAT_OBJECT.finditer(text) if '":' in m.group(0) or '" :' in m.group(0)),
                 maxlen=MAX_JSON_OBJECTS)
    for m in reversed(last):
        try:
            pairs = json.loads(m.group(0), object_pairs_hook=lambda items: items)
        except (ValueError, RecursionError):
            continue
        if all(f in {_key_field(key, kind) for key, _ in pairs} for f in fields):
            return m.end(), _named_fields(pairs, kind)
    return None


def _without_comments(text: str) -> str:
    """``text`` without HTML comments (``<!-- ... -->``); an unclosed ``<!--``
    hides nothing (in inline code, a renderer shows what follows it)."""
    out, pos = [], 0
    while (start := text.find("<!--", pos)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        out.append(text[pos:start])
        pos = end + 3
    out.append(text[pos:])
    return "".join(out)


#: The end of a completion the answer region is cut from, before trailing blanks are dropped.
_TAIL = 4 * ANSWER_REGION
_THINK_END = re.compile(r"</think(?:ing)?>", re.I)
_ANSWER_TAG = re.compile(r"</?(?:answer|final_answer|final|response|output|solution)>", re.I)
#: Hyphens read as ``-`` (models write "p‑value" with U+2011).
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})
#: What may not follow an answer, by kind (in text as :func:`_as_shown` gives it):
#: a digit of any script or a decision after a p-value; a yes or a no (or
#: true, false ...) after a yes/no answer; a digit after any other.
_ANY_DIGIT = re.compile(r"\d")
_GIVES_AGAIN = {"p_value": re.compile(r"\d|\b(?:reject|retain|accept(?:s|ed|ing)?\b)"),
                "yes_no": re.compile(r"(?<![a-z])(?:yes|no|yeah|yep|yup|nope|nah|true|false)(?![a-z])")}


def answer_region(text: str) -> list[str]:
    """The lines an answer is read from: of the last :data:`ANSWER_REGION`
    characters of ``text`` (trailing blanks within its last
    4 x :data:`ANSWER_REGION` aside, the first, cut, line dropped), what
    follows the last ``</think>`` or ``</thinking>``, without HTML comments
    and ``<answer>`` tags, split at every line break (:data:`_LINE_BREAK`)."""
    tail = text[-_TAIL:].rstrip()
    region = tail[-ANSWER_REGION:]
    if len(tail) > ANSWER_REGION or len(text) > _TAIL:
        cut = _LINE_BREAK.search(region)
        region = region[cut.end():] if cut else ""
    think = None
    for think in _THINK_END.finditer(region):
        pass
    if think is not None:
        region = region[think.end():]
    region = _ANSWER_TAG.sub("", _without_comments(region)).replace("\\_", "_").translate(_HYPHENS)
    return _LINE_BREAK.split(region)


def parse_answer(text, kind: str = "p_value") -> Answer | Invalid:
    """The answer a completion gives for a task of answer ``kind``.

    p-value tasks: the last complete METHOD / P_VALUE / DECISION block (METHOD
    optional), or the last JSON object with ``p_value`` and ``decision``,
    whichever ends later. Closed-form kinds: the last non-empty line first
    (bare), then the last labelled block or JSON object. Only the answer
    region is read (:func:`answer_region`), and nothing after the answer may
    give another. Returns :class:`Answer` or :class:`Invalid`; never raises
    for a known ``kind``.
    """
    fields = gold_fields(kind)
    if not isinstance(text, str):
        return Invalid(f"the completion is not text (got {type(text).__name__})")
    if len(text) <= _TAIL and not text.strip():
        return Invalid("the completion is empty")
    lines = answer_region(text)
    runs = _runs(lines, kind)
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line) + 1)
    region_text = "\n".join(lines)
    candidates = []
    block = _block_answer(lines, runs, fields)
    if block is not None:
        candidates.append((ends[block[0] + 1] - 1, block[1]))
    json_found = _json_answer(region_text, kind, fields)
    if json_found is not None:
        candidates.append(json_found)
    latest = max(candidates, key=lambda item: item[0]) if candidates else None
    if kind != "p_value":
        last = next((ln for ln in reversed(lines) if not _SPACER.match(ln)), "")
        labelled = _LINE.match(last)
        bare = None if labelled and _field_named(labelled.group("label"), kind) else _bare_answer(last, kind, fields)
        if isinstance(bare, Answer):
            return _agreeing(bare, latest, fields)
    if latest is None:
        want = " / ".join(_LABELS[label][0].upper() for label, _ in _BLOCK[kind])
        cut = len(text) > ANSWER_REGION
        return Invalid(f"no complete {want} answer block{f' in the last {ANSWER_REGION} characters' if cut else ''}")
    end, found = latest
    if isinstance(found, Invalid):
        return found
    answer = _after_the_answer(region_text, ends, end, runs, kind) or _fields_answer(found, fields)
    if kind == "p_value" and isinstance(answer, Answer):
        return _said_again(answer, found) or answer
    return answer


def _agreeing(bare: Answer, labelled, fields: tuple[str, ...]) -> Answer | Invalid:
    """``bare`` (the last line's answer), unless a labelled answer or a JSON
    one before it gives another, or one that does not read."""
    if labelled is None:
        return bare
    earlier = labelled[1] if isinstance(labelled[1], Invalid) else _fields_answer(labelled[1], fields)
    if isinstance(earlier, Invalid):
        return Invalid("the last line gives an answer, and the labelled answer before it does not read as one")
    if earlier.values != bare.values:
        return Invalid("the last line and the labelled answer before it give different answers")
    return bare


def _after_the_answer(region_text: str, ends: list[int], end: int, runs: list[_Run], kind: str) -> Invalid | None:
    """Invalid when what follows the answer, which ends at offset ``end``,
    gives part of another: a run of answer lines, or text holding a number or
    a decision (a yes or no, for yes/no), in any script and however it is
    disguised (:func:`_as_shown`); or letters this grader does not read."""
    if any(ends[run.first] >= end for run in runs):
        return Invalid("part of another answer follows the last complete one")
    rest = region_text[end:]
    shown = _as_shown(rest)
    if plain(shown) is None:
        return Invalid("what follows the answer holds letters this grader does not read")
    found = _GIVES_AGAIN.get(kind, _ANY_DIGIT).search(shown)
    if found:
        line = rest.split("\n")[shown.count("\n", 0, found.start())]
        return Invalid(f"what follows the answer gives another ('{_shown(line)}')")
    return None


def _as_shown(text: str) -> str:
    """``text`` lower-cased as a reader sees it: compatibility forms as their
    letters and digits (fullwidth, mathematical, superscript), accents and
    invisible characters (zero-width spaces, soft hyphens, direction marks)
    dropped."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Mn")).lower()


#: What a METHOD line may not hold besides the test: a line label of the p-value answer.
_ANSWER_LABEL = re.compile(r"\b(?:p[ _-]?values?|decision)\s*:", re.I)
#: Words a decision clause may hold besides the decision (``reject H0``, ``we fail to reject the null``).
_DECISION_FILLER = frozenset({"h0", "ho", "h", "0", "the", "null", "hypothesis", "we", "i", "so", "thus", "hence",
                              "therefore", "decision", "result", "conclusion"})
#: A p-value a DECISION line states: after ``p-value`` or an adjusted p (``Holm-adjusted p``,
#: ``p_adj``), or after ``p`` or ``q`` and ``=``, ``:`` or ``≈``.
_STATED_P = re.compile(r"(?<![a-z0-9])(?:(?:p[ ._-]?values?|p[ ._-]?adj\w*|adjusted[ ._-]?p(?:[ ._-]?values?)?)"
                       r"\s*(?:=|:|≈|\bis\b|\bof\b)?|(?:p|q)\s*(?:=|:|≈))\s*"
                       r"(?P<value>[+-]?\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:\s*e\s*[+-]?[0-9]{1,4})?)(?P<percent>\s*%)?")


def _said_again(answer: Answer, found: Mapping) -> Invalid | None:
    """Invalid when the METHOD or DECISION line of a p-value answer gives
    another answer: a METHOD line with a P_VALUE or DECISION label, or a
    clause of its own deciding otherwise (``Welch (p = 0.3, fail to
    reject)``; a test of an assumption it reports, ``Levene rejected equal
    variances``, is not one); a DECISION line stating a p-value other than
    the answer's, as rounded to the digits written."""
    decision = answer.values["decision"]
    method = found.get("method")
    if isinstance(method, str):
        if _ANSWER_LABEL.search(method):
            return Invalid(f"the METHOD line '{_shown(method)}' holds another answer line")
        if _decided_otherwise(method, decision):
            return Invalid(f"the METHOD line '{_shown(method)}' gives another decision")
    stated = _as_shown(str(found["decision"]))
    for m in _STATED_P.finditer(stated):
        if _other_p_value(m.group("value"), bool(m.group("percent")), answer.values["p_value"]):
            return Invalid(f"decision '{_shown(str(found['decision']))}' gives another p-value")
    return None


def _decided_otherwise(text: str, decision: str) -> bool:
    """Whether a clause of ``text`` is a decision other than ``decision``
    (the decision's words and :data:`_DECISION_FILLER` alone)."""
    for clause in _DECISION_CLAUSE.split(text):
        words = _words_of(clause) or ""
        m = _DECISION.search(words)
        rest = (words[:m.start()] + " " + words[m.end():]).split() if m else []
        if m and set(rest) <= _DECISION_FILLER and m.lastgroup != ("fail" if decision == FAIL else "reject"):
            return True
    return False


def _other_p_value(value: str, percent: bool, p_value: float) -> bool:
    """Whether the number ``value`` (a percentage with ``percent``) is not
    ``p_value`` rounded to the digits written."""
    read = _read_number(value.replace(" ", ""), value)
    if isinstance(read, Invalid):
        return True
    sign, mantissa, exponent = read
    exponent -= 2 if percent else 0
    x = float(f"{sign}{mantissa}e{exponent}")
    last_digit = min(max(exponent - len(mantissa.partition(".")[2]), -400), 300)
    return abs(x - p_value) > 0.5 * 10.0 ** last_digit * (1 + 1e-9)


_INTERVAL_SEPARATOR = re.compile(r"\s*(?:,|;|\bto\b|\u2013)\s*|\s+-\s+")


def _bare_answer(line: str, kind: str, fields: tuple[str, ...]) -> Answer | Invalid:
    """A closed-form answer written bare on one line (``0.4312``; ``0.1234,
    0.5678``; ``[0.1234, 0.5678]``; ``yes``)."""
    value = line.strip()
    if kind != "interval":
        return _fields_answer({fields[0]: value}, fields)
    if len(value) > 2 * MAX_VALUE_CHARS:
        return Invalid("no interval on the last line")
    value = _unwrap(value)
    if value[:1] in "[(" and value[-1:] in "])":
        value = value[1:-1]
    parts = [p for p in _INTERVAL_SEPARATOR.split(value) if p]
    if len(parts) != 2:
        return Invalid("no interval on the last line")
    low, high = parse_number(parts[0]), parse_number(parts[1])
    if isinstance(low, Invalid) or isinstance(high, Invalid):
        return Invalid("no interval on the last line")
    return Answer({"low": low, "high": high})

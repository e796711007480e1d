"""Reading an answer out of a completion: the grammar the grader accepts.

The grader reads text that a policy under optimisation writes, so reading is
total, bounded and strict:

- :func:`parse_answer` takes any value and returns an :class:`Answer` or an
  :class:`Invalid` with its reason; it never raises for a known answer kind.
- Only the last :data:`ANSWER_REGION` characters are read (the prompt asks
  for the answer at the end), every pattern is linear in what it reads, and a
  field's value longer than :data:`MAX_VALUE_CHARS` is not a number.
- Ambiguity is invalid, never credit: a decision line naming both decisions,
  hedged, or copying the template; a number followed by another in
  parentheses; an arithmetic expression; a JSON answer giving a field twice;
  a yes/no answer that is not a plain yes or no.

The grammar, field by field (labels are case-blind; markdown around a label
or a value is ignored):

- p-value: a number in [0, 1] (``0.0132``, ``.03``, ``3.1e-07``, ``1.2 x
  10^-5``, ``1.2×10⁻⁵``, ``1.2*10**-5``, ``$1.2 \\times 10^{-5}$``),
  optionally after ``p``, ``p-value`` or ``Pr(>|t|)`` and ``=``, ``:`` or
  ``≈``; an upper bound ``p < 2.2e-16`` is read as the bound. A trailing
  remark in parentheses without a digit (``(two-sided)``) is dropped.
- decision: one of ``reject`` (also "rejected", "accept the alternative")
  and ``fail to reject`` ("do not reject", "cannot reject", "not rejected",
  "retain H0", "accept the null"), with any words around it.
- yes/no: ``yes`` or ``no`` and nothing else but a final ``.`` or ``!``; a
  JSON ``true`` or ``false``.
- numbers of the closed-form kinds: one number as above; an interval as two
  numbers separated by ``,``, ``;`` or ``to``, optionally in brackets; a whole
  number as a number equal to an integer.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from .answers import FAIL, KINDS, REJECT

#: The answer is read from this many characters at the end of a completion.
ANSWER_REGION = 16_384
#: A field's value longer than this (after trimming) is not read as a number or decision.
MAX_VALUE_CHARS = 256
#: Exponent digits a number may have (1e-9999 is already 0 as a double).
MAX_EXPONENT_DIGITS = 4


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


# -- numbers ------------------------------------------------------------------------

_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
#: Minus and dash signs read as "-", multiplication signs as "x", invisible characters dropped.
_PLAIN = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                        "\ufe63": "-", "\uff0d": "-", "×": "x", "·": "x", "⋅": "x", "∙": "x", "\u200b": None,
                        "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None})
_PYTHON_POWER = re.compile(r"(?<=[0-9])\s*\*\*\s*(?=[-+({0-9])")
_MARKUP = re.compile(r"\*\*|^\s*\*|\*\s*$|[`$_]|\\[()\[\]]|\\,|\\!")
_LATEX_TIMES = re.compile(r"\\(?:times|cdot)\b")
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


def _plain_number_text(value: str) -> str:
    """A number's text with markdown, LaTeX and unicode signs written plainly:
    superscript exponents as ``^``, ``**`` between digits as ``^``."""
    value = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT), value.translate(_PLAIN))
    value = _LATEX_TIMES.sub("x", _PYTHON_POWER.sub("^", value))
    return _MARKUP.sub("", value).strip().rstrip(".,;").strip()


def _drop_remark(value: str) -> str | Invalid:
    """``value`` without a trailing remark in parentheses (``(two-sided)``);
    Invalid when the parentheses hold a digit (``0.03 (or 0.3)``). Parentheses
    right after ``^`` belong to an exponent."""
    if not value.endswith(")"):
        return value
    start = value.rfind("(")
    if start <= 0 or value[:start].rstrip().endswith("^"):
        return value
    if any(c.isdigit() for c in value[start:]):
        return Invalid("gives a second number in parentheses")
    return value[:start].rstrip().rstrip(".,;").rstrip()


def _too_long(text: str, what: str) -> Invalid | None:
    size = len(text.strip())
    return Invalid(f"a value of {size} characters is not {what}") if size > MAX_VALUE_CHARS else None


def parse_number(text: str) -> float | Invalid:
    """One real number written as people write them (``1.2e-05``, ``.03``,
    ``1.2 x 10^-5``, ``1.2×10⁻⁵``, ``-3.5``); see the module docstring."""
    if not isinstance(text, str):
        return Invalid(f"{type(text).__name__} is not a number")
    return _too_long(text, "a number") or _number(_plain_number_text(text), text)


def _number(value: str, text: str) -> float | Invalid:
    """The number ``value`` (plain text, see :func:`_plain_number_text`)
    writes; a reason quotes ``text``, what the completion wrote."""
    value = _drop_remark(value)
    if isinstance(value, Invalid):
        return Invalid(f"'{_shown(text)}' {value.reason}")
    if "%" in value:
        return Invalid(f"'{_shown(text)}' is a percentage")
    lowered = value.lower()
    m = _NUMBER.fullmatch(lowered)
    if not m:
        return Invalid(f"'{_shown(text)}' {_why_not_a_number(lowered)}")
    exponent = next((m.group(g) for g in _EXPONENT_GROUPS if m.group(g)), "0")
    x = float(f"{m.group('m') or '1'}e{exponent}")   # never raises: 1e9999 is inf, 1e-9999 is 0
    if not math.isfinite(x):
        return Invalid(f"'{_shown(text)}' is out of range")
    return -x if m.group("sign") == "-" else x


def _why_not_a_number(lowered: str) -> str:
    if _LONG_EXPONENT.search(lowered):
        return f"has an exponent of more than {MAX_EXPONENT_DIGITS} digits"
    if len(_DIGITS.findall(lowered)) > 1:
        if _OPERATOR.search(lowered):
            return "is an arithmetic expression, not a number"
        return "is several numbers or a range"
    return "is not a number"


_P_LABEL = re.compile(r"(?:pr?\s{0,3}\(\s{0,3}>\s{0,3}\|?\w{1,12}\|?\s{0,3}\)|p(?:[ ._-]{0,3}values?)?)\s*", re.I)
_RELATION = re.compile(r"(<=|>=|==|≤|≥|<|>|=|≈|~|:)\s*")


def parse_p_value(text: str) -> float | Invalid:
    """A p-value: a number in [0, 1], optionally after ``p``, ``p-value`` and
    ``=``, or an upper bound ``p < 2.2e-16`` (R's printout, read as the bound).
    A lower bound (``p > 0.05``), a percentage, a range or a number above 1 is
    not a p-value."""
    if not isinstance(text, str):
        return Invalid(f"{type(text).__name__} is not a p-value")
    too_long = _too_long(text, "a p-value")
    if too_long:
        return too_long
    value = _plain_number_text(text)
    label = _P_LABEL.match(value)
    value = value[label.end():] if label else value
    rel = _RELATION.match(value)
    if rel:
        if rel.group(1) in (">", ">=", "≥"):
            return Invalid(f"'{_shown(text)}' is a lower bound, not a p-value")
        value = value[rel.end():]
    x = _number(value, text)
    if isinstance(x, Invalid):
        return x
    if not 0.0 <= x <= 1.0:
        return Invalid(f"p-value {x:g} is outside [0, 1]")
    return x


def parse_integer(text: str) -> int | Invalid:
    x = parse_number(text)
    if isinstance(x, Invalid):
        return x
    if x != int(x):
        return Invalid(f"'{_shown(text)}' is not a whole number")
    return int(x)


# -- decisions and yes/no ----------------------------------------------------------------

#: Decisions named in a line's words (lower case, letters and digits only),
#: longest phrase first at each place, so "fail to reject" is not also a "reject".
_DECISION = re.compile(
    r"\b(?:(?P<fail>(?:fail(?:s|ed|ing)? to|do not|does not|did not|dont|doesnt|didnt|cannot|can not|cant|could not"
    r"|couldnt|unable to|(?:insufficient|not enough|no|little) evidence to|not) reject(?:ed)?"
    r"|retain(?:s|ed|ing)?|accept(?:s|ed|ing)?(?: the)? (?:null|h0|h 0|ho))"
    r"|(?P<negated>(?:no|never|wont|wouldnt|shouldnt|neither|nor|without) reject\w*)"
    r"|(?P<reject>reject(?:s|ed|ing)?|accept(?:s|ed|ing)?(?: the)? (?:alternative|h1|h 1|ha|h a)))\b")
_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably|unsure|unclear|uncertain|whether|undecided)\b")


def _words_of(text: str) -> str:
    """``text`` as lower-case ASCII words separated by single spaces."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.replace("'", "")).split())


def parse_decision(text: str) -> str | Invalid:
    """``reject`` or ``fail to reject`` (also "do not reject", "retain H0",
    "reject the null hypothesis"). A line naming both, hedged ("or",
    "maybe", a question mark) or copying the template is invalid."""
    if not isinstance(text, str):
        return Invalid(f"decision of type {type(text).__name__} is not text")
    shown = _shown(text)
    too_long = _too_long(text, "a decision")
    if too_long:
        return too_long
    if "|" in text or ("<" in text and ">" in text):
        return Invalid(f"decision '{shown}' is the template's choice, not a decision")
    phrase = _words_of(text)
    named = {m.lastgroup for m in _DECISION.finditer(phrase)}
    if not named:
        return Invalid(f"decision '{shown}' is neither reject nor fail to reject")
    if _HEDGE.search(phrase) or "?" in text:
        return Invalid(f"decision '{shown}' is hedged")
    if "negated" in named:
        return Invalid(f"decision '{shown}' negates reject in words this grader does not read")
    if len(named) > 1:
        return Invalid(f"decision '{shown}' names both reject and fail to reject")
    return FAIL if "fail" in named else REJECT


def parse_yes_no(text: str) -> bool | Invalid:
    """``yes`` or ``no`` on its own (markdown and a final ``.`` or ``!`` aside)."""
    if not isinstance(text, str):
        return Invalid(f"{type(text).__name__} is not yes or no")
    plain = _MARKUP.sub("", text.translate(_PLAIN)).strip().rstrip(".!").strip().lower()
    if plain in ("yes", "no"):
        return plain == "yes"
    return Invalid(f"'{_shown(text)}' is not a plain yes or no")


# -- answer blocks ---------------------------------------------------------------------

#: The labels a line of an answer block may carry (lower case; spaces,
#: underscores and hyphens equivalent), by what the line holds.
_LABELS = {
    "method": ("method", "test", "test used"),
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
#: A labelled line: ``LABEL: value`` with markdown around either (labels are
#: short, so matching stays linear in the line's length).
_LINE = re.compile(r"^[\s>*#_`-]{0,8}(?P<label>[a-z][a-z _-]{0,24}?)[\s*_`]{0,4}[:=](?P<value>.*)$", re.I)
_LABEL_SPACE = re.compile(r"[\s_-]+")


def _label(text: str) -> str:
    return _LABEL_SPACE.sub(" ", text.strip().lower())


def _value(m: re.Match) -> str:
    return m.group("value").strip().strip("*_`").strip()


def _labels_of(keys) -> dict[str, str]:
    """{label as :func:`_label` writes it: the key of :data:`_LABELS` it is}."""
    return {_label(lbl): key for key in keys for lbl in _LABELS[key]}


def _blocks(lines: list[str], kind: str) -> list[tuple[int, dict]]:
    """Complete answer blocks of ``kind`` (plus an optional METHOD line), as
    {field: text}, with the line index each ends on. A block completes when all
    its lines are seen; a line seen twice before that starts a new block; a
    METHOD line right after a block without one joins it."""
    block = dict(_BLOCK[kind])
    wanted = _labels_of(("method", *block))
    blocks, current = [], {}
    for i, line in enumerate(lines):
        m = _LINE.match(line)
        if not m or _label(m.group("label")) not in wanted:
            continue
        key, value = wanted[_label(m.group("label"))], _value(m)
        if key == "method" and not current and blocks and "method" not in blocks[-1][1]:
            blocks[-1][1]["method"] = value
            continue
        if key in current:
            current = {}
        current[key] = value
        if all(k in current for k in block):
            blocks.append((i, {block.get(k, k): v for k, v in current.items()}))
            current = {}
    return blocks


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
        return value
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
    return Answer(values, method)


def gold_fields(kind: str) -> tuple[str, ...]:
    """The answer fields of ``kind`` (ValueError for an unknown kind)."""
    spec = KINDS.get(kind)
    if spec is None:
        raise ValueError(f"unknown answer kind {kind!r}; known: {', '.join(KINDS)}")
    return tuple(f for f in spec.fields if f != "kind")


def answer_from_fields(raw: Mapping, kind: str = "p_value") -> Answer | Invalid:
    """An answer given as fields (a JSON object, a predictions row): those of
    ``kind`` (``p_value`` and ``decision``; ``estimate``; ``low`` and
    ``high``; ``integer`` or ``answer``/``count``; ``yes_no`` or ``answer``)
    and an optional ``method``. A field given twice (``p-value`` beside
    ``p_value``, ``answer`` beside ``yes_no``) is ambiguous: invalid."""
    named = _named_fields(raw.items(), kind)
    return named if isinstance(named, Invalid) else _fields_answer(named, gold_fields(kind))


def _named_fields(pairs, kind: str) -> dict | Invalid:
    """{field: value} of ``pairs``, each key read as a block's label (``P-value``
    and ``p`` as ``p_value``, ``answer`` as the field of ``kind``'s block, any
    other key lower-cased with ``_`` for spaces and hyphens); Invalid when two
    keys name one field."""
    fields = {label: name for label, name in _BLOCK[kind]}
    labels = _labels_of(("method", *fields))
    out: dict = {}
    for key, value in pairs:
        label = _label(str(key))
        name = fields.get(labels[label], labels[label]) if label in labels else label.replace(" ", "_")
        if name in out:
            return Invalid(f"the answer gives {name} twice")
        out[name] = value
    return out


_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


def _json_answers(text: str, kind: str, fields: tuple[str, ...]) -> list[tuple[int, dict | Invalid]]:
    """Flat JSON objects of ``text`` holding every field of ``kind``, as
    {field: value} (or Invalid when a field is given twice), with the offset
    each ends at."""
    out = []
    for m in _FLAT_OBJECT.finditer(text):
        try:
            pairs = json.loads(m.group(0), object_pairs_hook=lambda items: items)
        except (ValueError, RecursionError):
            continue
        if not isinstance(pairs, list):
            continue
        named = _named_fields(pairs, kind)
        if isinstance(named, Invalid) or all(f in named for f in fields):
            out.append((m.end(), named))
    return out


def answer_region(text: str) -> list[str]:
    """The lines of the last :data:`ANSWER_REGION` characters of ``text``
    (the first, cut, line dropped), split on ``\\n``, ``\\r\\n`` and ``\\r``."""
    region = text[-ANSWER_REGION:]
    if len(text) > ANSWER_REGION:
        region = region[region.find("\n") + 1:] if "\n" in region else ""
    return region.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def parse_answer(text, kind: str = "p_value") -> Answer | Invalid:
    """The answer a completion gives for a task of answer ``kind``.

    p-value tasks: the last complete METHOD / P_VALUE / DECISION block (METHOD
    optional), or the last JSON object with ``p_value`` and ``decision``,
    whichever ends later. Closed-form kinds: the last non-empty line first
    (labelled or bare), then the last labelled block or JSON object. Only the
    last :data:`ANSWER_REGION` characters are read. Returns :class:`Answer`
    or :class:`Invalid`; never raises for a known ``kind``.
    """
    fields = gold_fields(kind)
    if not isinstance(text, str):
        return Invalid(f"the completion is not text (got {type(text).__name__})")
    if not text.strip():
        return Invalid("the completion is empty")
    lines = answer_region(text)
    if kind != "p_value":
        last = next((ln for ln in reversed(lines) if ln.strip()), "")
        answer = _closed_form_line(last, kind, fields)
        if isinstance(answer, Answer):
            return answer
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line) + 1)
    found = [(ends[i + 1], raw) for i, raw in _blocks(lines, kind)]
    found += _json_answers("\n".join(lines), kind, fields)
    if not found:
        want = " / ".join(label.upper() for label, _ in _BLOCK[kind])
        region = f" in the last {ANSWER_REGION} characters" if len(text) > ANSWER_REGION else ""
        return Invalid(f"no complete {want} answer block{region}")
    latest = max(found, key=lambda item: item[0])[1]
    return latest if isinstance(latest, Invalid) else _fields_answer(latest, fields)


_INTERVAL_SEPARATOR = re.compile(r"\s*(?:,|;|\bto\b)\s*")
_BRACKETS = re.compile(r"^[\[(]|[\])]\s*\.?$")


def _closed_form_line(line: str, kind: str, fields: tuple[str, ...]) -> Answer | Invalid:
    """A closed-form answer written on one line, labelled or bare
    (``0.4312``; ``0.1234, 0.5678``; ``[0.1234, 0.5678]``; ``yes``). A line
    that is a JSON object is left to the JSON reader."""
    m = _LINE.match(line)
    if m and _label(m.group("label")) not in _labels_of(key for key, _ in _BLOCK[kind]):
        return Invalid("the last line answers something else")
    value = _value(m) if m else line.strip()
    if value.startswith("{"):
        return Invalid("the last line is a JSON object")
    if kind == "interval":
        if len(value) > 2 * MAX_VALUE_CHARS:
            return Invalid("no interval on the last line")
        parts = [p for p in _INTERVAL_SEPARATOR.split(_BRACKETS.sub("", value)) if p]
        if len(parts) != 2:
            return Invalid("no interval on the last line")
        low, high = parse_number(parts[0]), parse_number(parts[1])
        if isinstance(low, Invalid) or isinstance(high, Invalid):
            return Invalid("no interval on the last line")
        return Answer({"low": low, "high": high})
    return _fields_answer({fields[0]: value}, fields)

"""Grading: read an answer out of a completion and reward it against a task.

:func:`parse_answer` reads the answer block a task's kind asks for (or a JSON
object); :func:`reward` scores it as the paper does:

- z(p) = Phi^-1(1 - p/2), computed as ``norm.isf(p / 2)``, capped at 5;
- r_p = exp(-|z(p_hat) - z(p*)| / sigma), sigma = 1; r_c = 1 when the
  decision matches;
- R = I_valid (0.9 r_p + 0.1 r_c);
- Raw: the decision matches; Strict: Raw and |dz| < 0.5.

Closed-form kinds (estimate, interval, integer, count, yes/no) score 1 within
their strict tolerance and 0 outside it; Raw is the loose tolerance.

Method-aware grading (the default): an answer whose METHOD line names one of
the task's accepted alternatives is graded against that test's p-value and
decision; any other name, the naive test's included, against the canonical
gold. ``method_aware=False`` gives the paper's reward exactly.

A *task* is a corpus record (a mapping with ``method``, ``gold`` and
``accepted``) or the same fields as :func:`ground_truth` writes them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache

from .answers import KINDS, P_VALUE, capped_z
from .errors import InputError
from .testnames import TestName, identify

#: Weights of the p-value and decision parts of the reward, and sigma.
WEIGHT_P, WEIGHT_DECISION, SIGMA = 0.9, 0.1, 1.0
#: |log10 p_hat - log10 p*| a trajectory may miss by and still be kept for SFT.
SFT_LOG10_TOLERANCE = 1.0
REJECT, FAIL = "reject", "fail to reject"


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


# -- numbers ------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)"
_POWER = r"\^?\s*\{?\(?\s*(?P<NAME>[+-]?\d+)\s*\)?\}?"
_NUMBER = re.compile(
    rf"^(?P<sign>[+-]?)\s*(?:(?P<m>{_NUM})\s*(?:e\s*(?P<e1>[+-]?\d+)|(?:x|\*|\\times|\\cdot)\s*10\s*"
    + _POWER.replace("NAME", "e2") + r")?|10\s*" + _POWER.replace("NAME", "e3") + r")$")
_P_LABEL = re.compile(r"^(?:p(?:[\s._-]*values?)?|pr?\s*\(\s*>\s*\|?\w+\|?\s*\))\s*", re.I)
_RELATION = re.compile(r"^(<=|>=|≤|≥|<|>|=|≈|~|:)\s*")


def _clean(value: str) -> str:
    """Markdown, LaTeX dollars, unicode minus and multiplication signs and
    superscript exponents written plainly; surrounding punctuation dropped."""
    value = value.translate(_SUPERSCRIPT)
    value = value.replace("−", "-").replace("×", "x").replace("·", "x").replace("⋅", "x")
    value = re.sub(r"\*\*|^\s*\*|\*\s*$|[`$_]|\\\(|\\\)", "", value)
    value = re.sub(r"\([^()]*[a-zA-Z][^()]*\)\s*$", "", value.strip())   # a trailing remark "(two-sided)"
    return value.strip().rstrip(".,;").strip()


def parse_number(text: str) -> float | Invalid:
    """One real number written as people write them (``1.2e-05``, ``.03``,
    ``1.2 x 10^-5``, ``1.2×10⁻⁵``, ``-3.5``)."""
    value = _clean(text)
    if "%" in value:
        return Invalid(f"'{text.strip()[:60]}' is a percentage")
    m = _NUMBER.match(value.lower())
    if not m:
        several = len(re.findall(r"\d+(?:\.\d+)?", value)) > 1
        what = "several numbers or a range" if several else "not a number"
        return Invalid(f"'{text.strip()[:60]}' is {what}")
    if m.group("m") is None:
        x = 10.0 ** int(m.group("e3"))
    else:
        exp = m.group("e1") or m.group("e2")
        try:
            x = float(f"{m.group('m')}e{exp}") if exp else float(m.group("m"))
        except OverflowError:
            return Invalid(f"'{text.strip()[:60]}' is out of range")
    return -x if m.group("sign") == "-" else x


def parse_p_value(text: str) -> float | Invalid:
    """A p-value: a number in [0, 1], optionally after ``p``, ``p-value`` and
    ``=``, or an upper bound ``p < 2.2e-16`` (R's printout, read as the bound).
    A lower bound (``p > 0.05``), a percentage, a range or a number above 1 is
    not a p-value."""
    value = _clean(text)
    value = _P_LABEL.sub("", value)
    rel = _RELATION.match(value)
    if rel:
        if rel.group(1) in (">", ">=", "≥"):
            return Invalid(f"'{text.strip()[:60]}' is a lower bound, not a p-value")
        value = value[rel.end():]
    x = parse_number(value)
    if isinstance(x, Invalid):
        return x
    if not 0.0 <= x <= 1.0:
        return Invalid(f"p-value {x:g} is outside [0, 1]")
    return x


def parse_decision(text: str) -> str | Invalid:
    """``reject`` or ``fail to reject`` (also "do not reject", "retain H0",
    "reject the null hypothesis")."""
    t = re.sub(r"[^a-z0-9 ]+", " ", text.lower().replace("'", "")).split()
    phrase = " ".join(t)
    if re.search(r"\b(fail(s|ed)? to reject|not reject|cannot reject|retain|accept (the )?(null|h0))\b", phrase):
        return FAIL
    if (t and t[0] == "reject") or phrase.startswith(("we reject", "i reject")) or \
            re.search(r"\baccept (the )?(alternative|h1|ha)\b", phrase):
        return REJECT
    return Invalid(f"decision '{text.strip()[:60]}' is neither reject nor fail to reject")


def parse_yes_no(text: str) -> bool | Invalid:
    t = re.sub(r"[^a-z]+", " ", text.lower()).split()
    if t and t[0] in ("yes", "no"):
        return t[0] == "yes"
    return Invalid(f"'{text.strip()[:60]}' is neither yes nor no")


def parse_integer(text: str) -> int | Invalid:
    x = parse_number(text)
    if isinstance(x, Invalid):
        return x
    if not math.isfinite(x) or x != int(x):
        return Invalid(f"'{text.strip()[:60]}' is not a whole number")
    return int(x)


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


def _label(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text.strip().lower())


def _value(m: re.Match) -> str:
    return m.group("value").strip().strip("*_`").strip()


def _blocks(lines: list[str], kind: str) -> list[tuple[int, dict]]:
    """Complete answer blocks of ``kind`` (plus an optional METHOD line), as
    {field: text}, with the line index each ends on. A block completes when all
    its lines are seen; a line seen twice before that starts a new block; a
    METHOD line right after a block without one joins it."""
    block = dict(_BLOCK[kind])
    wanted = {_label(lbl): key for key in ("method", *block) for lbl in _LABELS[key]}
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


def _fields_answer(raw: Mapping, fields: tuple[str, ...]) -> Answer | Invalid:
    values = {}
    for f in fields:
        v = raw.get(f)
        if v is None:
            return Invalid(f"the answer has no {f}")
        if isinstance(v, bool) and f != "yes_no":
            return Invalid(f"{f} is {v!r}")
        parsed = _FIELD_PARSERS[f](str(v) if not isinstance(v, bool) else ("yes" if v else "no"))
        if isinstance(parsed, Invalid):
            return parsed
        values[f] = parsed
    method = raw.get("method")
    return Answer(values, str(method) if method is not None else None)


def answer_from_fields(raw: Mapping, kind: str = "p_value") -> Answer | Invalid:
    """An answer given as fields (a JSON object, a predictions row): those of
    ``kind`` (``p_value`` and ``decision``; ``estimate``; ``low`` and
    ``high``; ``integer`` or ``answer``/``count``; ``yes_no`` or ``answer``)
    and an optional ``method``."""
    return _fields_answer(_named_fields(raw, kind), _gold_fields(kind))


def _named_fields(raw: Mapping, kind: str) -> dict:
    """``raw`` with keys lower-cased (``p-value`` as ``p_value``) and the
    labels of ``kind``'s block (``answer``, ``count``) read as its fields."""
    out = {str(k).lower().replace("-", "_").replace(" ", "_"): v for k, v in raw.items()}
    for label, name in _BLOCK[kind]:
        if name not in out and label in out:
            out[name] = out[label]
    return out


def _json_objects(text: str) -> list[tuple[int, dict]]:
    """Flat JSON objects in ``text`` with the offset each ends at."""
    out = []
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append((m.end(), obj))
    return out


def _gold_fields(kind: str) -> tuple[str, ...]:
    spec = KINDS.get(kind)
    if spec is None:
        raise ValueError(f"unknown answer kind '{kind}'; known: {', '.join(KINDS)}")
    return tuple(f for f in spec.fields if f != "kind")


def parse_answer(text, kind: str = "p_value") -> Answer | Invalid:
    """The answer a completion gives for a task of answer ``kind``.

    p-value tasks: the last complete METHOD / P_VALUE / DECISION block (METHOD
    optional), or the last JSON object with ``p_value`` and ``decision``,
    whichever ends later. Closed-form kinds: the last non-empty line first
    (labelled or bare), then the last labelled block or JSON object in the
    whole completion. Returns :class:`Answer` or :class:`Invalid`.
    """
    fields = _gold_fields(kind)
    if not isinstance(text, str) or not text.strip():
        return Invalid("the completion is empty")
    lines = text.splitlines()
    if kind != "p_value":
        answer = _closed_form_line(next(ln for ln in reversed(lines) if ln.strip()), kind, fields)
        if isinstance(answer, Answer):
            return answer
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line) + 1)
    found = [(ends[i + 1], raw) for i, raw in _blocks(lines, kind)]
    for end, obj in _json_objects(text):
        obj = _named_fields(obj, kind)
        if all(f in obj for f in fields):
            found.append((end, obj))
    if not found:
        want = " / ".join(label.upper() for label, _ in _BLOCK[kind])
        return Invalid(f"no complete {want} answer block")
    return _fields_answer(max(found, key=lambda item: item[0])[1], fields)


def _closed_form_line(line: str, kind: str, fields: tuple[str, ...]) -> Answer | Invalid:
    """A closed-form answer written on one line, labelled or bare
    (``0.4312``; ``0.1234, 0.5678``; ``[0.1234, 0.5678]``; ``yes``)."""
    m = _LINE.match(line)
    if m and _label(m.group("label")) not in {_label(lbl) for key, _ in _BLOCK[kind] for lbl in _LABELS[key]}:
        return Invalid("the last line answers something else")
    value = _value(m) if m else line
    if kind == "interval":
        parts = [p for p in re.split(r"\s*(?:,|;|\bto\b)\s*", re.sub(r"^[\[(]|[\])]\s*\.?$", "", value.strip())) if p]
        if len(parts) != 2:
            return Invalid("no interval on the last line")
        low, high = parse_number(parts[0]), parse_number(parts[1])
        if isinstance(low, Invalid) or isinstance(high, Invalid):
            return Invalid("no interval on the last line")
        return Answer({"low": low, "high": high})
    return _fields_answer({fields[0]: value}, fields)


# -- reward ----------------------------------------------------------------------------

@dataclass(frozen=True)
class RewardResult:
    """One completion scored against one task.

    ``z_hat`` and ``z_gold`` are the capped z of the answer's and the reference
    p-value, ``dz`` their difference; ``graded_against`` the test whose p-value
    and decision the answer was compared with (the canonical one or an
    accepted alternative); ``method`` the test its METHOD line names (None when
    it names none this grader knows). For closed-form kinds ``r_p``, ``r_c``,
    the z fields are None, ``raw`` is the loose and ``strict`` the strict
    tolerance.
    """

    reward: float
    r_p: float | None
    r_c: float | None
    valid: bool
    z_hat: float | None
    z_gold: float | None
    dz: float | None
    raw: bool
    strict: bool
    reason: str | None = None
    graded_against: str | None = None
    method: str | None = None
    method_ok: bool | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _invalid(reason: str, graded_against: str | None = None) -> RewardResult:
    return RewardResult(0.0, 0.0, 0.0, False, None, None, None, False, False, reason, graded_against)


def _task_fields(task) -> tuple[str, dict, list]:
    """(family name, gold, accepted) of a record or a ground truth (dict or JSON)."""
    if isinstance(task, str):
        task = json.loads(task)
    if not isinstance(task, Mapping):
        raise TypeError(f"a task is a record or a ground truth mapping, got {type(task).__name__}")
    gold = task.get("gold")
    if isinstance(gold, str):
        gold = json.loads(gold)
    if not isinstance(gold, Mapping) or gold.get("kind") not in KINDS:
        raise ValueError("the task has no gold of a known answer kind")
    return str(task.get("method", "")), dict(gold), list(task.get("accepted") or [])


def _names(family_name: str) -> tuple[TestName | None, dict[str, TestName]]:
    """(the canonical test's name, {accepted alternative's method: its name})
    of a family; (None, {}) for a family this installation does not know."""
    from .registry import get_family

    try:
        family = get_family(family_name)
    except InputError:
        return None, {}
    return family.test_name, {a.method: a.name for a in family.accepted}


@lru_cache(maxsize=4)
def _names_of(registered: tuple) -> list[TestName]:
    """Every test name the ``registered`` families know, once each."""
    names = (n for f in registered for n in (f.test_name, f.naive_name, *(a.name for a in f.accepted)))
    return list(dict.fromkeys(n for n in names if n is not None))


def _identify(method_line: str, family_name: str) -> tuple[TestName | None, str | None]:
    """(the test ``method_line`` names, the accepted alternative of family
    ``family_name`` it is, or None). Answers repeat their METHOD lines, so
    each line is read once per family and set of registered families."""
    from .registry import families

    return _identified(method_line, family_name, tuple(families()))


@lru_cache(maxsize=1 << 16)
def _identified(method_line: str, family_name: str, registered: tuple) -> tuple[TestName | None, str | None]:
    canonical, alternatives = _names(family_name)
    prefer = [n for n in (canonical, *alternatives.values()) if n is not None]
    named = identify(method_line, _names_of(registered) + prefer, prefer)
    return named, next((m for m, n in alternatives.items() if n == named), None)


def named_test(task, method_line: str | None) -> tuple[TestName | None, str | None]:
    """(the test ``method_line`` names, the accepted alternative of ``task`` it
    is, or None when it is the canonical test or another one)."""
    return _identify(method_line or "", _task_fields(task)[0])


def reward(task, completion, method_aware: bool = True) -> RewardResult:
    """Score ``completion`` (text, or an :class:`Answer`) against ``task``."""
    family_name, gold, accepted = _task_fields(task)
    kind = gold["kind"]
    answer = completion if isinstance(completion, (Answer, Invalid)) else parse_answer(completion, kind)
    if kind != "p_value":
        return _closed_form(answer, gold, kind)
    canonical, alternatives = _names(family_name)
    reference = {"method": canonical.label if canonical else family_name, "p_value": gold["p_value"],
                 "decision": gold["decision"]}
    if isinstance(answer, Invalid):
        return _invalid(answer.reason, reference["method"])
    named, alt = _identify(answer.method, family_name) if answer.method else (None, None)
    if method_aware and alt is not None:
        row = next((a for a in accepted if a.get("method") == alt and a.get("p_value") is not None), None)
        if row is not None:
            reference = {"method": alt, "p_value": row["p_value"], "decision": row["decision"]}
    z_hat, z_gold = capped_z(answer.values["p_value"]), capped_z(reference["p_value"])
    dz = z_hat - z_gold
    r_p = math.exp(-abs(dz) / SIGMA)
    match = answer.values["decision"] == reference["decision"]
    r_c = 1.0 if match else 0.0
    method_ok = None if answer.method is None else (named is not None and (named == canonical or alt is not None))
    return RewardResult(WEIGHT_P * r_p + WEIGHT_DECISION * r_c, r_p, r_c, True, z_hat, z_gold, dz, match,
                        match and abs(dz) < P_VALUE.strict, None, reference["method"],
                        named.label if named else None, method_ok)


def _closed_form(answer, gold: dict, kind: str) -> RewardResult:
    if isinstance(answer, Invalid):
        return _invalid(answer.reason)
    spec = KINDS[kind]
    values = dict(answer.values)
    strict, loose = spec.score(values, gold), spec.score(values, gold, loose=True)
    return RewardResult(1.0 if strict else 0.0, None, None, True, None, None, None, loose, strict)


def sft_keep(task, completion, method_aware: bool = True) -> bool:
    """The paper's SFT filter: keep a trajectory when its decision matches and
    |log10 p_hat - log10 p*| <= 1 (p* the p-value it was graded against)."""
    _, gold, accepted = _task_fields(task)
    if gold["kind"] != "p_value":
        return reward(task, completion).strict
    answer = completion if isinstance(completion, (Answer, Invalid)) else parse_answer(completion)
    result = reward(task, answer, method_aware)
    if not result.valid or not result.raw:
        return False
    p_hat = answer.values["p_value"]
    p_ref = next((a["p_value"] for a in accepted if a.get("method") == result.graded_against), gold["p_value"])
    if p_hat <= 0.0 or p_ref <= 0.0:
        return p_hat == p_ref
    return abs(math.log10(p_hat) - math.log10(p_ref)) <= SFT_LOG10_TOLERANCE


def ground_truth(record: Mapping) -> dict:
    """What grading a record needs, as plain JSON-able values: task_id,
    method, the gold (its kind's fields) and the accepted alternatives."""
    gold = {k: v for k, v in dict(record["gold"]).items() if v is not None}
    accepted = [{"method": a["method"], "p_value": a["p_value"], "decision": a["decision"]}
                for a in record.get("accepted") or []]
    return {"task_id": record["task_id"], "method": record["method"], "gold": gold, "accepted": accepted}


def compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict:
    """verl's custom reward function: ``ground_truth`` is what
    :func:`ground_truth` wrote (a dict or its JSON). Returns the reward as
    ``score`` beside r_p, r_c, raw, strict and valid (verl logs the extras)."""
    result = reward(ground_truth, solution_str)
    return {"score": result.reward, "r_p": result.r_p or 0.0, "r_c": result.r_c or 0.0,
            "raw": float(result.raw), "strict": float(result.strict), "valid": float(result.valid)}

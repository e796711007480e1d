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
``accepted``) or the same fields as :func:`ground_truth` writes them; a task
whose gold cannot grade (a p-value outside [0, 1], an unknown decision or
kind) raises :class:`~taskfactory.errors.InputError`. Reading the answer out
of a completion is :mod:`taskfactory.use.completions`' job: total and bounded,
it never raises.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache

from ..answers import KINDS, P_VALUE, capped_z, field_problem, gold_problem
from ..errors import InputError
from ..testnames import TestName, identify
from .completions import (MAX_METHOD_CHARS, Answer, Invalid, answer_from_fields, gold_fields, parse_answer,
                          parse_decision, parse_integer, parse_number, parse_p_value, parse_yes_no)

__all__ = ["Answer", "Invalid", "RewardResult", "answer_from_fields", "compute_score", "ground_truth", "named_test",
           "parse_answer", "parse_decision", "parse_integer", "parse_number", "parse_p_value", "parse_yes_no",
           "reward", "sft_keep"]

#: Weights of the p-value and decision parts of the reward, and sigma.
WEIGHT_P, WEIGHT_DECISION, SIGMA = 0.9, 0.1, 1.0
#: |log10 p_hat - log10 p*| a trajectory may miss by and still be kept for SFT.
SFT_LOG10_TOLERANCE = 1.0
#: METHOD lines remembered with the test they name (each at most MAX_METHOD_CHARS long).
METHOD_CACHE_LINES = 4096


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
    """(family name, gold, accepted) of a record or a ground truth (a mapping
    or its JSON); InputError naming the field that cannot grade an answer."""
    task = _mapping(task, "the task")
    gold = _mapping(task.get("gold"), "the task's gold")
    problem = gold_problem(gold)
    if problem:
        raise InputError(f"the task's {problem}")
    accepted = task.get("accepted")
    accepted = [] if accepted is None else accepted
    if not isinstance(accepted, (list, tuple)):
        raise InputError(f"the task's accepted is {type(accepted).__name__}, not a list")
    for i, alt in enumerate(accepted):
        if not isinstance(alt, Mapping) or not isinstance(alt.get("method"), str):
            raise InputError(f"the task's accepted[{i}] has no method name")
        for field in ("p_value", "decision") if alt.get("p_value") is not None else ():
            problem = field_problem(field, alt.get(field))
            if problem:
                raise InputError(f"the task's accepted[{i}].{field} {problem}")
    method = task.get("method")
    if not isinstance(method, str):
        raise InputError(f"the task's method is {method!r:.60}, not a family name")
    return method, dict(gold), list(accepted)


def _mapping(value, what: str) -> Mapping:
    """``value``, or the JSON object its text holds, as a mapping."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise InputError(f"{what} is text that is not a JSON object") from None
    if not isinstance(value, Mapping):
        raise InputError(f"{what} is {type(value).__name__}, not a mapping (a record or a ground truth)")
    return value


def _names(family_name: str) -> tuple[TestName | None, dict[str, TestName]]:
    """(the canonical test's name, {accepted alternative's method: its name})
    of a family; (None, {}) for a family this installation does not know."""
    from ..registry import get_family

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
    each line is read once per family and set of registered families; a line
    longer than :data:`MAX_METHOD_CHARS` names none."""
    from ..registry import families

    if len(method_line) > MAX_METHOD_CHARS:
        return None, None
    return _identified(method_line, family_name, tuple(families()))


@lru_cache(maxsize=METHOD_CACHE_LINES)
def _identified(method_line: str, family_name: str, registered: tuple) -> tuple[TestName | None, str | None]:
    canonical, alternatives = _names(family_name)
    prefer = [n for n in (canonical, *alternatives.values()) if n is not None]
    named = identify(method_line, _names_of(registered) + prefer, prefer)
    return named, next((m for m, n in alternatives.items() if n == named), None)


def named_test(task, method_line: str | None) -> tuple[TestName | None, str | None]:
    """(the test ``method_line`` names, the accepted alternative of ``task`` it
    is, or None when it is the canonical test or another one)."""
    return _identify(method_line or "", _task_fields(task)[0])


def _answer(completion, kind: str) -> Answer | Invalid:
    """``completion`` read as an answer of ``kind``: text parsed, an
    :class:`Answer` checked to hold that kind's fields with usable values."""
    if isinstance(completion, Invalid):
        return completion
    if not isinstance(completion, Answer):
        return parse_answer(completion, kind)
    if not isinstance(completion.values, Mapping):
        return Invalid(f"the answer's values are {type(completion.values).__name__}, not a mapping")
    if completion.method is not None and not isinstance(completion.method, str):
        return Invalid(f"the answer's method is {type(completion.method).__name__}, not text")
    for name in gold_fields(kind):
        problem = field_problem(name, completion.values.get(name))
        if problem:
            return Invalid(f"the answer's {name} {problem}")
    return completion


@dataclass(frozen=True)
class _Reference:
    """What a p-value answer is graded against: the test (canonical or the
    accepted alternative its METHOD line names), its p-value and decision,
    and the test the line names."""

    method: str
    p_value: float
    decision: str
    named: TestName | None
    method_ok: bool | None


def _reference(family_name: str, gold: dict, accepted: list, method: str | None, method_aware: bool) -> _Reference:
    canonical, alternatives = _names(family_name)
    named, alt = _identify(method, family_name) if method else (None, None)
    method_ok = None if method is None else (named is not None and (named == canonical or alt is not None))
    row = next((a for a in accepted if a.get("method") == alt and a.get("p_value") is not None), None)
    if method_aware and alt is not None and row is not None:
        return _Reference(alt, row["p_value"], row["decision"], named, method_ok)
    label = canonical.label if canonical else family_name
    return _Reference(label, gold["p_value"], gold["decision"], named, method_ok)


def reward(task, completion, method_aware: bool = True) -> RewardResult:
    """Score ``completion`` (text, or an :class:`Answer`) against ``task``."""
    family_name, gold, accepted = _task_fields(task)
    kind = gold["kind"]
    answer = _answer(completion, kind)
    if kind != "p_value":
        return _closed_form(answer, gold, kind)
    if isinstance(answer, Invalid):
        canonical = _names(family_name)[0]
        return _invalid(answer.reason, canonical.label if canonical else family_name)
    ref = _reference(family_name, gold, accepted, answer.method, method_aware)
    z_hat, z_gold = capped_z(answer.values["p_value"]), capped_z(ref.p_value)
    dz = z_hat - z_gold
    r_p = math.exp(-abs(dz) / SIGMA)
    match = answer.values["decision"] == ref.decision
    r_c = 1.0 if match else 0.0
    return RewardResult(WEIGHT_P * r_p + WEIGHT_DECISION * r_c, r_p, r_c, True, z_hat, z_gold, dz, match,
                        match and abs(dz) < P_VALUE.strict, None, ref.method,
                        ref.named.label if ref.named else None, ref.method_ok)


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
    family_name, gold, accepted = _task_fields(task)
    if gold["kind"] != "p_value":
        return reward(task, completion).strict
    answer = _answer(completion, "p_value")
    if isinstance(answer, Invalid):
        return False
    ref = _reference(family_name, gold, accepted, answer.method, method_aware)
    p_hat = answer.values["p_value"]
    if answer.values["decision"] != ref.decision:
        return False
    if p_hat <= 0.0 or ref.p_value <= 0.0:
        return p_hat == ref.p_value
    return abs(math.log10(p_hat) - math.log10(ref.p_value)) <= SFT_LOG10_TOLERANCE


def ground_truth(record: Mapping) -> dict:
    """What grading a record needs, as plain JSON-able values: task_id,
    method, the gold (its kind's fields) and the accepted alternatives."""
    gold = {k: v for k, v in dict(record["gold"]).items() if v is not None}
    accepted = [{"method": a["method"], "p_value": a["p_value"], "decision": a["decision"]}
                for a in record.get("accepted") or []]
    return {"task_id": record["task_id"], "method": record["method"], "gold": gold, "accepted": accepted}


#: What closes a tool's output in a decoded multi-turn response (Hermes-style chat templates).
TOOL_RESPONSE_END = "</tool_response>"


def final_turn(response: str) -> str:
    """The text after the last tool output of a decoded multi-turn response:
    the final assistant turn (all of ``response`` when no tool ran)."""
    _, end, after = response.rpartition(TOOL_RESPONSE_END)
    return after if end else response


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict:
    """verl's custom reward function: ``ground_truth`` is what
    :func:`ground_truth` wrote (a dict or its JSON); ``solution_str`` may be a
    multi-turn response, of which only the final assistant turn is graded,
    never what a tool printed. Keyword arguments verl adds (a reward model's
    address, say) are ignored. Returns the reward as ``score`` beside r_p,
    r_c, raw, strict and valid (verl logs the extras)."""
    result = reward(ground_truth, final_turn(solution_str) if isinstance(solution_str, str) else solution_str)
    return {"score": result.reward, "r_p": result.r_p or 0.0, "r_c": result.r_c or 0.0,
            "raw": float(result.raw), "strict": float(result.strict), "valid": float(result.valid)}

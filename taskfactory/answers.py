"""What a task asks for: the answer kinds, their prompt blocks, gold fields and tolerances.

Every family names one :class:`AnswerSpec` (``Family.answer``). The kind fixes
the block the prompt ends with, which fields of the record's ``gold`` struct
it fills, and how an answer is scored against the gold:

============  ==========================  ==========================================
kind          gold fields                 scored (strict)
============  ==========================  ==========================================
p_value       p_value, decision           |z(p) - z(gold)| < 0.5, z capped at 5
estimate      estimate                    |answer - gold| <= 0.001
interval      low, high                   both ends within 0.001
integer       integer                     exactly equal
count         integer                     exactly equal
yes_no        yes_no                      exactly equal
============  ==========================  ==========================================

A loose tolerance (0.01 for numbers) is reported beside the strict one as a
metric. Reading a completion into an answer is :mod:`taskfactory.use.completions`' job;
:meth:`AnswerSpec.score` compares parsed values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from .result import z_of_p

#: z of a p-value is capped here when answers are scored.
SCORE_Z_CAP = 5.0
#: The decisions a p-value answer (and a gold) may hold.
REJECT, FAIL = DECISIONS = ("reject", "fail to reject")
#: Fields of the record's ``gold`` struct, in order; a kind fills some of them.
GOLD_FIELDS = ("kind", "p_value", "decision", "estimate", "low", "high", "integer", "yes_no")

P_VALUE_BLOCK = """End your answer with exactly these three lines:
METHOD: <the test you used>
P_VALUE: <a number, e.g. 0.0132 or 3.1e-07>
DECISION: <reject | fail to reject>"""


def capped_z(p: float) -> float:
    """Two-sided z of ``p``, capped at :data:`SCORE_Z_CAP` (the reward's z)."""
    return z_of_p(p, SCORE_Z_CAP)


@dataclass(frozen=True)
class AnswerSpec:
    """One answer kind: the gold fields it fills (beside ``kind``), its prompt
    block and its strict and loose tolerances."""

    kind: str
    fields: tuple[str, ...]
    block: str
    strict: float = 0.0
    loose: float = 0.0

    def gold(self, **values) -> dict:
        """The ``gold`` struct of a record: this kind's fields set, the others None."""
        unknown = sorted(set(values) - set(self.fields))
        missing = sorted(set(self.fields) - set(values))
        if unknown or missing:
            raise ValueError(f"a {self.kind} gold takes {', '.join(self.fields)}; got {', '.join(sorted(values))}")
        return {name: (self.kind if name == "kind" else values.get(name)) for name in GOLD_FIELDS}

    def score(self, answer: dict, gold: dict, loose: bool = False) -> bool:
        """True when the parsed ``answer`` matches ``gold`` within the strict
        (or ``loose``) tolerance of this kind."""
        tol = self.loose if loose else self.strict
        if self.kind == "p_value":
            return abs(capped_z(answer["p_value"]) - capped_z(gold["p_value"])) < tol
        if self.kind == "interval":
            return all(_close(answer[k], gold[k], tol) for k in ("low", "high"))
        if self.kind == "estimate":
            return _close(answer["estimate"], gold["estimate"], tol)
        field = self.fields[0]
        return answer[field] == gold[field]


def _close(a: float, b: float, tol: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= tol + 1e-12


P_VALUE = AnswerSpec("p_value", ("p_value", "decision"), P_VALUE_BLOCK, strict=0.5, loose=1.0)
ESTIMATE = AnswerSpec("estimate", ("estimate",),
                      "End your answer with exactly this line:\nESTIMATE: <a number>", strict=0.001, loose=0.01)
INTERVAL = AnswerSpec("interval", ("low", "high"),
                      "End your answer with exactly these two lines:\nLOWER: <a number>\nUPPER: <a number>",
                      strict=0.001, loose=0.01)
INTEGER = AnswerSpec("integer", ("integer",), "End your answer with exactly this line:\nANSWER: <a whole number>")
COUNT = AnswerSpec("count", ("integer",), "End your answer with exactly this line:\nCOUNT: <a whole number>")
YES_NO = AnswerSpec("yes_no", ("yes_no",), "End your answer with exactly this line:\nANSWER: <yes | no>")

KINDS = {spec.kind: spec for spec in (P_VALUE, ESTIMATE, INTERVAL, INTEGER, COUNT, YES_NO)}


def field_problem(field: str, value) -> str | None:
    """Why ``value`` cannot be a gold's (or an accepted test's) ``field``, or
    None: a p-value is a real number in [0, 1], a decision one of
    :data:`DECISIONS`, an estimate or an interval's end a finite real number,
    an integer a whole number, a yes/no a boolean."""
    if field == "decision":
        return None if isinstance(value, str) and value in DECISIONS else f"is {value!r:.60}, not reject or fail to reject"
    if field == "yes_no":
        return None if isinstance(value, bool) else f"is {value!r:.60}, not true or false"
    if field == "integer":
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return None if ok else f"is {value!r:.60}, not a whole number"
    real = isinstance(value, numbers.Real) and not isinstance(value, bool) and _finite(value)
    if field == "p_value":
        return None if real and 0.0 <= value <= 1.0 else f"is {value!r:.60}, not a p-value in [0, 1]"
    return None if real else f"is {value!r:.60}, not a finite number"


def _finite(value: numbers.Real) -> bool:
    """True for a real number a double holds finitely (a whole number too large for one is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def gold_problem(gold) -> str | None:
    """Why ``gold`` (a record's gold struct) cannot grade answers, naming the
    field (``gold.p_value is nan, not a p-value in [0, 1]``), or None."""
    if not isinstance(gold, Mapping):
        return f"gold is {type(gold).__name__}, not a mapping"
    spec = KINDS.get(gold.get("kind")) if isinstance(gold.get("kind"), str) else None
    if spec is None:
        return f"gold.kind is {gold.get('kind')!r:.60}, not one of {', '.join(KINDS)}"
    for field in spec.fields:
        problem = None if field == "kind" else field_problem(field, gold.get(field))
        if problem:
            return f"gold.{field} {problem}"
    if spec.kind == "interval" and gold["low"] > gold["high"]:
        return f"gold.low ({gold['low']!r}) is above gold.high ({gold['high']!r})"
    return None

"""How hard a task is, from what the factory knows without a model.

For a curriculum, or for trainers that drop prompts whose rollouts all
succeed or all fail (DAPO's dynamic sampling), each p-value task gets a
difficulty from 0 (easy) to 1 (hard), a function of its record alone:

- ``careless``: the reward of the tempting analyses, graded as ``score``
  grades them: the naive test's p-value and decision, and the canonical
  test with the impossible values kept (the worse of the two; 1 where a task
  has neither). A trap that bites earns little;
- ``margin``: how far the gold z lies from the critical z at the task's
  alpha, as a share of that critical z (capped at 1). A gold z near the
  threshold leaves the decision to small differences of handling.

``difficulty = 1 - careless * (1/2 + margin/2)``: 0 where the tempting
analyses earn the full reward and the gold is far from the threshold, 1/2
where they earn it but the gold sits on the threshold, and 1 where the
tempting analyses earn nothing. Questions without a dataset (closed-form
answers) have none (None). ``agent-eval`` runs refine it: a task's pass rate
over runs is what a model finds hard (``score --by`` and the report's Agents
section give it per breakdown).
"""

from __future__ import annotations

from collections.abc import Mapping

from scipy import stats

from ..answers import capped_z
from .reward import answer_from_fields, reward

#: The record fields difficulty reads.
FIELDS = ("task_id", "method", "answer_kind", "gold", "accepted", "alpha", "naive_p", "naive_decision",
          "kept_impossible_p", "kept_impossible_decision")


def difficulty(record: Mapping) -> float | None:
    """The difficulty of the task ``record`` (see the module), rounded to 4 digits; None without a p-value."""
    gold = record["gold"]
    if record["answer_kind"] != "p_value" or gold["p_value"] is None:
        return None
    careless = min((reward(record, answer_from_fields({"p_value": p, "decision": d}, "p_value")).reward
                    for p, d in ((record["naive_p"], record["naive_decision"]),
                                 (record["kept_impossible_p"], record["kept_impossible_decision"])) if p is not None),
                   default=1.0)
    critical = float(stats.norm.isf(record["alpha"] / 2))
    margin = min(1.0, abs(capped_z(gold["p_value"]) - critical) / critical)
    return round(1.0 - careless * (0.5 + 0.5 * margin), 4)


#: The bins of :func:`difficulty_bin`.
BIN_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def difficulty_bin(value: float | None) -> str:
    """The bin of 0.2 a difficulty falls in (``0.4-0.6``; the last holds 1), or ``none``."""
    if value is None:
        return "none"
    k = min(int(value / 0.2 + 1e-9), len(BIN_EDGES) - 2)
    return f"{BIN_EDGES[k]:g}-{BIN_EDGES[k + 1]:g}"

"""taskfactory.use.difficulty: how hard a task is from its record: what the tempting analyses earn,
how near the threshold."""

import json

from scipy import stats

from taskfactory.use.difficulty import difficulty
from taskfactory.use.export import export

CRITICAL_P = 0.05


def record(gold_p, naive_p=None, kept_p=None, alpha=0.05):
    decision = lambda p: None if p is None else ("reject" if p < alpha else "fail to reject")
    return {"task_id": "welch_t-000000000000", "method": "welch_t", "answer_kind": "p_value", "alpha": alpha,
            "gold": {"kind": "p_value", "p_value": gold_p, "decision": decision(gold_p)}, "accepted": [],
            "naive_p": naive_p, "naive_decision": decision(naive_p), "kept_impossible_p": kept_p,
            "kept_impossible_decision": decision(kept_p)}


def test_no_tempting_analysis_and_a_gold_far_from_the_threshold_is_easy_and_on_it_half_hard():
    far = 2 * stats.norm.sf(2 * 1.959963984540054)   # z twice the critical z
    assert difficulty(record(far)) == 0.0
    assert difficulty(record(CRITICAL_P)) == 0.5
    assert difficulty(record(1.0)) == 0.0                # z = 0: as far below the critical z as it is


def test_a_trap_that_bites_makes_a_task_hard_and_the_worse_tempting_analysis_counts():
    assert difficulty(record(1e-6, naive_p=0.9)) > 0.95
    same = difficulty(record(1e-6, naive_p=1e-6))
    assert same == difficulty(record(1e-6)) and difficulty(record(1e-6, naive_p=1e-6, kept_p=0.9)) > 0.95


def test_a_question_without_a_p_value_has_none():
    closed = {**record(0.5), "answer_kind": "estimate", "gold": {"kind": "estimate", "p_value": None}}
    assert difficulty(closed) is None


def test_exports_carry_each_tasks_difficulty(tmp_path):
    import taskfactory as tf
    from conftest import PINNED
    from taskfactory.store.corpus import iter_records

    tf.build({"name": "d", "seed": 3, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"][:2]},
              "n": [40], "effects": ["null", "medium"], "perturbations": ["none"]}, tmp_path / "c")
    export(tmp_path / "c", "jsonl", tmp_path / "j")
    rows = [json.loads(line) for line in (tmp_path / "j" / "tasks-train.jsonl").open()]
    records = {r["task_id"]: r for r in iter_records(tmp_path / "c")}
    assert [r["difficulty"] for r in rows] == [difficulty(records[r["task_id"]]) for r in rows]
    assert all(0.0 <= r["difficulty"] <= 1.0 for r in rows)


def test_score_by_difficulty_the_naive_tests_reward_falls_from_bin_to_bin(tmp_path):
    import taskfactory as tf
    from conftest import PINNED
    from taskfactory.use.score import score

    tf.build({"name": "d", "seed": 5, "methods": ["welch_t", "paired_t"], "n": [60, 200],
              "scenarios": {"welch_t": PINNED["welch_t"]}, "effects": ["null", "borderline", "medium"],
              "perturbations": ["none", "extreme"]}, tmp_path / "c")
    bins = score(tmp_path / "c", baseline="naive", by=("difficulty",)).breakdowns["difficulty"]
    rewards = [bins[b]["mean_reward"] for b in sorted(bins) if bins[b]["tasks"] >= 10]
    assert len(rewards) >= 3 and rewards == sorted(rewards, reverse=True), bins

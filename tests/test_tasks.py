"""taskfactory.open: a corpus's tasks as objects, split into what the agent sees and what the grader needs."""

import json

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import InputError
from taskfactory.use.tasks import AGENT_FIELDS

from conftest import PINNED, built_once

GRID = {"name": "tasks", "seed": 4, "methods": ["welch_t", "wilson_ci"],
        "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [40], "effects": ["null"], "perturbations": ["none"],
        "split": {"test": 0.3, "seed": 1}}
#: Record fields that name or imply the family, the gold or the effect: never in what an agent sees.
ANSWER_FIELDS = {"method", "category", "scenario", "effect", "effect_value", "gold", "gold_p", "gold_method",
                 "naive_method", "naive_p", "accepted", "trap", "reference_r", "reference_py", "script", "dgp_params",
                 "roles"}


corpus = built_once(GRID, "tasks")


def test_tasks_by_split_with_the_agents_and_the_graders_views(corpus):
    everything = list(tf.open(corpus))
    test = list(tf.open(corpus, split="test"))
    assert len(tf.open(corpus)) == len(everything) and len(tf.open(corpus, split="test")) == len(test)
    assert {t.split for t in test} == {"test"} and 0 < len(test) < len(everything)
    for task in everything:
        view = task.agent_view()
        assert tuple(view) == AGENT_FIELDS and not ANSWER_FIELDS & set(view)
        assert not any(task.record["method"] in json.dumps(value) for value in view.values())   # the id would name it
        gold = task.record["gold"]
        if gold["kind"] == "p_value":
            answer = f"METHOD: Welch two-sample t-test\nP_VALUE: {gold['p_value']!r}\nDECISION: {gold['decision']}"
            assert task.grade(answer).reward == 1.0 and task.grade("no answer").reward == 0.0
    welch = next(t for t in everything if t.record["method"] == "welch_t")
    df = welch.dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == welch.record["n_rows"]
    assert list(df.columns) == [e["name"] for e in welch.agent_view()["data_dictionary"]]
    closed = next(t for t in everything if t.record["method"] == "wilson_ci")
    assert closed.dataframe() is None and closed.agent_view()["data_filename"] is None
    assert set(welch.grader_view()) == {"task_id", "method", "gold", "accepted"}


def test_a_task_is_found_by_id_within_its_filters(corpus):
    task = next(iter(tf.open(corpus, method="welch_t", split="test")))
    assert tf.open(corpus)[task.task_id].record == task.record
    assert len(tf.open(corpus, method="welch_t")) == sum(1 for t in tf.open(corpus) if t.record["method"] == "welch_t")
    with pytest.raises(KeyError):
        tf.open(corpus, split="train")[task.task_id]
    for missing in ("welch_t-000000000000", None, 7, "../manifest"):
        with pytest.raises(KeyError):
            tf.open(corpus)[missing]
        assert missing not in tf.open(corpus)
    assert task.task_id in tf.open(corpus) and task.task_id in tf.open(corpus, split="test")
    assert task.task_id not in tf.open(corpus, split="train")
    with pytest.raises(InputError, match=r"^split \('dev'\) must be one of train, test$"):
        tf.open(corpus, split="dev")

"""Worked trajectories: the scripted statistician through the sandbox, kept by
the paper's filter, replayed byte for byte, no number before its output, and
the files trainers load."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.use.agent import Sandbox, isolation_problem
from taskfactory.use.agent.statistician import decide, read_checks
from taskfactory.use.agent import trajectories
from taskfactory.use.agent.trajectories import FILES, write_trajectories
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
#: A family of each kind of step: checks that pick between siblings (two
#: groups, paired, two proportions), a test whose Python needs R (the mixed
#: model), one analysis per question, and a calculation without data; the
#: guided prompt (whose hints the statistician reads) for two groups.
GRID = {"name": "trajectories", "seed": 5, "n": [100],
        "methods": ["welch_t", "sign_test", "fisher_exact", "linear_mixed", "mcnemar", "wilson_ci"],
        "effects": ["null", {"name": "strong", "target_z": 3.5}], "prompt_styles": ["basic", "guided"],
        "perturbations": ["none", "missing+extreme"], "seeds": 1,
        "exclude": [{"method": ["wilson_ci", "linear_mixed", "mcnemar"], "effect": "null"},
                    {"method": ["sign_test", "fisher_exact", "linear_mixed", "mcnemar", "wilson_ci"],
                     "prompt_style": "guided"},
                    {"method": "wilson_ci", "perturbation": "missing+extreme"},
                    {"method": ["welch_t", "sign_test", "fisher_exact", "linear_mixed", "mcnemar"], "perturbation": "none"}]}
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def read_rows(folder) -> list[dict]:
    """The trajectories a folder holds: the kept ones, then those left out."""
    return [json.loads(line) for name in ("trajectories.jsonl", "left_out.jsonl")
            for line in (folder / name).read_text().splitlines()]


def outputs(row: dict) -> list[str]:
    return [m["content"] for m in row["messages"] if m["role"] == "tool"]


def replayed(row: dict, record: dict, sandbox) -> list[str]:
    """The outputs of a trajectory's tool calls run again in a fresh workspace holding the task's file."""
    space = sandbox.workspace({record["data_filename"]: record["data_csv"].encode()} if record["data_csv"] else {})
    try:
        return [space.run("python" if call["function"]["name"] == "run_python" else "r",
                          call["function"]["arguments"]["code"]).output
                for message in row["messages"] for call in message.get("tool_calls") or []]
    finally:
        space.close()


def foreseen(row: dict, gold: dict) -> list[str]:
    """The numbers the assistant states before a tool output (or the task) showed them,
    and the gold p-value where it appears before the last call's output."""
    seen, early = row["messages"][0]["content"] + row["messages"][1]["content"], []
    for message in row["messages"][2:]:
        if message["role"] == "tool":
            seen += message["content"]
        else:
            early += [n for n in _NUMBER.findall(message["content"]) if n not in seen]
    printed = f"{gold['p_value']:.10g}" if gold["p_value"] is not None else ""
    if len(printed) > 4:   # not a round 1
        early += [printed for m in row["messages"][2:-2] if printed in _NUMBER.findall(m.get("content") or "")]
    return early


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("trajectories") / "corpus"
    tf.build(GRID, out, progress=False)
    return out


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(pool=2) as box:
        yield box


@pytest.fixture(scope="module")
def written(corpus, sandbox, tmp_path_factory):
    out = tmp_path_factory.mktemp("written") / "trajectories"
    summary = write_trajectories(corpus, out, jobs=2, progress=False, sandbox=sandbox)
    return out, summary, read_rows(out)


def test_every_task_gets_a_trajectory_and_the_kept_ones_answer_right(corpus, written):
    out, summary, rows = written
    records = {r["task_id"]: r for r in iter_records(corpus)}
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert sorted(r["task_id"] for r in rows) == sorted(records)   # one row per task
    kept = [r["task_id"] for r in rows if r["kept"]]
    assert kept == [task for task in records if task in set(kept)]   # the kept file first, in corpus order
    assert [r["kept"] for r in rows] == [True] * len(kept) + [False] * (len(rows) - len(kept))
    assert summary.tasks == len(rows) and summary.kept == sum(r["kept"] for r in rows)
    for row in rows:
        assert row["kept"] == (row["reason"] is None)
        assert not any("Traceback" in output for output in outputs(row)), row["task_id"]
        if row["kept"]:
            assert row["choice"] in ("gold", "accepted") and row["reward"] > 0.9
            gold = records[row["task_id"]]["gold"]
            final = row["messages"][-1]["content"]
            if gold["kind"] == "p_value":
                assert f"DECISION: {gold['decision']}" in final
    # the mixed model's Python solution needs this package, so where it is chosen its test runs in R
    assert {r["language"] for r in rows if r["chosen"] == "linear_mixed"} == {"python+r"}
    assert {r["language"] for r in rows if r["chosen"] != "linear_mixed"} == {"python"}
    guided = [r for r in rows if records[r["task_id"]]["prompt_style"] == "guided"]
    assert guided and all("The task's hints say: " in r["messages"][4]["content"] for r in guided)
    assert all(row["kept_share"] >= 0.8 for row in summary.families.values()), summary.families


def test_messages_are_in_the_chat_format_trainers_load(written):
    _, _, rows = written
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        for message, reply in zip(row["messages"][2:-1:2], row["messages"][3::2]):
            (call,) = message["tool_calls"]
            assert isinstance(call["function"]["arguments"], dict) and set(call["function"]["arguments"]) == {"code"}
            assert reply == {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
                             "content": reply["content"]}
        assert [t["function"]["name"] for t in row["tools"]] == ["run_python", "run_r"]


def test_a_trajectory_replays_byte_for_byte(written, corpus, sandbox):
    _, _, rows = written
    records = {r["task_id"]: r for r in iter_records(corpus)}
    for row in rows[::5]:
        assert replayed(row, records[row["task_id"]], sandbox) == outputs(row), row["task_id"]


def test_no_number_is_stated_before_a_tool_output_showed_it(written, corpus):
    _, _, rows = written
    golds = {r["task_id"]: r["gold"] for r in iter_records(corpus)}
    assert [foreseen(row, golds[row["task_id"]]) for row in rows] == [[] for _ in rows]


def test_the_choice_follows_the_printed_checks_not_the_family():
    printed = ("Shapiro-Wilk test of the within-group studentized residuals: W = 0.9012, p = 0.0031\n"
               "Brown-Forsythe test of equal spreads: F = 0.412, p = 0.5243\n")
    assert read_checks(printed)["Brown-Forsythe test of equal spreads"] == {"F": 0.412, "p": 0.5243}
    assert decide("two_groups", read_checks(printed))[0] == "mann_whitney"
    assert decide("two_groups", read_checks(printed.replace("0.0031", "0.31")))[0] == "welch_t"
    paired = ("Octile skewness of the differences (asymmetric beyond 0.4): value = -0.512\n"
              "Shapiro-Wilk test of the differences: W = 0.9512, p = 0.04\n")
    assert decide("paired", read_checks(paired)) == (
        "sign_test", "the differences are lopsided (octile skewness -0.512), so only their signs test a typical "
                     "change of zero")
    assert decide("paired", read_checks(paired.replace("-0.512", "0.2")))[0] == "wilcoxon_signed_rank"


def test_groups_whose_clusters_each_lie_in_one_group_are_compared_on_the_cluster_means():
    printed = ("Clusters holding more than one group: count = 0, clusters = 12\n"
               "Shapiro-Wilk test of the within-group studentized residuals: W = 0.9012, p = 0.0031\n"
               "Brown-Forsythe test of equal spreads: F = 0.412, p = 0.5243\n")
    assert decide("two_groups", read_checks(printed)) == (
        "cluster_means_t", "each of the 12 clusters lies in one group (whole clusters were assigned), so the "
                           "clusters' means are the independent units")
    assert decide("k_groups", read_checks(printed))[0] == "cluster_means_anova"
    assert decide("two_groups", read_checks(printed.replace("count = 0", "count = 11")))[0] == "mann_whitney"


def test_two_series_that_follow_their_previous_values_are_judged_by_their_changes():
    series = ("Shapiro-Wilk test of load: W = 0.9021, p = 0.0012\n"
              "Shapiro-Wilk test of rate: W = 0.9712, p = 0.3345\n"
              "Lag-1 autocorrelation of load in the order of day (persistent beyond 0.4): r1 = 0.9132\n"
              "Shapiro-Wilk test of the changes in load: W = 0.9811, p = 0.7012\n"
              "Lag-1 autocorrelation of rate in the order of day (persistent beyond 0.4): r1 = 0.8411\n"
              "Shapiro-Wilk test of the changes in rate: W = 0.9688, p = 0.3012\n")
    assert decide("association", read_checks(series)) == (
        "pearson_differences", "both series follow their previous value (lag-1 autocorrelations 0.9132, 0.8411), "
                               "and their changes look normal (Shapiro-Wilk p = 0.7012, p = 0.3012)")
    assert decide("association", read_checks(series.replace("p = 0.3012", "p = 0.0112")))[0] == "spearman_differences"
    # one series that does not follow its previous value: the levels are independent pairs, judged by their shape
    assert decide("association", read_checks(series.replace("r1 = 0.8411", "r1 = 0.1411")))[0] == "spearman"
    levels = series.replace("p = 0.0012", "p = 0.0412")
    assert decide("association", read_checks(levels.replace("r1 = 0.8411", "r1 = 0.1411")))[0] == "pearson"


def test_a_trajectory_that_chose_neither_the_gold_nor_an_accepted_test_is_kept_out(corpus, sandbox, tmp_path):
    from taskfactory.use.agent.trajectories import play
    from taskfactory.use.agent.statistician import Statistician

    record = next(r for r in iter_records(corpus) if r["method"] == "welch_t" and r["effect"] == "null")
    record = {**record, "accepted": []}

    class Contrary(Statistician):
        def episode(self, rec):
            episode = super().episode(rec)
            episode._choose = lambda printed: (tf.get_family("mann_whitney"), "the rule says so")
            return episode

    row = play(record, sandbox, Contrary())
    assert (row["kept"], row["choice"], row["reason"]) == (
        False, "other", "chose the Wilcoxon rank sum test, neither the canonical test nor an accepted one")


def test_the_cli_writes_a_new_folder_and_refuses_one_in_use(corpus, tmp_path):
    out = tmp_path / "t"
    result = CliRunner().invoke(main, ["trajectories", str(corpus), "-o", str(out), "--method", "wilson_ci",
                                       "--limit", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"wrote 2 trajectories \(2 kept\) in [\d.]+ s \([\d.]+ per second\)\n", result.output)
    again = CliRunner().invoke(main, ["trajectories", str(corpus), "-o", str(out), "--no-progress"])
    assert again.exit_code == 2
    assert again.output == f"error: -o {out}: the folder is not empty; give a new or empty folder\n"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    refused = CliRunner().invoke(main, ["trajectories", str(corpus), "-o", str(link), "--no-progress"])
    assert refused.exit_code == 2 and "a symbolic link" in refused.output


def test_the_parquet_loads_in_datasets_with_the_verl_sft_keys(written):
    datasets = pytest.importorskip("datasets")
    out, _, rows = written
    loaded = datasets.load_dataset("parquet", data_files=str(out / "trajectories.parquet"), split="train")
    assert {"messages", "tools"} <= set(loaded.column_names)
    assert loaded.num_rows == sum(r["kept"] for r in rows) and all(loaded["kept"])
    first = loaded[0]["messages"]
    assert first[2]["tool_calls"][0]["function"]["arguments"]["code"].startswith("import numpy as np")
    assert first[3]["role"] == "tool" and first[3]["name"] == "run_python"


def _without_nulls(value):
    """``value`` with the keys Parquet filled with null (a message's absent keys) removed."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return [_without_nulls(v) for v in value] if isinstance(value, list) else value


def test_rows_stream_in_row_groups_and_a_failure_leaves_no_file(corpus, sandbox, tmp_path, monkeypatch):
    monkeypatch.setattr(trajectories._Writer, "BATCH", 2)
    write_trajectories(corpus, tmp_path / "b", method="welch_t", progress=False, sandbox=sandbox)
    parquet = pq.ParquetFile(tmp_path / "b" / "trajectories.parquet")
    kept = [json.loads(line) for line in (tmp_path / "b" / "trajectories.jsonl").read_text().splitlines()]
    assert parquet.metadata.num_row_groups == -(-len(kept) // 2) > 1
    assert [_without_nulls(row) for row in parquet.read().to_pylist()] == [_without_nulls(row) for row in kept]
    played = trajectories.play

    def fails_on_the_third(record, box, agent, calls=[]):
        calls.append(record["task_id"])
        if len(calls) == 3:
            raise RuntimeError("the sandbox went away")
        return played(record, box, agent)

    monkeypatch.setattr(trajectories, "play", fails_on_the_third)
    with pytest.raises(RuntimeError, match="the sandbox went away"):
        write_trajectories(corpus, tmp_path / "c", method="welch_t", progress=False, sandbox=sandbox)
    assert list((tmp_path / "c").iterdir()) == []


def test_fences_mode_writes_code_blocks_and_their_outputs_as_user_messages(corpus, sandbox, tmp_path):
    summary = write_trajectories(corpus, tmp_path / "f", method="welch_t", limit=2, mode="fences", progress=False,
                                 sandbox=sandbox)
    rows = read_rows(tmp_path / "f")
    assert summary.tasks == 2 and all(r["tools"] == [] and r["mode"] == "fences" for r in rows)
    for message, reply in zip(rows[0]["messages"][2:-1:2], rows[0]["messages"][3::2]):
        assert "tool_calls" not in message and "\n```python\n" in message["content"]
        assert reply["role"] == "user" and reply["content"].startswith("Output of block 1 (python):\n```\n")


@pytest.mark.slow
def test_every_family_is_played_kept_mostly_and_replayed(tmp_path, sandbox):
    """Every family at N = 100, strong effects and nulls, each task in Python
    or R: no call fails, no number is stated before an output showed it, at
    least 80 % of a family's trajectories are kept, and the first two of each
    replay byte for byte."""
    grid = {"name": "every", "seed": 9, "methods": "all", "n": [100], "effects": ["null", {"name": "strong", "target_z": 3.5}],
            "prompt_styles": ["basic"], "perturbations": ["none"], "seeds": 1,
            "exclude": [{"method": ["wilson_ci", "two_prop", "two_prop_z", "sample_size", "holm"], "effect": "strong"}]}
    tf.build(grid, tmp_path / "c", progress=False, jobs=2)
    summary = write_trajectories(tmp_path / "c", tmp_path / "t", jobs=2, language="mixed", progress=False,
                                 sandbox=sandbox)
    assert set(summary.families) == {f.name for f in tf.families()}
    assert all(row["kept_share"] >= 0.8 for row in summary.families.values()), summary.families
    records = {r["task_id"]: r for r in iter_records(tmp_path / "c")}
    rows = read_rows(tmp_path / "t")
    failed = [r["task_id"] for r in rows if any(re.search(r"^(Traceback|Error)", output, re.M)
                                                  for output in outputs(r))]
    assert failed == [] and {r["language"] for r in rows} == {"python", "python+r", "r"}
    early = {r["task_id"]: foreseen(r, records[r["task_id"]]["gold"]) for r in rows}
    assert {task: numbers for task, numbers in early.items() if numbers} == {}
    for family in summary.families:
        for row in [r for r in rows if r["method"] == family][:2]:
            assert replayed(row, records[row["task_id"]], sandbox) == outputs(row), (family, row["task_id"])


def test_in_r_or_mixed_every_call_is_r_or_drawn_per_task_and_replays(corpus, sandbox, tmp_path):
    records = {r["task_id"]: r for r in iter_records(corpus)}
    for language, expected in (("r", {"r"}), ("mixed", {"python", "r"})):
        summary = write_trajectories(corpus, tmp_path / language, method="welch_t", limit=6, language=language,
                                     progress=False, sandbox=sandbox)
        rows = read_rows(tmp_path / language)
        assert summary.tasks == 6 and {r["language"] for r in rows} == expected
        assert all(r["kept"] for r in rows if r["choice"] == "gold")
        assert not any("Error" in output for row in rows for output in outputs(row)[:-1])
        row = next(r for r in rows if r["language"] == "r")
        assert replayed(row, records[row["task_id"]], sandbox) == outputs(row)


def test_the_r_twins_of_the_checks_print_what_the_python_ones_print(tmp_path, sandbox):
    """Each sibling kind's checks in R and in Python, on the same handled data,
    print the same values (to their printed digits) and lead to the same test."""
    from taskfactory.use.agent import checks_r
    from taskfactory.use.agent.statistician import KINDS, OCTILE_SKEWED, PERSISTENT, check_code
    from taskfactory.make.analysis import prepare, read_csv_text
    from taskfactory.design.catalogue import get_scenario
    from taskfactory.make.columns import roles_of

    methods = ["cluster_means_t", "kruskal_wallis", "sign_test", "spearman_differences", "fisher_exact", "ols_robust",
               "negative_binomial", "cluster_fixed_effects", "cox_ph"]
    tf.build({"name": "twins", "seed": 3, "methods": methods, "n": [100], "effects": [{"name": "strong", "target_z": 3.5}],
              "prompt_styles": ["basic"], "perturbations": ["none"], "seeds": 1}, tmp_path / "c", progress=False)
    seen = set()
    for record in iter_records(tmp_path / "c"):
        kind = tf.get_family(record["method"]).question_kind
        if kind in seen:
            continue
        seen.add(kind)
        roles = roles_of(record["roles"])
        data = prepare(tf.get_family(record["method"]), read_csv_text(record["data_csv"]), roles,
                       get_scenario(record["method"], record["scenario"]).ranges())
        python = io.StringIO()
        with contextlib.redirect_stdout(python):
            exec("import numpy as np\nimport pandas as pd\nfrom scipy import stats\nimport statsmodels.api as sm\n"
                 + check_code(kind, roles), {"d": data})
        space = sandbox.workspace({"d.csv": data.to_csv(index=False).encode()})
        try:
            r = space.run("r", 'd <- read.csv("d.csv", na.strings = "")\n'
                          + checks_r.checks(kind, roles, OCTILE_SKEWED, PERSISTENT))
        finally:
            space.close()
        in_python, in_r = read_checks(python.getvalue()), read_checks(r.output)
        assert in_python.keys() == in_r.keys(), (kind, python.getvalue(), r.output)
        for label, values in in_python.items():
            for name, value in values.items():
                assert value == pytest.approx(in_r[label][name], rel=2e-3, abs=2e-3), (kind, label, name)
        assert decide(kind, in_python)[0] == decide(kind, in_r)[0]
    assert seen == set(KINDS)


def test_a_check_that_printed_nothing_leaves_the_trajectory_out_and_claims_nothing(corpus, sandbox, monkeypatch):
    from taskfactory.use.agent import statistician
    from taskfactory.use.agent.trajectories import play

    with pytest.raises(statistician.MissingCheck, match="the checks printed no 'Breusch-Pagan' line"):
        decide("regression", read_checks("Outcome values at 0: count = 0\n"))
    monkeypatch.setattr(statistician, "check_code", lambda kind, roles, language="python": "print('no checks')\n")
    record = next(r for r in iter_records(corpus) if r["method"] == "welch_t")
    row = play(record, sandbox, statistician.Statistician())
    assert (row["kept"], row["chosen"], row["choice"], row["reason"]) == (
        False, None, None, "no test was chosen: the checks printed no 'Shapiro-Wilk test of the within-group' line")
    assert row["messages"][-1] == {"role": "tool", "tool_call_id": "call_2", "name": "run_python", "content": "no checks\n"}

"""The family contract carries designs and answers beyond one p-value on one
flat table: toy families go through plan, build, shards, verify, inspect and
the dataset card."""

import json

import pyarrow.parquet as pq
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.make.columns import drawn_params
from toys import install
from toys.models import ToyClusterMeans, ToyOls


def build_toys(tmp_path, monkeypatch):
    install(monkeypatch, tmp_path, ToyOls(), ToyClusterMeans())
    grid = {"name": "toys", "seed": 4, "methods": ["toy_ols", "toy_cluster_means"], "n": [24],
            "effects": ["null", "medium"], "perturbations": ["none", "missing"], "seeds": 2}
    assert tf.plan(grid).total == 2 * 2 * 2 * 2 * 2
    out = tmp_path / "corpus"
    summary = tf.build(grid, out)
    rows = [r for path in sorted((out / "data").glob("*.parquet")) for r in pq.read_table(path).to_pylist()]
    return out, summary, rows


def test_toys_go_through_build_verify_inspect_and_card(tmp_path, monkeypatch):
    out, summary, rows = build_toys(tmp_path, monkeypatch)
    assert summary.tasks == 32 and summary.rejected == 0
    assert tf.verify(out).ok
    card = (out / "README.md").read_text()
    assert "toy_ols" in card and "toy_cluster_means" in card
    shown = CliRunner().invoke(main, ["inspect", str(out), "--method", "toy_cluster_means"])
    assert shown.exit_code == 0 and "cluster identifier" in shown.output
    from taskfactory.methods import FAMILY_ORDER

    names = [f.name for f in tf.families()]  # the toys follow the catalogue, by name
    assert names == [*FAMILY_ORDER, "toy_cluster_means", "toy_ols"]


def test_a_model_term_is_the_gold_and_its_table_is_kept(tmp_path, monkeypatch):
    _, _, rows = build_toys(tmp_path, monkeypatch)
    rec = next(r for r in rows if r["method"] == "toy_ols")
    terms = rec["gold_terms"]
    assert [t["term"] for t in terms] == ["(Intercept)", "dose_std", "organic_std"]
    target = next(t for t in terms if t["target"])
    assert target["term"] == "dose_std" and target["p_value"] == rec["gold_p"] == rec["gold"]["p_value"]
    assert rec["gold"]["kind"] == rec["answer_kind"] == "p_value"
    assert target["df"] == rec["n_analysed"] - 3 and rec["gold_df"] == [target["df"]]


def test_a_clustered_design_counts_clusters_and_numbers_them(tmp_path, monkeypatch):
    _, _, rows = build_toys(tmp_path, monkeypatch)
    for rec in (r for r in rows if r["method"] == "toy_cluster_means"):
        size = int(drawn_params(rec["dgp_params"])["cluster_size"])
        assert rec["n"] == 24 and rec["n_rows"] == 24 * size
        header, *lines = rec["data_csv"].splitlines()
        school = header.split(",").index("school")
        labels = {line.split(",")[school] for line in lines} - {""}
        assert labels <= {f"S{k:02d}" for k in range(1, 25)} and len(labels) >= 20
        if rec["perturbation"] == "none":
            assert rec["n_analysed"] == 24 * size and len(labels) == 24


def test_wilson_interval_matches_r():
    """R: prop.test(37, 120, correct = FALSE)$conf.int
    0.23272736988916301 0.39582997723800678"""
    from toys.closed import wilson

    low, high = wilson(37, 120)
    assert abs(low - 0.23272736988916301) < 1e-12 and abs(high - 0.39582997723800678) < 1e-12


def test_a_question_without_a_dataset_goes_through_build_verify_and_inspect(tmp_path, monkeypatch):
    from toys.closed import ToyWilson, wilson

    install(monkeypatch, tmp_path, ToyWilson())
    grid = {"name": "closed", "seed": 2, "methods": ["toy_wilson"], "n": [40, 200], "effects": ["null"],
            "seeds": 3}
    out = tmp_path / "corpus"
    summary = tf.build(grid, out)
    assert summary.tasks == 12 and tf.verify(out).ok
    rows = [r for path in sorted((out / "data").glob("*.parquet")) for r in pq.read_table(path).to_pylist()]
    for rec in rows:
        successes = int(drawn_params(rec["dgp_params"])["successes"])
        low, high = wilson(successes, rec["n"])
        assert rec["gold"] == {"kind": "interval", "p_value": None, "decision": None, "estimate": None,
                               "low": low, "high": high, "integer": None, "yes_no": None}
        assert rec["data_csv"] is rec["script"] is rec["gold_p"] is rec["n_rows"] is None
        assert f"{successes} of them" in rec["prompt"] and rec["prompt"].endswith("UPPER: <a number>\n")
        assert "prop.test(" in rec["reference_r"] and rec["trap"] is False
    shown = CliRunner().invoke(main, ["inspect", str(out), "--method", "toy_wilson"])
    assert shown.exit_code == 0 and "answer          interval: low = " in shown.output


def test_a_question_without_a_dataset_takes_no_perturbation(tmp_path, monkeypatch):
    from toys.closed import ToyWilson

    install(monkeypatch, tmp_path, ToyWilson())
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"seed": 2, "methods": ["toy_wilson"], "n": [40], "perturbations": ["none", "missing"]}))
    result = CliRunner().invoke(main, ["plan", str(grid)])
    assert result.exit_code == 2 and result.output == (
        f"error: {grid}: key 'perturbations': 'missing' spoils a dataset, and 'toy_wilson' asks a question without "
        "one; exclude {method: toy_wilson, perturbation: missing}\n")


def test_the_panel_within_slope_matches_r():
    """R: d <- data.frame(unit = rep(c("S01","S02","S03","S04"), each = 3), period = rep(1:3, 4),
         y = c(10.2, 11.5, 12.1, 8.4, 8.9, 10.6, 12.0, 11.8, 13.9, 9.1, 10.4, 10.2))[-5, ]
    summary(lm(y ~ period + factor(unit), data = d))$coefficients[2, ]
      0.8875000000000005107 0.1866415533702087681 4.7551040160902395826 0.0031421701784250526
    summary(lm(y ~ period, data = d))$coefficients[2, ]   (the naive pooled slope)
      0.88750000000000051 0.49047267708782427 1.80947898111169270 0.10382051856732172"""
    import pandas as pd

    from taskfactory.condition import Condition
    from toys.models import ToyPanel

    data = pd.DataFrame({"store": [u for u in ["S01", "S02", "S03", "S04"] for _ in range(3)],
                         "week": [1, 2, 3] * 4,
                         "basket": [10.2, 11.5, 12.1, 8.4, 8.9, 10.6, 12.0, 11.8, 13.9, 9.1, 10.4, 10.2]}).drop(index=4)
    cond = Condition(method="toy_panel", n=4, roles={"outcome": "basket", "unit": "store", "period": "week"})
    res = ToyPanel().analyse(cond, data)
    assert res.target == "week" and res.df == (6.0,)  # 11 rows - 4 units - 1 slope
    assert abs(res.estimate - 0.8875000000000005107) < 1e-13
    assert abs(res.terms[0].std_error - 0.1866415533702087681) < 1e-13
    assert abs(res.pvalue - 0.0031421701784250526) / 0.0031421701784250526 < 1e-10
    naive = ToyPanel().naive(cond, data)
    assert abs(naive.pvalue - 0.10382051856732172) / 0.10382051856732172 < 1e-10


def test_a_panel_counts_units_numbers_them_and_their_periods(tmp_path, monkeypatch):
    from toys.models import ToyPanel

    install(monkeypatch, tmp_path, ToyPanel())
    grid = {"name": "panel", "seed": 9, "methods": ["toy_panel"], "n": [12], "effects": ["null", "medium"],
            "perturbations": ["none", "missing"], "seeds": 3}
    out = tmp_path / "corpus"
    assert tf.build(grid, out).rejected == 0
    assert tf.verify(out).ok
    rows = [r for path in sorted((out / "data").glob("*.parquet")) for r in pq.read_table(path).to_pylist()]
    assert len(rows) == 2 * 2 * 3 * 2  # effects x perturbations x seeds x prompt styles
    for rec in rows:
        periods = int(drawn_params(rec["dgp_params"])["periods"])
        assert rec["n"] == 12 and rec["n_rows"] == 12 * periods
        header, *lines = rec["data_csv"].splitlines()
        store, week = header.split(",").index("store"), header.split(",").index("week")
        cells = [line.split(",") for line in lines]
        assert rec["gold_terms"][0]["term"] == "week"
        if rec["perturbation"] == "none":
            assert {c[store] for c in cells} == {f"S{k:02d}" for k in range(1, 13)}
            assert sorted(c[week] for c in cells) == sorted(str(t) for t in range(1, periods + 1) for _ in range(12))
            assert rec["gold_df"] == [12 * periods - 12 - 1]
        else:  # blanks reach the design columns too; complete cases drop those rows
            assert {c[store] for c in cells} - {""} <= {f"S{k:02d}" for k in range(1, 13)}
            assert {c[week] for c in cells} - {""} <= {str(t) for t in range(1, periods + 1)}
            assert rec["n_analysed"] < 12 * periods
    shown = CliRunner().invoke(main, ["inspect", str(out)])
    assert shown.exit_code == 0 and "`store` (unit identifier)" in shown.output and "`week` (period)" in shown.output
    listed = CliRunner().invoke(main, ["methods"], env={"TASKFACTORY_SCENARIOS": str(tmp_path / "scenarios")})
    assert "n counts units" in listed.output

"""Perturbations: blank cells (MCAR/MAR) and impossible values, and their canonical handling."""

import json

import numpy as np
import pytest
from scipy import stats

import taskfactory as tf
from taskfactory.analysis import read_csv_text
from taskfactory.task import record

from conftest import FAMILIES, dataset, small_grid

KINDS = ["missing", "extreme", "missing+extreme"]


def spoiled(ds, scen, family):
    """Blank cells of the test's columns, and out-of-range values, counted on the CSV itself."""
    data = read_csv_text(ds.csv_text)
    cols = family.role_columns(scen.roles)
    blank = int(data[cols].isna().to_numpy().sum())
    bad = {name: data[name][(data[name] < lo) | (data[name] > hi)].tolist() for name, (lo, hi) in scen.ranges().items()}
    return data, blank, bad


@pytest.mark.parametrize("method", FAMILIES)
@pytest.mark.parametrize("kind", KINDS)
def test_recorded_counts_match_the_csv(method, kind):
    family = tf.get_family(method)
    n = max(family.min_n, 120)
    grid = small_grid(method, n=n, perturbations=[kind])
    for scen in tf.load_scenarios(method)[:3]:
        c, ds = dataset(grid, method, scen.id, n, "medium", perturbation=kind)
        plan = ds.condition.perturbation
        data, blank, bad = spoiled(ds, scen, family)
        impossible = sum(len(v) for v in bad.values())
        assert (ds.n_blank_cells, ds.n_impossible_values) == (blank, impossible)
        assert blank == (plan["missing"]["cells"] if "missing" in plan else 0)
        assert impossible == (plan["extreme"]["rows"] if "extreme" in plan else 0)
        if "extreme" in plan:
            assert {name for name, v in bad.items() if v} <= set(plan["extreme"]["columns"])
        rec = record(grid, c, ds)
        assert rec["perturbation"] == kind and json.loads(rec["perturbation_detail"]) == plan
        assert (rec["n_blank_cells"], rec["n_impossible_values"]) == (blank, impossible)
        cols = family.role_columns(scen.roles)
        masked = data.copy()
        for name, (lo, hi) in scen.ranges().items():
            if name in cols:
                masked.loc[(masked[name] < lo) | (masked[name] > hi), name] = np.nan
        assert rec["n_analyzed"] == len(masked.dropna(subset=cols))


@pytest.mark.parametrize("n", [12, 40, 300, 2000])
def test_rates_stay_within_their_bounds(n):
    grid = small_grid("welch_t", n=max(n, 20), perturbations=["missing+extreme"])
    n = grid.n[0]
    family = tf.get_family("welch_t")
    for seed in range(25):
        scen = tf.load_scenarios("welch_t")[seed % 6]
        _, ds = dataset(grid, "welch_t", scen.id, n, "null", seed=seed, perturbation="missing+extreme")
        cells = n * len(family.role_columns(scen.roles))
        assert 0.03 <= ds.n_blank_cells / cells <= 0.15 + 1e-12
        rows = ds.n_impossible_values
        assert rows >= 1 and (rows / n <= 0.03 + 1e-12 or rows == 1) and (rows / n >= 0.01 - 1e-12 or n < 100)


def _blank_rows_and_driver(mechanism):
    grid = small_grid("one_sample_t", n=3000, perturbations=["missing"])
    scen = tf.load_scenarios("one_sample_t")[0]
    for seed in range(40):
        _, ds = dataset(grid, "one_sample_t", scen.id, 3000, "null", seed=seed, perturbation="missing")
        plan = ds.condition.perturbation["missing"]
        if plan["mechanism"] == mechanism:
            data = read_csv_text(ds.csv_text)
            driver = plan.get("driver") or next(v.name for v in scen.variables
                                                if v.type in ("numeric", "integer") and v.name != scen.roles["outcome"])
            return data[scen.roles["outcome"]].isna().to_numpy(), data[driver].to_numpy(), plan
    raise AssertionError(f"no {mechanism} task among 40 seeds")


def test_mar_blanks_depend_on_the_driver_and_mcar_blanks_do_not():
    blank, driver, plan = _blank_rows_and_driver("MAR")
    assert stats.mannwhitneyu(driver[blank], driver[~blank]).pvalue < 1e-6
    assert 1.0 <= plan["strength"] <= 2.0
    blank, driver, _ = _blank_rows_and_driver("MCAR")
    assert stats.mannwhitneyu(driver[blank], driver[~blank]).pvalue > 0.01


def test_impossible_values_look_like_recording_errors():
    grid = small_grid("welch_t", n=400, perturbations=["extreme"])
    scen = tf.load_scenarios("welch_t")[0]
    lo, hi = scen.variable(scen.roles["outcome"]).range
    values = []
    for seed in range(20):
        _, ds = dataset(grid, "welch_t", scen.id, 400, "null", seed=seed, perturbation="extreme")
        _, _, bad = spoiled(ds, scen, tf.get_family("welch_t"))
        values += bad[scen.roles["outcome"]]
    assert all(v < lo or v > hi for v in values)
    assert len(set(values)) >= 8, sorted(set(values))
    assert any(v < 0 for v in values) and any(v > hi for v in values) and any(0 <= v < lo for v in values)


def test_impossible_values_in_unused_columns_leave_the_test_alone():
    """Families whose test columns are categorical get their impossible values in a numeric extra."""
    grid = small_grid("two_proportion_z", n=200, perturbations=["extreme"])
    scen = tf.load_scenarios("two_proportion_z")[0]
    _, ds = dataset(grid, "two_proportion_z", scen.id, 200, "medium", perturbation="extreme")
    assert ds.n_impossible_values >= 2 and ds.gold.n == 200
    assert ds.kept is not None and ds.kept.pvalue == ds.gold.pvalue


def test_keeping_impossible_values_is_a_trap_and_guided_prompts_say_so():
    grid = small_grid("one_sample_t", n=120, perturbations=["missing+extreme"])
    scen = tf.load_scenarios("one_sample_t")[0]
    kinds, seen = set(), 0
    for seed in range(30):
        c, ds = dataset(grid, "one_sample_t", scen.id, 120, "borderline", seed=seed, style="guided",
                        perturbation="missing+extreme")
        rec = record(grid, c, ds)
        assert "recording errors" in rec["prompt"] and "blank" in rec["prompt"]
        assert rec["kept_impossible_p"] == ds.kept.pvalue
        assert rec["trap"] == bool(rec["trap_kinds"])
        assert rec["trap_kinds"] == (["impossible_values"] if rec["kept_impossible_decision"] != rec["gold_decision"] else [])
        kinds |= set(rec["trap_kinds"])
        seen += rec["trap"]
    assert kinds == {"impossible_values"} and 5 <= seen <= 25
    basic = record(grid, c._replace(prompt_style="basic"), ds)
    assert "recording errors" not in basic["prompt"]


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_null_p_values_stay_uniform_under_missing_cells(method):
    n = max(tf.get_family(method).min_n, 30)
    grid = small_grid(method, n=n, seed=13, perturbations=["missing"])
    scenarios = [s.id for s in tf.load_scenarios(method)]
    ps = np.array([dataset(grid, method, scenarios[k % len(scenarios)], n, "null", seed=k,
                           perturbation="missing")[1].gold.pvalue for k in range(200)])
    assert stats.kstest(ps, "uniform").pvalue > 0.001
    assert abs(float(np.mean(ps < 0.05)) - 0.05) < 3.5 * np.sqrt(0.05 * 0.95 / 200)


def test_perturbation_names_are_canonical():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [30], "perturbations": ["extreme+missing", "none"],
                      "exclude": [{"perturbation": "extreme+missing", "n": 30, "effect": "null"}]})
    assert g.perturbations == ("missing+extreme", "none")
    assert not any(c.perturbation == "missing+extreme" and c.effect.name == "null" for c in g.tasks())
    with pytest.raises(tf.GridError, match=r"key 'perturbations': lists a value twice"):
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [30], "perturbations": ["missing+extreme", "extreme+missing"]})
    with pytest.raises(tf.GridError, match=r"unknown value 'missing\+missing'"):
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [30], "perturbations": ["missing+missing"]})

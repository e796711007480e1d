"""Perturbations: blank cells (MCAR/MAR) and impossible values, and their canonical handling."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

import taskfactory as tf
from taskfactory.make.analysis import read_csv_text
from taskfactory.design import perturb
from taskfactory.kit import blank_cells, relate
from taskfactory.make.task import record

from conftest import DISCRETE, FAMILIES, dataset, fit_n, null_p, small_grid

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
    n = fit_n(method, 120)
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
        assert rec["perturbation"] == kind and rec["perturbation_detail"] == plan
        assert (rec["n_blank_cells"], rec["n_impossible_values"]) == (blank, impossible)
        cols = family.role_columns(scen.roles)
        masked = data.copy()
        for name, (lo, hi) in scen.ranges().items():
            if name in cols:
                masked.loc[(masked[name] < lo) | (masked[name] > hi), name] = np.nan
        complete = masked.dropna(subset=cols)
        if method == "friedman":   # every unit goes through every condition: complete blocks only
            unit = next(scen.roles[r] for r, kind in family.roles.items() if kind == "unit")
            group = scen.roles["group"]
            full = complete.groupby(unit)[group].transform("nunique") == complete[group].nunique()
            complete = complete[full]
        assert rec["n_analysed"] == len(complete)


@pytest.mark.parametrize("method, n", [("one_sample_t", 12), ("welch_t", 40), ("welch_t", 300), ("welch_t", 2000)])
def test_rates_stay_within_their_bounds(method, n):
    grid = small_grid(method, n=n, perturbations=["missing+extreme"])
    family = tf.get_family(method)
    scenarios = tf.load_scenarios(method)
    for seed in range(25):
        scen = scenarios[seed % 6]
        _, ds = dataset(grid, method, scen.id, n, "null", seed=seed, perturbation="missing+extreme")
        cells = n * len(family.measured_columns(scen.roles))   # the columns blanks fall in: no cluster ids
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
    """Slipped decimal points, lost signs and missing-value codes: below zero,
    above the range and (where the range starts above zero) between."""
    grid = small_grid("paired_t", n=400, perturbations=["extreme"])
    scen = next(s for s in tf.load_scenarios("paired_t") if s.id == "rowing_altitude")
    lo, hi = scen.variable(scen.roles["before"]).range
    assert lo > 0
    values = []
    for seed in range(20):
        _, ds = dataset(grid, "paired_t", scen.id, 400, "null", seed=seed, perturbation="extreme")
        _, _, bad = spoiled(ds, scen, tf.get_family("paired_t"))
        values += bad[scen.roles["before"]] + bad[scen.roles["after"]]
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
    n = fit_n(method, 30)
    grid = small_grid(method, n=n, seed=13, perturbations=["missing"])
    scenarios = [s.id for s in tf.load_scenarios(method)]
    ps = np.array([null_p(method, dataset(grid, method, scenarios[k % len(scenarios)], n, "null", seed=k,
                                          perturbation="missing")[1]) for k in range(200)])
    bound = 3.5 * np.sqrt(0.05 * 0.95 / 200)
    if method in DISCRETE:   # conservative and discrete: the type I error alone
        assert float(np.mean(ps < 0.05)) < 0.05 + bound
        return
    assert stats.kstest(ps, "uniform").pvalue > 0.001
    assert abs(float(np.mean(ps < 0.05)) - 0.05) < bound


def test_perturbation_names_are_canonical():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "perturbations": ["extreme+missing", "none"],
                      "exclude": [{"perturbation": "extreme+missing", "n": 40, "effect": "null"}]})
    assert g.perturbations == ("missing+extreme", "none")
    assert not any(c.perturbation == "missing+extreme" and c.effect.name == "null" for c in g.tasks())
    with pytest.raises(tf.GridError, match=r"key 'perturbations': lists a value twice"):
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "perturbations": ["missing+extreme", "extreme+missing"]})
    with pytest.raises(tf.GridError, match=r"unknown value 'missing\+missing'"):
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "perturbations": ["missing+missing"]})


def test_missing_not_at_random_blanks_the_larger_values():
    """MNAR: the chance of a blank grows with the value itself; the prompt does
    not change and the gold stays the complete-case analysis."""
    grid = small_grid("welch_t", n=400, perturbations=["missing", "missing_mnar"])
    scen = tf.load_scenarios("welch_t")[0]
    outcome = scen.roles["outcome"]
    c, mnar = dataset(grid, "welch_t", scen.id, 400, "null", seed=3, perturbation="missing_mnar")
    plan = mnar.condition.perturbation["missing"]
    assert plan["mechanism"] == "MNAR" and 1.0 <= plan["strength"] <= 2.0 and "driver" not in plan
    table = tf.get_family("welch_t").generate(mnar.condition, np.random.default_rng(0))
    full = table[outcome].copy()
    blank_cells(table, {**plan, "columns": [outcome], "cells": 80}, mnar.condition, np.random.default_rng(1))
    blanked = np.isnan(table[outcome])
    assert blanked.sum() == 80
    assert float(np.mean(stats.rankdata(full)[blanked])) / len(full) > 0.6  # 0.5 were the blanks at random
    released = read_csv_text(mnar.csv_text)
    assert mnar.gold.n == int(released[[outcome, scen.roles["group"]]].notna().all(axis=1).sum())
    _, mar = dataset(grid, "welch_t", scen.id, 400, "null", seed=3, perturbation="missing")
    assert record(grid, c, mnar)["prompt"] == record(grid, c._replace(perturbation="missing"), mar)["prompt"]


def test_missing_and_missing_mnar_do_not_combine():
    with pytest.raises(tf.GridError, match=r"unknown value 'missing\+missing_mnar'"):
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "perturbations": ["missing+missing_mnar"]})
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "perturbations": ["extreme+missing_mnar"]})
    assert g.perturbations == ("missing_mnar+extreme",)


def test_a_related_extra_column_follows_its_test_column_and_drives_mar():
    """An extra with relates: {to, r} keeps its own values but ranks with the
    test column at about r; a MAR blank pattern is driven by such a column."""
    rng = np.random.default_rng(4)
    other = rng.lognormal(0.0, 1.0, 4000)
    values = rng.normal(50.0, 10.0, 4000)
    out = relate(values, other, 0.5, np.random.default_rng(5))
    assert sorted(out) == sorted(values)
    assert abs(stats.spearmanr(out, other).statistic - 0.5) < 0.05
    assert abs(stats.spearmanr(relate(values, other, -0.3, rng), other).statistic + 0.3) < 0.05
    fam = tf.get_family("welch_t")
    scen = tf.load_scenarios("welch_t")[0]
    var = scen.variables[-1]
    related = dataclasses.replace(scen, variables=scen.variables[:-1] + (
        dataclasses.replace(var, relates={"to": scen.roles["outcome"], "r": 0.4}),))
    drivers = set()
    for seed in range(40):
        plan = perturb.draw("missing", fam, related, 200, np.random.default_rng(seed))["missing"]
        drivers.add(plan.get("driver"))
    assert drivers == {None, var.name}  # MCAR (no driver) or MAR driven by the related column

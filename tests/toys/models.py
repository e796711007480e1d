"""Three toy families: a regression whose question is one term of a model, a
cluster-randomised comparison whose grid n counts clusters, and a panel whose
grid n counts units measured over several periods."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import stats

from taskfactory.family import Family
from taskfactory.kit import finish
from taskfactory.methods._ttest import two_sample
from taskfactory.result import TestResult, Term


def generate_ols(condition, rng):
    n, dgp, roles = condition.n, condition.dgp, condition.roles
    covariate = rng.normal(0.0, 1.0, n)
    exposure = 0.5 * covariate + rng.normal(0.0, 1.0, n)
    outcome = dgp["mean"] + dgp["sd"] * (condition.effect_value * exposure + 0.4 * covariate + rng.normal(0.0, 1.0, n))
    return finish(condition, rng, {roles["outcome"]: outcome, roles["exposure"]: exposure,
                                   roles["covariate"]: covariate})


def ols_terms(y, columns: dict) -> tuple[list[Term], int]:
    """R's summary(lm(y ~ ...))$coefficients: estimate, SE, t and p per term."""
    X = np.column_stack([np.ones(len(y))] + list(columns.values()))
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    df = len(y) - X.shape[1]
    cov = np.linalg.inv(X.T @ X) * float(resid @ resid) / df
    se = np.sqrt(np.diag(cov))
    t = beta / se
    p = 2.0 * stats.t.sf(np.abs(t), df)
    names = ["(Intercept)", *columns]
    return [Term(nm, float(b), float(s), float(tt), float(pp), float(df)) for nm, b, s, tt, pp in zip(names, beta, se, t, p)], df


class ToyOls(Family):
    name = "toy_ols"
    title = "Toy: one coefficient of a linear model"
    category = "regression"
    canonical = "summary(lm(outcome ~ exposure + covariate))"
    roles = {"outcome": "numeric", "exposure": "numeric", "covariate": "numeric"}
    min_n = 20
    dgp_keys = ("mean", "sd")
    medium = 0.3
    effect_unit = "outcome SDs per unit of exposure"
    r_code = "res <- summary(lm({outcome} ~ {exposure} + {covariate}, data = d))$coefficients"
    r_pvalue = "res[2, 4]"
    py_code = "import statsmodels.formula.api as smf\np_value = smf.ols('{outcome} ~ {exposure} + {covariate}', d).fit().pvalues['{exposure}']"
    generate = staticmethod(generate_ols)

    def analyse(self, condition, data):
        roles = condition.roles
        cols = {roles["exposure"]: data[roles["exposure"]].to_numpy(float),
                roles["covariate"]: data[roles["covariate"]].to_numpy(float)}
        terms, _ = ols_terms(data[roles["outcome"]].to_numpy(float), cols)
        return TestResult.from_terms(terms, roles["exposure"], "lm", "t", n=len(data))

    def effect_for_z(self, z, n, params):
        return z / np.sqrt(n)


def generate_clusters(condition, rng):
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    size = params["cluster_size"]
    arm = np.repeat(np.arange(k) % 2, size)
    cluster = np.repeat(np.arange(1, k + 1), size)
    level = rng.normal(0.0, np.sqrt(params["icc"]), k)[cluster - 1]
    noise = rng.normal(0.0, np.sqrt(1.0 - params["icc"]), k * size)
    outcome = dgp["mean"] + dgp["sd"] * (condition.effect_value * arm + level + noise)
    levels = np.asarray(condition.columns[[c["name"] for c in condition.columns].index(roles["group"])]["levels"],
                        dtype=object)
    return finish(condition, rng, {roles["outcome"]: outcome, roles["group"]: levels[arm],
                                   roles["cluster"]: cluster})


class ToyClusterMeans(Family):
    name = "toy_cluster_means"
    title = "Toy: two arms randomised by cluster, compared on cluster means"
    category = "clustered"
    canonical = "t.test(y ~ arm, data = aggregate(y ~ cluster + arm, d, mean))"
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    n_unit = "clusters"
    min_n = 6
    dgp_keys = ("mean", "sd")
    naive_method = "Welch t-test on the rows, ignoring the clusters"
    medium = 0.5
    effect_unit = "outcome SDs"
    r_code = "res <- t.test({outcome} ~ {group}, data = aggregate({outcome} ~ {cluster} + {group}, d, mean))"
    py_code = ("from scipy import stats\n"
               "m = d.groupby(['{cluster}', '{group}'])['{outcome}'].mean().reset_index()\n"
               "a, b = (m.loc[m['{group}'] == g, '{outcome}'] for g in sorted(m['{group}'].unique()))\n"
               "p_value = stats.ttest_ind(a, b, equal_var=False).pvalue")
    generate = staticmethod(generate_clusters)

    def draw_params(self, scenario, n, rng):
        return {"cluster_size": int(rng.integers(6, 13)), "icc": float(rng.uniform(0.05, 0.3))}

    def rows(self, n, params=None):
        return n * (12 if params is None else params["cluster_size"])

    def analyse(self, condition, data):
        roles = condition.roles
        means = data.groupby([roles["cluster"], roles["group"]])[roles["outcome"]].mean().reset_index()
        a, b = (means.loc[means[roles["group"]] == g, roles["outcome"]].to_numpy(float)
                for g in sorted(means[roles["group"]].unique()))
        return dataclasses.replace(two_sample(a, b), n=len(data))  # n_analysed counts rows

    def naive(self, condition, data):
        roles = condition.roles
        a, b = (data.loc[data[roles["group"]] == g, roles["outcome"]].to_numpy(float)
                for g in sorted(data[roles["group"]].unique()))
        return two_sample(a, b)

    def effect_for_z(self, z, n, params):
        return z * np.sqrt(4.0 * (params["icc"] + (1.0 - params["icc"]) / params["cluster_size"]) / n)


def generate_panel(condition, rng):
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    periods = params["periods"]
    unit = np.repeat(np.arange(1, k + 1), periods)
    period = np.tile(np.arange(1, periods + 1), k)
    level = rng.normal(0.0, np.sqrt(params["icc"]), k)[unit - 1]
    noise = rng.normal(0.0, np.sqrt(1.0 - params["icc"]), k * periods)
    centred = period - (periods + 1) / 2.0
    outcome = dgp["mean"] + dgp["sd"] * (condition.effect_value * centred + level + noise)
    return finish(condition, rng, {roles["outcome"]: outcome, roles["unit"]: unit, roles["period"]: period})


def within_slope(name, y, x, unit) -> Term:
    """The slope of ``x`` (term ``name``) in R's lm(y ~ x + factor(unit)): the within-unit
    estimator, with the residual df of the dummy-variable model."""
    frame = pd.DataFrame({"y": y, "x": x, "unit": unit})
    centred = frame[["y", "x"]] - frame.groupby("unit")[["y", "x"]].transform("mean")
    sxx = float(centred["x"] @ centred["x"])
    slope = float(centred["x"] @ centred["y"]) / sxx
    resid = centred["y"] - slope * centred["x"]
    df = len(frame) - frame["unit"].nunique() - 1
    se = float(np.sqrt(float(resid @ resid) / df / sxx))
    t = slope / se
    return Term(name, slope, se, t, float(2.0 * stats.t.sf(abs(t), df)), float(df))


class ToyPanel(Family):
    name = "toy_panel"
    title = "Toy: a within-unit trend over the periods of a panel"
    category = "panel"
    canonical = "summary(lm(outcome ~ period + factor(unit)))"
    roles = {"outcome": "numeric", "unit": "unit", "period": "period"}
    n_unit = "units"
    min_n = 5
    dgp_keys = ("mean", "sd")
    naive_method = "Pooled regression on the period, ignoring the units"
    medium = 0.1
    effect_unit = "outcome SDs per period"
    r_code = "res <- summary(lm({outcome} ~ {period} + factor({unit}), data = d))$coefficients"
    r_pvalue = "res[2, 4]"
    py_code = ("import statsmodels.formula.api as smf\n"
               "p_value = smf.ols('{outcome} ~ {period} + C({unit})', d).fit().pvalues['{period}']")
    generate = staticmethod(generate_panel)

    def draw_params(self, scenario, n, rng):
        return {"periods": int(rng.integers(3, 7)), "icc": float(rng.uniform(0.3, 0.7))}

    def rows(self, n, params=None):
        return n * (6 if params is None else params["periods"])

    def analyse(self, condition, data):
        roles = condition.roles
        term = within_slope(roles["period"], data[roles["outcome"]].to_numpy(float),
                            data[roles["period"]].to_numpy(float), data[roles["unit"]].to_numpy())
        return TestResult.from_terms([term], roles["period"], "lm with unit effects", "t", n=len(data))

    def naive(self, condition, data):
        roles = condition.roles
        terms, _ = ols_terms(data[roles["outcome"]].to_numpy(float), {roles["period"]: data[roles["period"]].to_numpy(float)})
        return TestResult.from_terms(terms, roles["period"], "pooled lm", "t", n=len(data))

    def effect_for_z(self, z, n, params):
        periods = params["periods"]
        return z * np.sqrt((1.0 - params["icc"]) / (n * periods * (periods**2 - 1) / 12.0))

"""Log-rank test: time to an event in two groups balanced on the covariates.

R: ``survival::survdiff(Surv(time, event) ~ group)``, the log-rank chi-square
on 1 df. The data (shared with ``cox_ph``, see :class:`TimeToEvent`): two-level
covariates and numeric covariates that predict the hazard, a group assigned
independently of them (as by randomisation, so the groups are balanced on
them), Weibull proportional-hazards times (shape 0.8 to 1.5) with the group's
log hazard ratio as the effect, censored at the end of a staggered follow-up
or at a loss to follow-up (10 to 60 % censored, drawn per dataset), recorded
in whole days or months so that some times tie. The tempting wrong test is
Welch's t-test on the recorded times, which takes censored times for event
times. The Cox model of the group adjusted for the covariates is accepted
beside the log-rank test: with groups balanced on the covariates both test the
same null, and experts adjust for prognostic covariates in randomised
comparisons as often as not.

A dataset with fewer than ``MIN_EVENTS`` events in a group is redrawn.

Real data may give more than two groups (:mod:`taskfactory.store.real`): survdiff
then tests them all, its chi-square on k - 1 df, and the naive and accepted
tests, which compare two groups, are left out of the task.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from ..family import Alternative, Family
from ..kit import (column_spec, covariates, crossed_clusters, finish, first_group_share, normal_expectation,
                   split_sizes, survival_times)
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction, require_number
from . import _describe
from ._common import draw_clusters, grouped, nonconstant, require, require_varies
from ._dist import chi2_sf
from ._factor import factor_levels, lr_result
from ._models import model_matrix
from ._names import COX_PH, LOG_RANK, WELCH_T
from ._survival import cox_terms, log_rank
from ._ttest import two_sample

METHOD = "Log-rank test (survdiff, rho = 0)"
COX_METHOD = "Cox proportional hazards regression (coxph, Efron ties), Wald z test of the group"
#: Weibull shape, censored share, staggered entry (share of the follow-up over
#: which subjects enter), loss to follow-up (its rate times the follow-up) and
#: the confounder's log hazard ratio per SD, drawn per dataset.
SHAPE = (0.8, 1.5)
CENSORED = (0.1, 0.6)
ENTRY = (0.3, 0.7)
DROPOUT = (0.05, 0.35)
CONFOUNDER_EFFECT = (0.4, 0.8)
#: The fewest events a group may have; the expected count of the smaller group
#: is kept at EXPECTED_EVENTS or more by capping the censored share at small N.
MIN_EVENTS = 5
EXPECTED_EVENTS = 17


def generate(condition, rng):
    """Covariates, a group of fixed sizes assigned at random (independently of
    them), and Weibull proportional-hazards times whose log hazard is the
    group's effect plus the confounder's (see :func:`kit.survival_times`)."""
    dgp, params, roles = condition.dgp, condition.params, condition.roles
    n = condition.n
    columns, confounder = covariates(condition, rng, n)
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(n, [params["share"], 1.0 - params["share"]])
    second = rng.permutation(np.repeat([0.0, 1.0], sizes))
    eta = dgp.get("direction", 1) * condition.effect_value * second + params["confounder_effect"] * confounder
    time, event = survival_times(condition, rng, eta)
    columns[roles["group"]] = np.asarray(levels, dtype=object)[second.astype(int)]
    columns[roles["time"]] = time
    columns[roles["event"]] = event
    return finish(condition, rng, {**columns, **crossed_clusters(condition, n, rng)})


def event_share(scale, shape, follow_up, entry, dropout, gamma):
    """The expected share of events at no effect: times with cumulative hazard
    scale exp(gamma c) t^shape, c standard normal, censored at follow_up less a
    uniform entry over its first ``entry`` share, or lost at rate ``dropout``."""
    t = follow_up * np.linspace(0.0, 1.0, 801)
    mid = 0.5 * (t[1:] + t[:-1])
    weight = np.clip((follow_up - mid) / (entry * follow_up), 0.0, 1.0) * np.exp(-dropout * mid)

    def share(c):
        cdf = 1.0 - np.exp(-scale * np.exp(gamma * c[:, None]) * t[None, :] ** shape)
        return (np.diff(cdf, axis=1) * weight[None, :]).sum(axis=1)
    return normal_expectation(share)


def time_scale(censored, shape, follow_up, entry, dropout, gamma):
    """The Weibull scale whose expected censored share at no effect is ``censored``."""
    def gap(log_scale):
        return event_share(np.exp(log_scale), shape, follow_up, entry, dropout, gamma) - (1.0 - censored)
    lo, hi = np.log(np.log(2.0)) - shape * np.log(follow_up * np.array([1e3, 1e-3]))
    return float(np.exp(optimize.brentq(gap, lo, hi, xtol=1e-10)))


def survival_columns(condition, data, groups: bool = True, several: bool = False):
    """The time, the 0/1 event and the group labels of the analysed rows,
    checked: two groups (``several``: two or more, as real data may give
    them), each with ``MIN_EVENTS`` events or more (without ``groups``, a
    numeric exposure: ``MIN_EVENTS`` events in all)."""
    roles = condition.roles
    time = data[roles["time"]].to_numpy(dtype=float)
    event = data[roles["event"]].to_numpy(dtype=float)
    require(bool(np.all((event == 0) | (event == 1))), f"'{roles['event']}' must be 0 (censored) or 1 (event)")
    require(bool(np.all(time >= 0)), f"'{roles['time']}' must not be negative")
    require_varies(data, roles["group"])
    group = data[roles["group"]].astype(str).to_numpy()
    if not groups:
        d = int(event.sum())
        require(d >= MIN_EVENTS, f"the data have {d} events, fewer than {MIN_EVENTS}")
        return time, event, group
    levels = sorted(set(group))
    if several:
        require(len(levels) >= 2, f"'{roles['group']}' needs 2 groups or more, has {len(levels)}")
    else:
        require(len(levels) == 2, f"'{roles['group']}' needs exactly 2 groups, has {len(levels)}")
    for level in levels:
        d = int(event[group == level].sum())
        require(d >= MIN_EVENTS, f"group '{level}' has {d} events, fewer than {MIN_EVENTS}")
    return time, event, group


def log_rank_test(condition, data, method=METHOD):
    """``survdiff(Surv(time, event) ~ group)``, of two groups or more (the
    chi-square on k - 1 df)."""
    time, event, group = survival_columns(condition, data, several=True)
    chisq, df, p = log_rank(time, event, group)
    return TestResult(statistic=chisq, pvalue=p, method=method, df=(float(df),), n=len(data),
                      statistic_name="Chisq")


def cox_test(condition, data, method=COX_METHOD, factor: bool = False):
    """The group's row of ``summary(coxph(Surv(time, event) ~ group + covariates))``;
    a numeric group column enters as R enters it, a numeric exposure (its
    log hazard ratio per unit), as real data may give it. With ``factor``, a
    group of k > 2 levels is tested by the likelihood-ratio test of its
    k - 1 dummies, ``anova(coxph(Surv ~ covariates), coxph(Surv ~ group +
    covariates))``; without it, such a group is a :class:`DataError`."""
    roles = condition.roles
    levels = factor_levels(data[roles["group"]])
    time, event, _ = survival_columns(condition, data, groups=levels is not None, several=factor)
    X, names = model_matrix(data, [roles["group"], *roles["covariates"]])
    terms, details = cox_terms(time, event, X[:, 1:], names[1:])
    if levels is None or levels == 2:
        return TestResult.from_terms(terms, names[1], method, "z", n=len(data))
    if roles["covariates"]:
        _, without = cox_terms(time, event, X[:, levels:], names[levels:])
        lr = abs(2.0 * (details["loglik"][1] - without["loglik"][1]))
    else:   # against the model with no terms: the log-likelihood at 0
        lr = abs(2.0 * (details["loglik"][1] - details["loglik"][0]))
    return lr_result(lr, chi2_sf(lr, levels - 1), levels, method, len(data))


def welch_on_times(condition, data, method):
    """``t.test(time ~ group)``: Welch's t on the recorded times, censored or not."""
    _, (a, b) = grouped(data, condition.roles["time"], condition.roles["group"], k=2)
    nonconstant(a, b)
    res = two_sample(a, b, equal_var=False)
    return TestResult(statistic=res.statistic, pvalue=res.pvalue, method=method, df=res.df, n=len(data),
                      estimate=res.estimate, statistic_name="t")


class TimeToEvent(Family):
    """What the time-to-event siblings (log_rank, cox_ph) share: roles, dgp
    schema and check, the nuisance parameters of a dataset (Weibull shape,
    censoring, the confounder's effect and the time scale that gives the
    drawn censored share), the Schoenfeld calibration and the hints.

    A scenario's dgp gives, for each sibling::

        follow_up: 1826            # the end of follow-up, in the time column's unit
        covariates: {age: [64, 9], sex: [0.5, 0.5]}   # numeric: [mean, sd]; two levels: their shares
        confounder: {age: 1.0, sex: 0.3}   # weights of the standardised covariates in the prognostic score
        exposure_link: 1           # (cox_ph) the sign of the score's link with being in the second group
        direction: -1              # the sign of the second group's log hazard ratio
    """

    category = "survival"
    question_kind = "time_to_event"
    roles = {"time": "numeric", "event": "numeric", "group": "category", "covariates": "columns"}
    min_n = 60   # at N = 50 the Cox Wald p-values at no effect drift from uniform (KS p 4e-4 over 300 datasets)
    medium = float(np.log(1.8))
    effect_unit = "log hazard ratio of the second group vs the first"
    dgp_keys = ("follow_up", "covariates", "confounder")

    def draw_params(self, scenario, n, rng):
        share = first_group_share(rng)
        smaller = n * min(share, 1.0 - share)
        top = min(CENSORED[1], max(CENSORED[0], 1.0 - EXPECTED_EVENTS / smaller))
        censored = float(rng.uniform(CENSORED[0], top))
        shape, entry = float(rng.uniform(*SHAPE)), float(rng.uniform(*ENTRY))
        follow_up = float(scenario.dgp["follow_up"])
        dropout = float(rng.uniform(*DROPOUT)) / follow_up
        gamma = float(rng.uniform(*CONFOUNDER_EFFECT))
        return {"share": share, "censored": censored, "shape": shape, "entry": entry, "dropout": dropout,
                "confounder_effect": gamma,
                "scale": time_scale(censored, shape, follow_up, entry, dropout, gamma), **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        dgp, roles = scenario.dgp, scenario.roles
        group = scenario.variable(roles["group"])
        if len(group.levels) != 2 or list(group.levels) != sorted(group.levels):
            raise ValueError(f"group '{group.name}' needs exactly 2 levels, in sorted order")
        event = scenario.variable(roles["event"])
        if event.type != "integer" or tuple(event.range) != (0, 1):
            raise ValueError(f"event '{event.name}' must be an integer column with range [0, 1]")
        follow_up = require_number(dgp.get("follow_up"), "dgp follow_up")
        time = scenario.variable(roles["time"])
        if not (follow_up > 0 and time.range[0] <= 0 and time.range[1] >= 1.05 * follow_up):
            raise ValueError(f"dgp follow_up must be positive and the range of '{time.name}' cover 0 to 1.05 times it")
        names = roles["covariates"]
        given = dgp.get("covariates")
        if not names or not isinstance(given, dict) or sorted(given) != sorted(names):
            raise ValueError(f"dgp covariates must describe each covariate ({', '.join(names)})")
        for name in names:
            var = scenario.variable(name)
            value = given[name]
            if not (isinstance(value, list) and len(value) == 2):
                raise ValueError(f"dgp covariates.{name} needs two numbers")
            a, b = (require_number(v, f"dgp covariates.{name}") for v in value)
            if var.type == "category":
                if len(var.levels) != 2 or not (a > 0 and b > 0):
                    raise ValueError(f"covariate '{name}' needs 2 levels and their positive shares")
            elif not (b > 0 and var.range[0] < a - 3 * b and a + 3 * b < var.range[1]):
                raise ValueError(f"dgp covariates.{name} mean +/- 3 sd must lie inside the range of '{name}'")
        weights = dgp.get("confounder")
        if not isinstance(weights, dict) or not set(weights) <= set(names) or not any(
                require_number(w, "dgp confounder") != 0 for w in weights.values()):
            raise ValueError("dgp confounder must weight some of the covariates, one at least not 0")
        require_direction(scenario)

    def information(self, n, params):
        """The expected information for the group's log hazard ratio at no
        effect, D p (1 - p) (Schoenfeld), D the expected events."""
        share = params["share"]
        return n * (1.0 - params["censored"]) * share * (1.0 - share)

    def hints(self, condition, data):
        return _describe.time_to_event(data, condition.roles)


class LogRank(TimeToEvent):
    name = "log_rank"
    title = "Log-rank test"
    roles = {**TimeToEvent.roles, "cluster": "cluster"}
    optional_roles = ("cluster",)  # cluster_event_rates_t's clusters: the test ignores them
    canonical = "survdiff(Surv(time, event) ~ group)"
    test_name = LOG_RANK
    naive_name = WELCH_T
    naive_method = "Welch two-sample t-test on the recorded times, ignoring censoring"
    r_pvalue = "res$pvalue"
    accepted = (Alternative(method=COX_METHOD, call="summary(coxph(Surv(time, event) ~ group + covariates))",
                            run=cox_test, name=COX_PH, r_pvalue="res[1, 5]",
                            r_code=("library(survival)\n"
                                    "res <- summary(coxph(Surv({time}, {event}) ~ {group} + {covariates}, "
                                    "data = d))$coefficients")),)
    generate = staticmethod(generate)

    def analyse(self, condition, data):
        return log_rank_test(condition, data)

    def naive(self, condition, data):
        return welch_on_times(condition, data, self.naive_method)

    def effect_for_z(self, z, n, params):
        """Schoenfeld: the log-rank z is about log(HR) sqrt(D p (1 - p)). The
        covariates' effect, left out of the comparison, dilutes the marginal
        hazard ratio (non-collapsibility): by about 1 / (1 + gamma^2 / 2) for
        a normal prognostic score with log hazard ratio gamma per SD."""
        gamma = params["confounder_effect"]
        return float(z / np.sqrt(self.information(n, params)) * (1.0 + 0.5 * gamma * gamma))


register(LogRank())

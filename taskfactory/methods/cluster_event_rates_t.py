"""Two groups of clusters, time to an event: Student's t-test on the clusters' event rates.

R: each cluster's events and follow-up summed,
``m <- aggregate(cbind(events = event, time = time), by = list(cluster =
cluster, group = group), FUN = sum)``, then ``t.test(events / time ~ group,
data = m, var.equal = TRUE)``: Student's t on clusters - 2 degrees of freedom
of the events per unit of follow-up, the cluster-level analysis of a trial
that assigned whole clusters (hospitals, herds, schools) to the groups.

The data are ``log_rank``'s (see :class:`taskfactory.methods.log_rank.TimeToEvent`:
covariates, Weibull proportional-hazards times, staggered entry, loss to
follow-up) but for the clusters: every row of a cluster is in its group, and
each cluster shifts its rows' log hazard by a normal frailty whose SD is drawn
per dataset in ``FRAILTY_SD``. Rows of one cluster are not independent, so the
tempting wrong test, the log-rank test of the rows, rejects a true null far too
often, the more so the larger the clusters; the Cox model of the rows errs
alike. Welch's t on the clusters' event rates is accepted beside Student's.
Its siblings, log_rank and cox_ph, take the same scenarios with the groups
formed one row at a time (every cluster holds both groups).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import optimize

from ..effects import t_critical
from ..family import Alternative
from ..kit import cluster_sizes, column_spec, covariates, finish, nested_groups, survival_times
from ..registry import register
from ._common import draw_clusters, require
from ._names import CLUSTER_RATES_T, CLUSTER_RATES_WELCH_T, LOG_RANK
from ._ttest import two_sample
from .log_rank import TimeToEvent, log_rank_test, survival_columns

#: The range the SD of a cluster's log hazard (its frailty) is drawn from.
FRAILTY_SD = (0.3, 0.6)
#: The largest log hazard ratio calibration goes to (a ratio of 8), where the
#: clusters are too few or too small for the target z: each group then keeps
#: about a third or more of the events it would have with no effect.
MAX_LOG_HR = float(np.log(8.0))


def generate(condition, rng):
    """Covariates; clusters of :func:`kit.cluster_sizes` rows, whole clusters in
    a group (:func:`kit.nested_groups`); Weibull proportional-hazards times
    (:func:`kit.survival_times`) whose log hazard is the group's half of the
    effect (minus half in the first group, plus half in the second) plus the
    confounder's plus the cluster's normal frailty."""
    dgp, params, roles = condition.dgp, condition.params, condition.roles
    n = condition.n
    columns, confounder = covariates(condition, rng, n)
    sizes = cluster_sizes(n, params["clusters"], rng)
    group = nested_groups(len(sizes), [params["share"], 1.0 - params["share"]], rng)
    frailty = rng.normal(0.0, params["frailty_sd"], len(sizes))
    second = np.repeat(group, sizes)
    half = dgp.get("direction", 1) * condition.effect_value / 2.0   # the groups placed evenly about the baseline
    eta = half * (2 * second - 1) + params["confounder_effect"] * confounder + np.repeat(frailty, sizes)
    time, event = survival_times(condition, rng, eta)
    columns[roles["cluster"]] = np.repeat(np.arange(1, len(sizes) + 1), sizes)
    columns[roles["group"]] = np.asarray(column_spec(condition, "group")["levels"], dtype=object)[second]
    columns[roles["time"]] = time
    columns[roles["event"]] = event
    return finish(condition, rng, columns)


def cluster_rates(condition, data) -> list[np.ndarray]:
    """Each cluster's (and group's) events over its summed follow-up, split by
    group in R's order, as ``aggregate()`` and ``t.test``'s formula take them."""
    time, event, group = survival_columns(condition, data)
    cluster = data[condition.roles["cluster"]].astype(str).to_numpy()
    sums = pd.DataFrame({"cluster": cluster, "group": group, "events": event, "time": time}).groupby(
        ["cluster", "group"], sort=False)[["events", "time"]].sum()
    require(bool((sums["time"] > 0).all()), f"a cluster's '{condition.roles['time']}' sums to 0")
    rate = (sums["events"] / sums["time"]).to_numpy()
    labels = sums.index.get_level_values("group").to_numpy()
    parts = [rate[labels == level] for level in sorted(set(group))]
    require(all(len(p) >= 2 for p in parts), f"a level of '{condition.roles['group']}' has fewer than 2 clusters")
    return parts


def _t_test(condition, data, equal_var: bool):
    a, b = cluster_rates(condition, data)
    return dataclasses.replace(two_sample(a, b, equal_var=equal_var), n=len(data))


def welch_of_rates(condition, data):
    return _t_test(condition, data, equal_var=False)


class ClusterEventRatesT(TimeToEvent):
    name = "cluster_event_rates_t"
    title = "Two-sample t-test on cluster event rates"
    canonical = ("t.test(events / time ~ group, data = aggregate(cbind(events = event, time = time), "
                 "by = list(cluster = cluster, group = group), FUN = sum), var.equal = TRUE)")
    roles = {**TimeToEvent.roles, "cluster": "cluster"}
    test_name = CLUSTER_RATES_T
    naive_name = LOG_RANK
    naive_method = "Log-rank test of the rows, survdiff(Surv(time, event) ~ group)"
    accepted = (Alternative(method="Welch Two Sample t-test",
                            call="t.test(events / time ~ group, data = aggregate(cbind(events = event, time = time), "
                                 "by = list(cluster = cluster, group = group), FUN = sum))",
                            run=welch_of_rates, name=CLUSTER_RATES_WELCH_T,
                            r_code='m <- aggregate(cbind(events = d[["{event}"]], time = d[["{time}"]]), by = list('
                                   'cluster = d[["{cluster}"]], group = d[["{group}"]]), FUN = sum)\n'
                                   'res <- t.test(events / time ~ group, data = m)'),)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """:class:`TimeToEvent`'s, the number of clusters (as
        :func:`_common.draw_clusters` draws it) and the frailty's SD."""
        return {**super().draw_params(scenario, n, rng), **draw_clusters(scenario, n, rng),
                "frailty_sd": float(rng.uniform(*FRAILTY_SD))}

    def analyse(self, condition, data):
        return _t_test(condition, data, equal_var=True)

    def naive(self, condition, data):
        return log_rank_test(condition, data, self.naive_method)

    def effect_for_z(self, z, n, params):
        """The log hazard ratio at which the critical t on clusters - 2 df is the
        difference of the groups' mean rates over its standard error. The
        groups' rates are the baseline's times exp(-effect / 2) and exp(effect /
        2), and a cluster's rate varies about its group's by the frailty (exp(s^2)
        - 1) and by its events, about E = (1 - censored) n / clusters of them at
        the baseline (1 / E, Poisson), in squared coefficient of variation;
        ``MAX_LOG_HR`` where even it falls short."""
        k = params["clusters"]
        k1 = min(max(round(k * params["share"]), 2), k - 2)   # as kit.nested_groups counts them
        critical = t_critical(z, k - 2)
        frailty = float(np.expm1(params["frailty_sd"] ** 2))
        events = (1.0 - params["censored"]) * n / k

        def margin(effect):
            a, b = np.exp(-effect / 2.0), np.exp(effect / 2.0)
            spread = a * a * (frailty + 1.0 / (events * a)) / k1 + b * b * (frailty + 1.0 / (events * b)) / (k - k1)
            return float(b - a - critical * np.sqrt(spread))

        if margin(MAX_LOG_HR) < 0.0:
            return MAX_LOG_HR
        return float(optimize.brentq(margin, 0.0, MAX_LOG_HR, xtol=1e-8))


register(ClusterEventRatesT())

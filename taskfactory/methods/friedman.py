"""Friedman's rank sum test: every subject measured under each of 3 to 5 conditions.

R: ``friedman.test(outcome, group, subject)``: outcomes ranked within each
subject, ties given mean ranks and corrected for, chi-square on k - 1 df. R
needs complete blocks (it stops on "not an unreplicated complete block
design"), so after the complete cases the test keeps the subjects measured
under every condition.

The data: a subject effect and right-skewed (lognormal) noise, the
conditions shifting the log-scale location; the ranks within subjects do not
see the subject effect or the skew. The tempting wrong test is the classical
one-way ANOVA of the outcome by condition, ignoring that the measurements
come in subjects.
"""

import numpy as np
from scipy import optimize, stats

from ..effects import chi2_noncentrality
from ..family import Family
from ..kit import column_spec, finish
from ..registry import register
from ..result import TestResult
from . import _describe
from ._anova import level_count, oneway, unit_pattern, validate_groups
from ._common import check_location, require, require_varies
from ._names import CLASSICAL_ANOVA, FRIEDMAN
from ._dist import chi2_sf, norm_cdf

SUBJECT_SD = (0.3, 0.8)


def generate(condition, rng):
    params, n, roles = condition.params, condition.n, condition.roles
    levels = column_spec(condition, "group")["levels"]
    k = len(levels)
    subject = np.repeat(np.arange(1, n + 1), k)
    location = condition.effect_value * np.tile(np.asarray(params["pattern"]), n)
    level = rng.normal(0.0, params["subject_sd"], n)[subject - 1]
    log_y = level + condition.dgp["log_sd"] * rng.normal(location, 1.0)
    return finish(condition, rng, {
        roles["outcome"]: condition.dgp["median"] * np.exp(log_y),
        roles["group"]: np.tile(np.asarray(levels, dtype=object), n),
        roles["subject"]: subject,
    })


def complete_blocks(data, outcome: str, group: str, subject: str):
    """The subjects measured once under every condition present, as an
    n x k array (columns in R's sorted order of the conditions)."""
    require_varies(data, outcome, group, subject)
    require(not data.duplicated([subject, group]).any(), "a subject has two measurements under one condition")
    values = data.pivot(index=subject, columns=group, values=outcome)
    values = values.reindex(columns=sorted(values.columns, key=str)).dropna()
    require(values.shape[1] >= 2, "the test needs at least 2 conditions")
    require(values.shape[0] >= 2, "fewer than 2 subjects are measured under every condition")
    return values.to_numpy(float)


def friedman(y: np.ndarray) -> TestResult:
    """R's ``friedman.test`` on the complete blocks ``y`` (subjects x conditions)."""
    n, k = y.shape
    ranks = stats.rankdata(y, axis=1)
    ordered = np.sort(y, axis=1)
    starts = np.ones_like(ordered, dtype=bool)   # where a run of equal values begins, each row apart
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    counts = np.bincount(np.cumsum(starts.ravel()))[1:].astype(float)   # the length of every run
    ties = float(np.sum(counts**3 - counts))
    denominator = n * k * (k + 1) - ties / (k - 1)
    require(denominator > 0, "every subject has the same value under every condition")
    statistic = 12.0 * float(np.sum((ranks.sum(axis=0) - n * (k + 1) / 2.0) ** 2)) / denominator
    return TestResult(statistic=statistic, pvalue=float(chi2_sf(statistic, k - 1)),
                      method="Friedman rank sum test", df=(float(k - 1),), n=n * k,
                      statistic_name="Friedman chi-squared")


class Friedman(Family):
    name = "friedman"
    title = "Friedman rank sum test"
    category = "repeated measures"
    question_kind = "repeated_conditions"
    canonical = "friedman.test(outcome, group, subject)"
    test_name = FRIEDMAN
    roles = {"outcome": "numeric", "group": "category", "subject": "unit"}
    n_unit = "units"
    design_roles = ("group",)   # every subject goes through every condition by design
    min_n = 10
    dgp_keys = ("median", "log_sd")
    naive_method = "classical one-way ANOVA of the outcome by condition, ignoring the subjects"
    naive_name = CLASSICAL_ANOVA
    medium = 0.6
    effect_unit = "SD of the log-scale condition locations over the within-subject log-scale SD (0.6: Kendall's W about 0.3 with 3 conditions)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The unit pattern of the condition locations (mean 0, SD 1; ordered
        when the scenario's conditions are) and the SD of the subject effects
        on the log scale (0.3 to 0.8)."""
        k = level_count(scenario)
        return {"pattern": unit_pattern([1] * k, rng, scenario.dgp.get("trend")),
                "subject_sd": float(rng.uniform(*SUBJECT_SD))}

    def rows(self, n, params=None):
        return n * 5 if params is None else n * len(params["pattern"])

    def validate(self, scenario):
        validate_groups(scenario)
        check_location(scenario, "outcome", "median", "log_sd")

    def analyse(self, condition, data):
        roles = condition.roles
        return friedman(complete_blocks(data, roles["outcome"], roles["group"], roles["subject"]))

    def naive(self, condition, data):
        return oneway(condition, data, var_equal=True)

    def effect_for_z(self, z, n, params):
        """The effect whose Friedman non-centrality, 12 n / (k (k + 1)) times the
        sum of squared deviations of the expected within-subject ranks from
        (k + 1) / 2, matches ``z``; a condition's expected rank is 1 plus its
        chances of exceeding each other one, Phi(f (p_j - p_l) / sqrt 2)."""
        pattern = np.asarray(params["pattern"], dtype=float)
        k = len(pattern)
        target = chi2_noncentrality(z, k - 1)

        def gap(f):
            p = norm_cdf(f * (pattern[:, None] - pattern[None, :]) / np.sqrt(2.0))
            expected = 1.0 + p.sum(axis=1) - 0.5   # the diagonal adds 1/2
            return 12.0 * n / (k * (k + 1)) * float(np.sum((expected - (k + 1) / 2.0) ** 2)) - target

        if gap(10.0) <= 0.0:
            return 10.0
        return float(optimize.brentq(gap, 0.0, 10.0, xtol=1e-12))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.repeated(data, roles["outcome"], roles["group"], roles["subject"])


register(Friedman())

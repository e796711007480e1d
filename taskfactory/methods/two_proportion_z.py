"""Two-sample test for equality of proportions (the pooled two-proportion test).

R: ``prop.test(successes, totals)`` with its default continuity correction,
where ``successes`` counts the rows whose ``outcome`` is the ``positive`` level
in each level of ``group`` (R's order: sorted levels) and ``totals`` counts the
rows per group. R reports X-squared on 1 df: sum((|O - E| - c)^2 / E) over the
2 x 2 table, c = min(0.5, |p1 - p2| / (1/n1 + 1/n2)); ``chisq.test`` on the
table gives the same. The uncorrected statistic (``correct = FALSE``, the
square of the pooled z) is accepted beside it. R warns that the chi-square
approximation may be incorrect when an expected count (``n_i`` times the pooled
proportion, or times its complement) is below 5; such data are redrawn, as are
groups without a success or without a failure. There is no tempting wrong test
of the same data.

The data are two binomial samples: the first listed group has the scenario's
baseline proportion, the second differs from it by Cohen's h on the arcsine
scale.
"""

import math

import numpy as np

from ..effects import Z_BORDERLINE
from ..kit import column_spec, crossed_clusters, finish, first_group_share, labels_for, split_sizes
from ..family import Alternative, Family, reference_template
from ..registry import register
from ._names import PROP_TEST, PROP_Z
from . import _describe
from ..result import TestResult
from ..scenarios import require_direction
from ._common import check_two_proportions, counts_2x2, draw_clusters, require
from ._dist import chi2_sf

MIN_N = 60
MIN_EXPECTED = 10.0
BASELINE_JITTER = 0.15
MEDIUM = 0.5


def _rarer_share(first, baseline, h):
    """The rarer outcome's expected share among all rows when the first listed
    group (share ``first``) is at ``baseline`` and the other ``h`` away."""
    phi = math.asin(math.sqrt(baseline)) + h / 2.0
    other = math.sin(min(max(phi, 0.0), math.pi / 2.0)) ** 2
    pooled = first * baseline + (1.0 - first) * other
    return min(pooled, 1.0 - pooled)


def _sizes(n, params):
    return split_sizes(n, [params["share"], 1.0 - params["share"]])


def generate(condition, rng):
    params = condition.params
    groups = column_spec(condition, "group")["levels"]
    positive = condition.roles["positive"]
    negative = next(lv for lv in column_spec(condition, "outcome")["levels"] if lv != positive)
    sizes = _sizes(condition.n, params)
    phi = np.arcsin(np.sqrt(params["baseline"]))
    phi = np.array([phi, phi + condition.dgp.get("direction", 1) * condition.effect_value / 2.0])
    if not (phi[1] > 0.0 and phi[1] < np.pi / 2.0):
        raise ValueError(f"Cohen's h of {condition.effect_value:g} takes the proportion beyond 0 or 1 "
                         f"from a baseline of {params['baseline']:.3f}")
    success = rng.random(condition.n) < np.repeat(np.sin(phi) ** 2, sizes)
    return finish(condition, rng, {
        condition.roles["outcome"]: np.where(success, positive, negative).astype(object),
        condition.roles["group"]: labels_for(groups, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


def prop_test(condition, data, correct: bool) -> TestResult:
    """``prop.test(successes, totals, correct = correct)`` on the two groups."""
    table = counts_2x2(condition, data)
    x, n = table[:, 0].astype(float), table.sum(axis=1).astype(float)
    positive = str(condition.roles["positive"])
    group = condition.roles["group"]
    require(bool(np.all(x > 0) and np.all(x < n)),
            f"a level of '{group}' has no '{positive}' or no other outcome")
    pooled = x.sum() / n.sum()
    expected = np.column_stack([n * pooled, n * (1.0 - pooled)])
    require(bool(np.all(expected >= 5.0)), f"an expected count is below 5 ({expected.min():.3g}); "
                                           "R warns that the chi-square approximation may be incorrect")
    observed = np.column_stack([x, n - x])
    yates = min(0.5, abs(x[0] / n[0] - x[1] / n[1]) / float(np.sum(1.0 / n))) if correct else 0.0
    statistic = float(np.sum((np.abs(observed - expected) - yates) ** 2 / expected))
    method = f"2-sample test for equality of proportions {'with' if correct else 'without'} continuity correction"
    return TestResult(statistic=statistic, pvalue=float(chi2_sf(statistic, 1)), method=method, df=(1.0,),
                      estimate=float(x[0] / n[0] - x[1] / n[1]), n=int(n.sum()), statistic_name="X-squared")


def uncorrected(condition, data) -> TestResult:
    """``prop.test(successes, totals, correct = FALSE)``: the square of the pooled z."""
    return prop_test(condition, data, correct=False)


#: The uncorrected statistic, accepted beside R's default: the reference code
#: counts as the canonical one does, then leaves this test in ``res``.
UNCORRECTED = Alternative(method="2-sample test for equality of proportions without continuity correction",
                          call="prop.test(successes, totals, correct = FALSE)", run=uncorrected,
                          r_code=reference_template("two_proportion_z", "R")
                          + "\nres <- prop.test(x, n, correct = FALSE)", name=PROP_Z)


class TwoProportionZ(Family):
    name = "two_proportion_z"
    title = "Two-sample test of equal proportions"
    category = "proportions"
    question_kind = "two_proportions"
    null_p = "conservative"
    canonical = "prop.test(successes, totals)"
    test_name = PROP_TEST
    roles = {"outcome": "category", "group": "category", "positive": "level", "cluster": "cluster"}
    optional_roles = ("cluster",)  # cluster_proportions_t's clusters: the test ignores them
    min_n = MIN_N
    dgp_keys = ("p",)
    accepted = (UNCORRECTED,)
    medium = MEDIUM
    effect_unit = "Cohen's h"
    effect_bounds = (-math.pi, math.pi)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The first listed group's share of the rows (:func:`kit.first_group_share`) and the baseline
        proportion (the scenario's, jittered on the logit scale).

        At small N the baseline moves toward one half just enough that the
        smaller group expects ``MIN_EXPECTED`` successes and failures with no
        effect and with an effect as large as the medium or the borderline one
        (or as near as a baseline of one half comes); then an expected count
        below 5 (R's warning) is rare. The share stays as drawn: the sizes are
        fisher_exact's.
        """
        first = first_group_share(rng)
        p0 = float(scenario.dgp["p"])
        baseline = 1.0 / (1.0 + math.exp(-(math.log(p0 / (1.0 - p0)) + rng.normal(0.0, BASELINE_JITTER))))
        n1, n2 = split_sizes(n, [first, 1.0 - first])
        h = scenario.dgp.get("direction", 1) * max(MEDIUM, Z_BORDERLINE * math.sqrt(1.0 / n1 + 1.0 / n2))

        def enough(baseline):
            worst = min(_rarer_share(first, baseline, 0.0), _rarer_share(first, baseline, h))
            return n * min(first, 1.0 - first) * worst >= MIN_EXPECTED

        t = next((t for t in np.linspace(0.0, 1.0, 201) if enough(baseline + t * (0.5 - baseline))), 1.0)
        return {"share": first, "baseline": float(baseline + t * (0.5 - baseline)), **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        check_two_proportions(scenario, lowest=0.05)
        require_direction(scenario)

    def analyse(self, condition, data):
        return prop_test(condition, data, correct=True)

    def effect_for_z(self, z, n, params):
        """Cohen's h: 2 asin(sqrt(p)) has variance 1/n, so the uncorrected z is
        about h / sqrt(s), s = 1/n1 + 1/n2. The continuity correction takes
        s / 2 off |p1 - p2|, about s / (2 sqrt(p (1 - p))) in h at the baseline p,
        so that much is added back."""
        n1, n2 = _sizes(n, params)
        s = 1.0 / n1 + 1.0 / n2
        b = params["baseline"]
        return float(z * np.sqrt(s) + 0.5 * s / np.sqrt(b * (1.0 - b)))

    def hints(self, condition, data):
        return _describe.two_proportions(data, condition.roles)


register(TwoProportionZ())

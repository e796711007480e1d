"""Fisher's exact test of a sparse 2 x 2 table.

R: ``fisher.test(table(group, outcome))``. The two-sided p sums the
conditional (hypergeometric) probabilities of the tables with the observed
margins that are no more likely than the observed one, R's relative tolerance
1e-7 included; the estimate is R's conditional maximum-likelihood odds ratio.
R prints no statistic.

The data are the two-proportions question of `two_proportion_z` on a small
sample with a rare outcome: an expected count under independence is below 5,
so the large-sample test of the table (``chisq.test``, the tempting one, which
R warns about) is not to be trusted. One group has the baseline rate, the
other's odds differ by the effect (a log odds ratio, in the scenario's
direction), see :func:`rates`.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from ..effects import effect_for_power
from ..kit import column_spec, crossed_clusters, finish, first_group_share, labels_for, split_sizes
from ..family import Family
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction
from . import _describe
from ._common import check_two_proportions, chisq_yates, counts_2x2, draw_clusters
from ._names import CHI_SQUARE, FISHER

#: The range of the expected count of the rarer outcome in the smaller group
#: with no effect: sparse enough that an effect the test can see leaves the
#: table sparse.
BASE_EXPECTED = (1.0, 3.0)
#: An expected count below this makes a table sparse (R's chisq.test warns).
SPARSE_EXPECTED = 5.0
#: The largest log odds ratio calibration goes to (an odds ratio of about 3000).
MAX_LOG_OR = 8.0
EPS = float(np.finfo(float).eps)
R_UNIROOT_TOL = EPS ** 0.25
#: R's relative tolerance in comparing table probabilities.
REL_ERR = 1.0 + 1e-7
METHOD = "Fisher's Exact Test for Count Data"


def rates(params, effect):
    """The two groups' rates of the positive outcome. The effect moves the
    second group's log odds by ``direction * effect`` against the first; the
    group the effect leaves with fewer of the rarer outcome keeps the baseline,
    so the effect always adds to the rare cells and is not capped at 0 or 1."""
    logit = np.log(params["baseline"] / (1.0 - params["baseline"]))
    shift = params["direction"] * effect
    rare_is_positive = params["baseline"] < 0.5
    if (shift > 0) == rare_is_positive:   # the second group has more of the rare outcome
        logits = np.array([logit, logit + shift])
    else:
        logits = np.array([logit - shift, logit])
    return 1.0 / (1.0 + np.exp(-logits))


def sparse(sizes, events) -> bool:
    """Some expected count of the 2 x 2 table with these group ``sizes`` and
    ``events`` positive outcomes in all (a count or an array of counts) is
    below 5 (R's warning)."""
    n = sizes[0] + sizes[1]
    return min(sizes[0], sizes[1]) * np.minimum(events, n - events) < SPARSE_EXPECTED * n


def binomial_logpmf(x: np.ndarray, size: int, chance: float, band: int) -> np.ndarray:
    """log P(X = x) for X binomial(size, chance), each x within ``band`` of
    0 or of ``size`` (log C(size, j) summed up for the j = min(x, size - x)
    below ``band``; numpy only, as the regeneration script runs it)."""
    j = np.arange(1, min(band, size // 2 + 1))
    log_choose = np.concatenate([[0.0], np.cumsum(np.log((size - j + 1) / j))])
    with np.errstate(divide="ignore"):
        hits = np.where(x > 0, x * np.log(chance), 0.0)
        misses = np.where(x < size, (size - x) * np.log1p(-chance), 0.0)
    return log_choose[np.minimum(x, size - x)] + hits + misses


def sparse_counts(sizes, chances, rng) -> tuple[int, int]:
    """The positive outcomes of the two groups, binomial with rates
    ``chances`` given that their table is sparse: one draw from the sparse
    tables weighted by their binomial probabilities, the law rejection
    sampling over whole tables would give, which :func:`power` assumes. A
    sparse table has fewer than ``band`` of the rarer outcome in all, so each
    group's count lies within ``band`` of 0 or of the group's size."""
    n1, n2 = sizes
    band = int(np.ceil(SPARSE_EXPECTED * (n1 + n2) / min(n1, n2)))
    x1, x2 = (np.union1d(np.arange(min(k, band)), np.arange(max(0, k - band + 1), k + 1)) for k in (n1, n2))
    logw = (binomial_logpmf(x1, n1, chances[0], band)[:, None]
            + binomial_logpmf(x2, n2, chances[1], band)[None, :])
    logw[~sparse(sizes, np.add.outer(x1, x2))] = -np.inf
    w = np.exp(logw - logw.max()).ravel()
    pick = int(rng.choice(w.size, p=w / w.sum()))
    return int(x1[pick // len(x2)]), int(x2[pick % len(x2)])


def generate(condition, rng):
    """Two groups of fixed sizes whose positive outcomes are
    :func:`sparse_counts`, in random rows of each group."""
    params = condition.params
    groups = column_spec(condition, "group")["levels"]
    positive = condition.roles["positive"]
    negative = next(lv for lv in column_spec(condition, "outcome")["levels"] if lv != positive)
    sizes = split_sizes(condition.n, [params["share"], 1.0 - params["share"]])
    counts = sparse_counts(sizes, rates(params, condition.effect_value), rng)
    success = np.concatenate([rng.permutation(np.arange(size) < count) for size, count in zip(sizes, counts)])
    return finish(condition, rng, {
        condition.roles["outcome"]: np.where(success, positive, negative).astype(object),
        condition.roles["group"]: labels_for(groups, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


def fisher_2x2(table: np.ndarray) -> TestResult:
    """R's ``fisher.test`` on a 2 x 2 table (rows: groups, columns: outcomes)."""
    table = np.asarray(table, dtype=int)
    m, n, k, x = int(table[:, 0].sum()), int(table[:, 1].sum()), int(table[0].sum()), int(table[0, 0])
    lo, hi = max(0, k - n), min(k, m)
    support = np.arange(lo, hi + 1)
    logdc = stats.hypergeom.logpmf(support, m + n, m, k)
    d = np.exp(logdc - logdc.max())
    d /= d.sum()
    pvalue = float(min(1.0, d[d <= d[x - lo] * REL_ERR].sum()))
    return TestResult(statistic=None, pvalue=pvalue, method=METHOD, estimate=_conditional_mle(logdc, support, x),
                      n=int(table.sum()), statistic_name="")


@lru_cache(maxsize=256)
def rejection_region(n1: int, n2: int, alpha: float = 0.05) -> np.ndarray:
    """``reject[x1, x2]``: Fisher's test of the sparse table with x1 of n1 and
    x2 of n2 rejects at ``alpha`` (its p computed as :func:`fisher_2x2` does);
    tables that are not sparse, which :func:`generate` never draws, are False."""
    reject = np.zeros((n1 + 1, n2 + 1), dtype=bool)
    for k in np.flatnonzero(sparse((n1, n2), np.arange(n1 + n2 + 1))):
        lo, hi = max(0, k - n2), min(k, n1)
        support = np.arange(lo, hi + 1)
        logdc = stats.hypergeom.logpmf(support, n1 + n2, n1, k)
        d = np.exp(logdc - logdc.max())
        d /= d.sum()
        order = np.sort(d)
        cumulative = np.cumsum(order)
        # p of each x: the mass of the tables no more likely than it (R's tolerance)
        p = cumulative[np.searchsorted(order, d * REL_ERR, side="right") - 1]
        reject[support, k - support] = p < alpha
    return reject


def power(n1: int, n2: int, p1: float, p2: float, alpha: float = 0.05) -> float:
    """The exact probability that Fisher's test rejects for two binomial
    samples, given that the table is sparse (as :func:`generate` draws them).
    Rates so far apart that no sparse table has a probability a double holds
    (an effect far beyond any the calibration needs) give 1, the limit as the
    effect grows."""
    w = np.outer(stats.binom.pmf(np.arange(n1 + 1), n1, p1), stats.binom.pmf(np.arange(n2 + 1), n2, p2))
    kept = w * sparse_tables(n1, n2)
    mass = kept.sum()
    return float((kept * rejection_region(n1, n2, alpha)).sum() / mass) if mass > 0.0 else 1.0


@lru_cache(maxsize=256)
def sparse_tables(n1: int, n2: int) -> np.ndarray:
    """``sparse[x1, x2]``: the table with x1 of n1 and x2 of n2 is sparse."""
    events = np.add.outer(np.arange(n1 + 1), np.arange(n2 + 1))
    return sparse((n1, n2), events)


def _conditional_mle(logdc: np.ndarray, support: np.ndarray, x: int) -> float:
    """R's estimate: the odds ratio whose conditional mean of the first cell is
    x, found as R finds it (``uniroot`` on (0, 1) for the ratio or its inverse,
    tolerance ``.Machine$double.eps^0.25``), so it agrees with R's printout to
    about 1e-4, R's own precision."""
    if x == support[0]:
        return 0.0
    if x == support[-1]:
        return math.inf

    def mean(ncp):
        w = logdc + math.log(ncp) * support
        w = np.exp(w - w.max())
        return float((support * w).sum() / w.sum())

    mu = mean(1.0)
    if mu > x:
        return float(optimize.brentq(lambda t: mean(t) - x, 0.0 + 1e-300, 1.0, xtol=R_UNIROOT_TOL))
    if mu < x:
        return float(1.0 / optimize.brentq(lambda t: mean(1.0 / t) - x, EPS, 1.0, xtol=R_UNIROOT_TOL))
    return 1.0


class FisherExact(Family):
    name = "fisher_exact"
    title = "Fisher's exact test"
    category = "proportions"
    question_kind = "two_proportions"
    null_p = "discrete"
    canonical = "fisher.test(table(group, outcome))"
    test_name = FISHER
    roles = {"outcome": "category", "group": "category", "positive": "level", "cluster": "cluster"}
    optional_roles = ("cluster",)  # cluster_proportions_t's clusters: the test ignores them
    min_n = 60  # two_proportion_z's (siblings share their range of N)
    dgp_keys = ("p",)
    naive_method = "Pearson's chi-square test of the 2 x 2 table (chisq.test)"
    naive_name = CHI_SQUARE
    medium = math.log(3.5)
    effect_unit = "log odds ratio of the second listed group against the first"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The first group's share of the rows (:func:`kit.first_group_share`), its rate of the
        positive outcome (the scenario's, jittered on the logit scale, and moved
        toward 0 or 1, whichever it is nearer, just enough that the smaller
        group expects 1 to 3 of the rarer outcome with no effect) and the
        direction of the effect (the scenario's)."""
        first = first_group_share(rng)
        p = float(scenario.dgp["p"])
        logit = math.log(p / (1.0 - p)) + float(rng.normal(0.0, 0.25))
        baseline = 1.0 / (1.0 + math.exp(-logit))
        small = min(split_sizes(n, [first, 1.0 - first]))
        rare = min(baseline, 1.0 - baseline)
        limit = float(rng.uniform(*BASE_EXPECTED)) / small
        if rare > limit:
            baseline = limit if baseline < 0.5 else 1.0 - limit
        return {"share": first, "baseline": baseline, "direction": scenario.dgp.get("direction", 1),
                **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        check_two_proportions(scenario, lowest=0.02)
        require_direction(scenario)

    def analyse(self, condition, data):
        return fisher_2x2(counts_2x2(condition, data))

    def naive(self, condition, data):
        return chisq_yates(counts_2x2(condition, data))

    def effect_for_z(self, z, n, params):
        """The log odds ratio at which Fisher's test, computed exactly over all
        tables of the design, rejects as often as a z test whose statistic
        averages ``z`` (half the time at the borderline z = 1.96). The test is
        discrete and conservative on sparse tables, so no normal approximation
        gets this right. Where even ``MAX_LOG_OR`` does not reach it, that."""
        n1, n2 = split_sizes(n, [params["share"], 1.0 - params["share"]])
        return effect_for_power(lambda log_or: power(n1, n2, *map(float, rates(params, log_or))), z, MAX_LOG_OR)

    def hints(self, condition, data):
        return _describe.two_proportions(data, condition.roles)


register(FisherExact())

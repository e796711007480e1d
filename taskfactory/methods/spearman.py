"""Spearman's rank correlation of two skewed or heavy-tailed measurements.

R: ``cor.test(x, y, method = "spearman")``. The statistic is
S = (n^3 - n)(1 - rho) / 6, rho the correlation of the ranks. With no ties and
n <= 1290 R takes its "exact" branch, Algorithm AS 89 (Best & Roberts, Applied
Statistics 24, 1975): the permutation distribution of S for n <= 9, an
Edgeworth series for n >= 10. With ties, or n > 1290, R refers
rho / sqrt((1 - rho^2) / (n - 2)) to a t distribution on n - 2 df.

The data come from a Gaussian copula pushed through monotone non-linear margins
(lognormal, sinh, logistic), so the population Spearman correlation is exactly
the effect while the raw scatter is curved, skewed and dotted with a few
high-leverage points. The tempting wrong test is Pearson's ``cor.test(x, y)``;
Kendall's tau (``cor.test(x, y, method = "kendall")``) is accepted beside it.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from ..kit import finish
from ..family import Alternative, Family
from ..registry import register
from ._names import KENDALL, PEARSON, SPEARMAN
from . import _describe
from ..result import TestResult
from ..scenarios import require_direction, require_number
from ._correlation import KENDALL_METHOD, kendall_test, pair, pearson_r, pearson_test, t_pvalue

METHOD = "Spearman's rank correlation rho"
EXACT_MAX_N = 1290
ENUMERATE_MAX_N = 9
EDGEWORTH = (0.2274, 0.2531, 0.1745, 0.0758, 0.1033, 0.3932, 0.0879, 0.0151, 0.0072, 0.0831, 0.0131, 4.6e-4)
SHAPES = ("normal", "lognormal", "sinh", "logistic")
K_RANGE = (0.8, 1.25)
MARGIN_KEYS = ("shape", "loc", "scale", "k", "shift")


def margin(z, spec, factor):
    """A monotone increasing map of standard normal scores onto a variable's scale:
    ``loc + scale * g(shift + k z)``, g the identity, exp, sinh or the logistic curve."""
    u = spec.get("shift", 0.0) + factor * spec.get("k", 1.0) * z
    shape = spec["shape"]
    if shape == "lognormal":
        g = np.exp(u)
    elif shape == "sinh":
        g = np.sinh(u)
    elif shape == "logistic":
        g = 1.0 / (1.0 + np.exp(-u))
    else:
        g = u
    return spec["loc"] + spec["scale"] * g


def generate(condition, rng):
    """Gaussian copula with correlation 2 sin(pi rho_s / 6) (whose Spearman
    correlation is rho_s), each margin bent by :func:`margin`."""
    dgp, n = condition.dgp, condition.n
    rho_s = dgp.get("direction", 1) * condition.effect_value
    r = 2.0 * np.sin(np.pi * rho_s / 6.0)
    zx = rng.standard_normal(n)
    zy = r * zx + np.sqrt(1.0 - r * r) * rng.standard_normal(n)
    kx, ky = condition.params["k_factor"]
    return finish(condition, rng, {
        condition.roles["x"]: margin(zx, dgp["x"], kx),
        condition.roles["y"]: margin(zy, dgp["y"], ky),
    })


@lru_cache(maxsize=None)
def _s_counts(n: int) -> np.ndarray:
    """Number of permutations p of 1..n with sum_i (i - p_i)^2 = s, for
    s = 0 .. (n^3 - n) / 3, by dynamic programming over the set of used values."""
    top, full = n * (n * n - 1) // 3, (1 << n) - 1
    table = {0: np.zeros(top + 1, dtype=np.int64)}
    table[0][0] = 1
    for mask in range(full):
        counts = table.pop(mask)
        i = bin(mask).count("1")
        for v in range(n):
            if not mask >> v & 1:
                step = (i - v) ** 2
                nxt = table.setdefault(mask | 1 << v, np.zeros(top + 1, dtype=np.int64))
                nxt[step:] += counts[:top + 1 - step]
    return table[full]


def prho(n: int, s: float, lower: bool) -> float:
    """Algorithm AS 89 as R's ``cor.test`` calls it: P(S >= s) for the upper tail,
    P(S < s) for the lower, S = sum (i - p_i)^2 over random permutations p of 1..n.

    Exact for n <= 9; for n >= 10 the Edgeworth series of AS 89 around the
    normal tail at x = (6 (s - 1) / (n^3 - n) - 1) sqrt(n - 1), clamped to [0, 1].
    """
    if n <= 1 or s <= 0:
        return 0.0 if lower else 1.0
    if s > n * (n * n - 1) / 3:
        return 1.0 if lower else 0.0
    if n <= ENUMERATE_MAX_N:
        counts = _s_counts(n)
        values = np.arange(len(counts))
        hits = int(counts[values < s].sum() if lower else counts[values >= s].sum())
        return hits / math.factorial(n)
    c = EDGEWORTH
    b = 1.0 / n
    x = (6.0 * (s - 1.0) * b / (n * n - 1.0) - 1.0) * math.sqrt(1.0 / b - 1.0)
    y = x * x
    u = x * b * (c[0] + b * (c[1] + c[2] * b) + y * (-c[3] + b * (c[4] + c[5] * b) - y * b * (
        c[6] + c[7] * b - y * (c[8] - c[9] * b + y * b * (c[10] - c[11] * y)))))
    u /= math.exp(y / 2.0)
    p = stats.norm.cdf(x) - u if lower else stats.norm.sf(x) + u
    return float(min(1.0, max(0.0, p)))


class Spearman(Family):
    name = "spearman"
    title = "Spearman rank correlation test"
    category = "correlation"
    question_kind = "association"
    canonical = 'cor.test(x, y, method = "spearman")'
    test_name = SPEARMAN
    naive_name = PEARSON
    roles = {"x": "numeric", "y": "numeric"}
    min_n = 20  # where a normality test at 5 % sees the skewed margins in most datasets
    dgp_keys = ("x", "y")
    naive_method = "Pearson correlation test, cor.test(x, y)"
    accepted = (Alternative(method=KENDALL_METHOD, call='cor.test(x, y, method = "kendall")', run=kendall_test,
                            r_code='res <- cor.test(d[["{x}"]], d[["{y}"]], method = "kendall")', name=KENDALL),)
    medium = 0.3
    effect_unit = "Spearman's rho"
    effect_bounds = (-1.0, 1.0)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """How strongly each margin bends: a factor on the scenario's ``k`` of x and of y."""
        return {"k_factor": [float(v) for v in rng.uniform(K_RANGE[0], K_RANGE[1], 2)]}

    def validate(self, scenario):
        for role in ("x", "y"):
            spec = scenario.dgp[role]
            if not isinstance(spec, dict) or spec.get("shape") not in SHAPES:
                raise ValueError(f"dgp {role} needs a shape, one of {', '.join(SHAPES)}")
            unknown = sorted(set(spec) - set(MARGIN_KEYS))
            if unknown:
                raise ValueError(f"dgp {role} has the unknown key '{unknown[0]}'; allowed: {', '.join(MARGIN_KEYS)}")
            for key in MARGIN_KEYS[1:]:
                if key in spec:
                    require_number(spec[key], f"dgp {role}.{key}")
            if not spec.get("scale", 0) > 0 or not spec.get("k", 1.0) > 0 or "loc" not in spec:
                raise ValueError(f"dgp {role} needs loc, a positive scale and a positive k")
            lo, hi = scenario.variable(scenario.roles[role]).range
            with np.errstate(over="ignore"):
                ends = margin(np.array([-4.0, 4.0]), spec, K_RANGE[1])
            if not (lo < ends[0] and ends[1] < hi):
                raise ValueError(f"the margin of {role} at normal scores +/- 4 leaves the range of '{scenario.roles[role]}'")
        require_direction(scenario)

    def analyse(self, condition, data):
        """R's two-sided Spearman test: the tail is the one S lies in (lower when
        S <= (n^3 - n) / 6), p = min(2 P, 1). In the exact branch R asks AS 89 for
        P(S >= round(S)) or, in the lower tail, P(S < round(S) + 2), i.e. P(S <= S_obs)
        as S takes even values only."""
        x, y = pair(condition, data)
        n = len(x)
        rho = pearson_r(stats.rankdata(x), stats.rankdata(y))
        q = (float(n) ** 3 - n) * (1.0 - rho) / 6.0
        lower = not q > (float(n) ** 3 - n) / 6.0
        ties = min(len(np.unique(x)), len(np.unique(y))) < n
        if ties or n > EXACT_MAX_N:
            _, p = t_pvalue(rho, n)
            branch = "t approximation"
        else:
            p = min(1.0, 2.0 * prho(n, float(np.floor(q + 0.5)) + 2.0 * lower, lower))
            branch = "exact permutation" if n <= ENUMERATE_MAX_N else "Edgeworth series"
        return TestResult(statistic=q, pvalue=float(p), method=METHOD, estimate=rho, n=n, statistic_name="S",
                          details={"branch": branch, "ties": bool(ties)})

    def naive(self, condition, data):
        return pearson_test(condition, data)

    def effect_for_z(self, z, n, params):
        """Spearman's rho whose Fisher z sits ``z`` standard errors from zero, with the
        variance of the Fisher z of Spearman's rho, about 1.06 / (n - 3)."""
        return float(np.tanh(z * np.sqrt(1.06 / (n - 3))))

    def hints(self, condition, data):
        return _describe.association(data, condition.roles["x"], condition.roles["y"])


register(Spearman())

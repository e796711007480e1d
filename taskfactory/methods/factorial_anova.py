"""The interaction of two two-level factors in a 2 x 2 design.

R: ``anova(lm(outcome ~ a * b))``, the ``a:b`` row: F = (RSS of the additive
model - RSS of the full model) / (RSS of the full model / (N - 4)) on 1 and
N - 4 df. The interaction enters last, so R's sequential (Type I) sum of
squares for it is the Type III one, balanced or not (blank cells unbalance
the cells).

The data are normal with a common SD, balanced cells, main effects of either
sign up to half an SD (nuisance), and an interaction: with the factors coded
-1 and +1 in their listed order, the cell means carry ``gamma * a * b``;
Cohen's f of the interaction is |gamma| / sd and the F non-centrality is
N f^2. There is no tempting wrong test of the same data.
"""

import numpy as np

from ..effects import f_noncentrality
from ..family import Family
from ..kit import column_spec, finish, split_sizes
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction
from . import _describe
from ._common import check_location, require, require_varies
from ._names import FACTORIAL
from ._dist import f_sf

MAIN_EFFECT = 0.5


def generate(condition, rng):
    dgp, params, roles = condition.dgp, condition.params, condition.roles
    a_levels, b_levels = column_spec(condition, "a")["levels"], column_spec(condition, "b")["levels"]
    sizes = split_sizes(condition.n, [1.0, 1.0, 1.0, 1.0])
    a = np.repeat([-1.0, -1.0, 1.0, 1.0], sizes)
    b = np.repeat([-1.0, 1.0, -1.0, 1.0], sizes)
    gamma = params["direction"] * condition.effect_value
    mean = dgp["mean"] + dgp["sd"] * (params["alpha"] * a + params["beta"] * b + gamma * a * b)
    return finish(condition, rng, {
        roles["outcome"]: rng.normal(mean, dgp["sd"]),
        roles["a"]: np.where(a < 0, a_levels[0], a_levels[1]).astype(object),
        roles["b"]: np.where(b < 0, b_levels[0], b_levels[1]).astype(object),
    })


def interaction_f(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> TestResult:
    """The ``a:b`` row of R's ``anova(lm(y ~ a * b))`` for two 2-level factors."""
    a_levels, b_levels = sorted(set(a)), sorted(set(b))   # sorted: sums in one order, run after run
    require(len(a_levels) == 2 and len(b_levels) == 2, "each factor needs 2 levels")
    cells = {(i, j): y[(a == i) & (b == j)] for i in a_levels for j in b_levels}
    require(all(len(v) >= 1 for v in cells.values()) and len(cells) == 4, "a cell of the 2 x 2 design is empty")
    n = len(y)
    require(n > 4, "the design needs more rows than cells")
    rss_full = float(sum(np.sum((v - v.mean()) ** 2) for v in cells.values()))
    design = np.column_stack([np.ones(n), (a == a_levels[1]).astype(float), (b == b_levels[1]).astype(float)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    rss_additive = float(np.sum((y - design @ coef) ** 2))
    df_resid = n - 4
    require(rss_full > 0.0, "the outcome has no variation within the cells")
    statistic = (rss_additive - rss_full) / (rss_full / df_resid)
    return TestResult(statistic=float(statistic), pvalue=float(f_sf(statistic, 1, df_resid)),
                      method="Analysis of Variance Table (a:b)", df=(1.0, float(df_resid)), n=n,
                      statistic_name="F value")


class FactorialAnova(Family):
    name = "factorial_anova"
    title = "Two-way ANOVA: the interaction of two factors"
    category = "k-sample"
    question_kind = "two_factors"
    canonical = "anova(lm(outcome ~ a * b)), the a:b row"
    test_name = FACTORIAL
    roles = {"outcome": "numeric", "a": "category", "b": "category"}
    min_n = 20
    dgp_keys = ("mean", "sd")
    medium = 0.25
    effect_unit = "Cohen's f of the interaction (|gamma| / sd)"
    r_pvalue = 'res[3, "Pr(>F)"]'
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Main effects of the two factors (in SDs, each -0.5 to 0.5) and the
        direction of the interaction (the scenario's)."""
        return {"alpha": float(rng.uniform(-MAIN_EFFECT, MAIN_EFFECT)),
                "beta": float(rng.uniform(-MAIN_EFFECT, MAIN_EFFECT)),
                "direction": scenario.dgp.get("direction", 1)}

    def validate(self, scenario):
        for role in ("a", "b"):
            levels = scenario.variable(scenario.roles[role]).levels
            if len(levels) != 2:
                raise ValueError(f"factor {role} ('{scenario.roles[role]}') needs exactly 2 levels")
        check_location(scenario, "outcome")
        require_direction(scenario)

    def analyse(self, condition, data):
        roles = condition.roles
        require_varies(data, roles["outcome"], roles["a"], roles["b"])
        return interaction_f(data[roles["outcome"]].to_numpy(float), data[roles["a"]].astype(str).to_numpy(),
                             data[roles["b"]].astype(str).to_numpy())

    def effect_for_z(self, z, n, params):
        """f = sqrt(lambda / N), lambda the F(1, N - 4) non-centrality for ``z``."""
        return float(np.sqrt(f_noncentrality(z, 1, n - 4) / n))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.two_factors(data, roles["outcome"], roles["a"], roles["b"])


register(FactorialAnova())

"""factorial_anova pinned to R 4.2.2: the a:b row of ``anova(lm(y ~ a * b))``.

    y <- c(5.1,4.8,6.0,5.5, 6.2,6.8,5.9,7.1, 5.0,5.6,4.7,5.3, 8.1,7.6,8.8,7.9)
    a <- rep(c("x","y"), each = 8); b <- rep(rep(c("p","q"), each = 4), 2)
    anova(lm(y ~ a * b))[3, ]              # balanced: F 13.224489795918, p 0.0034095486639
    k <- -c(2, 11); anova(lm(y[k] ~ a[k] * b[k]))[3, ]   # unbalanced, Type I = Type III for a:b
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError

ROLES = {"outcome": "y", "a": "a", "b": "b"}
DATA = pd.DataFrame({
    "y": [5.1, 4.8, 6.0, 5.5, 6.2, 6.8, 5.9, 7.1, 5.0, 5.6, 4.7, 5.3, 8.1, 7.6, 8.8, 7.9],
    "a": ["x"] * 8 + ["y"] * 8,
    "b": (["p"] * 4 + ["q"] * 4) * 2,
})


def test_interaction_f_matches_r_balanced():
    res = tf.analyse("factorial_anova", DATA, ROLES)
    assert res.statistic == pytest.approx(13.22448979591835, rel=1e-12)
    assert res.pvalue == pytest.approx(0.0034095486639349796, rel=1e-10) and res.df == (1.0, 12.0)


def test_interaction_f_matches_r_unbalanced():
    res = tf.analyse("factorial_anova", DATA.drop(index=[1, 10]), ROLES)
    assert res.statistic == pytest.approx(12.710084033613438, rel=1e-12)
    assert res.pvalue == pytest.approx(0.0051372818807354122, rel=1e-10) and res.df == (1.0, 10.0)


def test_an_empty_cell_is_refused():
    with pytest.raises(DataError, match="a cell of the 2 x 2 design is empty"):
        tf.analyse("factorial_anova", DATA[~((DATA.a == "y") & (DATA.b == "q"))], ROLES)

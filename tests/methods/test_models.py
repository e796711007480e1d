"""taskfactory.methods._models pinned to R 4.2.2 (sandwich 3.0.2, lmtest 0.9.40, MASS 7.3-58.2).

The data frames below are inlined; R read the same columns (``lm1 <- data.frame(y = c(-2.47, ...),
x = c(...), g = c("c", "a", ...), cl = c(...))`` and so on) and printed each coefficient row with
``sprintf("%.15g", ...)``::

    library(sandwich); library(lmtest); library(MASS)
    f1 <- lm(y ~ x + g, lm1)
    summary(f1)$coefficients
    coeftest(f1, vcov = vcovHC(f1, type = "HC3"))
    coeftest(f1, vcov = vcovCL(f1, cluster = ~cl))
    f2 <- lm(w ~ u + v, lm2)                        # the same three tables
    b <- glm(y ~ x + g, family = binomial, data = bin1)
    summary(b)$coefficients; c(b$deviance, b$null.deviance, b$aic, b$iter)
    p <- glm(y ~ x + g, family = poisson, data = poi1, offset = log(expo))   # and without the offset
    summary(p)$coefficients; c(p$deviance, p$null.deviance, p$aic, p$iter)
    n1 <- glm.nb(y ~ x + g + offset(log(expo)), data = nb1)                  # and without the offset
    summary(n1)$coefficients; c(n1$theta, n1$SE.theta, n1$twologlik, n1$deviance, n1$null.deviance)
    n2 <- glm.nb(y ~ x, data = nb2)

The expected rows are (term, estimate, std. error, t or z, p).
"""

import numpy as np
import pandas as pd
import pytest

from taskfactory.errors import DataError
from taskfactory.methods._models import glm_nb_terms, glm_terms, lm_terms, model_matrix

REL = 1e-6

LM1 = pd.DataFrame({
    "y": [-2.47, 2.92, 2.33, 2.48, 1.27, 1.06, -0.49, 2.13, 3.67, 2.71, 1.59, 2.48, 1.43, 3.37, 2.06, 0.39, 0.82,
          2.0, 1.61, 1.03, 2.73, 1.09, 2.33, 3.46, 1.31, 2.75, -0.64, 2.03, 2.43, 0.15],
    "x": [1.03, 1.64, 1.15, -0.97, -1.39, 0.07, 0.86, 0.51, 1.81, 0.75, 0.64, -0.73, -1.11, 1.48, 0.05, 0.81,
          -1.38, -0.44, -1.29, -0.78, 0.9, -1.48, -0.53, 0.16, -0.67, -0.25, -0.22, 0.42, -0.43, 0.27],
    "g": list("cacbbccaaacbacabaabaaaabababbb"),
    "cl": [2, 2, 2, 2, 2, 2, 1, 2, 3, 4, 1, 4, 1, 1, 3, 1, 1, 5, 1, 1, 2, 1, 1, 4, 6, 1, 1, 3, 2, 1],
})
LM2 = pd.DataFrame({
    "w": [11.89, 10.85, 14.35, 12.03, 12.55, 8.59, 9.56, 12.69, 15.09, 12.91, 11.25, 10.71, 16.18, 12.05, 7.83,
          8.61, 12.75, 4.97, 9.61, 12.82, 8.53, 9.26, 17.52, 12.03],
    "u": [1.5, 1.3, 0.7, 1.5, 2.2, 9.5, 8.7, 1.4, 7.8, 0.1, 6.6, 3.1, 3.6, 2.3, 5.6, 9.3, 8.3, 8.2, 5.1, 9.7, 8.4,
          6.3, 8.9, 0.9],
    "v": [7.8, 6.9, 5.4, 6.1, 5.3, 1.9, 6.8, 5.8, 2.3, 3.7, 4.5, 5.7, 8.5, 5.0, 1.1, 6.3, 4.7, 1.5, 0.4, 2.9, 5.8,
          3.5, 6.2, 4.4],
    "cl": [1, 1, 1, 4, 2, 3, 5, 4, 5, 2, 5, 1, 1, 3, 5, 3, 2, 4, 1, 4, 1, 1, 4, 2],
})
BIN1 = pd.DataFrame({
    "y": [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1,
          0, 1, 0, 0, 1],
    "x": [1.32, 1.48, -0.57, -0.83, -0.89, 0.35, 0.16, 0.78, -0.11, -0.51, 0.12, -0.57, 0.66, 0.42, 0.56, 0.45,
          -0.42, -1.72, 1.27, 1.08, -0.74, 0.9, 0.16, -0.07, -0.01, -0.83, -0.13, 0.05, 0.2, -0.63, 0.38, -0.58,
          -0.5, 0.08, -0.46, -1.03, -0.53, -0.7, 0.13, 0.67],
    "g": [{"c": "ctl", "t": "trt"}[c] for c in "ccccctttccttttctccttcttctcctcctcttctccct"],
})
POI1 = pd.DataFrame({
    "y": [3, 4, 3, 2, 5, 2, 10, 3, 2, 8, 2, 1, 3, 3, 4, 9, 3, 3, 5, 6, 1, 1, 0, 8, 11, 2, 2, 9, 8, 4],
    "x": [0.95, 3.09, 1.8, -0.06, 0.26, 1.06, 2.69, -0.18, 0.41, -0.17, 1.21, -1.36, 0.16, -1.32, 0.29, 0.82,
          -0.39, -0.22, 1.15, -0.09, 0.58, -0.23, -0.92, -0.41, 2.12, -0.27, 0.07, 1.22, 0.39, 0.56],
    "g": list("cbcaaacccbbcacbbbaabbccaabcbbb"),
    "expo": [2.0, 1.5, 1.7, 0.7, 2.4, 1.3, 2.9, 2.7, 0.8, 2.9, 1.4, 2.3, 2.8, 1.0, 1.2, 2.7, 1.9, 1.5, 1.8, 2.2,
             1.2, 0.5, 1.2, 2.7, 1.4, 1.1, 1.4, 1.8, 2.9, 2.1],
})
NB1 = pd.DataFrame({
    "y": [17, 0, 0, 17, 3, 8, 7, 1, 2, 1, 4, 1, 7, 20, 3, 6, 1, 1, 0, 4, 6, 10, 1, 6, 0, 10, 36, 0, 3, 3, 12, 1,
          7, 4, 5, 38, 4, 1, 6, 11],
    "x": [0.7, 0.26, 0.46, 0.97, 0.69, 0.89, 0.0, -0.98, 1.45, 1.36, -1.66, -0.17, 2.38, 1.34, 1.11, -2.24, -0.31,
          -0.71, -0.05, -0.04, 1.09, -0.48, -0.16, -0.88, -1.44, 0.41, 1.13, 0.0, 1.44, -0.39, 0.56, -2.01, 0.38,
          1.78, -0.69, 0.51, 0.42, -0.29, 0.25, -0.18],
    "g": list("babbbbbaaabaabbbabbbabababaaabbaaabbabbb"),
    "expo": [1.4, 0.7, 1.3, 0.7, 2.8, 2.4, 2.4, 2.4, 1.0, 2.6, 2.3, 1.9, 2.9, 2.7, 2.2, 2.9, 1.3, 0.9, 1.7, 1.3,
             1.2, 1.8, 1.4, 1.2, 2.9, 1.0, 2.8, 1.1, 1.9, 1.8, 2.8, 2.4, 3.0, 0.9, 1.1, 2.8, 2.8, 0.9, 1.1, 1.1],
})
NB2 = pd.DataFrame({
    "y": [5, 0, 6, 5, 3, 8, 6, 4, 0, 0, 2, 0, 4, 1, 0, 13, 5, 6, 0, 2, 3, 0, 6, 6, 2, 0, 2, 3, 7, 14],
    "x": [-0.07, 0.13, 0.93, -0.04, -0.8, -0.55, 0.68, 0.84, -0.62, -0.94, 0.87, -0.83, -0.16, -0.05, 0.9, 0.39,
          0.39, 0.9, -0.06, -0.07, -0.09, 0.53, 0.83, 0.11, 0.35, 0.1, -0.37, 0.29, -0.81, 0.66],
})


def check(terms, expected, df=None):
    """Each term matches R's row (name, estimate, SE, statistic, p) to 1e-6 relative."""
    assert [t.name for t in terms] == [row[0] for row in expected]
    for t, (name, est, se, stat, p) in zip(terms, expected):
        assert t.estimate == pytest.approx(est, rel=REL), name
        assert t.std_error == pytest.approx(se, rel=REL), name
        assert t.statistic == pytest.approx(stat, rel=REL), name
        assert t.pvalue == pytest.approx(p, rel=REL), name
        assert t.df == df


def design(data, columns, outcome="y"):
    X, names = model_matrix(data, columns)
    return data[outcome].to_numpy(float), X, names


# --------------------------------------------------------------------------- model_matrix


def test_model_matrix_codes_text_as_treatment_dummies():
    """model.matrix(~ x + g, lm1): an intercept, x as is, dummies gb and gc (baseline a)."""
    X, names = model_matrix(LM1, ["x", "g"])
    assert names == ["(Intercept)", "x", "gb", "gc"]
    assert X.shape == (30, 4)
    assert (X[:, 0] == 1).all() and np.array_equal(X[:, 1], LM1["x"].to_numpy())
    assert np.array_equal(X[:, 2], (LM1["g"] == "b").to_numpy(float))
    assert np.array_equal(X[:, 3], (LM1["g"] == "c").to_numpy(float))


def test_model_matrix_levels_sort_as_in_the_c_locale():
    """LC_COLLATE=C Rscript: model.matrix(lm(y ~ arm + flag + dose, d)) with arm c("b", "B", "a", "b"),
    flag c(TRUE, FALSE, TRUE, TRUE), dose factor(c("hi", "lo", "lo", "hi"), levels = c("mid", "lo", "hi"))
    has columns arma armb flagTRUE dosehi: "B" sorts first in the C locale (a UTF-8 session with ICU
    collation sorts a A b B instead), and lm() drops the unused level "mid"."""
    data = pd.DataFrame({"arm": ["b", "B", "a", "b"], "flag": [True, False, True, True],
                         "dose": pd.Categorical(["hi", "lo", "lo", "hi"], categories=["mid", "lo", "hi"])})
    X, names = model_matrix(data, ["arm", "flag", "dose"])
    assert names == ["(Intercept)", "arma", "armb", "flagTRUE", "dosehi"]  # unused level 'mid' dropped
    assert X[:, 1:].tolist() == [[0, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0], [0, 1, 1, 1]]


def test_model_matrix_refuses_a_single_level():
    """R: contrasts can be applied only to factors with 2 or more levels."""
    with pytest.raises(DataError, match="single level"):
        model_matrix(pd.DataFrame({"g": ["a", "a", "a"]}), ["g"])


# --------------------------------------------------------------------------- lm


LM1_CLASSICAL = [
    ("(Intercept)", 1.86195325679451, 0.340121943342469, 5.47436968781431, 9.65328815518759e-06),
    ("x", 0.502469047498029, 0.279245940701183, 1.79937816190393, 0.0835763793561803),
    ("gb", 0.213886219354821, 0.531556690593914, 0.402377061825416, 0.690695637583534),
    ("gc", -1.40160544319696, 0.673234548596559, -2.08189767759064, 0.0473362151193553),
]
LM1_HC3 = [
    ("(Intercept)", 1.86195325679451, 0.227288369904245, 8.19203049227258, 1.13056387693227e-08),
    ("x", 0.502469047498029, 0.223770676335898, 2.24546422134321, 0.0334616460988541),
    ("gb", 0.213886219354821, 0.49993011509627, 0.427832236738997, 0.672296244121151),
    ("gc", -1.40160544319696, 0.924366524270529, -1.51628754005674, 0.1415118001113),
]
LM1_CL = [
    ("(Intercept)", 1.86195325679451, 0.234856866218698, 7.92803415447374, 2.0946444208504e-08),
    ("x", 0.502469047498029, 0.143994505601377, 3.48950152923908, 0.00174204192785966),
    ("gb", 0.213886219354821, 0.325241206463983, 0.657623373373221, 0.516560545629038),
    ("gc", -1.40160544319696, 0.717716777575516, -1.9528670458724, 0.0616785585562431),
]
LM2_CLASSICAL = [
    ("(Intercept)", 9.79247072084903, 1.8192954564602, 5.38256207152974, 2.44281446070251e-05),
    ("u", -0.132789834965314, 0.17010445555827, -0.780637018175147, 0.443727171355482),
    ("v", 0.494917979826012, 0.270069098276622, 1.83256056684829, 0.0810869379800501),
]
LM2_HC3 = [
    ("(Intercept)", 9.79247072084903, 1.98935500520145, 4.92243500795244, 7.19999576469467e-05),
    ("u", -0.132789834965314, 0.201035148013551, -0.660530440957337, 0.516094424442388),
    ("v", 0.494917979826012, 0.329220852427964, 1.50330082732018, 0.14765208578706),
]
LM2_CL = [
    ("(Intercept)", 9.79247072084903, 2.10977909261921, 4.64146732475771, 0.000140317413221827),
    ("u", -0.132789834965314, 0.185434581681995, -0.716100706571756, 0.481817133215607),
    ("v", 0.494917979826012, 0.311925084358185, 1.5866565551929, 0.127534329078076),
]


@pytest.mark.parametrize("vcov, expected", [("classical", LM1_CLASSICAL), ("HC3", LM1_HC3), ("CL", LM1_CL)])
def test_lm_with_a_factor_matches_r(vcov, expected):
    """summary(lm(y ~ x + g, lm1)) and coeftest() with vcovHC(type = "HC3") / vcovCL(cluster = ~cl)
    (6 clusters of 1 to 14 rows); every t on the residual df 26."""
    y, X, names = design(LM1, ["x", "g"])
    check(lm_terms(y, X, names, vcov, LM1["cl"] if vcov == "CL" else None), expected, df=26.0)


@pytest.mark.parametrize("vcov, expected", [("classical", LM2_CLASSICAL), ("HC3", LM2_HC3), ("CL", LM2_CL)])
def test_lm_with_numeric_terms_matches_r(vcov, expected):
    """lm(w ~ u + v, lm2) with t(3) errors whose spread grows with u; 5 clusters; residual df 21."""
    y, X, names = design(LM2, ["u", "v"], "w")
    check(lm_terms(y, X, names, vcov, LM2["cl"].to_numpy() if vcov == "CL" else None), expected, df=21.0)


def test_lm_refuses_a_collinear_term():
    """coef(lm(y ~ x + I(2 * x), lm1)) has NA for the second term."""
    y, X, _ = design(LM1, ["x"])
    with pytest.raises(DataError, match="collinear"):
        lm_terms(y, np.column_stack([X, 2 * X[:, 1]]), ["(Intercept)", "x", "I(2 * x)"])


def test_lm_refuses_a_perfect_fit():
    """summary.lm warns: essentially perfect fit: summary may be unreliable."""
    _, X, names = design(LM1, ["x", "g"])
    with pytest.raises(DataError, match="perfectly"):
        lm_terms(X @ [1.0, 2.0, -1.0, 0.5], X, names)


def test_hc3_refuses_a_leverage_of_one():
    """A level with one row (g "d" in row 1): vcovHC warns that HC3 covariances become numerically
    unstable if hat values are close to 1, and coeftest prints NaN standard errors."""
    data = LM1.assign(g=["d"] + LM1["g"].tolist()[1:])
    y, X, names = design(data, ["x", "g"])
    assert len(lm_terms(y, X, names)) == 5  # the classical table exists
    with pytest.raises(DataError, match="leverage"):
        lm_terms(y, X, names, "HC3")


def test_lm_argument_errors():
    y, X, names = design(LM1, ["x", "g"])
    with pytest.raises(ValueError, match="vcov"):
        lm_terms(y, X, names, "HC1")
    with pytest.raises(ValueError, match="cluster"):
        lm_terms(y, X, names, "CL")
    with pytest.raises(DataError, match="2 clusters"):
        lm_terms(y, X, names, "CL", np.ones(len(y)))


# --------------------------------------------------------------------------- glm


BIN1_GLM = [
    ("(Intercept)", 0.178948626603675, 0.615360548873192, 0.290802890974005, 0.771202074178997),
    ("x", 2.43329981757708, 0.903627895041451, 2.69281175462768, 0.00708522605990868),
    ("gtrt", 0.116555682756415, 0.899803124453258, 0.129534649957164, 0.896934609199235),
]
POI1_OFFSET = [
    ("(Intercept)", 0.852321952996773, 0.167181177345511, 5.09819326870329, 3.42910618667478e-07),
    ("x", 0.264349679472096, 0.0830966456988779, 3.18123165199754, 0.00146650314207033),
    ("gb", -0.0598960699329655, 0.206275609071641, -0.290369133813408, 0.771533854599004),
    ("gc", -0.507136561568756, 0.249790545964061, -2.0302472201719, 0.0423314162028971),
]
POI1_PLAIN = [
    ("(Intercept)", 1.43194580473292, 0.169762540565209, 8.43499278442338, 3.31223242324136e-17),
    ("x", 0.255869570912883, 0.0821958699713738, 3.11292490732191, 0.00185243144190832),
    ("gb", -0.0073578906138847, 0.206159014991002, -0.03569036558603, 0.971529252807823),
    ("gc", -0.505487388703715, 0.247750888555821, -2.04030504855212, 0.041319952294954),
]


def test_logistic_regression_matches_r():
    """glm(y ~ x + g, binomial, bin1): deviance 38.862398695536, null 55.3517327364064, AIC
    44.862398695536, 5 iterations."""
    y, X, names = design(BIN1, ["x", "g"])
    terms, info = glm_terms(y, X, names, "binomial")
    check(terms, BIN1_GLM)
    assert info["deviance"] == pytest.approx(38.862398695536, rel=REL)
    assert info["null_deviance"] == pytest.approx(55.3517327364064, rel=REL)
    assert info["aic"] == pytest.approx(44.862398695536, rel=REL)
    assert (info["iterations"], info["df_residual"], info["df_null"]) == (5, 37, 39)


@pytest.mark.parametrize("offset, expected, fit", [
    (True, POI1_OFFSET, (25.9706861405536, 40.1742249290277, 125.341383778422, 4)),
    (False, POI1_PLAIN, (44.0310754960199, 60.9374766316817, 143.401773133888, 5)),
])
def test_poisson_regression_matches_r(offset, expected, fit):
    """glm(y ~ x + g, poisson, poi1, offset = log(expo)) and without the offset; with it, glm
    refits the intercept-only model for the null deviance."""
    y, X, names = design(POI1, ["x", "g"])
    terms, info = glm_terms(y, X, names, "poisson", np.log(POI1["expo"]) if offset else None)
    check(terms, expected)
    assert [info["deviance"], info["null_deviance"], info["aic"]] == pytest.approx(fit[:3], rel=REL)
    assert info["iterations"] == fit[3]


def test_complete_separation_is_refused():
    """x <- c(-1.2, -0.8, -0.5, -0.3, -0.1, 0.2, 0.4, 0.7, 0.9, 1.3); glm(x > 0 ~ x, binomial) warns
    glm.fit: algorithm did not converge, and fitted probabilities numerically 0 or 1 occurred."""
    x = np.array([-1.2, -0.8, -0.5, -0.3, -0.1, 0.2, 0.4, 0.7, 0.9, 1.3])
    with pytest.raises(DataError, match="did not converge"):
        glm_terms((x > 0).astype(float), np.column_stack([np.ones(10), x]), ["(Intercept)", "x"], "binomial")


def test_quasi_separation_is_refused():
    """With y 0 wherever g is "trt", R warns nothing but reports gtrt -22.29 (SE 3648.46)."""
    y, X, names = design(BIN1.assign(y=np.where(BIN1["g"] == "trt", 0, BIN1["y"])), ["x", "g"])
    with pytest.raises(DataError, match="separation"):
        glm_terms(y, X, names, "binomial")


def test_a_level_of_zero_counts_is_refused():
    """With y 0 wherever g is "c", R's Poisson fit warns nothing but reports gc -21.56 (SE 4293.24)."""
    y, X, names = design(POI1.assign(y=np.where(POI1["g"] == "c", 0, POI1["y"])), ["x", "g"])
    with pytest.raises(DataError, match="every count is 0"):
        glm_terms(y, X, names, "poisson", np.log(POI1["expo"]))


def test_glm_outcome_checks():
    y, X, names = design(POI1, ["x"])
    with pytest.raises(DataError, match="0 or 1"):
        glm_terms(y, X, names, "binomial")
    with pytest.raises(DataError, match="counts"):
        glm_terms(y + 0.5, X, names, "poisson")
    with pytest.raises(ValueError, match="family"):
        glm_terms(y, X, names, "gamma")


# --------------------------------------------------------------------------- glm.nb


NB1_OFFSET = [
    ("(Intercept)", 0.251429301253288, 0.27290521394251, 0.921306330579136, 0.356890516902144),
    ("x", 0.631810864358025, 0.163779571596238, 3.85769029800381, 0.000114463554720451),
    ("gb", 1.30675814895798, 0.330661305992407, 3.95195363133293, 7.75157628413116e-05),
]
NB1_PLAIN = [
    ("(Intercept)", 1.01573603314628, 0.280658488030722, 3.61911745578524, 0.000295609451673671),
    ("x", 0.578038862196534, 0.175195728649871, 3.29938901279805, 0.000968955343261706),
    ("gb", 1.02790191031745, 0.344567463547205, 2.98316590816658, 0.00285283304613551),
]
NB2_PLAIN = [
    ("(Intercept)", 1.24170605251801, 0.197738356928308, 6.2795406607338, 3.39574781739582e-10),
    ("x", 0.454608093816974, 0.339411526912538, 1.33940086818006, 0.18044020694012),
]


@pytest.mark.parametrize("data, columns, offset, expected, fit", [
    (NB1, ["x", "g"], True, NB1_OFFSET,
     (1.40469120008132, 0.395267553854967, -217.947739350779, 42.1982414790967, 63.8754695211669)),
    (NB1, ["x", "g"], False, NB1_PLAIN,
     (1.19079065871441, 0.3289321338145, -224.437264118939, 43.8105831139013, 58.4721997670876)),
    (NB2, ["x"], False, NB2_PLAIN,
     (1.22831375805659, 0.505690050422704, -145.139122079491, 35.9043336299839, 37.6802430253501)),
], ids=["nb1-offset", "nb1", "nb2"])
def test_negative_binomial_matches_r(data, columns, offset, expected, fit):
    """glm.nb(y ~ x + g + offset(log(expo)), nb1), glm.nb(y ~ x + g, nb1), glm.nb(y ~ x, nb2):
    the table, then theta, SE(theta), 2 log-likelihood, deviance and null deviance."""
    y, X, names = design(data, columns)
    terms, info = glm_nb_terms(y, X, names, np.log(data["expo"]) if offset else None)
    check(terms, expected)
    got = [info[k] for k in ("theta", "se_theta", "twologlik", "deviance", "null_deviance")]
    assert got == pytest.approx(fit, rel=REL)
    assert info["aic"] == pytest.approx(-fit[2] + 2 * len(names) + 2, rel=REL)


def test_negative_binomial_without_overdispersion_is_refused():
    """Counts less variable than Poisson: glm.nb(y ~ x) with y <- c(3, 4, 3, 5, 4, 3, 4, 5, 3, 4, 4, 3,
    5, 4, 4, 3, 4, 5, 4, 3), x <- round(seq(-1, 1, length.out = 20), 2) warns: iteration limit reached."""
    y = np.array([3, 4, 3, 5, 4, 3, 4, 5, 3, 4, 4, 3, 5, 4, 4, 3, 4, 5, 4, 3], dtype=float)
    x = np.round(np.linspace(-1, 1, 20), 2)
    with pytest.raises(DataError, match="theta"):
        glm_nb_terms(y, np.column_stack([np.ones(20), x]), ["(Intercept)", "x"])


def test_negative_binomial_refuses_a_level_of_zero_counts():
    y, X, names = design(NB1.assign(y=np.where(NB1["g"] == "b", 0, NB1["y"])), ["x", "g"])
    with pytest.raises(DataError, match="every count is 0"):
        glm_nb_terms(y, X, names)

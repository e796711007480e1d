"""taskfactory.methods._survival pinned to R 4.2.2 (survival 3.5-3).

The data frames below are inlined; R read the same columns (``A <- data.frame(time = c(7, 2, ...),
event = c(...), trt = c(...), age = c(...), x = c(...), sex = strsplit("MFFF...", "")[[1]],
arm = strsplit("ccbb...", "")[[1]])``, likewise ``B`` and ``C``) and printed every number with
``sprintf("%.17g", ...)``::

    library(survival)
    s <- survdiff(Surv(time, event) ~ sex, A); c(s$chisq, s$pvalue, s$exp)   # also ~ arm (A), ~ trt (B)
    f <- coxph(Surv(time, event) ~ age + x + sex, A)                          # also ~ trt (A), ~ trt + x (B)
    s <- summary(f)
    s$coefficients[, c(1, 3, 4, 5)]                    # coef, se(coef), z, Pr(>|z|)
    f$loglik; f$iter; s$sctest; f$wald.test; s$waldtest[3]; s$logtest
    coxph(Surv(time, event) ~ trt, C)                  # warns: Loglik converged before variable 1
    B$t2 <- B$time * 0.1; B$t2[B$time == 3][1:2] <- 0.3   # near-ties 0.3 / 0.30000000000000004
    coxph(Surv(t2, event) ~ trt + x, B); survdiff(Surv(t2, event) ~ trt, B)   # the same as with time

Times are whole days, so there are ties (B: 36 subjects on 5 distinct times); all have censoring.
The expected Cox rows are (term, estimate, std. error, z, p).
"""

import numpy as np
import pandas as pd
import pytest

from taskfactory.errors import DataError
from taskfactory.methods._models import model_matrix
from taskfactory.methods._survival import cox_terms, log_rank

REL = 1e-6

A = pd.DataFrame({
    "time": [7, 2, 1, 4, 14, 9, 12, 18, 5, 1, 6, 20, 12, 2, 16, 3, 2, 1, 30, 4, 2, 9, 14, 2, 1, 7, 16, 2, 3, 15,
             14, 3],
    "event": [0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0],
    "trt": [0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0],
    "age": [37, 78, 63, 70, 58, 61, 50, 49, 40, 44, 69, 54, 72, 47, 67, 74, 72, 44, 51, 47, 70, 71, 54, 47, 37,
            47, 41, 38, 70, 56, 78, 46],
    "x": [0.1, 0.4, 0.2, 1.7, -0.7, 1.2, -0.4, -1.0, 1.2, -0.4, -0.4, -1.4, -2.1, 0.6, -1.2, 0.8, 1.8, -0.1, -1.1,
          0.4, 0.8, -0.3, 0.0, 1.3, 1.3, 0.7, -0.9, -0.1, 0.6, -0.2, -0.6, -0.8],
    "sex": list("MFFFMMFMFFFFMFMFFFFFFMFFFMFFMMMF"),
    "arm": list("ccbbabcbaaabaabcbababaaacbbaccca"),
})
B = pd.DataFrame({
    "time": [1, 1, 2, 5, 1, 5, 5, 2, 1, 1, 1, 1, 1, 3, 1, 3, 1, 2, 2, 1, 3, 5, 3, 1, 1, 1, 3, 2, 2, 1, 5, 1, 5, 2,
             4, 5],
    "event": [1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1,
              1, 0],
    "trt": [0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1,
            0, 0],
    "x": [-0.1, 0.7, -2.2, -1.2, -0.1, -1.5, -0.7, 0.0, -0.7, -0.3, 0.0, 1.3, 1.6, -0.4, -0.8, 0.9, 0.5, 0.2, -0.9,
          0.6, 0.9, -1.8, 1.0, -0.1, -0.7, -1.6, -0.3, -0.1, -0.4, -1.2, -1.2, 0.7, 0.0, 0.3, 0.6, 0.7],
})
C = pd.DataFrame({  # every event in the trt = 1 group: the partial likelihood rises for ever with coef(trt)
    "time": [3, 5, 5, 8, 10, 12, 12, 15, 18, 20, 4, 6, 9, 9, 11, 14, 16, 19, 22, 25],
    "event": [1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    "trt": [1] * 10 + [0] * 10,
})


def check(terms, expected):
    """Each term matches R's row (name, estimate, SE, z, p) to 1e-6 relative."""
    assert [t.name for t in terms] == [row[0] for row in expected]
    for t, (name, est, se, z, p) in zip(terms, expected):
        assert t.estimate == pytest.approx(est, rel=REL), name
        assert t.std_error == pytest.approx(se, rel=REL), name
        assert t.statistic == pytest.approx(z, rel=REL), name
        assert t.pvalue == pytest.approx(p, rel=REL), name
        assert t.df is None


def check_tests(details, expected):
    """loglik (null, final), iterations and the three global tests (statistic, df, p) against R."""
    ll, iters, score, wald, lr = expected
    assert details["loglik"] == pytest.approx(ll, rel=REL)
    assert details["iterations"] == iters
    for key, want in (("score", score), ("wald", wald), ("likelihood_ratio", lr)):
        stat, df, p = details[key]
        assert (stat, p) == pytest.approx((want[0], want[2]), rel=REL), key
        assert df == want[1], key


def cox(data, columns, time="time"):
    X, names = model_matrix(data, columns)
    return cox_terms(data[time], data["event"], X[:, 1:], names[1:])


# --------------------------------------------------------------------------- survdiff


def test_log_rank_two_groups():
    """survdiff(Surv(time, event) ~ sex, A): Chisq = 0.6 on 1 df."""
    chisq, df, p = log_rank(A["time"], A["event"], A["sex"])
    assert df == 1
    assert chisq == pytest.approx(0.63347724626094759, rel=REL)
    assert p == pytest.approx(0.42608269859879183, rel=REL)


def test_log_rank_three_groups():
    """survdiff(Surv(time, event) ~ arm, A): Chisq = 2 on 2 df."""
    chisq, df, p = log_rank(A["time"].to_numpy(), A["event"].to_numpy(bool), A["arm"].to_numpy())
    assert df == 2
    assert chisq == pytest.approx(2.0083742177033477, rel=REL)
    assert p == pytest.approx(0.36634231022000341, rel=REL)


def test_log_rank_heavy_ties_and_near_ties():
    """survdiff(Surv(time, event) ~ trt, B), 5 distinct times; R's aeqSurv merges 0.3 with
    0.30000000000000004 (3 * 0.1), so survdiff(Surv(t2, event) ~ trt, B) gives the same."""
    chisq, df, p = log_rank(B["time"], B["event"], B["trt"])
    assert df == 1
    assert chisq == pytest.approx(0.032276328556722966, rel=REL)
    assert p == pytest.approx(0.85742252848023459, rel=REL)
    t2 = B["time"].to_numpy() * 0.1
    t2[np.flatnonzero(B["time"].to_numpy() == 3)[:2]] = 0.3
    assert len(set(t2)) == 6  # 0.3 and 0.30000000000000004 differ as doubles
    assert log_rank(t2, B["event"], B["trt"]) == pytest.approx((chisq, df, p), rel=1e-12)


def test_log_rank_refuses_degenerate_data():
    with pytest.raises(DataError, match="no events"):
        log_rank(A["time"], np.zeros(len(A)), A["sex"])
    with pytest.raises(DataError, match="only 1 group"):
        log_rank(A["time"], A["event"], ["a"] * len(A))
    with pytest.raises(DataError, match="missing"):
        log_rank(A["time"], A["event"], [None] + list(A["sex"][1:]))


# --------------------------------------------------------------------------- coxph


def test_cox_one_binary_covariate():
    """coxph(Surv(time, event) ~ trt, A): a 0/1 column, which coxph neither centres nor scales."""
    terms, details = cox(A, ["trt"])
    check(terms, [("trt", 0.83465223046655324, 0.44376771861550379, 1.8808313346237917, 0.059994866216515293)])
    check_tests(details, ((-57.73176341503796, -55.984066119446275), 4,
                          (3.7327939830396497, 1, 0.053354076424586894),
                          (3.5375265093027131, 1, 0.059994866216515313),
                          (3.4953945911833699, 1, 0.06153974092055052)))
    assert details["n"] == 32 and details["nevent"] == 21


def test_cox_three_covariates_with_a_factor():
    """coxph(Surv(time, event) ~ age + x + sex, A): sex enters as the dummy sexM."""
    terms, details = cox(A, ["age", "x", "sex"])
    check(terms, [
        ("age", 0.015958615965189143, 0.020790431255997343, 0.76759427299448713, 0.44272826588952191),
        ("x", 1.1920858433168608, 0.31669786546326717, 3.7641107608132183, 0.0001671427928318833),
        ("sexM", -0.25874680177260595, 0.49816273566402097, -0.51940216168058417, 0.60348032420069875),
    ])
    check_tests(details, ((-57.73176341503796, -47.729498898634795), 4,
                          (21.209174184471795, 3, 9.5253534598824658e-05),
                          (17.72506643263031, 3, 0.00050117105893585437),
                          (20.004529032806332, 3, 0.00016937598224501366)))


B_TRT_X = [
    ("trt", 0.29183462800150067, 0.4517555808618447, 0.64600115718492734, 0.51827860599386621),
    ("x", 0.58685820665316457, 0.26561566161226485, 2.2094262179081774, 0.027145009104039452),
]
B_TESTS = ((-61.165948525054624, -58.505944642319946), 4,
           (5.132511453601226, 2, 0.076822652583838066),
           (4.9258383873557925, 2, 0.085185913469781938),
           (5.3200077654693558, 2, 0.069947950154796393))


def test_cox_heavy_ties():
    """coxph(Surv(time, event) ~ trt + x, B): 21 deaths on 5 distinct times, Efron's approximation."""
    terms, details = cox(B, ["trt", "x"])
    check(terms, B_TRT_X)
    check_tests(details, B_TESTS)


def test_cox_merges_near_ties_as_aeqsurv_does():
    """coxph(Surv(t2, event) ~ trt + x, B) with t2 = time * 0.1 (two of the 0.30000000000000004 set to 0.3)
    gives R the same table as the whole days."""
    data = B.assign(t2=B["time"] * 0.1)
    data.loc[np.flatnonzero(B["time"].to_numpy() == 3)[:2], "t2"] = 0.3
    terms, details = cox(data, ["trt", "x"], time="t2")
    check(terms, B_TRT_X)
    check_tests(details, B_TESTS)


def test_cox_monotone_likelihood_raises():
    """coxph(Surv(time, event) ~ trt, C) warns "Loglik converged before variable 1; coefficient may be
    infinite" (coef 21.4, se 15321, iter 20)."""
    with pytest.raises(DataError, match="infinite"):
        cox(C, ["trt"])


def test_cox_refuses_degenerate_data():
    X = A[["age", "x"]].to_numpy(float)
    with pytest.raises(DataError, match="no events"):
        cox_terms(A["time"], np.zeros(len(A)), X, ["age", "x"])
    with pytest.raises(DataError, match="constant"):
        cox_terms(A["time"], A["event"], np.column_stack([X, np.ones(len(A))]), ["age", "x", "one"])
    with pytest.raises(DataError, match="singular"):  # R: NA for the collinear column
        cox_terms(A["time"], A["event"], np.column_stack([X, X[:, 0] + X[:, 1]]), ["age", "x", "s"])
    with pytest.raises(DataError, match="non-finite"):
        cox_terms(A["time"], A["event"], np.where(X == 37, np.nan, X), ["age", "x"])


def test_cox_leaves_its_input_alone():
    X = np.asfortranarray(A[["age", "x"]].to_numpy(float))
    before = X.copy()
    cox_terms(A["time"], A["event"], X, ["age", "x"])
    assert np.array_equal(X, before)

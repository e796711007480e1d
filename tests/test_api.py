"""The Python API: analyse on any data frame, result objects, z of p."""

import math

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import InputError
from taskfactory.leakage import check_leakage
from taskfactory.result import Z_CAP

DATA = pd.DataFrame({"y": [5.1, 4.9, 6.2, 5.8, 7.1, 6.9, 7.4, 8.0], "g": ["a"] * 4 + ["b"] * 4})


def test_analyse_names_a_missing_role_and_an_unknown_one():
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.analyse("welch_t", DATA, {"outcome": "y"})
    assert str(err.value) == "roles lack 'group'; welch_t needs outcome, group"
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.analyse("welch_t", DATA, {"outcome": "y", "group": "g", "mu0": 1})
    assert str(err.value) == "unknown role 'mu0' for welch_t; allowed: outcome, group"


OVARIAN = pd.DataFrame({
    "futime": [59, 115, 156, 421, 431, 448, 464, 475, 477, 563, 638, 744, 769, 770, 803, 855, 1040, 1106, 1129, 1206,
               1227, 268, 329, 353, 365, 377],
    "fustat": [1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0],
    "rx": list("aaabaabbabab" "bbaaaabbbaabbb"),
    "age": [72.3315, 74.4932, 66.4658, 53.3644, 50.3397, 56.4301, 56.937, 59.8548, 64.1753, 55.1781, 56.7562, 50.1096,
            59.6301, 57.0521, 39.2712, 43.1233, 38.8932, 44.6, 53.9068, 44.2055, 59.589, 74.5041, 43.137, 63.2192,
            64.4247, 58.3096]})


def test_a_list_of_columns_left_out_is_none_as_in_rs_call_without_it():
    """survival's ovarian data, rx as a and b:
    > survdiff(Surv(futime, fustat) ~ rx, data = d)$pvalue
    [1] 0.30259111698909524
    > summary(coxph(Surv(futime, fustat) ~ rx, data = d))$coefficients[1, 5]
    [1] 0.30963044880655261
    """
    roles = {"time": "futime", "event": "fustat", "group": "rx"}
    assert tf.analyse("log_rank", OVARIAN, roles).pvalue == pytest.approx(0.30259111698909524, rel=1e-12)
    assert tf.analyse("cox_ph", OVARIAN, roles).pvalue == pytest.approx(0.30963044880655261, rel=1e-12)
    assert tf.analyse("cox_ph", OVARIAN, roles).pvalue == tf.analyse("cox_ph", OVARIAN, {**roles, "covariates": []}).pvalue


def test_a_cox_model_takes_a_numeric_exposure_as_r_does():
    """survival's ovarian data:
    > summary(coxph(Surv(futime, fustat) ~ age, data = d))$coefficients[1, c(4, 5)]
    3.2492853410073552 0.0011569536100349946
    > summary(coxph(Surv(futime, fustat) ~ age + rx, data = d))$coefficients[1, 5]
    [1] 0.0014102423942953927
    """
    roles = {"time": "futime", "event": "fustat", "group": "age"}
    res = tf.analyse("cox_ph", OVARIAN, roles)
    assert (res.statistic, res.pvalue) == (pytest.approx(3.2492853410073552, rel=1e-12),
                                           pytest.approx(0.0011569536100349946, rel=1e-12))
    assert tf.analyse("cox_ph", OVARIAN, {**roles, "covariates": ["rx"]}).pvalue == \
        pytest.approx(0.0014102423942953927, rel=1e-12)


COUNTS = pd.DataFrame({
    "cnt": [3, 4, 6, 3, 1, 8, 5, 0, 2, 9, 8, 7, 3, 1, 5, 7, 1, 2, 3, 0, 2, 6, 6, 3, 8, 4, 2, 9, 7, 1, 3, 7, 7, 3, 1, 0,
            8, 1, 8, 8, 2, 7, 2, 9, 2, 3, 0, 8, 4, 8, 7, 3, 3, 4, 7, 9, 9, 5, 6, 4],
    "x": [1.169, -0.617, -0.145, -2.358, 1.119, -0.106, 0.204, -0.409, -2.737, -0.489, -1.153, 0.113, 0.012, -1.372,
          -0.812, 1.032, 0.569, -0.228, 0.398, -0.889, 2.199, -0.378, 1.44, 0.148, 0.587, 0.115, 0.672, 0.542, -0.993,
          -0.139, -1.297, 1.025, -0.232, 0.852, 1.247, 0.704, -1.268, 0.095, 1.715, 0.514, 1.707, 0.598, -0.502, -2.238,
          2.186, 0.058, -0.426, 1.436, -1.103, 0.031, -1.315, 1.321, -0.793, 0.517, 1.313, -0.422, -0.37, -0.883, 1.372,
          -0.046],
    "w": [3, 4, 0, 4, 5, 1, 3, 1, 4, 1, 5, 4, 4, 2, 2, 1, 2, 0, 3, 5, 5, 4, 3, 3, 5, 1, 2, 1, 2, 5, 1, 4, 0, 4, 2, 2, 2,
          0, 3, 1, 0, 1, 3, 4, 2, 4, 2, 1, 4, 5, 2, 3, 2, 1, 2, 2, 5, 0, 4, 5]})


def test_a_count_model_without_an_exposure_time_has_no_offset_as_in_rs_call():
    """> summary(glm(cnt ~ x, family = poisson, data = d))$coefficients[2, 4]
    [1] 0.62578611729691835
    > summary(MASS::glm.nb(cnt ~ x, data = d))$coefficients[2, 4]
    [1] 0.72340672067563749
    > summary(glm(cnt ~ x + w, family = poisson, data = d))$coefficients[2, 4]
    [1] 0.61010333212392975
    """
    roles = {"outcome": "cnt", "exposure": "x"}
    assert tf.analyse("poisson_regression", COUNTS, roles).pvalue == pytest.approx(0.62578611729691835, rel=1e-12)
    assert tf.analyse("negative_binomial", COUNTS, roles).pvalue == pytest.approx(0.72340672067563749, rel=1e-10)
    assert tf.analyse("poisson_regression", COUNTS, {**roles, "covariates": ["w"]}).pvalue == \
        pytest.approx(0.61010333212392975, rel=1e-12)


def test_analyse_names_a_missing_column():
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.analyse("welch_t", DATA, {"outcome": "y", "group": "arm"})
    assert str(err.value) == "data has no column 'arm' (role of welch_t); columns: y, g"


def test_analyse_unknown_method_lists_the_families_that_analyse_data():
    with pytest.raises(tf.TaskFactoryError, match=r"^'ttest' is not a method; analyse takes one_sample_t, .*"
                                                  r"welch_t, .*, bh_fdr$"):
        tf.analyse("ttest", DATA, {})


def test_result_fields_and_decision():
    """
    > y <- c(5.1, 4.9, 6.2, 5.8, 7.1, 6.9, 7.4, 8.0); g <- rep(c("a", "b"), each = 4)
    > t.test(y ~ g)
    t = -4.79000355722334348, df = 5.70090741948876012, p-value = 0.00347936983586018
    > qnorm(1 - 0.00347936983586018 / 2)
    [1] 2.9218697757829
    """
    res = tf.analyse("welch_t", DATA, {"outcome": "y", "group": "g"})
    assert res.statistic == pytest.approx(-4.79000355722334348, rel=1e-9)
    assert res.df[0] == pytest.approx(5.70090741948876012, rel=1e-9)
    assert res.pvalue == pytest.approx(0.00347936983586018, rel=1e-9)
    assert res.n == 8 and res.statistic_name == "t"
    assert res.decision(0.05) == "reject" and res.decision(0.003) == "fail to reject"
    assert res.z == pytest.approx(2.9218697757829, rel=1e-9)


def test_z_of_p_keeps_tiny_p_and_caps_at_8():
    assert tf.z_of_p(1.0) == 0.0
    assert tf.z_of_p(0.05) == pytest.approx(1.959964, abs=1e-6)
    assert tf.z_of_p(1e-12) == pytest.approx(7.13050684817132, rel=1e-12)  # R: qnorm(1e-12 / 2, lower.tail = FALSE)
    assert tf.z_of_p(1e-300) == Z_CAP and tf.z_of_p(0.0) == Z_CAP
    with pytest.raises(ValueError, match=r"p-value \(1.5\) must lie in \[0, 1\]"):
        tf.z_of_p(1.5)
    with pytest.raises(ValueError, match=r"p-value \(nan\) must lie in \[0, 1\]"):
        tf.z_of_p(math.nan)


GRID_30 = {"seed": 1, "methods": ["welch_t"], "n": [40]}


@pytest.mark.parametrize("call, message", [
    (lambda: tf.get_family(["welch_t"]), "a method is named by text, got list"),
    (lambda: tf.build(GRID_30, None), "out must be a path, got None"),
    (lambda: tf.build(GRID_30, "unused", jobs="2"), "jobs ('2') must be a whole number of at least 1"),
    (lambda: tf.verify(None), "corpus_dir must be a path, got None"),
    (lambda: tf.verify("unused", sample=0), "sample (0) must be a whole number of at least 1"),
    (lambda: tf.verify("unused", jobs=1.5), "jobs (1.5) must be a whole number of at least 1"),
    (lambda: tf.verify("unused", limits="x"), "limits must be a taskfactory.sandbox.Limits, got str"),
    (lambda: check_leakage("unused", []), "give at least one benchmark file or folder"),
    (lambda: check_leakage("unused", ["b.jsonl"], thresholds={}),
     "thresholds must be a taskfactory.leakage.Thresholds, got dict"),
])
def test_misused_api_calls_raise_input_errors(call, message):
    with pytest.raises(InputError) as err:
        call()
    assert str(err.value) == message


def test_importing_the_package_loads_no_numerical_library():
    """``import taskfactory`` (and so the command line's start) leaves numpy, pandas, scipy and
    pyarrow unloaded until a name that needs them is used."""
    import subprocess
    import sys

    probe = ("import sys, taskfactory; heavy = [m for m in ('numpy', 'pandas', 'scipy', 'pyarrow') if m in sys.modules]; "
             "import taskfactory.cli; heavy += [m for m in ('numpy', 'pandas', 'scipy', 'pyarrow') if m in sys.modules]; "
             "print(heavy, taskfactory.build.__module__, callable(taskfactory.verify), taskfactory.plan.__name__)")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out == "[] taskfactory.build True plan\n"

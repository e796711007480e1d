"""The Python API: analyse on any data frame, result objects, z of p."""

import math

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import InputError
from taskfactory.audit.leakage import check_leakage
from taskfactory.result import Z_CAP

DATA = pd.DataFrame({"y": [5.1, 4.9, 6.2, 5.8, 7.1, 6.9, 7.4, 8.0], "g": ["a"] * 4 + ["b"] * 4})


def test_analyse_names_a_missing_role_and_an_unknown_one():
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.analyse("welch_t", DATA, {"outcome": "y"})
    assert str(err.value) == "roles lack 'group'; welch_t needs outcome, group (optional: cluster)"
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.analyse("welch_t", DATA, {"outcome": "y", "group": "g", "mu0": 1})
    assert str(err.value) == "unknown role 'mu0' for welch_t; allowed: outcome, group (optional: cluster)"


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


IV = pd.DataFrame({
    "y": [0.547, 0.633, 1.664, 1.612, 6.995, 2.233, 1.658, 0.451, 1.989, 1.097, -0.913, -0.487, 1.077, 0.183, 2.352,
          4.458, 3.139, -1.125, 0.152, 2.688, 1.121, 2.379, -3.087, 1.366, 2.635, 0.002, -0.216, 2.733, -0.92, -1.0,
          -0.035, 0.995, -1.229, 0.363, 2.156, 1.549, -0.744, 1.683, 1.736, -2.051, -1.153, 1.675, 2.766, -0.453,
          -0.47, 0.702, -2.254, 1.27, -0.591, 0.056, 3.2, 1.497, -0.49, 1.117, -2.692, 2.262, 0.762, 4.004, 0.071,
          3.312],
    "x": [-0.091, 1.93, 0.467, -2.712, 4.427, 0.018, 0.546, -0.028, -1.501, -0.634, -0.574, -1.282, -0.575, 0.417,
          0.15, 2.61, 1.267, -0.973, -1.479, 0.719, -0.296, 0.941, -2.658, -0.227, 1.987, -0.074, -2.3, -0.095,
          -2.177, -2.638, -0.108, -0.951, 1.969, -1.726, 0.352, -0.152, 0.114, 1.186, -0.21, -1.336, -1.885, -0.101,
          1.74, -1.255, -2.146, 0.776, -2.804, 1.288, 0.279, -0.36, 1.988, 1.272, -2.058, -0.689, -2.066, 1.023,
          -0.81, 2.132, 0.151, 1.447],
    "z1": [-0.591, 0.027, -1.517, -1.363, 1.178, -0.934, 1.324, 0.625, -0.046, -1.004, -0.828, -0.348, -1.538,
          -0.256, -1.15, 0.012, -0.223, 0.888, -0.592, -0.656, -0.683, -0.016, -0.443, 0.353, 0.073, 0.007, -0.188,
          -0.766, -0.221, -0.984, -1.104, -0.938, 0.679, -1.577, -0.87, 0.485, -0.186, 1.546, -0.611, -0.348, -1.637,
          0.02, 0.892, -0.873, 0.89, -0.344, -2.187, 0.88, 0.724, 0.22, 0.79, -0.23, -0.819, 0.5, 0.159, 0.543,
          -0.157, 0.439, 1.488, 0.06],
    "z2": [-0.849, 2.34, -0.121, -1.95, 0.539, 1.694, -0.791, -1.075, -0.608, 0.754, 0.453, -0.123, -0.763, 0.228,
          1.119, 0.157, -0.689, 0.453, -1.068, 0.402, -0.065, 0.315, -0.606, -0.908, 2.262, -0.603, -1.298, 0.506,
          -0.853, -1.506, 1.202, -1.028, 0.938, -0.543, 0.513, -0.353, 1.327, -1.14, 1.413, -0.602, -0.442, 0.244,
          0.597, -0.12, -2.07, 0.586, 0.489, -1.007, 1.27, 1.124, 0.842, 1.621, 0.448, -2.299, -0.079, -0.523,
          -0.418, 0.305, -0.031, 0.105],
    "w": [2.463, -0.64, 1.211, 0.711, -0.203, 1.411, 1.289, 0.585, 1.279, -0.874, -0.139, -1.195, 0.329, -1.082,
          -0.517, -0.078, -0.349, -2.258, -0.287, 0.281, -1.556, 0.544, -1.539, -0.292, -0.111, 0.259, 0.389, 2.016,
          -0.324, 0.379, -1.596, 0.671, 0.426, 0.69, -0.991, 0.842, 1.698, 1.586, -0.766, -0.282, 0.006, -0.566,
          0.585, 0.107, -1.308, -0.098, -1.419, -0.253, 0.031, -0.035, 0.516, 0.332, 0.943, 0.312, -1.089, 1.063,
          -0.991, 1.15, 0.882, 1.162],
})


def test_two_stage_least_squares_takes_further_instruments_as_ivreg_does():
    """> summary(ivreg(y ~ x + w | z1 + z2 + w, data = d))$coefficients[2, c(3, 4)]
    3.0659762354134438844 0.0033140318089903038
    > summary(ivreg(y ~ x | z1 + z2, data = d))$coefficients[2, 4]
    [1] 0.0046054642669642624
    and the instruments' first-stage F, anova(lm(x ~ w), lm(x ~ z1 + z2 + w))$F[2], is 29.345615011252157.
    """
    from taskfactory.make.analysis import prepare
    from taskfactory.condition import Condition
    from taskfactory.methods.iv_2sls import first_stage_f

    roles = {"outcome": "y", "exposure": "x", "instrument": "z1", "instruments": ["z2"], "covariates": ["w"]}
    res = tf.analyse("iv_2sls", IV, roles)
    assert (res.statistic, res.pvalue) == (pytest.approx(3.0659762354134438844, rel=1e-12),
                                           pytest.approx(0.0033140318089903038, rel=1e-12))
    assert tf.analyse("iv_2sls", IV, {**roles, "covariates": []}).pvalue == pytest.approx(0.0046054642669642624,
                                                                                          rel=1e-12)
    family = tf.get_family("iv_2sls")
    f = first_stage_f(Condition(method="iv_2sls", roles=roles), prepare(family, IV, roles))
    assert f == pytest.approx(29.345615011252157, rel=1e-12)
    noise = IV.assign(n1=IV["w"] * 0.37 % 1, n2=IV["y"] * 0.53 % 1)
    with pytest.raises(tf.DataError, match=r"^the instruments 'n1', 'n2' are weak: their first-stage F given the "
                                           r"covariates is \d"):
        tf.analyse("iv_2sls", noise, {**roles, "instrument": "n1", "instruments": ["n2"]})


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
    (lambda: tf.verify("unused", limits="x"), "limits must be a taskfactory.audit.sandbox.Limits, got str"),
    (lambda: check_leakage("unused", []), "give at least one benchmark file or folder"),
    (lambda: check_leakage("unused", ["b.jsonl"], thresholds={}),
     "thresholds must be a taskfactory.audit.leakage.Thresholds, got dict"),
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
    assert out == "[] taskfactory.store.build True plan\n"

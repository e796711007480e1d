# Cox proportional hazards regression, a group of more than two levels: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the p-value is left in p_value.
import pandas as pd
from lifelines import CoxPHFitter
from scipy import stats
covariates = {covariates}


def design(names):
    """R's model.matrix: a text column as treatment-contrast dummies, its first level (sorted) the baseline."""
    X = pd.DataFrame({"time_": d["{time}"].astype(float), "event_": d["{event}"].astype(float)})
    for name in names:
        if d[name].dtype == object:
            for level in sorted(d[name].astype(str).unique())[1:]:
                X[name + "_" + level] = (d[name].astype(str) == level).astype(float)
        else:
            X[name] = d[name].astype(float)
    return X


# Efron ties as coxph; the model with the group, and without it (with no terms left, the likelihood at 0)
fit1 = CoxPHFitter().fit(design(["{group}", *covariates]), duration_col="time_", event_col="event_",
                         fit_options={"precision": 1e-12})
if covariates:
    fit0 = CoxPHFitter().fit(design(covariates), duration_col="time_", event_col="event_", fit_options={"precision": 1e-12})
    statistic = 2 * (fit1.log_likelihood_ - fit0.log_likelihood_)
else:
    statistic = fit1.log_likelihood_ratio_test().test_statistic
levels = d["{group}"].astype(str).nunique()
p_value = stats.chi2.sf(statistic, levels - 1)

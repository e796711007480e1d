# Cox proportional hazards regression coefficient: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import pandas as pd
from lifelines import CoxPHFitter
covariates = {covariates}
# R's model.matrix: a text column as treatment-contrast dummies, its first level (sorted) the baseline;
# a numeric exposure as it is (its log hazard ratio per unit)
group = d["{group}"]
if pd.api.types.is_numeric_dtype(group):
    X = pd.DataFrame({"group_": group.astype(float)})
else:
    X = pd.DataFrame({"group_": (group.astype(str) == sorted(group.astype(str).unique())[1]).astype(float)})
for name in covariates:
    if d[name].dtype == object:
        for level in sorted(d[name].astype(str).unique())[1:]:
            X[name + "_" + level] = (d[name].astype(str) == level).astype(float)
    else:
        X[name] = d[name].astype(float)
X["time_"], X["event_"] = d["{time}"].astype(float), d["{event}"].astype(float)
# Efron ties as coxph; a tight tolerance so that the Wald z agrees with R's to rounding
fit = CoxPHFitter().fit(X, duration_col="time_", event_col="event_", fit_options={"precision": 1e-12})
p_value = fit.summary.loc["group_", "p"]

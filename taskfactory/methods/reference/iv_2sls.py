# Instrumental-variable (two-stage least squares) regression coefficient: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from linearmodels.iv import IV2SLS
covariates = {covariates}
formula = "{outcome} ~ " + " + ".join(["1", *covariates, "[{exposure} ~ {instrument}]"])
# classical standard errors on n - p degrees of freedom, t tests: AER::ivreg's summary
fit = IV2SLS.from_formula(formula, data=d).fit(cov_type="unadjusted", debiased=True)
p_value = fit.pvalues["{exposure}"]

# Linear regression coefficient with HC3 standard errors: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.formula.api as smf
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + (" + ".join(covariates) or "1")
# HC3 sandwich standard errors, t on the residual df as lmtest::coeftest
p_value = smf.ols(formula, data=d).fit(cov_type="HC3", use_t=True).pvalues["{exposure}"]

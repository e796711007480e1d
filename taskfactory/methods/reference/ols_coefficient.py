# Linear regression coefficient adjusted for covariates: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.formula.api as smf
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + (" + ".join(covariates) or "1")
p_value = smf.ols(formula, data=d).fit().pvalues["{exposure}"]

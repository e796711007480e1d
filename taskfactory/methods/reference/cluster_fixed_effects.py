# Linear regression coefficient within clusters (cluster fixed effects): the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.formula.api as smf
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + "".join(c + " + " for c in covariates) + "C({cluster})"
fit = smf.ols(formula, data=d).fit()  # one dummy per cluster but the first: the within estimator's slope and error
p_value = fit.pvalues["{exposure}"]

# Logistic regression coefficient: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.api as sm
import statsmodels.formula.api as smf
covariates = {covariates}
d["event_"] = (d["{outcome}"].astype(str) == "{positive}").astype(float)
formula = "event_ ~ {exposure} + " + (" + ".join(covariates) or "1")
# IRLS from R's start, stopped by R's rule |dev - dev_old| < 1e-8 (|dev| + 0.1), as glm() does
fit = smf.glm(formula, data=d, family=sm.families.Binomial()).fit(tol=1e-9, rtol=1e-8, tol_criterion="deviance")
p_value = fit.pvalues["{exposure}"]

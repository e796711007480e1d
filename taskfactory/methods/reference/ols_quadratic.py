# Linear regression coefficient adjusted for covariates, with their squares: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.formula.api as smf
covariates = {covariates}
squared = [c for c in covariates if d[c].dtype.kind in "iuf" and d[c].nunique() > 2]
formula = "{outcome} ~ " + " + ".join(["{exposure}", *covariates, *(f"I({c} ** 2)" for c in squared)])
p_value = smf.ols(formula, data=d).fit().pvalues["{exposure}"]

# Poisson regression coefficient with an exposure-time offset: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
import statsmodels.formula.api as smf
from scipy import stats
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + (" + ".join(covariates) or "1")
design = smf.ols(formula, d)  # the model's design matrix, factors coded as R codes them
names, y, X = design.exog_names, design.endog, design.exog
offset = np.log(d["{exposure_time}"].to_numpy(float))
# glm.fit's IRLS as R runs it: start at mu = y + 0.1, stop when |dev - dev_old| < 1e-8 (|dev| + 0.1)
mu = y + 0.1
eta = np.log(mu)
dev_old = 2 * np.sum(y * np.log(np.where(y > 0, y / mu, 1)) - (y - mu))
for _ in range(25):
    w = mu  # working weights of the log link
    z = eta - offset + (y - mu) / mu
    XtW = X.T * w
    beta = np.linalg.solve(XtW @ X, XtW @ z)
    eta = X @ beta + offset
    mu = np.exp(eta)
    dev = 2 * np.sum(y * np.log(np.where(y > 0, y / mu, 1)) - (y - mu))
    if abs(dev - dev_old) / (abs(dev) + 0.1) < 1e-8:
        break
    dev_old = dev
se = np.sqrt(np.diag(np.linalg.inv(XtW @ X)))  # the weights of the last iteration, as summary.glm
i = names.index("{exposure}")
p_value = 2 * stats.norm.sf(abs(beta[i] / se[i]))

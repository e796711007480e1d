# Negative binomial regression coefficient with an exposure-time offset: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
import statsmodels.formula.api as smf
from scipy import stats
from scipy.special import digamma, gammaln, polygamma
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + (" + ".join(covariates) or "1")
design = smf.ols(formula, d)  # the model's design matrix, factors coded as R codes them
names, y, X = design.exog_names, design.endog, design.exog
offset = np.log(d["{exposure_time}"].to_numpy(float))


def deviance(mu, theta):
    if theta is None:  # Poisson
        return 2 * np.sum(y * np.log(np.where(y > 0, y / mu, 1)) - (y - mu))
    return 2 * np.sum(y * np.log(np.maximum(1, y) / mu) - (y + theta) * np.log((y + theta) / (mu + theta)))


def irls(mu, theta):
    """glm.fit from the means mu for the Poisson (theta None) or NB(theta) family, log link."""
    eta = np.log(mu)
    dev_old = deviance(mu, theta)
    for _ in range(25):
        w = mu if theta is None else mu / (1 + mu / theta)
        z = eta - offset + (y - mu) / mu
        XtW = X.T * w
        beta = np.linalg.solve(XtW @ X, XtW @ z)
        eta = X @ beta + offset
        mu = np.exp(eta)
        dev = deviance(mu, theta)
        if abs(dev - dev_old) / (abs(dev) + 0.1) < 1e-8:
            break
        dev_old = dev
    return beta, mu, XtW @ X


def theta_ml(mu):
    """MASS::theta.ml: Newton's method on the score for theta."""
    t, step = len(y) / np.sum((y / mu - 1) ** 2), 1.0
    for _ in range(24):
        if abs(step) <= np.finfo(float).eps ** 0.25:
            break
        t = abs(t)
        score = np.sum(digamma(t + y) - digamma(t) + np.log(t) + 1 - np.log(t + mu) - (y + t) / (mu + t))
        info = np.sum(-polygamma(1, t + y) + polygamma(1, t) - 1 / t + 2 / (mu + t) - (y + t) / (mu + t) ** 2)
        step = score / info
        t += step
    return t


def loglik(mu, t):
    return np.sum(gammaln(t + y) - gammaln(t) - gammaln(y + 1) + t * np.log(t) + y * np.log(mu + (y == 0))
                  - (t + y) * np.log(t + mu))


# MASS::glm.nb: a Poisson fit, then glm.fit and theta.ml alternated until the log-likelihood and theta settle
beta, mu, info = irls(y + 0.1, None)
theta = theta_ml(mu)
d1 = np.sqrt(2 * max(1, len(y) - X.shape[1]))
lm, lm0, change = loglik(mu, theta), loglik(mu, theta) + 2 * d1, 1.0
for _ in range(25):
    if abs(lm0 - lm) / d1 + abs(change) <= 1e-8:
        break
    beta, new_mu, info = irls(mu, theta)
    previous, theta = theta, theta_ml(mu)  # as MASS: theta from the means before this fit
    mu = new_mu
    change = previous - theta
    lm0, lm = lm, loglik(mu, theta)
se = np.sqrt(np.diag(np.linalg.inv(info)))
i = names.index("{exposure}")
p_value = 2 * stats.norm.sf(abs(beta[i] / se[i]))

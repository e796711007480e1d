# Tobit regression coefficient (censored at 0): the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
import statsmodels.formula.api as smf
from scipy import stats
from scipy.special import log_ndtr
covariates = {covariates}
formula = "{outcome} ~ {exposure} + " + (" + ".join(covariates) or "1")
design = smf.ols(formula, d)  # the model's design matrix, factors coded as R codes them
names, y, X = design.exog_names, np.asarray(design.endog, float), np.asarray(design.exog, float)
cens = y <= 0  # AER::tobit(left = 0): rows at or below 0 are censored at 0
p = X.shape[1]


def loglik(par):
    """The log-likelihood of (beta, log sigma), its gradient and Hessian (as survreg, dist = "gaussian")."""
    beta, s = par[:p], par[p]
    sigma = np.exp(s)
    z = (y[~cens] - X[~cens] @ beta) / sigma
    c = -(X[cens] @ beta) / sigma
    logcdf = log_ndtr(c)
    lam = np.exp(stats.norm.logpdf(c) - logcdf)  # inverse Mills ratio
    Xu, Xc = X[~cens], X[cens]
    ll = -0.5 * z @ z - len(z) * (s + 0.5 * np.log(2 * np.pi)) + logcdf.sum()
    grad = np.append(Xu.T @ z / sigma - Xc.T @ lam / sigma, z @ z - len(z) - lam @ c)
    hess = np.empty((p + 1, p + 1))
    hess[:p, :p] = -(Xu.T @ Xu) / sigma**2 - (Xc * (lam * (c + lam))[:, None]).T @ Xc / sigma**2
    hess[:p, p] = hess[p, :p] = Xu.T @ (-2 * z / sigma) + Xc.T @ (lam * (1 - c * (c + lam)) / sigma)
    hess[p, p] = -2 * z @ z + (lam * c) @ (1 - c * (c + lam))
    return ll, grad, hess


# Newton's method from least squares, halving steps that lower the log-likelihood, to machine precision
beta0 = np.linalg.lstsq(X, np.maximum(y, 0), rcond=None)[0]
par = np.append(beta0, np.log(np.std(np.maximum(y, 0) - X @ beta0)))
ll, grad, hess = loglik(par)
for _ in range(100):
    step, t = np.linalg.solve(-hess, grad), 1.0
    while loglik(par + t * step)[0] < ll - 1e-12 * abs(ll):
        t /= 2
    par = par + t * step
    ll_old, (ll, grad, hess) = ll, loglik(par)
    if np.all(np.abs(t * step) <= 1e-10 * (1 + np.abs(par))) and abs(ll - ll_old) <= 1e-12 * (1 + abs(ll)):
        break
se = np.sqrt(np.diag(np.linalg.inv(-hess)))
i = names.index("{exposure}")
p_value = 2 * stats.norm.sf(abs(par[i] / se[i]))

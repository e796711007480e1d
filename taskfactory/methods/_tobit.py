"""The tobit model (Gaussian regression left-censored at a limit), reproducing R 4.2.2 (AER 1.2-10, survival 3.5-3).

:func:`tobit_terms` gives ``summary(AER::tobit(y ~ x1 + ..., left = left))$coefficients``.
``AER::tobit`` rewrites the response as ``Surv(ifelse(y <= left, left, y), y > left, type = "left")``
and calls ``survreg(..., dist = "gaussian")``: the maximum likelihood fit of
(beta, log sigma), whose SEs come from the inverse of the negative Hessian of
the log-likelihood in that parametrisation, each coefficient tested by a Wald
z on the normal distribution.

The fit here is Newton-Raphson on (beta, log sigma) with the analytic gradient
and Hessian (vectorised over the rows), step-halving and, should the Hessian
not be negative definite along the way, a Levenberg damping. It iterates to
machine precision, so its estimates are survreg's to the precision survreg
converges to (a relative change in the log-likelihood below 1e-9).

Raises :class:`~taskfactory.errors.DataError` when no or all observations are
censored, when the uncensored rows do not determine every coefficient (as
when a dummy's rows are all censored: an estimate then heads to infinity),
when the fit does not converge, or when the Hessian is singular.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..errors import DataError
from ..result import Term
from ._common import require_held
from ._models import LM_TOL, _design, _qr_r, column_norms
from ._dist import norm_sf

MAXIT = 100
TOLER_CHOL = 1e-10  # survreg.control()$toler.chol, here on the information scaled to unit diagonal
LOG_2PI = math.log(2.0 * math.pi)


class _Tobit:
    """The rows split into uncensored (``Xu``, ``yu``) and censored (``Xc``), and the
    log-likelihood of (beta, log sigma) with its gradient and Hessian."""

    def __init__(self, y: np.ndarray, X: np.ndarray, cens: np.ndarray, left: float):
        self.p = X.shape[1]
        self.Xu, self.yu = X[~cens], y[~cens]
        self.Xc = X[cens]
        self.left = left
        self.nu = len(self.yu)

    def __call__(self, par: np.ndarray, deriv: bool = True):
        """The log-likelihood at ``par`` = (beta, log sigma) and, with ``deriv``, its
        gradient and Hessian. Uncensored rows add log(phi(z) / sigma), z = (y - x'b) / sigma;
        censored rows log Phi(c), c = (left - x'b) / sigma."""
        p = self.p
        beta, s = par[:p], par[p]
        sigma = math.exp(s)
        z = (self.yu - self.Xu @ beta) / sigma
        c = (self.left - self.Xc @ beta) / sigma
        logcdf = log_ndtr(c)
        ll = float(-0.5 * (z @ z) - self.nu * (s + 0.5 * LOG_2PI) + logcdf.sum())
        if not deriv:
            return ll, None, None
        lam = np.exp(-0.5 * c * c - 0.5 * LOG_2PI - logcdf)  # the inverse Mills ratio phi(c) / Phi(c)
        cl = c + lam
        # per row: d ll / d eta, d2 ll / d eta2, d2 ll / d eta d log sigma (uncensored, then censored)
        g_u, g_c = z / sigma, -lam / sigma
        h_ee_c = -lam * cl / sigma**2
        h_es_u, h_es_c = -2.0 * z / sigma, lam * (1.0 - c * cl) / sigma
        grad = np.empty(p + 1)
        grad[:p] = self.Xu.T @ g_u + self.Xc.T @ g_c
        grad[p] = float(z @ z) - self.nu - float(lam @ c)
        hess = np.empty((p + 1, p + 1))
        hess[:p, :p] = -(self.Xu.T @ self.Xu) / sigma**2 + (self.Xc * h_ee_c[:, None]).T @ self.Xc
        hess[:p, p] = hess[p, :p] = self.Xu.T @ h_es_u + self.Xc.T @ h_es_c
        hess[p, p] = -2.0 * float(z @ z) + float((lam * c) @ (1.0 - c * cl))
        return ll, grad, hess


def tobit_terms(y, X, names, left: float = 0.0) -> tuple[list[Term], dict]:
    """``summary(AER::tobit(y ~ x1 + ..., left = left))$coefficients``.

    The Gaussian censored regression (rows with y <= ``left`` censored at
    ``left``) by maximum likelihood (``survreg`` with ``dist = "gaussian"``),
    a Wald z and normal p for each coefficient, the SEs from the inverse of the
    negative Hessian of the log-likelihood in (beta, log(scale)) at the MLE.
    The ``Log(scale)`` row is not among the returned terms. X includes the
    intercept column.

    The dict: ``log_scale`` and ``se_log_scale`` (summary's ``Log(scale)``
    row), ``scale`` (sigma), ``loglik``, ``iterations`` (Newton steps),
    ``n_censored``.

    Raises DataError when no or all observations are censored, when the
    uncensored rows' columns are collinear (an estimate heading to infinity,
    where survreg stops on the way with a huge SE), when Newton's method does
    not converge within 100 steps, or when the Hessian is singular or not
    negative definite at the estimate.
    """
    y, X, names, _ = _design(y, X, names)
    n, p = X.shape
    left = float(left)
    if not math.isfinite(left):
        raise ValueError(f"left ({left!r}) must be finite")
    cens = y <= left
    k = int(cens.sum())
    if k == 0:
        raise DataError("no observation is censored, so a tobit model is not needed")
    if k == n:
        raise DataError("every observation is censored, so the tobit model has no estimate")
    yy = np.where(cens, left, y)
    # The uncensored rows must determine every coefficient: else some direction b has x'b = 0
    # on them and (in practice) one sign on the censored rows, along which the likelihood
    # rises for ever (survreg stops on the way, with a huge SE).
    unc = X[~cens]
    if len(unc) < p or not (np.abs(np.diag(_qr_r(unc))) > LM_TOL * column_norms(unc)).all():
        raise DataError("the uncensored rows do not determine every coefficient (e.g. a dummy whose rows are "
                        "all censored): the estimate heads to infinity")

    # start: least squares on the (censored-at-left) response
    beta0, *_ = np.linalg.lstsq(X, yy, rcond=None)
    res = yy - X @ beta0
    sd = math.sqrt(float(res @ res) / max(n - p, 1))
    if not sd > 0.0:
        sd = float(np.std(yy)) or 1.0
    par = np.append(beta0, math.log(sd))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        par, ll, hess, it = _maximise(_Tobit(yy, X, cens, left), par)
    cov = _covariance(hess)
    require_held(np.diag(cov)[:p], names)   # survreg's Newton steps mix every coefficient's scale into each
    se = np.sqrt(np.diag(cov))
    z = par / se
    pv = 2.0 * norm_sf(np.abs(z))
    terms = [Term(nm, float(b), float(s), float(zz), float(pp), None)
             for nm, b, s, zz, pp in zip(names, par[:p], se[:p], z[:p], pv[:p])]
    out = {"log_scale": float(par[p]), "se_log_scale": float(se[p]), "scale": math.exp(par[p]),
           "loglik": ll, "iterations": it, "n_censored": k}
    return terms, out


def _maximise(f, par: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Newton's method on the log-likelihood ``f`` (its value, gradient and
    Hessian at a point) from ``par``, the information ridged where it is not
    positive definite and the step halved until the likelihood does not fall:
    the estimate, the log-likelihood and Hessian there, and the steps taken."""
    ll, grad, hess = f(par)
    for it in range(1, MAXIT + 1):
        info = -hess
        step = None
        mu = 0.0
        for _ in range(60):
            try:
                L = np.linalg.cholesky(info + mu * np.diag(np.diag(info).clip(min=1e-12)))
                step = np.linalg.solve(L.T, np.linalg.solve(L, grad))
                break
            except np.linalg.LinAlgError:
                mu = 1e-6 if mu == 0.0 else 10.0 * mu
        if step is None or not np.isfinite(step).all():
            raise DataError("tobit: the Hessian is singular")
        t = 1.0
        for _ in range(60):
            new = par + t * step
            ll_new, grad_new, hess_new = f(new)
            if math.isfinite(ll_new) and ll_new >= ll - 1e-12 * abs(ll):
                break
            t /= 2.0
        else:
            raise DataError("tobit: the step-halving failed")
        par = new
        ll_old, ll = ll, ll_new
        grad, hess = grad_new, hess_new
        small = np.abs(t * step) <= 1e-10 * (1.0 + np.abs(par))
        if mu == 0.0 and t == 1.0 and small.all() and abs(ll - ll_old) <= 1e-12 * (1.0 + abs(ll)):
            return par, ll, hess, it
    raise DataError(f"tobit: Newton's method did not converge in {MAXIT} steps")


def _covariance(hess: np.ndarray) -> np.ndarray:
    """The inverse of the information ``-hess`` at the estimate, as survreg
    inverts it (a Cholesky factor of the information scaled to unit
    diagonal); DataError where it is singular or not positive definite."""
    if not np.isfinite(hess).all():
        raise DataError("tobit: the Hessian is not finite at the estimate")
    info = -hess
    dg = np.diag(info)
    if not (dg > 0.0).all():
        raise DataError("tobit: the Hessian is singular at the estimate (an estimate heading to infinity?)")
    dg = np.sqrt(dg)
    try:  # the Cholesky factor of the information scaled to unit diagonal
        L = np.linalg.cholesky(info / np.outer(dg, dg))
    except np.linalg.LinAlgError:
        raise DataError("tobit: the Hessian is singular or not negative definite at the estimate") from None
    if np.diag(L).min() ** 2 < TOLER_CHOL:
        raise DataError("tobit: the Hessian is singular at the estimate (an estimate heading to infinity?)")
    Linv = np.linalg.inv(L) / dg  # L^-1 D^-1, so that cov = D^-1 L^-T L^-1 D^-1 = Linv' Linv
    return Linv.T @ Linv

"""The random-intercept linear mixed model, reproducing R 4.2.2 (lme4 1.1-31, lmerTest 3.1-3, NLopt 2.7.1).

:func:`lmer_terms` gives ``summary(lmerTest::lmer(y ~ x1 + ... + (1 | cluster)))$coefficients``:
the REML fit of lme4, its fixed effects and their SEs, and lmerTest's
Satterthwaite denominator degrees of freedom for each t test.

With a single random intercept the marginal covariance of cluster g is
``sigma^2 (I + theta^2 J)``, whose inverse is ``sigma^-2 ((I - J/n_g) + u_g J/n_g^2)``
with ``u_g = n_g / (1 + n_g theta^2)``: every quantity lme4 needs is a sum
over clusters of the cluster means of X and y, weighted by ``u_g``, plus the
(fixed) within-cluster scatter matrices. So the REML criterion, its first and
second derivatives in theta, and the derivatives lmerTest takes numerically
(``numDeriv``) are computed here analytically from those sums, with no loop
over clusters.

lme4 does not find the exact REML optimum: its optimizer (``nloptwrap``,
NLopt's BOBYQA with nloptr's default ``xtol_rel = 1e-4`` besides lme4's
``xtol_abs = ftol_abs = 1e-8``) stops when its trust region falls below
1e-4 of the initial step, so its theta is off the optimum by up to about
1e-4 relative, which moves the SEs and df by as much and the p-value's z by
up to ~1e-4 on small data. To give R's numbers rather than the optimum's,
theta is found here as lme4 finds it: from lme4's start (``mkLmerDevfun``),
with NLopt's default initial step, by a port of NLopt 2.7.1's BOBYQA for one
variable (checked evaluation by evaluation against the C library), then
lme4's ``restart_edge`` and ``check.boundary``. (Should BOBYQA call its
RESCUE step, which is not ported and was never met in testing, the exact
REML optimum is used instead.)

Raises :class:`~taskfactory.errors.DataError` where lme4 or lmerTest stop or
warn: fewer than 2 clusters or as many clusters as rows, predictors on very
different scales, a singular (boundary) fit, an optimizer that fails or does
not converge, a degenerate Hessian.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from ..errors import DataError
from ..result import Term
from ._bobyqa import MAXEVAL, Rescue, bobyqa
from ._models import _design, group_codes
from ._dist import t_sf

SINGULAR_TOL = 1e-4  # lmerControl()$checkConv$check.conv.singular$tol: theta below it is "boundary (singular) fit"
GRAD_TOL = 2e-3  # check.conv.grad$tol: the scaled gradient of the criterion at lme4's theta
HESS_TOL = 1e-6  # check.conv.hess$tol
BOUNDARY_TOL = 1e-5  # lmerControl()$boundary.tol, and restart_edge's step
LMERTEST_TOL = 1e-8  # lmerTest:::as_lmerModLT: eigenvalues of the (theta, sigma) Hessian near zero or negative
SCALE_TOL = 1000.0  # lme4:::checkScaleX
XTOL_REL, XTOL_ABS, FTOL_ABS = 1e-4, 1e-8, 1e-8  # nloptwrap: nloptr's default xtol_rel, lme4's xtol_abs, ftol_abs
# The grid that starts the search for the exact optimum, in the intraclass correlation theta^2 / (1 + theta^2).
_RHO_GRID = np.concatenate([[0.0, 1e-8, 1e-6, 1e-4, 1e-3, 0.004], np.linspace(0.01, 0.99, 50), [0.997, 0.999, 0.9999]])


class _Reml:
    """The sufficient statistics of a random-intercept model and lme4's REML criterion in theta."""

    def __init__(self, y: np.ndarray, X: np.ndarray, codes: np.ndarray, G: int):
        n, p = X.shape
        self.n, self.p, self.G = n, p, G
        sizes = np.bincount(codes, minlength=G).astype(float)
        self.s = sizes
        sums = np.empty((G, p))
        for j in range(p):  # a loop over the columns, not the clusters
            sums[:, j] = np.bincount(codes, weights=X[:, j], minlength=G)
        self.B = sums / sizes[:, None]  # cluster means of X
        self.my = np.bincount(codes, weights=y, minlength=G) / sizes  # and of y
        self.Xc = X - self.B[codes]  # deviations from the cluster means
        self.yc = y - self.my[codes]
        self.Wxx = self.Xc.T @ self.Xc
        self.Wxy = self.Xc.T @ self.yc
        self.Wyy = float(self.yc @ self.yc)

    def _u(self, theta: float) -> tuple[np.ndarray, np.ndarray]:
        q = 1.0 + self.s * theta * theta
        return self.s / q, q

    def solve(self, theta: float):
        """M = X'V^-1 X (V = I + theta^2 ZZ'), its inverse, the GLS beta, the
        cluster-mean residuals e and the penalised weighted RSS P = r'V^-1 r."""
        u, q = self._u(theta)
        B = self.B
        M = self.Wxx + (B * u[:, None]).T @ B
        b = self.Wxy + B.T @ (u * self.my)
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            raise DataError("the fixed-effects design is singular in the mixed model") from None
        Linv = np.linalg.inv(L)
        Minv = Linv.T @ Linv
        beta = Minv @ b
        e = self.my - B @ beta
        rw = self.yc - self.Xc @ beta
        P = float(rw @ rw + u @ (e * e))
        ldRX2 = 2.0 * float(np.log(np.diag(L)).sum())
        return M, Minv, beta, e, P, ldRX2, u, q

    def deviance(self, theta: float) -> float:
        """lme4's REML criterion: ldL2 + ldRX2 + (n - p)(1 + log(2 pi P / (n - p)))."""
        _M, _Minv, _beta, _e, P, ldRX2, _u, q = self.solve(theta)
        nmp = self.n - self.p
        if not P > 0.0:
            raise DataError("the mixed model's residual sum of squares is 0: a perfect fit, or an outcome whose "
                            "squares underflow")
        return float(np.log(q).sum()) + ldRX2 + nmp * (1.0 + math.log(2.0 * math.pi * P / nmp))

    def deviance_grid(self, thetas: np.ndarray) -> np.ndarray:
        """:meth:`deviance` at many theta at once (for the starting grid)."""
        s, B = self.s, self.B
        u = s[None, :] / (1.0 + s[None, :] * thetas[:, None] ** 2)  # K x G
        M = self.Wxx[None] + np.einsum("kg,gi,gj->kij", u, B, B)
        b = self.Wxy[None] + np.einsum("kg,gi,g->ki", u, B, self.my)
        c = self.Wyy + u @ (self.my**2)
        with np.errstate(all="ignore"):
            sign, logdet = np.linalg.slogdet(M)
            beta = np.linalg.solve(M, b[..., None])[..., 0]
            P = c - np.einsum("ki,ki->k", b, beta)
            nmp = self.n - self.p
            dev = np.log1p(s[None, :] * thetas[:, None] ** 2).sum(1) + logdet + nmp * (1 + np.log(2 * np.pi * P / nmp))
        return np.where((sign > 0) & (P > 0) & np.isfinite(dev), dev, np.inf)

    def dlambda(self, theta: float) -> float:
        """The derivative of the REML criterion in lambda = theta^2 (finite at theta = 0,
        where the derivative in theta vanishes), of the same sign as that in theta."""
        _M, Minv, _beta, e, P, _ld, _u, q = self.solve(theta)
        s, B = self.s, self.B
        ul = -(s * s) / (q * q)  # d u / d lambda
        Ml = (B * ul[:, None]).T @ B
        return float((s / q).sum() + np.sum(Minv * Ml) + (self.n - self.p) * float(ul @ (e * e)) / P)

    def derivs(self, theta: float):
        """The fit at theta with the first and second derivatives in theta of the
        profiled REML criterion and of its parts (P, ldRX2, ldL2)."""
        M, Minv, beta, e, P, ldRX2, u, q = self.solve(theta)
        s, B = self.s, self.B
        u1 = -2.0 * s * s * theta / (q * q)
        u2 = -2.0 * s * s * (1.0 - 3.0 * s * theta * theta) / q**3
        P1 = float(u1 @ (e * e))
        w = B.T @ (u1 * e)
        P2 = float(u2 @ (e * e)) - 2.0 * float(w @ Minv @ w)
        M1 = (B * u1[:, None]).T @ B
        M2 = (B * u2[:, None]).T @ B
        K = Minv @ M1
        ld1 = float(np.sum(Minv * M1))
        ld2 = float(np.sum(Minv * M2)) - float(np.sum(K * K.T))
        l1 = float((2.0 * s * theta / q).sum())
        l2 = float((2.0 * s * (1.0 - s * theta * theta) / (q * q)).sum())
        nmp = self.n - self.p
        dev = float(np.log(q).sum()) + ldRX2 + nmp * (1.0 + math.log(2.0 * math.pi * P / nmp))
        d1 = l1 + ld1 + nmp * P1 / P
        d2 = l2 + ld2 + nmp * (P2 / P - (P1 / P) ** 2)
        return dict(M=M, Minv=Minv, M1=M1, beta=beta, P=P, P1=P1, P2=P2, l2=l2, ld2=ld2, dev=dev, d1=d1, d2=d2)


# --------------------------------------------------------------------------- lme4's fit


def _check_scale(X: np.ndarray) -> None:
    """lme4's ``checkScaleX`` warning "Some predictor variables are on very different
    scales: consider rescaling": a non-0/1 column with sd beyond 1000 or below 1/1000,
    or two such columns whose sds differ by a factor above 1000."""
    cont = ~np.all((X == 0.0) | (X == 1.0), axis=0)
    if not cont.any():
        return
    sd = X[:, cont].std(axis=0, ddof=1)
    with np.errstate(divide="ignore"):
        lsd = np.log(sd)
    lim = math.log(SCALE_TOL)
    if np.any(np.abs(lsd) > lim) or (np.ptp(lsd) > lim if len(lsd) > 1 else False):
        raise DataError("lme4: some predictor variables are on very different scales (consider rescaling)")


def _exact_theta(r: _Reml) -> tuple[float, int]:
    """The exact REML estimate of theta = tau / sigma (the fallback of
    :func:`_lme4_theta`): the best point of a grid in the intraclass
    correlation, then the root of the criterion's derivative between its
    neighbours (Brent, to machine precision). Returns theta and the number of
    criterion evaluations; raises DataError for a boundary fit."""
    thetas = np.sqrt(_RHO_GRID / (1.0 - _RHO_GRID))
    dev = r.deviance_grid(thetas)
    if not np.isfinite(dev).any():
        raise DataError("the REML criterion cannot be evaluated")
    evals = len(thetas)
    k = int(np.argmin(dev))
    if k == 0 and r.dlambda(0.0) >= 0.0:
        raise DataError("boundary (singular) fit: the random-intercept variance is estimated at 0")
    lo = thetas[k - 1] if k > 0 else 0.0
    if k < len(thetas) - 1:
        hi = thetas[k + 1]
    else:
        hi = thetas[k]
        while r.dlambda(hi) < 0.0:
            lo, hi = hi, 2.0 * hi
            evals += 1
            if hi > 1e8:
                raise DataError("the random-intercept variance heads to infinity (no within-cluster variation)")
    f_lo, f_hi = r.dlambda(lo), r.dlambda(hi)
    evals += 2
    if f_lo < 0.0 < f_hi:
        theta, res = brentq(r.dlambda, lo, hi, xtol=1e-15, rtol=4.0 * np.finfo(float).eps,
                            maxiter=200, full_output=True)
        evals += res.function_calls
    else:
        res = minimize_scalar(r.deviance, bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-13 * max(hi, 1e-3), "maxiter": 500})
        theta = float(res.x)
        evals += int(res.nfev)
    if theta < SINGULAR_TOL:
        raise DataError(f"boundary (singular) fit: theta = tau/sigma = {theta:.3g} < 1e-4")
    return float(theta), evals


def _lme4_start(y: np.ndarray, codes: np.ndarray) -> float:
    """lme4's starting theta (``mkLmerDevfun``): sqrt(v / v.e) with v = var(ave(y, cluster))
    and v.e = var(y) - v when v.e > 0, else 1; computed in long double as R's
    ``mean()`` and ``var()`` are."""
    ld = np.longdouble
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    sizes = np.diff(np.r_[starts, len(y)])
    yl = y.astype(ld)[order]
    m = np.add.reduceat(yl, starts) / sizes  # mean(): the sum / n, then its correction
    m = m + np.add.reduceat(yl - np.repeat(m, sizes), starts) / sizes
    ave = m.astype(float)[codes]  # the codes are 0 .. G - 1 (pd.factorize)

    def var(x: np.ndarray) -> float:
        xl = x.astype(ld)
        mu = xl.sum() / len(x)
        mu = mu + (xl - mu).sum() / len(x)
        dev = xl - ld(float(mu))
        return float((dev * dev).sum() / (len(x) - 1))

    v = var(ave)
    v_e = var(y) - v
    if not v_e > 0.0:
        return 1.0
    return math.sqrt(v / v_e)


def _nlopt_step(x0: float, lower: float = 0.0) -> float:
    """NLopt's ``nlopt_set_default_initial_step`` for one variable with an infinite upper bound."""
    step = math.inf
    if x0 - lower < step and x0 > lower:
        step = (x0 - lower) * 0.75
    if math.isinf(step) and abs(x0 - lower) < abs(step):
        step = (x0 - lower) * 1.1
    if math.isinf(step) or abs(step) < 2.2250738585072014e-308:
        step = x0
    if math.isinf(step) or step == 0.0:
        step = 1.0
    return step


def _nloptwrap(fun, x0: float) -> tuple[float, float, int, int]:
    """``lme4::nloptwrap`` (NLopt's BOBYQA, lower bound 0) from ``x0``."""
    rhobeg = abs(_nlopt_step(x0))
    rhoend = max(XTOL_REL * rhobeg, XTOL_ABS)
    return bobyqa(fun, x0, rhobeg, rhoend, FTOL_ABS)


def _lme4_theta(r: _Reml, y: np.ndarray, codes: np.ndarray) -> tuple[float, int, int, bool]:
    """theta as ``lme4::optimizeLmer`` finds it: nloptwrap from lme4's start; if it
    ends on the bound 0 while the criterion falls away from it, a second run
    from there (``restart_edge``); a theta within 1e-5 of 0 set to 0 if the
    criterion is lower there (``check.boundary``). Returns theta, the number
    of evaluations, NLopt's status and whether the exact optimum stood in for
    a run that needed BOBYQA's RESCUE."""
    try:
        theta, fval, evals, status = _nloptwrap(r.deviance, _lme4_start(y, codes))
        if theta == 0.0:
            d0 = r.deviance(0.0)
            if (r.deviance(BOUNDARY_TOL) - d0) / BOUNDARY_TOL < 0.0:
                theta, fval, more, status = _nloptwrap(r.deviance, 0.0)
                evals += more
        if 0.0 < theta < BOUNDARY_TOL and r.deviance(0.0) < fval:
            theta = 0.0
        return theta, evals, status, False
    except Rescue:
        theta, evals = _exact_theta(r)
        return theta, evals, 1, True


def lmer_terms(y, X, names, cluster) -> tuple[list[Term], dict]:
    """``summary(lmerTest::lmer(y ~ x1 + ... + (1 | cluster)))$coefficients``.

    A random-intercept linear mixed model fitted by REML (lme4's default): the
    fixed-effect estimates (GLS at lme4's estimate of theta = tau / sigma),
    their SEs (``vcov()``: sigma^2 (X'V^-1 X)^-1), t values, and
    Satterthwaite's denominator df as lmerTest computes them
    (``ddf = "Satterthwaite"``), with the p-value from the t distribution on
    those df. X includes the intercept column (as
    :func:`~taskfactory.methods._models.model_matrix` gives it); ``cluster``
    holds one label per row.

    theta is found as lme4 finds it (see the module's docstring), not at the
    exact REML optimum, from which lme4's estimate is up to ~1e-4 away.

    lmerTest's df for coefficient j is 2 C_jj^2 / (g' A g), where
    C(theta, sigma) = sigma^2 (X'V(theta)^-1 X)^-1, g is the gradient of C_jj
    in (theta, sigma) and A = 2 H^-1, H the Hessian of the (unprofiled) REML
    deviance in (theta, sigma) at the estimate (lmerTest takes both
    derivatives numerically, with numDeriv; here they are analytic).

    The dict: ``sigma2`` (residual variance), ``tau2`` (random-intercept
    variance), ``theta`` (tau / sigma), ``reml`` (the REML criterion,
    ``REMLcrit()``), ``iterations`` (evaluations of the criterion by the
    optimizer, lme4's ``optinfo$feval``), ``n_clusters``, ``optimum``
    (``"nloptwrap"``, or ``"exact"`` where BOBYQA's RESCUE would be needed).

    Raises DataError where lme4 stops or warns: fewer than 2 clusters, as
    many clusters as rows, a design lm() would find collinear (lme4 drops the
    column), predictors on very different scales (``checkScaleX``), a
    singular fit (theta below 1e-4: "boundary (singular) fit"), a negative
    NLopt status (``convergence code ... from nloptwrap``), lme4's
    ``checkConv`` warnings on the criterion's derivatives in theta (a
    curvature not positive, below 1e-6 or above 1e6; a scaled gradient above
    0.002); and where lmerTest warns that the (theta, sigma) Hessian has an
    eigenvalue negative or within 1e-8 of zero.
    """
    y, X, names, _ = _design(y, X, names)
    n, p = X.shape
    codes, G = group_codes(cluster, n)
    if G < 2:
        raise DataError("a random intercept needs at least 2 clusters (lme4: grouping factors need > 1 level)")
    if G >= n:
        raise DataError("lme4: the number of clusters must be below the number of observations")
    _check_scale(X)

    r = _Reml(y, X, codes, G)
    theta, evals, status, exact = _lme4_theta(r, y, codes)
    if theta < SINGULAR_TOL:
        raise DataError(f"boundary (singular) fit: theta = tau/sigma = {theta:.3g} < 1e-4")
    if status < 0 or status == MAXEVAL:
        raise DataError(f"lme4: convergence code {status} from nloptwrap")
    d = r.derivs(theta)
    # lme4's checkConv on the derivatives of the criterion in theta at its estimate
    if not d["d2"] > 0.0:
        raise DataError("lme4: unable to evaluate scaled gradient (the REML criterion is not convex there)")
    if min(abs(d["d1"]) / math.sqrt(d["d2"]), abs(d["d1"])) > GRAD_TOL:
        raise DataError(f"lme4: model failed to converge with max|grad| above {GRAD_TOL}")
    if d["d2"] < HESS_TOL:
        raise DataError("lme4: Hessian is numerically singular: parameters are not uniquely determined")
    if d["d2"] * HESS_TOL > 1.0:
        raise DataError("lme4: model is nearly unidentifiable: very large eigenvalue (rescale variables?)")

    nmp = n - p
    P, P1, Minv = d["P"], d["P1"], d["Minv"]
    sigma2 = P / nmp
    sigma = math.sqrt(sigma2)
    # lmerTest:::devfun_vp: ldL2 + P / sigma^2 + (n - p) log(2 pi sigma^2) + ldRX2, in (theta, sigma)
    h_tt = d["l2"] + d["P2"] / sigma2 + d["ld2"]
    h_ts = -2.0 * P1 / sigma**3
    h_ss = 6.0 * P / sigma2**2 - 2.0 * nmp / sigma2
    H = np.array([[h_tt, h_ts], [h_ts, h_ss]])
    evals_h, vecs = np.linalg.eigh(H)
    if (evals_h < -LMERTEST_TOL).any():
        raise DataError("lmerTest: model failed to converge (a negative eigenvalue of the Hessian)")
    if (np.abs(evals_h) < LMERTEST_TOL).any():
        raise DataError("lmerTest: model may not have converged (a Hessian eigenvalue close to zero)")
    A = 2.0 * (vecs / evals_h) @ vecs.T  # vcov_varpar
    C = sigma2 * Minv  # vcov_beta
    dC_dtheta = -sigma2 * (Minv @ d["M1"] @ Minv)
    dC_dsigma = 2.0 * sigma * Minv
    var = np.diag(C)
    g = np.stack([np.diag(dC_dtheta), np.diag(dC_dsigma)])  # 2 x p
    denom = np.einsum("ij,ik,kj->j", g, A, g)
    ddf = 2.0 * var**2 / denom
    beta = d["beta"]
    se = np.sqrt(var)
    t = beta / se
    pv = 2.0 * t_sf(np.abs(t), ddf)
    terms = [Term(nm, float(b), float(s), float(tt), float(pp), float(df))
             for nm, b, s, tt, pp, df in zip(names, beta, se, t, pv, ddf)]
    info = {"sigma2": sigma2, "tau2": sigma2 * theta * theta, "theta": theta, "reml": d["dev"],
            "iterations": evals, "n_clusters": G, "optimum": "exact" if exact else "nloptwrap"}
    return terms, info

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


# --------------------------------------------------------------------------- NLopt's BOBYQA for one variable

_SUCCESS, _FTOL, _XTOL, _MAXEVAL, _ROUNDOFF = 1, 3, 4, 5, -4  # NLopt's status codes


class _Rescue(Exception):
    """BOBYQA would call its RESCUE routine (rounding errors have damaged the interpolation)."""


def _trsbox(xpt, xopt, gopt, hq, pq, sl, su, delta):
    """NLopt's trsbox_ for one variable: the truncated conjugate gradient step
    within the trust region and the bounds. Returns xnew, d, gnew, dsq, crvmin."""
    xbdi = 0.0
    if xopt <= sl:
        if gopt >= 0.0:
            xbdi = -1.0
    elif xopt >= su:
        if gopt <= 0.0:
            xbdi = 1.0
    nact = 1 if xbdi != 0.0 else 0
    d = 0.0
    gnew = gopt
    delsq = delta * delta
    qred = 0.0
    crvmin = -1.0
    iterc = 0
    s = 0.0
    gredsq = ggsav = 0.0
    itermax = 0
    beta = 0.0
    while True:  # L30 (beta = 0 at L20)
        if xbdi != 0.0:
            s = 0.0
        elif beta == 0.0:
            s = -gnew
        else:
            s = beta * s - gnew
        stepsq = s * s
        if stepsq == 0.0:
            break
        if beta == 0.0:
            gredsq = stepsq
            itermax = iterc + 1 - nact
        if gredsq * delsq <= qred * 1e-4 * qred:
            break
        hs = hq * s  # L210: HS = H S
        for k in (1, 2, 3):
            if pq[k] != 0.0:
                temp = xpt[k] * s
                temp *= pq[k]
                hs += temp * xpt[k]
        # L50
        resid = delsq
        ds = shs = 0.0
        if xbdi == 0.0:
            resid -= d * d
            ds += s * d
            shs += s * hs
        if resid <= 0.0:
            crvmin = 0.0
            break
        temp = math.sqrt(stepsq * resid + ds * ds)
        if ds < 0.0:
            blen = (temp - ds) / stepsq
        else:
            blen = resid / (temp + ds)
        stplen = blen
        if shs > 0.0:
            stplen = min(blen, gredsq / shs)
        iact = 0
        if s != 0.0:
            xsum = xopt + d
            if s > 0.0:
                temp = (su - xsum) / s
            else:
                temp = (sl - xsum) / s
            if temp < stplen:
                stplen = temp
                iact = 1
        sdec = 0.0
        if stplen > 0.0:
            iterc += 1
            temp = shs / stepsq
            if iact == 0 and temp > 0.0:
                crvmin = min(crvmin, temp)
                if crvmin == -1.0:
                    crvmin = temp
            ggsav = gredsq
            gredsq = 0.0
            gnew += stplen * hs
            if xbdi == 0.0:
                gredsq += gnew * gnew
            d += stplen * s
            sdec = max(stplen * (ggsav - 0.5 * stplen * shs), 0.0)
            qred += sdec
        if iact > 0:
            nact += 1
            xbdi = 1.0
            if s < 0.0:
                xbdi = -1.0
            delsq -= d * d
            if delsq <= 0.0:
                crvmin = 0.0
                break
            beta = 0.0
            continue
        if stplen < blen:
            if iterc == itermax:
                break
            if sdec <= qred * 0.01:
                break
            beta = gredsq / ggsav
            continue
        crvmin = 0.0  # L90; L100: with one variable NACT >= N - 1, so to L190
        break
    # L190
    xnew = max(min(xopt + d, su), sl)
    if xbdi == -1.0:
        xnew = sl
    if xbdi == 1.0:
        xnew = su
    d = xnew - xopt
    return xnew, d, gnew, d * d, crvmin


def _altmov(xpt, xopt, bmat, zmat, sl, su, kopt, knew, adelt):
    """NLopt's altmov_ for one variable. Returns xnew, xalt, alpha, cauchy."""
    const = 1.0 + math.sqrt(2.0)
    hcol = [0.0, 0.0, 0.0, 0.0]
    temp = zmat[knew]
    for k in (1, 2, 3):
        hcol[k] += temp * zmat[k]
    alpha = hcol[knew]
    ha = 0.5 * alpha
    glag = bmat[knew]
    for k in (1, 2, 3):
        temp = xpt[k] * xopt
        temp = hcol[k] * temp
        glag += temp * xpt[k]
    presav = 0.0
    ksav, stpsav, ibdsav = 0, 0.0, 0
    step = 0.0
    for k in (1, 2, 3):
        if k == kopt:
            continue
        temp = xpt[k] - xopt
        dderiv = glag * temp
        distsq = temp * temp
        subd = adelt / math.sqrt(distsq)
        slbd = -subd
        ilbd = iubd = 0
        sumin = min(1.0, subd)
        temp = xpt[k] - xopt
        if temp > 0.0:
            if slbd * temp < sl - xopt:
                slbd = (sl - xopt) / temp
                ilbd = -1
            if subd * temp > su - xopt:
                subd = max(sumin, (su - xopt) / temp)
                iubd = 1
        elif temp < 0.0:
            if slbd * temp > su - xopt:
                slbd = (su - xopt) / temp
                ilbd = 1
            if subd * temp < sl - xopt:
                subd = max(sumin, (sl - xopt) / temp)
                iubd = -1
        if k == knew:
            diff = dderiv - 1.0
            step = slbd
            vlag = slbd * (dderiv - slbd * diff)
            isbd = ilbd
            temp = subd * (dderiv - subd * diff)
            if abs(temp) > abs(vlag):
                step = subd
                vlag = temp
                isbd = iubd
            tempd = 0.5 * dderiv
            tempa = tempd - diff * slbd
            tempb = tempd - diff * subd
            if tempa * tempb < 0.0:
                temp = tempd * tempd / diff
                if abs(temp) > abs(vlag):
                    step = tempd / diff
                    vlag = temp
                    isbd = 0
        else:
            step = slbd
            vlag = slbd * (1.0 - slbd)
            isbd = ilbd
            temp = subd * (1.0 - subd)
            if abs(temp) > abs(vlag):
                step = subd
                vlag = temp
                isbd = iubd
            if subd > 0.5:
                if abs(vlag) < 0.25:
                    step = 0.5
                    vlag = 0.25
                    isbd = 0
            vlag *= dderiv
        temp = step * (1.0 - step) * distsq
        predsq = vlag * vlag * (vlag * vlag + ha * temp * temp)
        if predsq > presav:
            presav = predsq
            ksav = k
            stpsav = step
            ibdsav = isbd
    temp = xopt + stpsav * (xpt[ksav] - xopt)
    xnew = max(sl, min(su, temp))
    if ibdsav < 0:
        xnew = sl
    if ibdsav > 0:
        xnew = su
    bigstp = adelt + adelt
    iflag = 0
    csave = 0.0
    xalt_save = 0.0
    while True:  # L100
        wfixsq = 0.0
        ggfree = 0.0
        w = 0.0
        tempa = min(xopt - sl, glag)
        tempb = max(xopt - su, glag)
        if tempa > 0.0 or tempb < 0.0:
            w = bigstp
            ggfree += glag * glag
        if ggfree == 0.0:
            return xnew, 0.0, alpha, 0.0  # cauchy = 0; XALT not set (unused then)
        while True:  # L120
            temp = adelt * adelt - wfixsq
            if temp > 0.0:
                wsqsav = wfixsq
                step = math.sqrt(temp / ggfree)
                ggfree = 0.0
                if w == bigstp:
                    temp = xopt - step * glag
                    if temp <= sl:
                        w = sl - xopt
                        wfixsq += w * w
                    elif temp >= su:
                        w = su - xopt
                        wfixsq += w * w
                    else:
                        ggfree += glag * glag
                if wfixsq > wsqsav and ggfree > 0.0:
                    continue
            break
        gw = 0.0
        if w == bigstp:
            w = -step * glag
            xalt = max(sl, min(su, xopt + w))
        elif w == 0.0:
            xalt = xopt
        elif glag > 0.0:
            xalt = sl
        else:
            xalt = su
        gw += glag * w
        curv = 0.0
        for k in (1, 2, 3):
            temp = xpt[k] * w
            curv += hcol[k] * temp * temp
        if iflag == 1:
            curv = -curv
        if curv > -gw and curv < -const * gw:
            scale = -gw / curv
            temp = xopt + scale * w
            xalt = max(sl, min(su, temp))
            cauchy = (0.5 * gw * scale) * (0.5 * gw * scale)
        else:
            cauchy = (gw + 0.5 * curv) * (gw + 0.5 * curv)
        if iflag == 0:
            glag = -glag
            xalt_save = xalt
            csave = cauchy
            iflag = 1
            continue
        if csave > cauchy:
            xalt = xalt_save
            cauchy = csave
        return xnew, xalt, alpha, cauchy


def _update(bmat, zmat, vlag, beta, denom, knew):
    """NLopt's update_ for one variable (NPT = 3, one column of ZMAT: no rotations)."""
    w = [0.0] * 5
    for i in (1, 2, 3):
        w[i] = zmat[knew] * zmat[i]
    alpha = w[knew]
    tau = vlag[knew]
    vlag[knew] -= 1.0
    temp = math.sqrt(denom)
    tempb = zmat[knew] / temp
    tempa = tau / temp
    for i in (1, 2, 3):
        zmat[i] = tempa * zmat[i] - tempb * vlag[i]
    w[4] = bmat[knew]
    tempa = (alpha * vlag[4] - tau * w[4]) / denom
    tempb = (-beta * w[4] - tau * vlag[4]) / denom
    for i in (1, 2, 3, 4):
        bmat[i] = bmat[i] + tempa * vlag[i] + tempb * w[i]


def _replacement(zmat, vlag, beta, xpt, centre, delsq, skip=None):
    """BOBYQA's choice of the interpolation point to replace (the same loop at
    its two places in NLopt's bobyqb): the point k (other than ``skip``) with
    the largest ``max(1, (|x_k - centre|^2 / delsq)^2) * (beta H_kk + vlag_k^2)``.
    Returns ``(knew, denom, scaden, biglsq)``: the point (0 if none), its
    denominator, that largest product and the largest ``weight * vlag_k^2``."""
    scaden = biglsq = denom = 0.0
    knew = 0
    for k in (1, 2, 3):
        if k == skip:
            continue
        den = beta * (zmat[k] * zmat[k]) + vlag[k] * vlag[k]
        distsq = (xpt[k] - centre) * (xpt[k] - centre)
        temp = max(1.0, (distsq / delsq) * (distsq / delsq))
        if temp * den > scaden:
            scaden, knew, denom = temp * den, k, den
        biglsq = max(biglsq, temp * (vlag[k] * vlag[k]))
    return knew, denom, scaden, biglsq


def _bobyqa(fun, x0: float, rhobeg: float, rhoend: float, ftol_abs: float, lower: float = 0.0,
            upper: float = math.inf, maxeval: int = 100000) -> tuple[float, float, int, int]:
    """NLopt 2.7.1's BOBYQA (``bobyqa()`` and ``bobyqb_``) for one variable (NPT = 3),
    statement by statement; the two-variable parts (rotations in UPDATE, the
    alternative iterations of TRSBOX) drop out. Returns x, f(x), the number of
    evaluations and NLopt's status. Raises :class:`_Rescue` where BOBYQA would call
    RESCUE (not ported). The arrays are 1-based as in the C code (index 0 unused),
    XPT, BMAT and ZMAT reduced to their single column; the labels are the C code's."""
    xl, xu = lower, upper
    x = x0
    # bobyqa(): the bounds relative to x, moving x off a bound closer than rhobeg
    temp = xu - xl
    if temp < rhobeg + rhobeg:
        raise ValueError("insufficient space between the bounds")
    sl = xl - x
    su = xu - x
    if sl >= -rhobeg:
        if sl >= 0.0:
            x = xl
            sl = 0.0
            su = temp
        else:
            x = xl + rhobeg
            sl = -rhobeg
            su = max(xu - x, rhobeg)
    elif su <= rhobeg:
        if su <= 0.0:
            x = xu
            sl = -temp
            su = 0.0
        else:
            x = xu - rhobeg
            sl = min(xl - x, -rhobeg)
            su = rhobeg
    nevals = 0

    def clamp(xb, xv):
        v = min(max(xl, xb + xv), xu)
        if xv == sl:
            v = xl
        if xv == su:
            v = xu
        return v

    # prelim_
    npt = 3
    rhosq = rhobeg * rhobeg
    xbase = x
    xpt = [0.0, 0.0, 0.0, 0.0]
    fval = [0.0, 0.0, 0.0, 0.0]
    bmat = [0.0, 0.0, 0.0, 0.0, 0.0]
    zmat = [0.0, 0.0, 0.0, 0.0]
    pq = [0.0, 0.0, 0.0, 0.0]
    hq = 0.0
    gopt = 0.0
    stepa = stepb = 0.0
    fbeg = 0.0
    kopt = 1
    for nf in (1, 2, 3):
        nfm = nf - 1
        if nfm == 1:
            stepa = rhobeg
            if su == 0.0:
                stepa = -stepa
            xpt[nf] = stepa
        elif nfm == 2:
            stepa = xpt[2]
            stepb = -rhobeg
            if sl == 0.0:
                stepb = min(2.0 * rhobeg, su)
            if su == 0.0:
                stepb = max(-2.0 * rhobeg, sl)
            xpt[nf] = stepb
        xv = clamp(xbase, xpt[nf])
        nevals += 1
        f = fun(xv)
        fval[nf] = f
        if nf == 1:
            fbeg = f
            kopt = 1
        elif f < fval[kopt]:
            kopt = nf
        if nf == 2:
            gopt = (f - fbeg) / stepa
        elif nf == 3:
            temp = (f - fbeg) / stepb
            diff = stepb - stepa
            hq = 2.0 * (temp - gopt) / diff
            gopt = (gopt * stepb - temp * stepa) / diff
            if stepa * stepb < 0.0:
                if f < fval[2]:
                    fval[3] = fval[2]
                    fval[2] = f
                    if kopt == 3:
                        kopt = 2
                    xpt[2] = stepb
                    xpt[3] = stepa
            bmat[1] = -(stepa + stepb) / (stepa * stepb)
            bmat[3] = -0.5 / xpt[2]
            bmat[2] = -bmat[1] - bmat[3]
            zmat[1] = math.sqrt(2.0) / (stepa * stepb)
            zmat[3] = math.sqrt(0.5) / rhosq
            zmat[2] = -zmat[1] - zmat[3]

    # bobyqb_
    xopt = xpt[kopt]
    xoptsq = xopt * xopt
    kbase = 1
    rho = rhobeg
    delta = rho
    nresc = nevals
    ntrits = 0
    diffa = diffb = diffc = 0.0
    itest = 0
    nfsav = nevals
    rc = _SUCCESS
    w = [0.0] * 7
    vlag = [0.0] * 5
    xnew = xalt = d = 0.0
    dsq = crvmin = gnew = 0.0
    dnorm = ratio = alpha = cauchy = beta = denom = 0.0
    adelt = distsq = 0.0
    knew = 0
    label = 20
    while True:
        if label == 20:
            if kopt != kbase:
                gopt += hq * xopt
                if nevals > npt:
                    for k in (1, 2, 3):
                        temp = xpt[k] * xopt
                        temp = pq[k] * temp
                        gopt += temp * xpt[k]
            label = 60
        if label == 60:
            xnew, d, gnew, dsq, crvmin = _trsbox(xpt, xopt, gopt, hq, pq, sl, su, delta)
            dnorm = min(delta, math.sqrt(dsq))
            if dnorm < 0.5 * rho:
                ntrits = -1
                distsq = (10.0 * rho) * (10.0 * rho)
                if nevals <= nfsav + 2:
                    label = 650
                    continue
                errbig = max(max(diffa, diffb), diffc)
                frhosq = rho * 0.125 * rho
                if crvmin > 0.0 and errbig > frhosq * crvmin:
                    label = 650
                    continue
                bdtol = errbig / rho
                bdtest = bdtol
                if xnew == sl:
                    bdtest = gnew
                if xnew == su:
                    bdtest = -gnew
                if bdtest < bdtol:
                    curv = hq
                    for k in (1, 2, 3):
                        curv += pq[k] * (xpt[k] * xpt[k])
                    bdtest += 0.5 * curv * rho
                    if bdtest < bdtol:
                        label = 650
                        continue
                label = 680
                continue
            ntrits += 1
            label = 90
        if label == 90:
            if dsq <= xoptsq * 0.001:
                fracsq = xoptsq * 0.25
                sumpq = 0.0
                for k in (1, 2, 3):
                    sumpq += pq[k]
                    s = -0.5 * xoptsq
                    s += xpt[k] * xopt
                    w[npt + k] = s
                    temp = fracsq - 0.5 * s
                    w[1] = bmat[k]
                    vlag[1] = s * xpt[k] + temp * xopt
                    bmat[4] = bmat[4] + w[1] * vlag[1] + vlag[1] * w[1]
                sumz = sumw = 0.0
                for k in (1, 2, 3):
                    sumz += zmat[k]
                    vlag[k] = w[npt + k] * zmat[k]
                    sumw += vlag[k]
                s = (fracsq * sumz - 0.5 * sumw) * xopt
                for k in (1, 2, 3):
                    s += vlag[k] * xpt[k]
                w[1] = s
                for k in (1, 2, 3):
                    bmat[k] += s * zmat[k]
                temp = w[1]
                bmat[4] += temp * w[1]
                w[1] = -0.5 * sumpq * xopt
                for k in (1, 2, 3):
                    w[1] += pq[k] * xpt[k]
                    xpt[k] -= xopt
                hq = hq + w[1] * xopt + xopt * w[1]
                xbase += xopt
                xnew -= xopt
                sl -= xopt
                su -= xopt
                xopt = 0.0
                xoptsq = 0.0
            label = 210 if ntrits == 0 else 230
        if label == 190:
            raise _Rescue()
        if label == 210:
            xnew, xalt, alpha, cauchy = _altmov(xpt, xopt, bmat, zmat, sl, su, kopt, knew, adelt)
            d = xnew - xopt
            label = 230
        if label == 230:
            for k in (1, 2, 3):
                suma = xpt[k] * d
                sumb = xpt[k] * xopt
                s = bmat[k] * d
                w[k] = suma * (0.5 * suma + sumb)
                vlag[k] = s
                w[npt + k] = suma
            beta = 0.0
            s = 0.0
            for k in (1, 2, 3):
                s += zmat[k] * w[k]
            beta -= s * s
            for k in (1, 2, 3):
                vlag[k] += s * zmat[k]
            dsq = d * d
            s = 0.0
            for k in (1, 2, 3):
                s += w[k] * bmat[k]
            bsum = s * d
            s += bmat[4] * d
            vlag[4] = s
            bsum += s * d
            dx = d * xopt
            beta = dx * dx + dsq * (xoptsq + dx + dx + 0.5 * dsq) + beta - bsum
            vlag[kopt] += 1.0
            if ntrits == 0:
                denom = vlag[knew] * vlag[knew] + alpha * beta
                if denom < cauchy and cauchy > 0.0:
                    xnew = xalt
                    d = xnew - xopt
                    cauchy = 0.0
                    continue  # label stays 230
                if denom <= 0.5 * (vlag[knew] * vlag[knew]):
                    if nevals > nresc:
                        raise _Rescue()
                    rc = _ROUNDOFF
                    label = 720
                    continue
            else:
                knew, denom, scaden, biglsq = _replacement(zmat, vlag, beta, xpt, xopt, delta * delta, kopt)
                if scaden <= 0.5 * biglsq:
                    if nevals > nresc:
                        raise _Rescue()
                    rc = _ROUNDOFF
                    label = 720
                    continue
            label = 360
        if label == 360:
            xv = clamp(xbase, xnew)
            if nevals >= maxeval:
                rc = _MAXEVAL
                label = 720
                continue
            nevals += 1
            f = fun(xv)
            if ntrits == -1:
                rc = _XTOL
                if f < fval[kopt]:
                    return xv, f, nevals, rc
                label = 720
                continue
            fopt = fval[kopt]
            vquad = d * gopt + hq * (0.5 * (d * d))
            for k in (1, 2, 3):
                vquad += 0.5 * pq[k] * (w[npt + k] * w[npt + k])
            diff = f - fopt - vquad
            diffc = diffb
            diffb = diffa
            diffa = abs(diff)
            if dnorm > rho:
                nfsav = nevals
            if ntrits > 0:
                if vquad >= 0.0:
                    rc = _ROUNDOFF
                    label = 720
                    continue
                ratio = (f - fopt) / vquad
                if ratio <= 0.1:
                    delta = min(0.5 * delta, dnorm)
                elif ratio <= 0.7:
                    delta = max(0.5 * delta, dnorm)
                else:
                    delta = max(0.5 * delta, dnorm + dnorm)
                if delta <= rho * 1.5:
                    delta = rho
                if f < fopt:
                    found = _replacement(zmat, vlag, beta, xpt, xnew, delta * delta)
                    if found[2] > 0.5 * found[3]:   # else keep the point chosen before the step
                        knew, denom = found[0], found[1]
            _update(bmat, zmat, vlag, beta, denom, knew)
            pqold = pq[knew]
            pq[knew] = 0.0
            temp = pqold * xpt[knew]
            hq += temp * xpt[knew]
            temp = diff * zmat[knew]
            for k in (1, 2, 3):
                pq[k] += temp * zmat[k]
            fval[knew] = f
            xpt[knew] = xnew
            w[1] = bmat[knew]
            for k in (1, 2, 3):
                suma = zmat[knew] * zmat[k]
                if math.isinf(suma):
                    rc = _ROUNDOFF
                    label = 720
                    break
                sumb = xpt[k] * xopt
                temp = suma * sumb
                w[1] += temp * xpt[k]
            if label == 720:
                continue
            gopt += diff * w[1]
            if f < fopt:
                kopt = knew
                xopt = xnew
                xoptsq = xopt * xopt
                gopt += hq * d
                for k in (1, 2, 3):
                    temp = xpt[k] * d
                    temp = pq[k] * temp
                    gopt += temp * xpt[k]
                if abs(f - fopt) < ftol_abs:
                    rc = _FTOL
                    label = 720
                    continue
            if ntrits > 0:
                for k in (1, 2, 3):
                    vlag[k] = fval[k] - fval[kopt]
                    w[k] = 0.0
                s = 0.0
                for k in (1, 2, 3):
                    s += zmat[k] * vlag[k]
                for k in (1, 2, 3):
                    w[k] += s * zmat[k]
                for k in (1, 2, 3):
                    s = xpt[k] * xopt
                    w[k + npt] = w[k]
                    w[k] = s * w[k]
                s = 0.0
                for k in (1, 2, 3):
                    s = s + bmat[k] * vlag[k] + xpt[k] * w[k]
                if xopt == sl:
                    gqsq = min(0.0, gopt) * min(0.0, gopt)
                    gisq = min(0.0, s) * min(0.0, s)
                elif xopt == su:
                    gqsq = max(0.0, gopt) * max(0.0, gopt)
                    gisq = max(0.0, s) * max(0.0, s)
                else:
                    gqsq = gopt * gopt
                    gisq = s * s
                vlag[npt + 1] = s
                itest += 1
                if gqsq < 10.0 * gisq:
                    itest = 0
                if itest >= 3:
                    gopt = vlag[npt + 1]
                    for i in (1, 2, 3):
                        pq[i] = w[npt + i]
                    hq = 0.0
                    itest = 0
            if ntrits == 0:
                label = 60
                continue
            if f <= fopt + 0.1 * vquad:
                label = 60
                continue
            distsq = max((2.0 * delta) * (2.0 * delta), (10.0 * rho) * (10.0 * rho))
            label = 650
        if label == 650:
            knew = 0
            for k in (1, 2, 3):
                s = (xpt[k] - xopt) * (xpt[k] - xopt)
                if s > distsq:
                    knew = k
                    distsq = s
            if knew > 0:
                dist = math.sqrt(distsq)
                if ntrits == -1:
                    delta = min(0.1 * delta, 0.5 * dist)
                    if delta <= rho * 1.5:
                        delta = rho
                ntrits = 0
                adelt = max(min(0.1 * dist, delta), rho)
                dsq = adelt * adelt
                label = 90
                continue
            if ntrits == -1:
                label = 680
            elif ratio > 0.0:
                label = 60
                continue
            elif max(delta, dnorm) > rho:
                label = 60
                continue
            else:
                label = 680
        if label == 680:
            if rho > rhoend:
                delta = 0.5 * rho
                ratio = rho / rhoend
                if ratio <= 16.0:
                    rho = rhoend
                elif ratio <= 250.0:
                    rho = math.sqrt(ratio) * rhoend
                else:
                    rho = 0.1 * rho
                delta = max(delta, rho)
                ntrits = 0
                nfsav = nevals
                label = 60
                continue
            if ntrits == -1:
                label = 360
                continue
            label = 720
        if label == 720:
            v = min(max(xl, xbase + xopt), xu)
            if xopt == sl:
                v = xl
            if xopt == su:
                v = xu
            return v, fval[kopt], nevals, rc


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
    return _bobyqa(fun, x0, rhobeg, rhoend, FTOL_ABS)


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
    except _Rescue:
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
    if status < 0 or status == _MAXEVAL:
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

"""Regression numerics shared by the model families, reproducing R 4.2.2.

* :func:`model_matrix` builds R's ``model.matrix(~ c1 + c2 + ...)``.
* :func:`lm_terms` gives the coefficient table of ``lm()``, with the classical
  (``summary.lm``), HC3 (``sandwich::vcovHC``) or clustered
  (``sandwich::vcovCL``) standard errors, tested as ``lmtest::coeftest`` does.
* :func:`ivreg_terms` gives ``AER::ivreg``'s two-stage least squares table and
  :func:`within_terms` ``plm``'s within (entity fixed effects) estimator.
* :func:`glm_terms` fits a binomial (logit) or Poisson (log) GLM by R's own
  IRLS (``stats::glm.fit``: same start, same steps, same stopping rule), so
  its estimates and Wald z are R's to rounding.
* :func:`glm_nb_terms` repeats ``MASS::glm.nb``: a Poisson start, then
  ``theta.ml`` and ``glm.fit`` alternated until R's stopping rule holds.

Each raises :class:`~taskfactory.errors.DataError` where R would warn or fail
(a collinear design, a perfect fit, an IRLS fit that does not converge,
fitted probabilities 0 or 1, separation, no overdispersion), since R's p-value
is then unreliable.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats
from scipy.linalg import lapack
from scipy.optimize import linprog
from scipy.special import digamma, gammaln, xlogy, zeta  # zeta(2, x) is trigamma(x)

from ..errors import DataError
from ..result import Term
from ._common import require_held, unit_scaled
from ._dist import norm_sf, t_sf

EPS = float(np.finfo(float).eps)  # .Machine$double.eps
LM_TOL = 1e-7  # lm()'s tolerance for a (nearly) collinear column
MAXIT, EPSILON = 25, 1e-8  # glm.control()
THETA_MAX = 1e6  # a larger theta means no overdispersion: glm.nb is a Poisson fit that has not converged


# --------------------------------------------------------------------------- design


def model_matrix(data: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, list[str]]:
    """R's ``model.matrix(~ c1 + c2 + ...)`` with the intercept.

    A numeric column enters as is; a text (object/string dtype) column as
    treatment-contrast dummies over its observed levels sorted in the C
    locale (Python's ``sorted()``), the first level the baseline, each dummy
    named column + level (``'sexmale'``). A categorical column keeps its
    category order and a boolean column enters as ``colTRUE``, as R's factor
    and logical columns do. Names: ``['(Intercept)', ...]``.
    """
    n = len(data)
    blocks, names = [np.ones((n, 1))], ["(Intercept)"]
    for col in columns:
        s = data[col]
        if s.isna().any():
            raise DataError(f"column '{col}' has missing values")
        if isinstance(s.dtype, pd.CategoricalDtype):
            present = set(s.astype(object))
            levels = [str(c) for c in s.cat.categories if c in present]
            labels = s.astype(object).map(str).to_numpy()
        elif pd.api.types.is_bool_dtype(s.dtype):
            labels = np.where(s.to_numpy(bool), "TRUE", "FALSE")
            levels = sorted(set(labels))
        elif pd.api.types.is_numeric_dtype(s.dtype):
            x = s.to_numpy(float)
            if not np.isfinite(x).all():
                raise DataError(f"column '{col}' has non-finite values")
            blocks.append(x[:, None])
            names.append(str(col))
            continue
        else:
            labels = None
            codes, uniques = pd.factorize(s, sort=False)
            text = [str(u) for u in uniques]
            levels = sorted(set(text))
            position = {lv: i for i, lv in enumerate(levels)}
            codes = np.array([position[t] for t in text], dtype=np.intp)[codes]
        if len(levels) < 2:
            raise DataError(f"column '{col}' has a single level, so it has no contrast")
        if labels is not None:
            codes = pd.Index(levels).get_indexer(labels)
        dummies = np.zeros((n, len(levels) - 1))
        rows = np.flatnonzero(codes > 0)
        dummies[rows, codes[rows] - 1] = 1.0
        blocks.append(dummies)
        names.extend(f"{col}{lv}" for lv in levels[1:])
    return np.hstack(blocks), names


def _design(y, X, names, offset=None) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None]:
    """Validate and convert ``y``, ``X`` (n x p), ``names`` and ``offset``;
    raise DataError for too few rows or a design lm() would find collinear."""
    y = np.asarray(y, dtype=float).ravel()
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    n, p = X.shape
    names = [str(nm) for nm in names]
    if len(y) != n or len(names) != p or p == 0:
        raise ValueError(f"y has {len(y)} values, X is {n} x {p}, names has {len(names)}")
    if not (np.isfinite(y).all() and np.isfinite(X).all()):
        raise DataError("the model data have missing or non-finite values")
    if offset is not None:
        offset = np.asarray(offset, dtype=float).ravel()
        if len(offset) != n:
            raise ValueError(f"offset has {len(offset)} values, the data {n}")
        if not np.isfinite(offset).all():
            raise DataError("the offset has missing or non-finite values")
    if n <= p:
        raise DataError(f"{n} rows cannot fit a model of {p} coefficients")
    r = _qr_r(X)
    norms = column_norms(X)
    bad = np.flatnonzero(~(np.abs(np.diag(r)) >= LM_TOL * norms) | (norms == 0.0))
    if len(bad):
        raise DataError(f"term '{names[bad[0]]}' is collinear with the terms before it (R gives NA)")
    return y, X, names, offset


def column_norms(X: np.ndarray) -> np.ndarray:
    """The Euclidean norm of each column of ``X``, as LAPACK's ``dnrm2`` (R's
    QR) gets it: without overflow or underflow, whatever the column's scale
    (:func:`~taskfactory.methods._common.unit_scaled`)."""
    scaled, e = unit_scaled(X, axis=0)
    return np.ldexp(np.sqrt(np.einsum("ij,ij->j", scaled, scaled)), e)


def group_codes(labels, n: int, what: str = "cluster") -> tuple[np.ndarray, int]:
    """The labels of ``n`` rows (clusters, units) as codes 0 .. G - 1 in order of
    appearance, and G; DataError when a label is missing."""
    labels = labels.to_numpy() if isinstance(labels, pd.Series) else np.asarray(labels, dtype=object).ravel()
    if len(labels) != n:
        raise ValueError(f"{what} has {len(labels)} values, the data {n}")
    if pd.isna(labels).any():
        raise DataError(f"the {what} variable has missing values")
    codes, uniques = pd.factorize(labels)
    return codes, len(uniques)


def _qr_r(A: np.ndarray) -> np.ndarray:
    """The R of a Householder QR of ``A`` (LAPACK dgeqrf, as R's dqrls computes
    it, unpivoted; the signs of its rows may differ) in the upper triangle of
    the square returned, whose strict lower triangle is to be ignored."""
    qr, _tau, _work, info = lapack.dgeqrf(A)
    if info != 0:
        raise DataError("the QR decomposition failed")
    k = min(A.shape)
    return qr[:k, :k]


def _tri_inv(r: np.ndarray) -> np.ndarray:
    """Inverse of the upper-triangular matrix in the upper triangle of ``r``."""
    inv, info = lapack.dtrtri(r, lower=0)
    if info != 0:
        raise DataError("the model matrix is singular")
    return np.triu(inv)


# --------------------------------------------------------------------------- lm


def lm_terms(y, X, names, vcov: str = "classical", cluster=None) -> list[Term]:
    """The coefficient table of ``lm(y ~ X)``: estimate, SE, t and p on the residual df n - p.

    ``vcov``: ``"classical"`` gives ``summary(lm())``; ``"HC3"`` gives
    ``lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))``;
    ``"CL"`` gives ``lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~cluster))``
    with sandwich's defaults for an lm (type HC1, ``cadjust = TRUE``): the
    cluster sums of x_i e_i give the meat, scaled by G/(G - 1) and (n - 1)/(n - p).
    coeftest tests t on the residual df of the lm in all three cases.
    """
    y, X, names, _ = _design(y, X, names)
    n, p = X.shape
    df = n - p
    r_aug = _qr_r(np.column_stack([X, y]))
    r = r_aug[:p, :p]
    rinv = _tri_inv(r)
    beta = rinv @ r_aug[:p, p]
    fitted = X @ beta
    resid = y - fitted
    rss = float(resid @ resid)
    resvar = rss / df
    # summary.lm's warning "essentially perfect fit: summary may be unreliable"
    if resvar < (fitted.mean() ** 2 + fitted.var(ddof=1)) * 1e-30:
        raise DataError("the model fits the data perfectly, so its tests are unreliable")
    if vcov == "classical":
        cov = (rinv @ rinv.T) * resvar
    elif vcov in ("HC3", "CL"):
        q = X @ rinv  # the Q of X = QR: X'X^-1 X' D X X'X^-1 = R^-1 (Q' D Q) R^-T
        if vcov == "HC3":
            h = np.einsum("ij,ij->i", q, q)
            if (h > 1.0 - math.sqrt(EPS)).any():
                raise DataError("an observation has leverage 1, so HC3 standard errors are undefined")
            u = q * (resid / (1.0 - h))[:, None]
            meat = u.T @ u
        else:
            if cluster is None:
                raise ValueError("vcov 'CL' needs cluster")
            codes, g = group_codes(cluster, n)
            if g < 2:
                raise DataError("clustered standard errors need at least 2 clusters")
            ef = q * resid[:, None]
            sums = np.empty((g, p))
            for j in range(p):
                sums[:, j] = np.bincount(codes, weights=ef[:, j], minlength=g)
            meat = (sums.T @ sums) * (g / (g - 1.0)) * ((n - 1.0) / (n - p))
        cov = rinv @ meat @ rinv.T
        require_held(np.diag(cov), names)   # sandwich's bread mixes every coefficient's scale into each
    else:
        raise ValueError(f"vcov ({vcov!r}) must be 'classical', 'HC3' or 'CL'")
    se = np.sqrt(np.diag(cov))
    t = beta / se
    pv = 2.0 * t_sf(np.abs(t), df)
    return [Term(nm, float(b), float(s), float(tt), float(pp), float(df))
            for nm, b, s, tt, pp in zip(names, beta, se, t, pv)]


def ivreg_terms(y, X, names, Z) -> list[Term]:
    """``summary(AER::ivreg(y ~ X | Z))$coefficients``: two-stage least squares,
    the coefficients of ``y`` on the projection of ``X`` onto the instruments'
    space (``Z``, the exogenous columns of ``X`` included, intercept first), the
    classical standard errors from the residuals y - X b over n - p degrees of
    freedom, t tests on n - p df. Raises DataError when the instruments cannot
    identify the model (fewer columns than ``X`` or collinear)."""
    y, X, names, _ = _design(y, X, names)
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or Z.shape[0] != len(y):
        raise ValueError(f"Z is {Z.shape}, the data have {len(y)} rows")
    n, p = X.shape
    if Z.shape[1] < p:
        raise DataError(f"{Z.shape[1]} instruments cannot identify {p} coefficients")
    _design(y, Z, [f"z{j}" for j in range(Z.shape[1])])  # collinear instruments
    fitted = Z @ np.linalg.lstsq(Z, X, rcond=None)[0]  # the first stage: X projected onto Z
    _design(y, fitted, names)  # instruments too weak to separate the regressors
    r = _qr_r(fitted)
    rinv = _tri_inv(r[:p, :p])
    beta = np.linalg.lstsq(fitted, y, rcond=None)[0]
    resid = y - X @ beta
    df = n - p
    se = np.sqrt(np.diag(rinv @ rinv.T) * float(resid @ resid) / df)
    t = beta / se
    pv = 2.0 * t_sf(np.abs(t), df)
    return [Term(nm, float(b), float(s), float(tt), float(pp), float(df))
            for nm, b, s, tt, pp in zip(names, beta, se, t, pv)]


def within_terms(y, X, names, unit) -> list[Term]:
    """``summary(plm::plm(y ~ X, index = c("unit", "period"), model = "within"))$coefficients``:
    the within (entity fixed effects) estimator, each column of ``y`` and ``X``
    less its unit mean, least squares on those deviations, classical standard
    errors on n - units - p degrees of freedom (X without an intercept; a
    column constant within every unit is collinear with the unit effects)."""
    y = np.asarray(y, dtype=float).ravel()
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    n, p = X.shape
    codes, g = group_codes(unit, n, "unit")
    counts = np.bincount(codes, minlength=g).astype(float)
    block = np.column_stack([y, X])
    means = np.stack([np.bincount(codes, weights=block[:, j], minlength=g) for j in range(p + 1)], axis=1) / counts[:, None]
    centred = block - means[codes]
    df = n - g - p
    if df <= 0:
        raise DataError(f"{n} rows in {g} units cannot fit {p} coefficients beside the unit effects")
    yc, Xc, names, _ = _design(centred[:, 0], centred[:, 1:], names)
    r_aug = _qr_r(np.column_stack([Xc, yc]))
    rinv = _tri_inv(r_aug[:p, :p])
    beta = rinv @ r_aug[:p, p]
    resid = yc - Xc @ beta
    se = np.sqrt(np.diag(rinv @ rinv.T) * float(resid @ resid) / df)
    t = beta / se
    pv = 2.0 * t_sf(np.abs(t), df)
    return [Term(nm, float(b), float(s), float(tt), float(pp), float(df))
            for nm, b, s, tt, pp in zip(names, beta, se, t, pv)]


# --------------------------------------------------------------------------- glm families


class _Binomial:
    """R's ``binomial()`` (logit link) for 0/1 responses, with its C link code."""

    name = "binomial"

    @staticmethod
    def linkfun(mu):
        return np.log(mu / (1.0 - mu))

    @staticmethod
    def linkinv(eta):
        # logit_linkinv: exp(eta), clamped at eta = -30 / 30 to eps / 1/eps
        tmp = np.where(eta < -30.0, EPS, np.where(eta > 30.0, 1.0 / EPS, np.exp(eta)))
        return tmp / (1.0 + tmp)

    @staticmethod
    def mu_eta(eta, mu):
        e = np.exp(eta)
        return np.where(np.abs(eta) > 30.0, EPS, e / (1.0 + e) ** 2)

    @staticmethod
    def variance(mu):
        return mu * (1.0 - mu)

    @staticmethod
    def deviance(y, mu):
        return float(-2.0 * np.log(np.where(y > 0.5, mu, 1.0 - mu)).sum())

    @staticmethod
    def mustart(y):
        return (y + 0.5) / 2.0

    @staticmethod
    def validmu(mu):
        return bool(np.isfinite(mu).all() and ((mu > 0.0) & (mu < 1.0)).all())


class _Log:
    """R's ``make.link("log")``, shared by the Poisson and negative binomial families."""

    @staticmethod
    def linkfun(mu):
        return np.log(mu)

    @staticmethod
    def linkinv(eta):
        return np.maximum(np.exp(eta), EPS)

    @staticmethod
    def mu_eta(eta, mu):
        return mu  # pmax(exp(eta), eps), which is linkinv(eta)


class _Poisson(_Log):
    """R's ``poisson()`` (log link)."""

    name = "poisson"

    @staticmethod
    def variance(mu):
        return mu

    @staticmethod
    def deviance(y, mu):
        # y log(y/mu) - (y - mu), which is mu where y = 0
        return float(2.0 * (xlogy(y, y / mu) - (y - mu)).sum())

    @staticmethod
    def mustart(y):
        return y + 0.1

    @staticmethod
    def validmu(mu):
        return bool(np.isfinite(mu).all() and (mu > 0.0).all())


class _NegBin(_Log):
    """``MASS::negative.binomial(theta)`` (log link)."""

    name = "negative binomial"

    def __init__(self, theta: float):
        self.theta = theta

    def variance(self, mu):
        return mu + mu**2 / self.theta

    def deviance(self, y, mu):
        th = self.theta
        return float(2.0 * (y * np.log(np.maximum(1.0, y) / mu) - (y + th) * np.log((y + th) / (mu + th))).sum())

    @staticmethod
    def mustart(y):
        return y + (y == 0) / 6.0

    @staticmethod
    def validmu(mu):
        return bool((mu > 0.0).all())


class _Fit:
    """What :func:`_glm_fit` returns, as R's ``glm.fit`` list holds it."""

    __slots__ = ("coef", "rinv", "mu", "eta", "deviance", "iter", "converged", "boundary")

    def __init__(self, coef, rinv, mu, eta, deviance, iter, converged, boundary):
        self.coef, self.rinv, self.mu, self.eta = coef, rinv, mu, eta
        self.deviance, self.iter, self.converged, self.boundary = deviance, iter, converged, boundary


def _glm_fit(X, y, family, offset, eta=None, mustart=None) -> _Fit:
    """:func:`_irls` with numpy's floating-point warnings off (R lets exp()
    overflow to Inf and then halves the step)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _irls(X, y, family, offset, eta, mustart)


def _irls(X, y, family, offset, eta=None, mustart=None) -> _Fit:
    """``stats::glm.fit`` with ``glm.control()`` (maxit 25, epsilon 1e-8): IRLS from
    ``etastart`` (``eta``) or from the family's ``mustart``, each step a QR
    least-squares solve, stopping when |dev - devold| / (0.1 + |dev|) < 1e-8,
    halving the step as R does when the deviance is not finite. ``rinv`` is the
    inverse R factor of the last step's weighted QR, whence summary.glm's SEs."""
    n, p = X.shape
    if eta is None:
        eta = family.linkfun(family.mustart(y) if mustart is None else mustart)
    mu = family.linkinv(eta)
    if not family.validmu(mu):
        raise DataError("glm.fit cannot find valid starting values")
    devold = family.deviance(y, mu)
    aug = np.empty((n, p + 1), order="F")
    coef = coefold = None
    r = None
    conv = boundary = False
    for it in range(1, MAXIT + 1):
        mu_eta = family.mu_eta(eta, mu)
        var = family.variance(mu)
        if not np.isfinite(var).all() or (var == 0.0).any():
            raise DataError("glm.fit met a variance of 0 or NA")
        w = np.sqrt(mu_eta**2 / var)
        aug[:, :p] = X * w[:, None]
        aug[:, p] = ((eta - offset) + (y - mu) / mu_eta) * w
        r_aug = _qr_r(aug)
        r = r_aug[:p, :p]
        start, info = lapack.dtrtrs(r, r_aug[:p, p])
        if info != 0 or not np.isfinite(start).all():
            raise DataError(f"glm.fit: non-finite coefficients at iteration {it}")
        eta = X @ start + offset
        mu = family.linkinv(eta)
        dev = family.deviance(y, mu)
        if not math.isfinite(dev) or not family.validmu(mu):
            if coefold is None:
                raise DataError("glm.fit found no valid set of coefficients")
            for _ in range(MAXIT):
                start = (start + coefold) / 2.0
                eta = X @ start + offset
                mu = family.linkinv(eta)
                dev = family.deviance(y, mu)
                if math.isfinite(dev) and family.validmu(mu):
                    break
            else:
                raise DataError("glm.fit cannot correct its step size")
            boundary = True
        if abs(dev - devold) / (0.1 + abs(dev)) < EPSILON:
            conv, coef = True, start
            break
        devold = dev
        coef = coefold = start
    return _Fit(coef, _tri_inv(r), mu, eta, dev, it, conv, boundary)


def _warnings(fit: _Fit, family, what: str = "glm.fit") -> None:
    """Raise DataError where R's glm.fit warns."""
    if not fit.converged:
        raise DataError(f"{what}: algorithm did not converge")
    if fit.boundary:
        raise DataError(f"{what}: algorithm stopped at boundary value")
    eps = 10.0 * EPS
    if family.name == "binomial" and ((fit.mu > 1.0 - eps).any() or (fit.mu < eps).any()):
        raise DataError(f"{what}: fitted probabilities numerically 0 or 1 occurred")
    if family.name == "poisson" and (fit.mu < eps).any():
        raise DataError(f"{what}: fitted rates numerically 0 occurred")


def _separated(X, y, family) -> bool:
    """Whether the maximum likelihood estimate does not exist (R's estimate is then a
    point on the way to infinity, with a huge SE): for the binomial, (quasi-)complete
    separation, some b != 0 with (2y - 1) x'b >= 0 for all rows; for counts, some
    b with x'b = 0 where y > 0 and x'b <= 0 where y = 0, not all 0. Decided by a
    linear programme (Konis 2007) on the columns scaled to max |x| = 1."""
    scale = np.abs(X).max(axis=0)
    Xs = X / np.where(scale > 0.0, scale, 1.0)
    p = X.shape[1]
    bounds = [(-1.0, 1.0)] * p
    if family.name == "binomial":
        a = Xs * (2.0 * y - 1.0)[:, None]
        res = linprog(-a.sum(axis=0), A_ub=-a, b_ub=np.zeros(len(y)), bounds=bounds, method="highs")
        margins = a @ res.x if res.status == 0 else None
    else:
        zero = y == 0
        if not zero.any():
            return False
        pos = Xs[~zero]
        if len(pos) >= p:
            d = np.abs(np.diag(_qr_r(pos)))
            if (d > 1e-9 * np.sqrt(np.einsum("ij,ij->j", pos, pos))).all():
                return False  # x'b = 0 on the positive rows forces b = 0
        a = -Xs[zero]
        res = linprog(-a.sum(axis=0), A_ub=-a, b_ub=np.zeros(len(a)),
                      A_eq=pos if len(pos) else None, b_eq=np.zeros(len(pos)) if len(pos) else None,
                      bounds=bounds, method="highs")
        if res.status != 0:
            return False
        if len(pos) and np.abs(pos @ res.x).max() > 1e-9:
            return False
        margins = a @ res.x
    return margins is not None and margins.max() > 1e-6 and margins.min() > -1e-9


def _check_fit(X, y, fit: _Fit, family) -> None:
    """R's warnings, then separation when the fit looks like it (many iterations,
    or a fitted value close to its bound)."""
    _warnings(fit, family)
    if family.name == "binomial":
        near = min(float(fit.mu.min()), float(1.0 - fit.mu.max())) < 1e-4
    else:
        near = bool((y == 0).any())  # the rank test in _separated is cheap
    if (near or fit.iter >= 10) and _separated(X, y, family):
        kind = "separation" if family.name == "binomial" else "a direction in which every count is 0"
        raise DataError(f"the data show {kind}, so the estimates are infinite")


def _z_terms(names, coef, rinv) -> list[Term]:
    """Wald z rows with dispersion 1, as summary.glm prints them."""
    se = np.sqrt(np.einsum("ij,ij->i", rinv, rinv))
    z = coef / se
    pv = 2.0 * norm_sf(np.abs(z))
    return [Term(nm, float(b), float(s), float(zz), float(pp), None)
            for nm, b, s, zz, pp in zip(names, coef, se, z, pv)]


def _intercept(names) -> int | None:
    return names.index("(Intercept)") if "(Intercept)" in names else None


def glm_terms(y, X, names, family: str, offset=None) -> tuple[list[Term], dict]:
    """``summary(glm(y ~ X, family = binomial | poisson, offset = offset))$coefficients``:
    Wald z and normal p (dispersion 1), fitted by R's IRLS (``glm.fit``, from
    R's ``mustart``, with R's stopping rule, so the numbers are R's).

    Raises DataError where R warns (``algorithm did not converge`` within 25
    iterations, ``algorithm stopped at boundary value``, ``fitted probabilities
    numerically 0 or 1 occurred`` (any mu > 1 - 10 eps or < 10 eps),
    ``fitted rates numerically 0 occurred``), and on (quasi-)separation or
    its Poisson analogue, where R reports a finite but meaningless estimate.
    ``y`` is 0/1 for the binomial, counts for the Poisson. The dict holds
    ``deviance``, ``null_deviance``, ``df_residual``, ``df_null``, ``aic`` and
    ``iterations`` (glm's ``iter``).
    """
    y, X, names, offset = _design(y, X, names, offset)
    n, p = X.shape
    if family == "binomial":
        fam = _Binomial()
        if not np.isin(y, (0.0, 1.0)).all():
            raise DataError("a binomial outcome must be 0 or 1")
    elif family == "poisson":
        fam = _Poisson()
        if (y < 0).any() or (y != np.round(y)).any():
            raise DataError("a Poisson outcome must be counts (whole numbers >= 0)")
    else:
        raise ValueError(f"family ({family!r}) must be 'binomial' or 'poisson'")
    if len(np.unique(y)) < 2:
        raise DataError("the outcome takes a single value")
    off = np.zeros(n) if offset is None else offset
    fit = _glm_fit(X, y, fam, off)
    _check_fit(X, y, fit, fam)
    icol = _intercept(names)
    if offset is not None and icol is not None:
        null = _glm_fit(X[:, [icol]], y, fam, off, mustart=fit.mu)
        _warnings(null, fam, "the null model's glm.fit")
        null_dev = null.deviance
    else:
        wtdmu = np.full(n, y.mean()) if icol is not None else fam.linkinv(off)
        null_dev = fam.deviance(y, wtdmu)
    if fam.name == "binomial":
        aic = fit.deviance + 2.0 * p
    else:
        aic = float(-2.0 * np.sum(stats.poisson.logpmf(y, fit.mu))) + 2.0 * p
    info = {"deviance": fit.deviance, "null_deviance": null_dev, "df_residual": n - p,
            "df_null": n - (icol is not None), "aic": aic, "iterations": fit.iter}
    return _z_terms(names, fit.coef, fit.rinv), info


# --------------------------------------------------------------------------- glm.nb


class _Counts:
    """A count vector with its distinct values, so that the sums of digamma,
    trigamma and lgamma over theta + y cost one call per distinct count."""

    def __init__(self, y: np.ndarray):
        self.y = y
        self.n = float(len(y))
        self.values, self.counts = np.unique(y, return_counts=True)
        self.counts = self.counts.astype(float)
        self.lgamma_y1 = float(self.counts @ gammaln(self.values + 1.0))
        self.zero = (y == 0).astype(float)

    def loglik(self, th: float, mu: np.ndarray) -> float:
        """glm.nb's ``loglik``: the negative binomial log-likelihood."""
        # th log(th) - (th + y) log(th + mu) = -th log1p(mu/th) - y log(th + mu)
        y = self.y
        return float(self.counts @ (gammaln(th + self.values) - gammaln(th)) - self.lgamma_y1
                     - th * np.log1p(mu / th).sum() + y @ (np.log(mu + self.zero) - np.log(th + mu)))


def _theta_ml(c: _Counts, mu: np.ndarray, limit: int = MAXIT) -> tuple[float, float, str | None]:
    """``MASS::theta.ml``: Newton's method on the score of theta from the moment
    start n / sum((y/mu - 1)^2), at most ``limit`` - 1 steps, stopping when a
    step is below eps^(1/4). Returns theta, its SE and R's warning, if any."""
    y, n = c.y, c.n
    eps = EPS**0.25
    t0 = n / float(np.sum((y / mu - 1.0) ** 2))
    it, delta, info = 0, 1.0, math.nan
    while True:
        it += 1
        if not (it < limit and abs(delta) > eps):
            break
        t0 = abs(t0)
        if not math.isfinite(t0):
            break
        # R's per-row terms, regrouped so that no large sums cancel:
        # log(th) + 1 - log(th + mu) - (y + th)/(mu + th) = -log1p(mu/th) + (mu - y)/(mu + th), and
        # -1/th + 2/(mu + th) - (y + th)/(mu + th)^2 = -(mu^2 + th y) / (th (mu + th)^2)
        tm = t0 + mu
        score = (c.counts @ (digamma(t0 + c.values) - digamma(t0)) - np.log1p(mu / t0).sum()
                 + ((mu - y) / tm).sum())
        info = (c.counts @ (zeta(2.0, t0) - zeta(2.0, t0 + c.values))
                - ((mu * mu + t0 * y) / (t0 * tm * tm)).sum())
        delta = float(score / info)
        t0 = t0 + delta
    warn = None
    if t0 < 0:
        t0, warn = 0.0, "estimate truncated at zero"
    if it == limit:
        warn = "iteration limit reached"
    return t0, math.sqrt(1.0 / info) if info > 0 else math.nan, warn


def glm_nb_terms(y, X, names, offset=None) -> tuple[list[Term], dict]:
    """``summary(MASS::glm.nb(y ~ X))$coefficients`` (``+ offset(offset)`` when given):
    Wald z and normal p, with theta estimated by maximum likelihood.

    As glm.nb does: a Poisson glm.fit, ``theta.ml`` on its fitted means, then
    up to 25 alternations of a negative binomial glm.fit (from the last fitted
    means) and theta.ml (on the means before that fit, as MASS has it) until
    |Lm0 - Lm| / d1 + |dtheta| < 1e-8. Raises DataError where glm.nb warns
    (theta.ml's ``iteration limit reached`` or ``estimate truncated at zero``,
    ``alternation limit reached``, a glm.fit warning), when theta exceeds 1e6
    (no overdispersion: theta heads to infinity), and when some direction
    holds only zero counts. The dict holds ``theta``, ``se_theta``,
    ``twologlik``, ``iterations`` (alternations), ``glm_iterations`` (the last
    glm.fit's), ``deviance``, ``null_deviance``, ``df_residual`` and ``aic``.
    """
    y, X, names, offset = _design(y, X, names, offset)
    n, p = X.shape
    if (y < 0).any() or (y != np.round(y)).any():
        raise DataError("a negative binomial outcome must be counts (whole numbers >= 0)")
    if len(np.unique(y)) < 2:
        raise DataError("the outcome takes a single value")
    off = np.zeros(n) if offset is None else offset
    c = _Counts(y)

    def theta_of(mu):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            th, se, warn = _theta_ml(c, mu)
        if warn is not None:
            raise DataError(f"theta.ml: {warn} (theta {th:.4g})")
        if not math.isfinite(th) or th > THETA_MAX:
            raise DataError(f"theta ({th:.4g}) heads to infinity: the counts show no overdispersion")
        if not math.isfinite(se):  # R: sqrt(1/i) warns "NaNs produced"
            raise DataError(f"theta.ml: the information about theta ({th:.4g}) is not positive")
        return th, se

    fit = _glm_fit(X, y, _Poisson(), off)
    _check_fit(X, y, fit, _Poisson())
    mu = fit.mu
    th, se_th = theta_of(mu)
    fam = _NegBin(th)
    d1 = math.sqrt(2.0 * max(1, n - p))
    d2 = delta = 1.0
    lm = c.loglik(th, mu)
    lm0 = lm + 2.0 * d1
    it, fit_fam = 0, fam
    while True:
        it += 1
        if not (it <= MAXIT and (abs(lm0 - lm) / d1 + abs(delta) / d2) > EPSILON):
            break
        fit = _glm_fit(X, y, fam, off, eta=np.log(mu))
        _warnings(fit, fam)
        fit_fam = fam
        t0 = th
        th, se_th = theta_of(mu)
        fam = _NegBin(th)
        mu = fit.mu
        delta = t0 - th
        lm0, lm = lm, c.loglik(th, mu)
    if it > MAXIT:
        raise DataError("glm.nb: alternation limit reached")
    icol = _intercept(names)
    if offset is not None and icol is not None:
        null = _glm_fit(X[:, [icol]], y, fam, off)
        _warnings(null, fam, "the null model's glm.fit")
        null_dev = null.deviance
    else:
        wtdmu = np.full(n, y.mean()) if icol is not None else fit_fam.linkinv(off)
        null_dev = fit_fam.deviance(y, wtdmu)
    info = {"theta": th, "se_theta": se_th, "twologlik": 2.0 * lm, "iterations": it - 1,
            "glm_iterations": fit.iter, "deviance": fit.deviance, "null_deviance": null_dev,
            "df_residual": n - p, "aic": -2.0 * lm + 2.0 * p + 2.0}
    return _z_terms(names, fit.coef, fit.rinv), info

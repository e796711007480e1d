"""What a look at a sample shows, for the guided prompts' hints.

The hints of sibling families come from the same function of the question
kind, computed on the analysed sample (complete cases), so they read the same
whichever sibling drew the data and differ only in the numbers. They describe
the sample (sizes, spreads, shape, far-out values, zeros, expected counts) and
never name a test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import grouped, numeric
from ._factor import factor_levels
from ._models import glm_terms, model_matrix


SKEW_RESOLUTION = 10 * np.finfo(float).resolution   # scipy.stats' bound below which the variance is 0


def _shape(x: np.ndarray) -> tuple[float, float, int]:
    """Sample skewness, excess kurtosis (moment estimators) and the count of
    values more than 3 SDs from the sample mean."""
    if len(x) < 3 or float(np.ptp(x)) == 0.0:
        return 0.0, 0.0, 0
    d = x - x.mean()
    far = int(np.sum(np.abs(d) > 3.0 * x.std(ddof=1)))
    squares = d**2   # the moments as scipy.stats.skew and kurtosis (bias=True) compute them, bit for bit
    m2, m3, m4 = squares.mean(), (squares * d).mean(), (squares**2).mean()
    if m2 <= (SKEW_RESOLUTION * x.mean()) ** 2:
        return float("nan"), float("nan"), far
    return float(m3 / m2**1.5), float(m4 / m2**2.0 - 3.0), far


def _num(x: float) -> str:
    return f"{x:.3g}"


def groups(data, outcome: str, group: str, cluster: str | None = None) -> list[str]:
    """Two or more independent groups: sizes, SDs, skewness, far-out values;
    with a cluster column, how many clusters and whether the group varies within them."""
    levels, parts = grouped(data, outcome, group, min_size=1)
    sds = [float(p.std(ddof=1)) if len(p) > 1 else 0.0 for p in parts]
    shapes = [_shape(p) for p in parts]
    sizes = ", ".join(f"{lv} {len(p)}" for lv, p in zip(levels, parts))
    spread = ", ".join(f"{lv} {_num(s)}" for lv, s in zip(levels, sds))
    ratio = f" (largest over smallest {max(sds) / min(sds):.2f})" if min(sds) > 0 else ""
    skew = ", ".join(f"{lv} {s[0]:.2f}" for lv, s in zip(levels, shapes))
    far = sum(s[2] for s in shapes)
    out = [
        f"Rows per group: {sizes}.",
        f"Sample SDs of '{outcome}' by group: {spread}{ratio}.",
        f"Sample skewness by group: {skew}; {far} value(s) lie more than 3 SDs from their group's mean.",
    ]
    if cluster is not None:
        out.insert(0, _clusters(data, cluster, group))
    return out


def _clusters(data, cluster: str, varying: str) -> str:
    """How many clusters, their row counts, and within how many ``varying`` varies."""
    sizes = data.groupby(cluster).size()
    within = int((data.groupby(cluster)[varying].nunique() > 1).sum())
    return (f"The {len(data)} rows fall in {len(sizes)} values of '{cluster}' ({sizes.min()} to {sizes.max()} "
            f"rows each); '{varying}' varies within {within} of them.")


def sample(data, outcome: str) -> list[str]:
    """One sample: its size and shape."""
    x = numeric(data, outcome)
    skew, kurt, far = _shape(x)
    return [f"'{outcome}' has {len(x)} values: sample skewness {skew:.2f}, excess kurtosis {kurt:.2f}; "
            f"{far} value(s) lie more than 3 SDs from the mean."]


def pairs(data, before: str, after: str) -> list[str]:
    """Paired measurements: the correlation of the pair, and the shape, centre
    and signs of the differences ``after - before``."""
    b, a = numeric(data, before), numeric(data, after)
    d = a - b
    skew, kurt, far = _shape(d)
    r = float(np.corrcoef(a, b)[0, 1]) if len(d) > 2 and a.std() > 0 and b.std() > 0 else float("nan")
    return [
        f"Each row holds both measurements of one unit; '{after}' and '{before}' correlate at r = {r:.2f}.",
        f"The {len(d)} differences '{after}' - '{before}': sample skewness {skew:.2f}, excess kurtosis "
        f"{kurt:.2f}; {far} lie more than 3 SDs from their mean; {int(np.sum(d == 0))} are exactly zero.",
        f"The differences' mean is {np.mean(d):.4g} and their median {np.median(d):.4g}; {int(np.sum(d > 0))} are "
        f"positive and {int(np.sum(d < 0))} negative.",
    ]


def association(data, x: str, y: str, period: str | None = None) -> list[str]:
    """Two numeric variables: the shape of each and, for a series (rows with
    a period), how each follows its previous value."""
    out = []
    for col in (x, y):
        skew, kurt, far = _shape(numeric(data, col))
        out.append(f"'{col}': sample skewness {skew:.2f}, excess kurtosis {kurt:.2f}; {far} value(s) lie more than "
                   "3 SDs from its mean.")
    if period is not None:
        order = np.argsort(numeric(data, period), kind="stable")
        r1 = [lag1_autocorrelation(numeric(data, col)[order]) for col in (x, y)]
        out.append(f"In the order of '{period}', '{x}' correlates with its previous value at {r1[0]:.2f} and "
                   f"'{y}' at {r1[1]:.2f} (lag-1 autocorrelation).")
    return out


def lag1_autocorrelation(values: np.ndarray) -> float:
    """The lag-1 autocorrelation of a series as R's ``acf`` gives it: the
    products of consecutive deviations from the mean over their squares."""
    d = values - values.mean()
    total = float(np.dot(d, d))
    return float(np.dot(d[1:], d[:-1]) / total) if total > 0 else 0.0


def proportion(data, outcome: str, positive: str, p0: float) -> list[str]:
    """A binary outcome against a stated rate: the count and what the rate expects."""
    y = data[outcome].astype(str).to_numpy()
    return [f"{int(np.sum(y == str(positive)))} of the {len(y)} rows have '{outcome}' = '{positive}'; the stated rate "
            f"{p0:g} would expect {len(y) * p0:.1f}."]


def shares(data, outcome: str, stated: dict) -> list[str]:
    """One categorical variable against stated shares: each level's count and
    the count the shares expect."""
    y = data[outcome].astype(str)
    counts = y.value_counts()
    parts = [f"'{level}' {int(counts.get(level, 0))} (the stated share expects {len(y) * share:.1f})"
             for level, share in stated.items()]
    return [f"The {len(y)} rows count " + ", ".join(parts) + "."]


def regression(data, roles: dict) -> list[str]:
    """An outcome regressed on an exposure and covariates: how the exposure
    goes with each covariate, how the spread of the adjusted fit's
    residuals changes from the lowest to the highest third of the exposure,
    and how many rows sit at the outcome's lowest value (a pile-up at 0)."""
    x = data[roles["exposure"]].to_numpy(dtype=float)
    out = _exposure_and_covariates(data, roles)
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    y = data[roles["outcome"]].to_numpy(dtype=float)
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    low, high = np.quantile(x, [1 / 3, 2 / 3])
    sd_low, sd_high = np.std(resid[x <= low], ddof=1), np.std(resid[x >= high], ddof=1)
    out.append(f"Residuals of the regression with the covariates: SD {sd_low:.3g} in the lowest third of "
               f"'{roles['exposure']}', {sd_high:.3g} in the highest third.")
    lowest = float(y.min())
    at_lowest = int(np.sum(y == lowest))
    out.append(f"'{roles['outcome']}' takes its lowest value, {lowest:g}, in {at_lowest} of {len(y)} rows "
               f"({100 * at_lowest / len(y):.1f} %).")
    return out


def _exposure_and_covariates(data, roles: dict) -> list[str]:
    """How the exposure goes with each covariate (an exposure of text, as
    real data may give: each covariate by its levels)."""
    exposure = roles["exposure"]
    if factor_levels(data[exposure]) is not None:
        return [_by_levels(data, name, exposure) for name in roles["covariates"]]
    x = data[exposure].to_numpy(dtype=float)
    out = []
    for name in roles["covariates"]:
        col = data[name]
        if pd.api.types.is_numeric_dtype(col):
            out.append(f"'{exposure}' and '{name}' correlate at r = {np.corrcoef(x, col.to_numpy(float))[0, 1]:.2f}.")
        else:
            means = data.groupby(name)[exposure].mean()
            out.append(f"Mean '{exposure}' by '{name}': " + ", ".join(f"{k} {v:.3g}" for k, v in means.items()) + ".")
    return out


def _by_levels(data, name: str, factor: str) -> str:
    """The mean of ``name`` (a number), or the share of its last level (text), at each level of ``factor``."""
    levels = data[factor].astype(str)
    col = data[name]
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        shown = ", ".join(f"{lv} {float(col[levels == lv].mean()):.4g}" for lv in sorted(set(levels)))
        return f"Mean '{name}' by '{factor}': {shown}."
    values = col.astype(str)
    top = sorted(set(values))[-1]
    shown = ", ".join(f"{lv} {100 * np.mean(values[levels == lv] == top):.0f} %" for lv in sorted(set(levels)))
    return f"Share of '{name}' = '{top}' by '{factor}': {shown}."


def binary_regression(data, roles: dict) -> list[str]:
    """A binary outcome regressed on an exposure and covariates: how common
    the outcome is overall and at either end of the exposure (at each of
    its levels, for an exposure of text)."""
    y = data[roles["outcome"]].astype(str).to_numpy() == str(roles["positive"])
    head = f"'{roles['outcome']}' is '{roles['positive']}' in {int(y.sum())} of {len(y)} rows ({100 * y.mean():.1f} %): "
    if factor_levels(data[roles["exposure"]]) is not None:
        levels = data[roles["exposure"]].astype(str).to_numpy()
        return [head + ", ".join(f"{100 * y[levels == lv].mean():.1f} % where '{roles['exposure']}' is {lv}"
                                 for lv in sorted(set(levels))) + "."] + _exposure_and_covariates(data, roles)
    x = data[roles["exposure"]].to_numpy(dtype=float)
    low, high = np.quantile(x, [1 / 3, 2 / 3])
    return [head + f"{100 * y[x <= low].mean():.1f} % in the lowest third of '{roles['exposure']}', "
            f"{100 * y[x >= high].mean():.1f} % in the highest."] + _exposure_and_covariates(data, roles)


def count_regression(data, roles: dict) -> list[str]:
    """A count outcome over an exposure time: its rate, and how much the counts
    scatter about the fitted values of a log-linear rate model, against the
    scatter of counts of independent events."""
    y = data[roles["outcome"]].to_numpy(dtype=float)
    time = roles.get("exposure_time")   # real data may have none: the model has no offset
    t = data[time].to_numpy(dtype=float) if time else np.ones(len(y))
    X, names = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    terms, _ = glm_terms(y, X, names, "poisson", offset=np.log(t) if time else None)
    fitted = np.exp(X @ np.array([term.estimate for term in terms]) + np.log(t))
    scatter = float(np.sum((y - fitted) ** 2 / fitted)) / (len(y) - len(terms))
    rate = f"{y.sum() / t.sum():.3g} per unit of '{time}' overall" if time else f"{y.mean():.3g} per row"
    model = f"'{roles['exposure']}', the covariates and '{time}'" if time else f"'{roles['exposure']}' and the covariates"
    return [f"'{roles['outcome']}': {int(y.sum())} in {len(y)} rows ({int((y == 0).sum())} zeros), {rate}.",
            f"About the fitted values of a log-linear rate model on {model}, the counts scatter {scatter:.2f} times as "
            "much as counts of independent events would."] + _exposure_and_covariates(data, roles)


def time_to_event(data, roles: dict) -> list[str]:
    """Times to an event, some censored, in two groups: the events and
    censored rows per group, the recorded times, and how the groups compare
    on each covariate (for a numeric exposure, as real data may give: its
    spread, the events and the times); with a cluster column, how many
    clusters and whether the group varies within them."""
    time = data[roles["time"]].to_numpy(dtype=float)
    event = data[roles["event"]].to_numpy(dtype=float) == 1
    column = data[roles["group"]]
    if pd.api.types.is_numeric_dtype(column) and column.nunique() > 2:
        x = column.to_numpy(dtype=float)
        return [f"'{roles['group']}' is a number from {x.min():.4g} to {x.max():.4g} (median {np.median(x):.4g}); "
                f"{int(event.sum())} events and {int((~event).sum())} censored rows among {len(time)}.",
                f"'{roles['time']}' runs from {time.min():.4g} to {time.max():.4g}."]
    group = column.astype(str).to_numpy()
    levels = sorted(set(group))
    parts = [f"{lv} {int(np.sum(group == lv))} rows, {int(np.sum(event & (group == lv)))} events, "
             f"{int(np.sum(~event & (group == lv)))} censored ({100 * np.mean(~event[group == lv]):.0f} %)"
             for lv in levels]
    out = [f"By '{roles['group']}': " + "; ".join(parts) + "."]
    if roles.get("cluster"):
        out.insert(0, _clusters(data, roles["cluster"], roles["group"]))
    censored = time[~event]
    follow = f"; the censored rows' median '{roles['time']}' is {float(np.median(censored)):.4g}" if len(censored) else ""
    out.append(f"'{roles['time']}' runs from {time.min():.4g} to {time.max():.4g} with {len(np.unique(time))} "
               f"distinct values among {len(time)} rows{follow}.")
    for name in roles["covariates"]:
        col = data[name]
        if pd.api.types.is_numeric_dtype(col):
            shown = ", ".join(f"{lv} {float(col[group == lv].mean()):.4g}" for lv in levels)
            out.append(f"Mean '{name}' by '{roles['group']}': {shown}.")
        else:
            values = col.astype(str).to_numpy()
            top = sorted(set(values))[-1]
            shown = ", ".join(f"{lv} {100 * np.mean(values[group == lv] == top):.0f} %" for lv in levels)
            out.append(f"Share of '{name}' = '{top}' by '{roles['group']}': {shown}.")
    return out


def clustered_regression(data, roles: dict) -> list[str]:
    """As :func:`regression`, for rows nested in clusters: how many clusters
    and rows, and whether the exposure varies within clusters."""
    return [_clusters(data, roles["cluster"], roles["exposure"])] + regression(data, roles)


def instrumented(data, roles: dict) -> list[str]:
    """An outcome, an exposure, a variable thought to move the exposure only,
    and covariates: how the three go together, before and net of the
    covariates, and how the exposure goes with each covariate."""
    x, z, y = (data[roles[r]].to_numpy(dtype=float) for r in ("exposure", "instrument", "outcome"))
    C, _ = model_matrix(data, list(roles["covariates"]))

    def net(v):
        return v - C @ np.linalg.lstsq(C, v, rcond=None)[0]

    def r(a, b):
        return float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")

    ex, ins, out = roles["exposure"], roles["instrument"], roles["outcome"]
    return [f"'{ex}' and '{ins}' correlate at r = {r(x, z):.2f}; net of the covariates, at r = "
            f"{r(net(x), net(z)):.2f}.",
            f"'{out}' correlates with '{ex}' at r = {r(y, x):.2f} and with '{ins}' at r = {r(y, z):.2f}."
            ] + _exposure_and_covariates(data, roles)


def paired_binary(data, before: str, after: str, positive: str) -> list[str]:
    """A binary outcome measured twice per unit: how the pairs moved."""
    b = data[before].astype(str).to_numpy() == positive
    a = data[after].astype(str).to_numpy() == positive
    return [f"Each row holds both measurements of one unit: {int(np.sum(b & a))} are '{positive}' both times, "
            f"{int(np.sum(~b & ~a))} neither time, {int(np.sum(~b & a))} became '{positive}' and "
            f"{int(np.sum(b & ~a))} stopped being '{positive}'."]


def repeated(data, outcome: str, group: str, subject: str) -> list[str]:
    """Every subject measured under several conditions: the design, how much
    of the spread lies between subjects, and the shape within them."""
    wide = data.pivot(index=subject, columns=group, values=outcome).dropna()
    y = wide.to_numpy(float)
    within = (y - y.mean(axis=1, keepdims=True)).ravel()
    between = float(np.var(y.mean(axis=1), ddof=1)) if len(y) > 1 else 0.0
    share = between / (between + float(np.var(within, ddof=1))) if len(y) > 1 and within.std() > 0 else 0.0
    skew, _, far = _shape(y.ravel())
    return [f"{len(wide)} {subject} values are each measured under all {y.shape[1]} levels of '{group}'.",
            f"The spread of the subject means is {100 * share:.0f} % of the spread of '{outcome}'; its sample "
            f"skewness is {skew:.2f}, with {far} value(s) more than 3 SDs from the mean."]


def two_factors(data, outcome: str, a: str, b: str) -> list[str]:
    """Two crossed factors: the cell sizes, means and SDs."""
    cells = data.groupby([a, b])[outcome].agg(["size", "mean", "std"])
    shown = "; ".join(f"{i}/{j}: {int(r['size'])} rows, mean {_num(r['mean'])}, SD {_num(r['std'])}"
                      for (i, j), r in cells.iterrows())
    return [f"Cells of '{a}' by '{b}': {shown}."]


def table(data, a: str, b: str) -> list[str]:
    """Two categorical variables: the size of their cross-table and its
    smallest expected count."""
    counts = data.groupby([a, b]).size().unstack(fill_value=0).to_numpy(dtype=float)
    expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / counts.sum()
    r, c = counts.shape
    return [f"Cross-tabulated, '{a}' and '{b}' give a {r} x {c} table of {int(counts.sum())} rows; the smallest "
            f"expected count under independence is {expected.min():.1f}."]


def two_proportions(data, roles: dict) -> list[str]:
    """A binary outcome in two groups: :func:`table`; with a cluster column,
    how many clusters and whether the group varies within them."""
    out = table(data, roles["group"], roles["outcome"])
    cluster = roles.get("cluster")
    return out if cluster is None else [_clusters(data, cluster, roles["group"])] + out


def _unit_spread(data, column: str, unit: str) -> tuple[float, float]:
    """SD of ``column`` within units (each value less its unit's mean) and SD
    of the unit means."""
    x = data[column].to_numpy(dtype=float)
    means = data.groupby(unit)[column].transform("mean").to_numpy(dtype=float)
    unit_means = data.groupby(unit)[column].mean().to_numpy(dtype=float)
    within = float(np.std(x - means, ddof=1)) if len(x) > 1 else 0.0
    between = float(np.std(unit_means, ddof=1)) if len(unit_means) > 1 else 0.0
    return within, between


def _lag_one(values: np.ndarray, units: np.ndarray, periods: np.ndarray) -> float:
    """Correlation of a unit's values in consecutive periods present (nan when
    fewer than 3 such pairs)."""
    frame = pd.DataFrame({"v": values, "u": units, "t": periods}).sort_values(["u", "t"], kind="stable")
    same = frame["u"].to_numpy()[1:] == frame["u"].to_numpy()[:-1]
    a, b = frame["v"].to_numpy()[:-1][same], frame["v"].to_numpy()[1:][same]
    if len(a) < 3 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def panel(data, outcome: str, exposure: str, unit: str, period: str) -> list[str]:
    """Units observed over several periods: the design, the spread of the
    exposure within and between units, and how the unit means go together."""
    sizes = data.groupby(unit).size()
    w_x, b_x = _unit_spread(data, exposure, unit)
    w_y, b_y = _unit_spread(data, outcome, unit)
    means = data.groupby(unit)[[outcome, exposure]].mean()
    r = float(np.corrcoef(means[outcome], means[exposure])[0, 1]) if len(means) > 2 and b_x > 0 and b_y > 0 else float("nan")
    return [f"The {len(data)} rows hold {len(sizes)} values of '{unit}' ({sizes.min()} to {sizes.max()} rows each) over "
            f"{data[period].nunique()} values of '{period}'.",
            f"'{exposure}': SD {_num(w_x)} within units (each value less its unit's mean), SD {_num(b_x)} between the "
            f"unit means; '{outcome}': SD {_num(w_y)} within units, {_num(b_y)} between the unit means.",
            f"The unit means of '{outcome}' and '{exposure}' correlate at r = {r:.2f}."]


def policy_change(data, outcome: str, treated: str, post: str, unit: str, period: str) -> list[str]:
    """Units of two groups observed over periods before and after a change:
    the design, the means of the four group-by-period cells, and how a unit's
    residuals from those cell means follow each other from period to period."""
    sizes = data.groupby(unit).size()
    g = data[treated].to_numpy(dtype=float)
    a = data[post].to_numpy(dtype=float)
    y = data[outcome].to_numpy(dtype=float)
    groups = data.groupby(unit)[treated].first()
    cells = data.groupby([treated, post])[outcome].mean()
    cell_text = ", ".join(f"{treated} = {int(i)} and {post} = {int(j)}: {_num(v)}" for (i, j), v in cells.items())
    fitted = data.groupby([treated, post])[outcome].transform("mean").to_numpy(dtype=float)
    resid = y - fitted
    share_units = float(np.mean(g == 1))
    r = _lag_one(resid, data[unit].to_numpy(), data[period].to_numpy(dtype=float))
    periods_post = data.loc[a == 1, period].nunique()
    return [f"The {len(data)} rows hold {len(sizes)} values of '{unit}' ({sizes.min()} to {sizes.max()} rows each): "
            f"{int((groups == 1).sum())} with '{treated}' = 1, {int((groups == 0).sum())} with 0 "
            f"({100 * share_units:.0f} % of the rows); {data[period].nunique() - periods_post} values of '{period}' "
            f"have '{post}' = 0, {periods_post} have 1.",
            f"Mean '{outcome}' by '{treated}' and '{post}': {cell_text}.",
            f"Residuals from those four means, in consecutive values of '{period}' of one '{unit}', correlate at "
            f"r = {r:.2f}."]


def biomarker_panel(data, markers: list, group: str) -> list[str]:
    """A panel of markers compared between two groups: the group sizes and
    each marker's standardised mean difference (second level minus first,
    over the pooled SD)."""
    labels = data[group].astype(str).to_numpy()
    levels = sorted(set(labels))
    sizes = ", ".join(f"{lv} {int(np.sum(labels == lv))}" for lv in levels)
    parts = []
    for name in markers:
        y = numeric(data, name)
        a, b = y[labels == levels[0]], y[labels == levels[-1]]
        pooled = ((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2) \
            if len(a) > 1 and len(b) > 1 else 0.0
        smd = (b.mean() - a.mean()) / np.sqrt(pooled) if pooled > 0 else float("nan")
        parts.append(f"{name} {smd:+.2f}")
    return [f"Rows per group: {sizes}; the panel has {len(markers)} markers.",
            f"Standardised mean difference of each marker ('{levels[-1]}' minus '{levels[0]}', over the pooled SD): "
            + ", ".join(parts) + "."]

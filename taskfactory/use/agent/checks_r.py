"""The scripted statistician's look and checks in R: the twins of the Python code in
:mod:`taskfactory.use.agent.statistician`, printing the same lines, which the same rules read.

Every column name and file name enters the code as an R string literal. The R
sessions have the recommended packages, sandwich and lmtest.
"""

from __future__ import annotations

import json

from ...make.reference import handling_r


def lit(text) -> str:
    """``text`` as an R string literal (JSON's escapes are R's)."""
    return json.dumps(str(text))


def col(name) -> str:
    return f"d[[{lit(name)}]]"


def read_code(filename: str, family, roles: dict, ranges: dict) -> str:
    lines = [f"d <- read.csv({lit(filename)}, na.strings = \"\")",
             'cat(sprintf("%d rows, %d columns\\n", nrow(d), ncol(d)))',
             "print(data.frame(type = sapply(d, function(x) class(x)[1]), blank = colSums(is.na(d)), "
             "distinct = sapply(d, function(x) length(unique(x[!is.na(x)])))))"]
    for name, (lo, hi) in ranges.items():
        lines.append(f"cat(sprintf(\"%s: %d values outside the plausible range {lo:g} to {hi:g}\\n\", {lit(name)}, "
                     f"sum({col(name)} < {lo!r} | {col(name)} > {hi!r}, na.rm = TRUE)))")
    lines += handling_r(family, roles, ranges)
    lines.append('cat(sprintf("Complete cases on the analysis columns: rows = %d\\n", nrow(d)))')
    return "\n".join(lines) + "\n"


def describe_code(roles: dict, columns: list[str]) -> str:
    before, after = roles.get("before"), roles.get("after")
    if before and after and roles.get("positive") is not None:
        return f"print(addmargins(table(before = {col(before)}, after = {col(after)})))\n"
    if before and after:
        return (f"diff <- {col(after)} - {col(before)}\n"
                "print(summary(diff))\n"
                'cat(sprintf("rose: %d, fell: %d, unchanged: %d\\n", sum(diff > 0), sum(diff < 0), sum(diff == 0)))\n')
    measure, group = roles.get("outcome") or roles.get("time"), roles.get("group")
    if group and measure and roles.get("event"):
        return (f"print(data.frame(n = tapply({col(measure)}, {col(group)}, length), "
                f"events = tapply({col(roles['event'])}, {col(group)}, sum), "
                f"median_follow_up = tapply({col(measure)}, {col(group)}, median)))\n")
    if group and measure:
        return (f"if (is.numeric({col(measure)})) print(do.call(rbind, tapply({col(measure)}, {col(group)}, summary))) "
                f"else print(addmargins(table({col(group)}, {col(measure)})))\n")
    return f"print(summary(d[, c({', '.join(lit(c) for c in columns)}), drop = FALSE]))\n"


def _design(roles: dict) -> str:
    terms = " + ".join(f"`{c}`" for c in [roles["exposure"], *roles["covariates"]])
    return (f"X <- model.matrix(~ {terms}, data = d)\n"
            f"y <- as.numeric({col(roles['outcome'])})\n")


def _cluster_design(roles: dict) -> str:
    cluster = roles.get("cluster")
    if cluster is None:
        return ""
    return (f"groups <- tapply(as.character({col(roles['group'])}), {col(cluster)}, function(v) length(unique(v)))\n"
            'cat(sprintf("Clusters holding more than one group: count = %d, clusters = %d\\n", sum(groups > 1), '
            "length(groups)))\n")


def _residual_normality(roles: dict) -> str:
    return _cluster_design(roles) + (
            f"y <- as.numeric({col(roles['outcome'])}); g <- as.character({col(roles['group'])})\n"
            "sdg <- ave(y, g, FUN = sd); ng <- as.vector(table(g)[g])\n"
            "sw <- shapiro.test(((y - ave(y, g)) / sdg)[ng > 2 & sdg > 0])\n"
            'cat(sprintf("Shapiro-Wilk test of the within-group studentized residuals: W = %.4f, p = %.4g\\n", '
            "sw$statistic, sw$p.value))\n"
            "bf <- anova(lm(abs(y - ave(y, g, FUN = median)) ~ factor(g)))\n"
            'cat(sprintf("Brown-Forsythe test of equal spreads: F = %.3f, p = %.4g\\n", bf[1, "F value"], bf[1, "Pr(>F)"]))\n')


def _paired(roles: dict, skewed: float) -> str:
    return (f"diff <- {col(roles['after'])} - {col(roles['before'])}\n"
            "q <- quantile(diff, c(0.125, 0.5, 0.875), names = FALSE)\n"
            "octile <- if (q[3] > q[1]) (q[3] + q[1] - 2 * q[2]) / (q[3] - q[1]) else 0\n"
            f'cat(sprintf("Octile skewness of the differences (asymmetric beyond {skewed}): value = %.3f\\n", octile))\n'
            "sw <- shapiro.test(diff)\n"
            'cat(sprintf("Shapiro-Wilk test of the differences: W = %.4f, p = %.4g\\n", sw$statistic, sw$p.value))\n')


def _association(roles: dict, persistent: float) -> str:
    code = "".join(f"sw <- shapiro.test(as.numeric({col(roles[r])}))\n"
                   f'cat(sprintf("Shapiro-Wilk test of %s: W = %.4f, p = %.4g\\n", {lit(roles[r])}, sw$statistic, '
                   "sw$p.value))\n" for r in ("x", "y"))
    period = roles.get("period")
    if period is None:
        return code
    code += (f"s <- d[order({col(period)}), ]\n"
             f"k <- diff(s[[{lit(period)}]]) == 1  # changes from one period to the next\n")
    return code + "".join(
        f"v <- as.numeric(s[[{lit(roles[r])}]]); c <- v - mean(v)\n"
        f'cat(sprintf("Lag-1 autocorrelation of %s in the order of %s (persistent beyond {persistent}): r1 = %.4f\\n", '
        f"{lit(roles[r])}, {lit(period)}, sum(c[-1] * c[-length(c)]) / sum(c^2)))\n"
        "sw <- shapiro.test(diff(v)[k])\n"
        f'cat(sprintf("Shapiro-Wilk test of the changes in %s: W = %.4f, p = %.4g\\n", {lit(roles[r])}, '
        "sw$statistic, sw$p.value))\n" for r in ("x", "y"))


def _expected(a: str, b: str, label: str) -> str:
    return (f"t <- table({a}, {b}); e <- outer(rowSums(t), colSums(t)) / sum(t)\n"
            f'cat(sprintf("{label}: smallest = %.3f, cells = %d\\n", min(e), length(e)))\n')


def _two_proportions(roles: dict) -> str:
    return _cluster_design(roles) + _expected(col(roles["group"]), col(roles["outcome"]),
                                              "Expected counts under independence (the large-sample test wants 5 "
                                              "or more)")


def _regression(roles: dict) -> str:
    covs = roles["covariates"]
    return (_design(roles)
            + 'cat(sprintf("Outcome values at 0: count = %d\\n", sum(y == 0)))\n'
            + f"bent <- Filter(function(c) is.numeric(d[[c]]) && length(unique(d[[c]])) > 2, c({', '.join(lit(c) for c in covs)}))\n"
            "if (length(bent)) {\n"
            "  Xq <- cbind(X, sapply(bent, function(c) d[[c]]^2))\n"
            "  fit <- lm(y ~ Xq - 1); k <- (ncol(X) + 1):ncol(Xq); b <- coef(fit)[k]\n"
            "  W <- drop(t(b) %*% solve(sandwich::vcovHC(fit, type = \"HC3\")[k, k], b))\n"
            '  cat(sprintf("HC3 Wald test of the squared covariates: chi2 = %.3f, p = %.4g\\n", W, '
            "pchisq(W, length(k), lower.tail = FALSE)))\n"
            "}\n"
            "e2 <- residuals(lm(y ~ X - 1))^2\n"   # Koenker's studentized form: n R^2 of e^2 on the exposure
            "lm_bp <- length(e2) * summary(lm(e2 ~ X[, 2]))$r.squared\n"
            'cat(sprintf("Breusch-Pagan test of the residuals against the exposure: LM = %.3f, p = %.4g\\n", '
            "lm_bp, pchisq(lm_bp, 1, lower.tail = FALSE)))\n")


def _counts(roles: dict) -> str:
    offset = f", offset = log({col(roles['exposure_time'])})" if roles.get("exposure_time") else ""
    return (_design(roles)
            + f"fit <- glm(y ~ X - 1, family = poisson{offset})\n"
            "chi2 <- sum(residuals(fit, type = \"pearson\")^2)\n"
            'cat(sprintf("Poisson fit, Pearson dispersion: ratio = %.3f, p = %.4g\\n", chi2 / fit$df.residual, '
            "pchisq(chi2, fit$df.residual, lower.tail = FALSE)))\n")


def _clustered(roles: dict) -> str:
    cluster, exposure = col(roles["cluster"]), col(roles["exposure"])
    return (_design(roles)
            + f"sizes <- table({cluster})\n"
            'cat(sprintf("Clusters: count = %d, smallest = %d, largest = %d\\n", length(sizes), min(sizes), max(sizes)))\n'
            f"within <- sum(tapply({exposure}, {cluster}, function(x) length(unique(x))) > 1)\n"
            'cat(sprintf("Clusters whose exposure varies within: count = %d\\n", within))\n'
            "if (within > 0) {\n"
            f"  fit <- lm(y ~ X + ave({exposure}, {cluster}) - 1)\n"
            f"  tm <- coef(fit)[ncol(X) + 1] / sqrt(sandwich::vcovCL(fit, cluster = {cluster})[ncol(X) + 1, ncol(X) + 1])\n"
            '  cat(sprintf("Cluster mean of the exposure added (Mundlak), cluster-robust: t = %.3f, p = %.4g\\n", '
            "tm, 2 * pnorm(-abs(tm))))\n"
            "}\n")


def _time_to_event(roles: dict) -> str:
    terms = " + ".join(f"`{c}`" for c in roles["covariates"]) or "1"
    group = col(roles["group"])
    return _cluster_design(roles) + (
            f"z <- as.numeric(as.character({group}) == max(as.character({group})))\n"
            f"fit <- suppressWarnings(glm(z ~ {terms}, family = binomial, data = d))\n"
            "lr <- fit$null.deviance - fit$deviance\n"
            'cat(sprintf("Covariate balance between the groups, logistic likelihood-ratio test: chi2 = %.3f, p = %.4g\\n", '
            "lr, pchisq(lr, fit$df.null - fit$df.residual, lower.tail = FALSE)))\n")


def _one_sample(roles: dict) -> str:
    return (f"sw <- shapiro.test(as.numeric({col(roles['outcome'])}))\n"
            'cat(sprintf("Shapiro-Wilk test of the outcome: W = %.4f, p = %.4g\\n", sw$statistic, sw$p.value))\n')


def _one_proportion(roles: dict) -> str:
    return (f'cat(sprintf("Rows with the level tested: count = %d, rows = %d\\n", '
            f"sum(as.character({col(roles['outcome'])}) == {lit(roles['positive'])}), nrow(d)))\n")


def _paired_binary(roles: dict) -> str:
    positive = lit(roles["positive"])
    return (f"was <- as.character({col(roles['before'])}) == {positive}; now <- as.character({col(roles['after'])}) == {positive}\n"
            'cat(sprintf("Discordant pairs: gained = %d, lost = %d\\n", sum(!was & now), sum(was & !now)))\n')


def _repeated_conditions(roles: dict) -> str:
    group = col(roles["group"])
    return (f"per <- tapply({group}, {col(roles['subject'])}, function(x) length(unique(x))); k <- length(unique({group}))\n"
            'cat(sprintf("Subjects with every condition: count = %d, conditions = %d\\n", sum(per == k), k))\n')


def _two_factors(roles: dict) -> str:
    a, b, outcome = col(roles["a"]), col(roles["b"]), col(roles["outcome"])
    return (f"sizes <- table({a}, {b})\n"
            'cat(sprintf("Cells of the two factors: count = %d, smallest = %d, largest = %d\\n", sum(sizes > 0), '
            "min(sizes[sizes > 0]), max(sizes)))\n"
            f"sw <- shapiro.test({outcome} - ave({outcome}, {a}, {b}))\n"
            'cat(sprintf("Shapiro-Wilk test of the residuals from the cell means: W = %.4f, p = %.4g\\n", '
            "sw$statistic, sw$p.value))\n")


def _contingency(roles: dict) -> str:
    return _expected(col(roles["a"]), col(roles["b"]), "Expected counts under independence")


def _stated_shares(roles: dict) -> str:
    shares = ", ".join(repr(float(v)) for v in dict(roles["stated"]).values())
    return (f"shares <- c({shares})\n"
            'cat(sprintf("Expected counts under the stated shares: smallest = %.3f, levels = %d\\n", '
            "nrow(d) * min(shares), length(shares)))\n")


def _binary_outcome(roles: dict) -> str:
    terms = " + ".join(f"`{c}`" for c in [roles["exposure"], *roles["covariates"]])
    return (f"X <- model.matrix(~ {terms}, data = d)\n"
            f"y <- as.character({col(roles['outcome'])}) == {lit(roles['positive'])}\n"
            'cat(sprintf("Events and coefficients: events = %d, non_events = %d, coefficients = %d\\n", '
            "sum(y), sum(!y), ncol(X)))\n")


def _instrumented(roles: dict) -> str:
    terms = " + ".join(f"`{c}`" for c in roles["covariates"])
    restricted = f"lm({col(roles['exposure'])} ~ {terms or '1'}, data = d)"
    full = f"lm({col(roles['exposure'])} ~ `{roles['instrument']}`{' + ' + terms if terms else ''}, data = d)"
    return (f"first <- anova({restricted}, {full})\n"
            'cat(sprintf("First-stage F of the instrument: F = %.2f, p = %.4g\\n", first[2, "F"], first[2, "Pr(>F)"]))\n')


def _panel(roles: dict) -> str:
    unit, exposure = col(roles["unit"]), col(roles["exposure"])
    return ('cat(sprintf("Panel: units = %d, periods = %d, rows = %d\\n", '
            f"length(unique({unit})), length(unique({col(roles['period'])})), nrow(d)))\n"
            f'cat(sprintf("Exposure within units: sd = %.4g\\n", sd({exposure} - ave({exposure}, {unit}))))\n')


def _policy_change(roles: dict) -> str:
    return (f"cells <- table({col(roles['treated'])}, {col(roles['post'])})\n"
            'cat(sprintf("Treated by period cells: smallest = %d, cells = %d, units = %d\\n", min(cells), length(cells), '
            f"length(unique({col(roles['unit'])}))))\n")


def checks(kind: str, roles: dict, octile_skewed: float, persistent: float) -> str:
    """The R code of ``kind``'s checks on ``d``, with the rules' thresholds
    the printed labels name."""
    if kind == "paired":
        return _paired(roles, octile_skewed)
    if kind == "association":
        return _association(roles, persistent)
    return CODE[kind](roles)


CODE = {"two_groups": _residual_normality, "k_groups": _residual_normality,
        "two_proportions": _two_proportions, "regression": _regression, "counts": _counts,
        "clustered_regression": _clustered, "time_to_event": _time_to_event, "one_sample": _one_sample,
        "one_proportion": _one_proportion, "paired_binary": _paired_binary,
        "repeated_conditions": _repeated_conditions, "two_factors": _two_factors, "contingency": _contingency,
        "stated_shares": _stated_shares, "binary_outcome": _binary_outcome, "instrumented": _instrumented,
        "panel": _panel, "policy_change": _policy_change}

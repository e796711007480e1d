# Spearman rank correlation of first differences: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import itertools
import math
import numpy as np
from scipy import stats
d = d.sort_values("{period}", kind="stable")
one_step = np.diff(d["{period}"].to_numpy(float)) == 1  # changes from one period to the next
a = np.diff(d["{x}"].to_numpy(float))[one_step]
b = np.diff(d["{y}"].to_numpy(float))[one_step]
n = len(a)
rho = np.corrcoef(stats.rankdata(a), stats.rankdata(b))[0, 1]
S = (n**3 - n) * (1 - rho) / 6
lower = S <= (n**3 - n) / 6
if min(len(np.unique(a)), len(np.unique(b))) < n or n > 1290:
    # ties (or n > 1290): R's t approximation on n - 2 df
    p = 0.0 if rho**2 >= 1 else stats.t.sf(abs(rho) * math.sqrt((n - 2) / (1 - rho**2)), n - 2)
else:
    # R's exact branch, Algorithm AS 89: P(S >= s) upper, P(S < s) lower
    s = math.floor(S + 0.5) + 2 * lower
    if n <= 9:
        perms = np.array(list(itertools.permutations(range(n))))
        ss = ((perms - np.arange(n)) ** 2).sum(axis=1)
        p = np.mean(ss < s) if lower else np.mean(ss >= s)
    else:
        c = [0.2274, 0.2531, 0.1745, 0.0758, 0.1033, 0.3932, 0.0879, 0.0151, 0.0072, 0.0831, 0.0131, 4.6e-4]
        h = 1 / n
        z = (6 * (s - 1) * h / (n * n - 1) - 1) * math.sqrt(1 / h - 1)
        z2 = z * z
        u = z * h * (c[0] + h * (c[1] + c[2] * h) + z2 * (-c[3] + h * (c[4] + c[5] * h) - z2 * h * (
            c[6] + c[7] * h - z2 * (c[8] - c[9] * h + z2 * h * (c[10] - c[11] * z2)))))
        u /= math.exp(z2 / 2)
        p = stats.norm.cdf(z) - u if lower else stats.norm.sf(z) + u
        p = min(1.0, max(0.0, p))
p_value = min(1.0, 2 * p)

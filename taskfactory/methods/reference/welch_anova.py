# Welch one-way ANOVA: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
g = d.groupby(d["{group}"].astype(str))["{outcome}"]
n, m, v = g.count().to_numpy(float), g.mean().to_numpy(), g.var().to_numpy()
k = len(n)
w = n / v
centre = np.sum(w * m) / np.sum(w)
tmp = np.sum((1 - w / np.sum(w)) ** 2 / (n - 1)) / (k * k - 1)
F = np.sum(w * (m - centre) ** 2) / ((k - 1) * (1 + 2 * (k - 2) * tmp))
p_value = float(stats.f.sf(F, k - 1, 1 / (3 * tmp)))

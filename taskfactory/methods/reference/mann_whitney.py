# Wilcoxon-Mann-Whitney rank sum test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
levels = sorted(d["{group}"].astype(str).unique())
x = d.loc[d["{group}"].astype(str) == levels[0], "{outcome}"].to_numpy(float)
y = d.loc[d["{group}"].astype(str) == levels[1], "{outcome}"].to_numpy(float)
# R's default: exact when both groups have fewer than 50 values and nothing is tied
exact = len(x) < 50 and len(y) < 50 and np.unique(np.concatenate([x, y])).size == len(x) + len(y)
res = stats.mannwhitneyu(x, y, use_continuity=True, alternative="two-sided",
                         method="exact" if exact else "asymptotic")
p_value = res.pvalue

# Kendall rank correlation test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
a = d["{x}"].to_numpy(float)
b = d["{y}"].to_numpy(float)
ties = min(len(np.unique(a)), len(np.unique(b))) < len(a)
# R: the exact null distribution when n < 50 and no ties; else the normal
# approximation with the tie-corrected variance, no continuity correction
method = "exact" if len(a) < 50 and not ties else "asymptotic"
p_value = stats.kendalltau(a, b, method=method).pvalue

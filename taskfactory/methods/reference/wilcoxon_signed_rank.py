# Wilcoxon signed rank test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
diff = d["{after}"].to_numpy(float) - d["{before}"].to_numpy(float)
nonzero = diff[diff != 0]
# R's default: exact when fewer than 50 non-zero differences, no zeros and no tied |differences|
exact = (nonzero.size < 50 and nonzero.size == diff.size
         and np.unique(np.abs(nonzero)).size == nonzero.size)
res = stats.wilcoxon(nonzero, correction=True, method="exact" if exact else "asymptotic")
p_value = res.pvalue

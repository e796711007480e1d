# Exact sign test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
after, before = d["{after}"].to_numpy(float), d["{before}"].to_numpy(float)
# units whose measurement did not change drop out; the count that rose is binomial(changed, 1/2)
res = stats.binomtest(int(np.sum(after > before)), int(np.sum(after != before)), 0.5)
p_value = res.pvalue

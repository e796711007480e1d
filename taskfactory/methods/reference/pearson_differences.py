# Pearson correlation of first differences: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
d = d.sort_values("{period}", kind="stable")
one_step = np.diff(d["{period}"].to_numpy(float)) == 1  # changes from one period to the next
a = np.diff(d["{x}"].to_numpy(float))[one_step]
b = np.diff(d["{y}"].to_numpy(float))[one_step]
p_value = stats.pearsonr(a, b).pvalue

# One-sample t-test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
res = stats.ttest_1samp(d["{outcome}"], {mu0})
p_value = res.pvalue

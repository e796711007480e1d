# Pearson correlation test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
res = stats.pearsonr(d["{x}"], d["{y}"])
p_value = res.pvalue

# Welch two-sample t-test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
levels = sorted(d["{group}"].astype(str).unique())
a = d.loc[d["{group}"].astype(str) == levels[0], "{outcome}"]
b = d.loc[d["{group}"].astype(str) == levels[1], "{outcome}"]
res = stats.ttest_ind(a, b, equal_var=False)
p_value = res.pvalue

# Two-sample t-test on cluster proportions: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
share = (d["{outcome}"].astype(str) == "{positive}").astype(float)
m = share.groupby([d["{cluster}"], d["{group}"]]).mean().reset_index()  # one share per cluster (and group)
levels = sorted(m["{group}"].astype(str).unique())
a = m.loc[m["{group}"].astype(str) == levels[0], "{outcome}"]
b = m.loc[m["{group}"].astype(str) == levels[1], "{outcome}"]
p_value = stats.ttest_ind(a, b, equal_var=True).pvalue

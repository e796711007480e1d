# Two-sample t-test on cluster event rates: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
m = d.groupby(["{cluster}", "{group}"])[["{event}", "{time}"]].sum().reset_index()  # one sum per cluster (and group)
m["rate"] = m["{event}"] / m["{time}"]
levels = sorted(m["{group}"].astype(str).unique())
a = m.loc[m["{group}"].astype(str) == levels[0], "rate"]
b = m.loc[m["{group}"].astype(str) == levels[1], "rate"]
p_value = stats.ttest_ind(a, b, equal_var=True).pvalue

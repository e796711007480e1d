# One-way ANOVA on cluster means: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
m = d.groupby(["{cluster}", "{group}"])["{outcome}"].mean().reset_index()  # one mean per cluster (and group)
p_value = stats.f_oneway(*[v["{outcome}"] for _, v in m.groupby("{group}")]).pvalue

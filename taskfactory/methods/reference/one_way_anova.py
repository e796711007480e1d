# One-way ANOVA: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
groups = [g.to_numpy() for _, g in d.groupby(d["{group}"].astype(str))["{outcome}"]]
res = stats.f_oneway(*groups)
p_value = res.pvalue

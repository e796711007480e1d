# Log-rank test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from lifelines.statistics import logrank_test
group = d["{group}"].astype(str)
levels = sorted(group.unique())
a, b = d[group == levels[0]], d[group == levels[1]]
res = logrank_test(a["{time}"], b["{time}"], event_observed_A=a["{event}"], event_observed_B=b["{event}"])
p_value = res.p_value

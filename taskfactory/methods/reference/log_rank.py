# Log-rank test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from lifelines.statistics import multivariate_logrank_test
res = multivariate_logrank_test(d["{time}"], d["{group}"].astype(str), d["{event}"])
p_value = res.p_value

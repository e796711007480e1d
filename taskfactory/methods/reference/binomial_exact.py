# Exact binomial test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns and values; the p-value is left in p_value.
from scipy import stats

successes = int((d["{outcome}"].astype(str) == "{positive}").sum())
p_value = stats.binomtest(successes, len(d), p={p0}).pvalue

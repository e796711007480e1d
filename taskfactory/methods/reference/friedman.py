# Friedman rank sum test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats

wide = d.pivot(index="{subject}", columns="{group}", values="{outcome}").dropna()   # complete blocks
p_value = stats.friedmanchisquare(*[wide[c] for c in wide.columns]).pvalue

# Pearson chi-square test of independence: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
table = pd.crosstab(d["{a}"].astype(str), d["{b}"].astype(str))
res = stats.chi2_contingency(table.to_numpy())
p_value = res.pvalue

# Two-sample test of equal proportions (R's default continuity correction): the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
groups = d["{group}"].astype(str)
success = d["{outcome}"].astype(str) == "{positive}"
x = [int(success[groups == g].sum()) for g in sorted(groups.unique())]
n = [int((groups == g).sum()) for g in sorted(groups.unique())]
res = stats.chi2_contingency([[x[0], n[0] - x[0]], [x[1], n[1] - x[1]]], correction=True)
p_value = res.pvalue

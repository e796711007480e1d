# McNemar's test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns and values; the p-value is left in p_value.
from statsmodels.stats.contingency_tables import mcnemar

before = d["{before}"].astype(str) == "{positive}"
after = d["{after}"].astype(str) == "{positive}"
table = [[int((before & after).sum()), int((before & ~after).sum())],
         [int((~before & after).sum()), int((~before & ~after).sum())]]
p_value = mcnemar(table, exact=False, correction=True).pvalue

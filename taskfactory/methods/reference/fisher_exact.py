# Fisher's exact test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import pandas as pd
from scipy import stats

table = pd.crosstab(d["{group}"].astype(str), d["{outcome}"].astype(str))
p_value = stats.fisher_exact(table.to_numpy()).pvalue

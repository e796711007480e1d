# Chi-square goodness-of-fit test: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns and the stated shares; the p-value is left in p_value.
import numpy as np
from scipy import stats
p0 = {stated}
counts = d["{outcome}"].astype(str).value_counts().reindex(list(p0), fill_value=0).to_numpy(float)
p_value = stats.chisquare(counts, f_exp=counts.sum() * np.array(list(p0.values()))).pvalue

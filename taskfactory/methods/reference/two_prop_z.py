# Reference answer of two_prop_z: the pooled z, first group minus second.
from statsmodels.stats.proportion import proportions_ztest

z, _ = proportions_ztest([{x1}, {x2}], [{n1}, {n2}])
print(f"ESTIMATE: {z:.10f}")

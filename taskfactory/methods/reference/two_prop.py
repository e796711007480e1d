# Reference answer of two_prop: do the two 95 % Wilson intervals fail to overlap?
from statsmodels.stats.proportion import proportion_confint

low1, high1 = proportion_confint({x1}, {n1}, alpha=0.05, method="wilson")
low2, high2 = proportion_confint({x2}, {n2}, alpha=0.05, method="wilson")
print("ANSWER:", "yes" if high1 < low2 or high2 < low1 else "no")

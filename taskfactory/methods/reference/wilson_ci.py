# Reference answer of wilson_ci: {successes} of {n}; prints the interval.
from statsmodels.stats.proportion import proportion_confint

low, high = proportion_confint({successes}, {n}, alpha=0.05, method="wilson")
print(f"LOWER: {low:.10f}\nUPPER: {high:.10f}")

# Two-way ANOVA, the interaction: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import statsmodels.api as sm
import statsmodels.formula.api as smf

table = sm.stats.anova_lm(smf.ols("{outcome} ~ C({a}) * C({b})", data=d).fit(), typ=1)
p_value = table.loc["C({a}):C({b})", "PR(>F)"]

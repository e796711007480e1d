# Logistic regression, an exposure of more than two levels: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the p-value is left in p_value.
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats
covariates = {covariates}
d["event_"] = (d["{outcome}"].astype(str) == "{positive}").astype(float)
rest = " + ".join(covariates) or "1"
# the model without the exposure and with it (its levels as treatment-contrast dummies), fitted as glm() fits them
fit0, fit1 = (smf.glm("event_ ~ " + terms, data=d, family=sm.families.Binomial()).fit(tol=1e-10)
              for terms in (rest, "{exposure} + " + rest))
levels = d["{exposure}"].astype(str).nunique()
# the likelihood-ratio statistic, the fall in deviance, on one df per dummy
p_value = stats.chi2.sf(fit0.deviance - fit1.deviance, levels - 1)

# Negative binomial regression with an exposure-time offset, an exposure of more than two levels: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the p-value is left in p_value.
import numpy as np
import statsmodels.formula.api as smf
from scipy import stats
covariates = {covariates}
offset = np.log(d["{exposure_time}"].to_numpy(float))
rest = " + ".join(covariates) or "1"
# the model without the exposure and with it (its levels as treatment-contrast dummies), theta estimated in each as glm.nb does
fit0, fit1 = (smf.negativebinomial("{outcome} ~ " + terms, data=d, offset=np.broadcast_to(offset, len(d)))
              .fit(disp=0, maxiter=500, gtol=1e-10) for terms in (rest, "{exposure} + " + rest))
levels = d["{exposure}"].astype(str).nunique()
# twice the rise in log-likelihood, on one df per dummy; MASS's anova reports 1 - pchisq
p_value = 1 - stats.chi2.cdf(2 * (fit1.llf - fit0.llf), levels - 1)

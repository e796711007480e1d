# Difference-in-differences regression with cluster-robust standard errors: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats
fit = smf.ols("{outcome} ~ {treated} * {post}", data=d).fit()
# sandwich::vcovCL's defaults: HC1 cluster sums with G/(G-1) and (n-1)/(n-p), as statsmodels' cluster correction;
# lmtest::coeftest then refers t to the residual df (statsmodels would use G - 1)
robust = fit.get_robustcov_results(cov_type="cluster", groups=pd.factorize(d["{unit}"])[0])
i = list(fit.params.index).index("{treated}:{post}")
t = robust.params[i] / robust.bse[i]
p_value = 2 * stats.t.sf(abs(t), fit.df_resid)

# Panel regression with unit fixed effects: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
import numpy as np
from scipy import stats
# the within estimator: outcome and exposure less their unit means, least squares through the origin
centred = d[["{outcome}", "{exposure}"]] - d.groupby("{unit}")[["{outcome}", "{exposure}"]].transform("mean")
y, x = centred["{outcome}"].to_numpy(), centred["{exposure}"].to_numpy()
slope = (x @ y) / (x @ x)
resid = y - slope * x
df = len(d) - d["{unit}"].nunique() - 1  # plm's residual df: rows - units - coefficients
t = slope / np.sqrt((resid @ resid) / df / (x @ x))
p_value = 2 * stats.t.sf(abs(t), df)

# Welch t-tests over a marker panel, Holm-adjusted: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
from scipy import stats
from statsmodels.stats.multitest import multipletests
markers = {markers}
groups = d["{group}"].astype(str)
levels = sorted(groups.unique())
p_raw = [stats.ttest_ind(d.loc[groups == levels[0], v], d.loc[groups == levels[1], v], equal_var=False).pvalue
         for v in markers]
p_adjusted = multipletests(p_raw, method="holm")[1]
p_value = p_adjusted[markers.index("{target}")]

# Linear mixed model coefficient with a random intercept per cluster: the canonical test on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the p-value is left in p_value.
# No Python library gives lmerTest's Satterthwaite df, and lme4's optimizer stops up to ~1e-4 (relative) short of
# the exact REML optimum; taskfactory's port of lme4 + lmerTest reproduces both, step for step.
from taskfactory.methods._mixed import lmer_terms
from taskfactory.methods._models import model_matrix

covariates = {covariates}
X, names = model_matrix(d, ["{exposure}", *covariates])  # R's model.matrix: factor levels sorted, first the baseline
terms, fit = lmer_terms(d["{outcome}"].to_numpy(float), X, names, d["{cluster}"])  # REML, Satterthwaite df
p_value = next(term.pvalue for term in terms if term.name == "{exposure}")

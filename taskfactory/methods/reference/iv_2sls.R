# Instrumental-variable (two-stage least squares) regression coefficient: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
res <- summary(AER::ivreg({outcome} ~ {exposure} + {covariates} | {instrument} + {covariates}, data = d))$coefficients

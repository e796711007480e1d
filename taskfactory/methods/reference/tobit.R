# Tobit regression coefficient (censored at 0): the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
res <- summary(AER::tobit({outcome} ~ {exposure} + {covariates}, left = 0, data = d))$coefficients

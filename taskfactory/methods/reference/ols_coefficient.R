# Linear regression coefficient adjusted for covariates: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
res <- summary(lm({outcome} ~ {exposure} + {covariates}, data = d))$coefficients

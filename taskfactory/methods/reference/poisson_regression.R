# Poisson regression coefficient with an exposure-time offset: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
res <- summary(glm({outcome} ~ {exposure} + {covariates} + offset(log({exposure_time})), family = poisson, data = d))$coefficients

# Negative binomial regression with an exposure-time offset, an exposure of more than two levels: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the likelihood-ratio table is left in res, the exposure's test in its row 2.
fit0 <- MASS::glm.nb({outcome} ~ {covariates} + offset(log({exposure_time})), data = d)
fit1 <- MASS::glm.nb({outcome} ~ {exposure} + {covariates} + offset(log({exposure_time})), data = d)
res <- anova(fit0, fit1)

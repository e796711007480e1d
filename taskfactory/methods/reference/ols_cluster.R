# Linear regression coefficient with cluster-robust standard errors: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
fit <- lm({outcome} ~ {exposure} + {covariates}, data = d)
res <- lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~{cluster}))

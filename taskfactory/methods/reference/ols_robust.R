# Linear regression coefficient with HC3 standard errors: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
fit <- lm({outcome} ~ {exposure} + {covariates}, data = d)
res <- lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))

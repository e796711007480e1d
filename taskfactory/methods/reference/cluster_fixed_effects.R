# Linear regression coefficient within clusters (cluster fixed effects): the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
fit <- lm({outcome} ~ {exposure} + {covariates} + factor({cluster}), data = d)
res <- summary(fit)$coefficients

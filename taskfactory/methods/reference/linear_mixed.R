# Linear mixed model coefficient with a random intercept per cluster: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; lmerTest's coefficient table (Estimate, Std. Error, df, t value, Pr(>|t|)) is left in res, the exposure in its row 2.
fit <- lmerTest::lmer({outcome} ~ {exposure} + {covariates} + (1 | {cluster}), data = d)
res <- summary(fit)$coefficients

# Difference-in-differences regression with cluster-robust standard errors: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the treated:post interaction in its row 4.
fit <- lm({outcome} ~ {treated} * {post}, data = d)
res <- lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~{unit}))

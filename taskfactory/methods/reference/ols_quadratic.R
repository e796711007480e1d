# Linear regression coefficient adjusted for covariates, with their squares: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 2.
covariates <- all.vars(~ {covariates})
squared <- covariates[vapply(d[covariates], function(v) is.numeric(v) && length(unique(v)) > 2, TRUE)]
fit <- lm(reformulate(c("{exposure}", covariates, sprintf("I(%s^2)", squared)), response = "{outcome}"), data = d)
res <- summary(fit)$coefficients

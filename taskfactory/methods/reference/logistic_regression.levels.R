# Logistic regression, an exposure of more than two levels: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the analysis of deviance is left in res, the exposure's test in its row 2.
fit0 <- glm({outcome} == "{positive}" ~ {covariates}, family = binomial, data = d)
fit1 <- glm({outcome} == "{positive}" ~ {exposure} + {covariates}, family = binomial, data = d)
res <- anova(fit0, fit1, test = "LRT")

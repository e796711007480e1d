# Cox proportional hazards regression, a group of more than two levels: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the task's columns; the analysis of deviance is left in res, the group's test in its row 2.
library(survival)
fit0 <- coxph(Surv({time}, {event}) ~ {covariates}, data = d)
fit1 <- coxph(Surv({time}, {event}) ~ {group} + {covariates}, data = d)
res <- anova(fit0, fit1)

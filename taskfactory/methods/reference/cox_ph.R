# Cox proportional hazards regression coefficient: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the group in its row 1.
library(survival)
res <- summary(coxph(Surv({time}, {event}) ~ {group} + {covariates}, data = d))$coefficients

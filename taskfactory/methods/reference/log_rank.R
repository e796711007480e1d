# Log-rank test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res, its p-value at res$pvalue.
library(survival)
res <- survdiff(Surv({time}, {event}) ~ {group}, data = d)

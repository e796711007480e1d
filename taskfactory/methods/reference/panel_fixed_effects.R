# Panel regression with unit fixed effects: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the coefficient table is left in res, the exposure in its row 1.
fit <- plm::plm({outcome} ~ {exposure}, data = d, index = c("{unit}", "{period}"), model = "within")
res <- summary(fit)$coefficients

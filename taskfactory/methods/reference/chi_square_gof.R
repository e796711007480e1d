# Chi-square goodness-of-fit test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns and the stated shares; the test is left in res.
p0 <- {stated}
res <- chisq.test(table(factor(d[["{outcome}"]], levels = names(p0))), p = p0)

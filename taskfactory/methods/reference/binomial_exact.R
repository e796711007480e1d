# Exact binomial test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns and values; the test is left in res.
res <- binom.test(sum(d[["{outcome}"]] == "{positive}"), nrow(d), p = {p0})

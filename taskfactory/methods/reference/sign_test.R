# Exact sign test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
res <- binom.test(sum(d[["{after}"]] > d[["{before}"]]), sum(d[["{after}"]] != d[["{before}"]]))

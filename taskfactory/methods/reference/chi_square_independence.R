# Pearson chi-square test of independence: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
res <- chisq.test(table(d[["{a}"]], d[["{b}"]]))

# Fisher's exact test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
res <- fisher.test(table(d[["{group}"]], d[["{outcome}"]]))

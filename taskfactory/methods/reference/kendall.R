# Kendall rank correlation test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
res <- cor.test(d[["{x}"]], d[["{y}"]], method = "kendall")

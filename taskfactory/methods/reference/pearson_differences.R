# Pearson correlation of first differences: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
d <- d[order(d[["{period}"]]), ]
one_step <- diff(d[["{period}"]]) == 1  # changes from one period to the next (a missing period leaves two out)
res <- cor.test(diff(d[["{x}"]])[one_step], diff(d[["{y}"]])[one_step])

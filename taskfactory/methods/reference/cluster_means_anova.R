# One-way ANOVA on cluster means: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
m <- aggregate(d[["{outcome}"]], by = list(cluster = d[["{cluster}"]], group = d[["{group}"]]), FUN = mean)
res <- oneway.test(x ~ group, data = m, var.equal = TRUE)

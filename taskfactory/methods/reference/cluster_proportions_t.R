# Two-sample t-test on cluster proportions: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
m <- aggregate(d[["{outcome}"]] == "{positive}", by = list(cluster = d[["{cluster}"]], group = d[["{group}"]]), FUN = mean)
res <- t.test(x ~ group, data = m, var.equal = TRUE)

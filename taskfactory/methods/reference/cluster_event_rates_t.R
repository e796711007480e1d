# Two-sample t-test on cluster event rates: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
m <- aggregate(cbind(events = d[["{event}"]], time = d[["{time}"]]), by = list(cluster = d[["{cluster}"]], group = d[["{group}"]]), FUN = sum)
res <- t.test(events / time ~ group, data = m, var.equal = TRUE)

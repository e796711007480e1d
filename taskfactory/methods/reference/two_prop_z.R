# Reference answer of two_prop_z: the pooled z, first group minus second.
res <- prop.test(c({x1}, {x2}), c({n1}, {n2}), correct = FALSE)
z <- sign({x1} / {n1} - {x2} / {n2}) * sqrt(unname(res$statistic))
cat(sprintf("ESTIMATE: %.10f\n", z))

# Friedman rank sum test: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res. Only the
# subjects measured under every condition form complete blocks; the others are left out.
full <- names(which(table(d[["{subject}"]]) == length(unique(d[["{group}"]]))))
d <- d[d[["{subject}"]] %in% full, ]
res <- friedman.test(d[["{outcome}"]], d[["{group}"]], d[["{subject}"]])

# Reference answer of two_prop: do the two 95 % Wilson intervals fail to overlap?
ci1 <- prop.test({x1}, {n1}, correct = FALSE)$conf.int
ci2 <- prop.test({x2}, {n2}, correct = FALSE)$conf.int
cat(sprintf("ANSWER: %s\n", if (ci1[2] < ci2[1] || ci2[2] < ci1[1]) "yes" else "no"))

# Reference answer of wilson_ci: {successes} of {n}; prints the interval.
ci <- prop.test({successes}, {n}, correct = FALSE)$conf.int
cat(sprintf("LOWER: %.10f\nUPPER: %.10f\n", ci[1], ci[2]))

# Welch t-tests over a marker panel, Benjamini-Hochberg-adjusted: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the table of raw and adjusted p-values is left in res.
markers <- all.vars(~ {markers})
target <- "{target}"
p_raw <- sapply(markers, function(v) t.test(d[[v]] ~ d[["{group}"]])$p.value)
res <- data.frame(marker = markers, p_raw = p_raw, p_adjusted = p.adjust(p_raw, method = "BH"))

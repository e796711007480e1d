# Two-way ANOVA, the interaction: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the table is left in res (a:b is row 3).
res <- anova(lm({outcome} ~ {a} * {b}, data = d))

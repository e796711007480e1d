# Welch one-way ANOVA: the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
res <- oneway.test({outcome} ~ {group}, data = d)

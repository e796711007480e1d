# Two-sample test of equal proportions (R's default continuity correction): the canonical call on d, the data after the canonical handling.
# {role} fields are filled with the scenario's columns; the test is left in res.
x <- tapply(d[["{outcome}"]] == "{positive}", d[["{group}"]], sum)
n <- tapply(d[["{outcome}"]] == "{positive}", d[["{group}"]], length)
res <- prop.test(x, n)

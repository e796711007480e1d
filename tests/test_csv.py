"""Released CSVs are read back into exactly the values R's read.csv reads."""

import math
import warnings

import numpy as np

from taskfactory.make.analysis import read_csv_text

EDGE = ("a,b,c,d,e\n"
        "1e-300,-0,2147483647,x,0.1\n"
        "0.30000000000000004,3,2147483648,NA,\n"
        "0.12345678901234567,-5,9007199254740993,,-0.0\n")


def test_edge_values_are_the_doubles_r_reads():
    """R 4.x: d <- read.csv("edge.csv", na.strings = ""); str(d)
    $ a: num  1.00e-300 3.00e-01 1.23e-01      sprintf("%.17g", d$a):
         "1e-300" "0.30000000000000004" "0.12345678901234566"
    $ b: int  0 3 -5
    $ c: num  2.15e+09 2.15e+09 9.01e+15      sprintf("%.17g", d$c):
         "2147483647" "2147483648" "9007199254740992"
    $ d: chr  "x" "NA" NA
    $ e: num  0.1 NA 0                         1/d$e: 10 NA -Inf
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = read_csv_text(EDGE)
    assert [f"{v:.17g}" for v in d["a"]] == ["1e-300", "0.30000000000000004", "0.12345678901234566"]
    assert d["b"].dtype == np.int64 and list(d["b"]) == [0, 3, -5]
    assert d["c"].dtype == np.float64 and [f"{v:.17g}" for v in d["c"]] == ["2147483647", "2147483648",
                                                                           "9007199254740992"]
    assert list(d["d"][:2]) == ["x", "NA"] and isinstance(d["d"][2], float) and math.isnan(d["d"][2])
    assert d["e"][0] == 0.1 and math.isnan(d["e"][1]) and d["e"][2] == 0 and math.copysign(1, d["e"][2]) == -1


def test_every_decimal_is_read_as_its_nearest_double():
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(0, 1e3, 3000), 10 ** rng.uniform(-300, 300, 3000), rng.random(3000)])
    texts = [f"{v:.{k}g}" for v, k in zip(values, rng.integers(1, 18, values.size))]
    d = read_csv_text("x\n" + "\n".join(texts) + "\n")
    assert d["x"].tolist() == [float(t) for t in texts]


def test_a_column_of_blanks_is_missing_numbers_and_dates_stay_text():
    d = read_csv_text("a,b,c\n,2024-01-31,12:30\n,2024-02-01,13:45\n")
    assert d["a"].dtype == np.float64 and d["a"].isna().all()
    assert list(d["b"]) == ["2024-01-31", "2024-02-01"] and list(d["c"]) == ["12:30", "13:45"]

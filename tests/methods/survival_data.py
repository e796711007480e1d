"""Two time-to-event datasets both survival families' tests pin R's numbers on.

Times are whole weeks, so many tie (A: 60 subjects on 23 distinct times, 28 %
censored; B: 90 subjects on 18 distinct times, 56 % censored). R read them as
``A <- data.frame(time = c(14, 16, ...), event = c(...), arm = c("new", ...),
age = c(...), stage = c(...))`` (likewise ``B``).
"""

import pandas as pd

ROLES = {"time": "time", "event": "event", "group": "arm", "covariates": ["age", "stage"]}

A = pd.DataFrame(dict(
    time=[14, 16, 31, 2, 14, 3, 21, 7, 14, 3, 7, 4, 1, 6, 20, 10, 15, 1, 3, 37, 11, 4, 8, 16, 18, 6, 11, 3, 27, 11,
        8, 21, 5, 12, 4, 8, 17, 2, 7, 9, 8, 11, 10, 10, 2, 1, 7, 11, 7, 19, 8, 10, 18, 1, 6, 6, 8, 4, 16, 17],
    event=[1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1,
        1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1],
    arm=["new", "ctl", "new", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "new", "ctl", "new", "new",
        "ctl", "new", "new", "ctl", "new", "new", "ctl", "ctl", "new", "ctl", "ctl", "new", "new", "ctl", "ctl",
        "new", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "new", "new", "new", "new", "new", "ctl", "new", "new",
        "ctl", "new", "ctl", "ctl", "new", "ctl", "ctl", "new", "new", "new", "ctl", "new", "ctl", "new", "new"],
    age=[70, 74, 48, 63, 72, 50, 53, 73, 63, 60, 66, 60, 79, 70, 42, 45, 61, 72, 42, 67, 70, 71, 74, 47, 62, 72, 54,
        47, 59, 43, 48, 74, 66, 74, 73, 75, 52, 58, 64, 50, 76, 40, 73, 65, 50, 68, 56, 73, 79, 51, 58, 48, 67, 65,
        73, 72, 79, 78, 75, 46],
    stage=["III", "III", "IV", "III", "IV", "III", "III", "III", "III", "III", "IV", "III", "IV", "III", "IV",
        "III", "IV", "IV", "IV", "III", "IV", "IV", "IV", "IV", "IV", "IV", "III", "IV", "III", "III", "IV", "III",
        "III", "III", "IV", "III", "IV", "III", "IV", "IV", "IV", "IV", "III", "III", "IV", "IV", "IV", "III",
        "III", "III", "III", "III", "IV", "IV", "IV", "IV", "IV", "IV", "IV", "IV"],
))
B = pd.DataFrame(dict(
    time=[10, 2, 5, 6, 7, 6, 8, 10, 2, 20, 6, 3, 1, 8, 4, 17, 1, 6, 3, 3, 4, 10, 1, 1, 1, 8, 6, 1, 3, 2, 10, 3, 2,
        5, 11, 6, 3, 4, 10, 8, 4, 1, 4, 2, 5, 2, 2, 10, 11, 5, 3, 1, 6, 1, 2, 3, 2, 6, 4, 4, 3, 16, 9, 5, 12, 1, 13,
        19, 2, 7, 14, 2, 9, 2, 3, 5, 7, 1, 17, 5, 1, 1, 4, 6, 2, 2, 10, 6, 5, 5],
    event=[1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0,
        1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0],
    arm=["ctl", "ctl", "new", "ctl", "new", "new", "new", "new", "new", "new", "new", "new", "new", "ctl", "new",
        "new", "ctl", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "new", "new", "new", "ctl", "ctl", "ctl", "new",
        "ctl", "new", "new", "ctl", "ctl", "new", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl",
        "ctl", "ctl", "new", "ctl", "new", "ctl", "new", "new", "ctl", "ctl", "ctl", "new", "ctl", "new", "new",
        "new", "new", "ctl", "new", "new", "ctl", "new", "new", "new", "ctl", "new", "ctl", "ctl", "new", "new",
        "ctl", "ctl", "ctl", "new", "new", "new", "new", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "new", "new"],
    age=[58, 61, 59, 64, 64, 65, 60, 57, 77, 72, 70, 42, 62, 75, 64, 47, 60, 61, 78, 61, 49, 44, 67, 79, 62, 43, 41,
        71, 51, 59, 77, 50, 71, 43, 40, 41, 51, 59, 40, 64, 73, 60, 44, 72, 42, 60, 79, 54, 57, 50, 52, 49, 41, 69,
        55, 79, 54, 71, 60, 65, 40, 74, 45, 78, 48, 70, 57, 70, 52, 50, 64, 40, 51, 66, 76, 58, 78, 51, 42, 67, 48,
        78, 62, 78, 70, 67, 42, 73, 47, 43],
    stage=["III", "III", "III", "III", "IV", "III", "III", "IV", "IV", "III", "IV", "IV", "III", "III", "III",
        "III", "IV", "III", "III", "III", "IV", "III", "III", "III", "IV", "III", "IV", "IV", "IV", "III", "III",
        "IV", "IV", "III", "III", "IV", "III", "III", "IV", "III", "IV", "III", "IV", "III", "III", "III", "III",
        "III", "IV", "IV", "IV", "III", "III", "III", "III", "III", "IV", "IV", "IV", "IV", "III", "III", "IV",
        "III", "III", "III", "III", "III", "III", "IV", "IV", "IV", "III", "III", "IV", "III", "III", "III", "IV",
        "III", "IV", "IV", "III", "IV", "III", "IV", "III", "III", "IV", "III"],
))

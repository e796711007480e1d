# Spearman rank correlation of first differences: the changes, which spearman's reference code then tests.
# {role} fields are filled with the scenario's columns; d becomes the changes from one period to the next.
import numpy as np
import pandas as pd
d = d.sort_values("{period}", kind="stable")
one_step = np.diff(d["{period}"].to_numpy(float)) == 1  # changes from one period to the next
d = pd.DataFrame({"{x}": np.diff(d["{x}"].to_numpy(float))[one_step],
                  "{y}": np.diff(d["{y}"].to_numpy(float))[one_step]})

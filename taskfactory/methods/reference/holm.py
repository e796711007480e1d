# Reference answer of holm: the count of Holm rejections at a family-wise error rate of 5 %.
from statsmodels.stats.multitest import multipletests

reject, _, _, _ = multipletests([{p_list}], alpha=0.05, method="holm")
print("COUNT:", int(reject.sum()))

# Reference answer of holm: the count of Holm rejections at a family-wise error rate of 5 %.
p <- c({p_list})
cat(sprintf("COUNT: %d\n", sum(p.adjust(p, method = "holm") <= 0.05)))

"""One module per method family: a :class:`~taskfactory.family.Family`
subclass and one ``register(...)`` call.

Modules are discovered by :func:`taskfactory.registry.families`; a module whose
name starts with ``_`` holds shared helpers and registers nothing.
"""

#: The order of the families (``taskfactory methods``, the dataset
#: card, ``methods: all``); a registered family not listed here follows, by name.
FAMILY_ORDER = (
    "one_sample_t", "binomial_exact", "paired_t", "mcnemar", "welch_t", "mann_whitney",
    "cluster_means_t", "wilcoxon_signed_rank", "sign_test",
    "one_way_anova", "welch_anova", "kruskal_wallis", "cluster_means_anova", "friedman", "factorial_anova",
    "chi_square_independence", "chi_square_gof", "two_proportion_z", "fisher_exact", "cluster_proportions_t",
    "pearson", "spearman", "kendall", "pearson_differences", "spearman_differences",
    "ols_coefficient", "ols_robust", "tobit", "ols_quadratic", "ols_cluster", "linear_mixed",
    "cluster_fixed_effects",
    "logistic_regression", "poisson_regression", "negative_binomial",
    "log_rank", "cox_ph", "cluster_event_rates_t", "iv_2sls", "panel_fixed_effects", "diff_in_diff", "holm_adjusted", "bh_fdr",
    "wilson_ci", "two_prop", "two_prop_z", "sample_size", "holm",
)

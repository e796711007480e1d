"""Names of the tests the families run, as answers write them (see
:mod:`taskfactory.testnames`). A family refers to these for its canonical,
naive and accepted tests; a test only one family knows may be named in its
own module instead."""

from ..testnames import TestName

WELCH_T = TestName("Welch two-sample t-test", (
    "welch", "welch t test", "unequal variance t test", "separate variance t test", "satterthwaite t test",
    "t test", "t test var equal false", "t test not assuming equal variance",
    "t test without assuming equal variance"))
STUDENT_T = TestName("Student two-sample t-test", (
    "student", "student t test", "two sample t test", "pooled t test", "pooled variance t test",
    "equal variance t test", "t test var equal true", "independent sample t test assuming equal variance"))
PAIRED_T = TestName("Paired t-test", (
    "paired t test", "paired sample t test", "dependent sample t test", "matched pair t test",
    "repeated measure t test", "t test paired true", "one sample t test of the difference",
    "t test on the difference"))
ONE_SAMPLE_T = TestName("One-sample t-test", ("one sample t test", "single sample t test", "t test mu"))

RANK_SUM = TestName("Wilcoxon rank sum test", (
    "mann whitney", "mann whitney u", "wilcoxon rank sum", "wilcoxon mann whitney", "rank sum test",
    "u test", "wilcox test", "wilcoxon rank sum exact test"))
RANK_SUM_CORRECTED = TestName("Wilcoxon rank sum test with continuity correction", (
    "rank sum continuity correction", "mann whitney continuity correction", "mann whitney normal approximation",
    "rank sum normal approximation", "wilcox test exact false", "mann whitney u test with continuity correction"))
SIGNED_RANK = TestName("Wilcoxon signed rank test", (
    "signed rank", "wilcoxon signed rank", "wilcoxon matched pair", "wilcoxon signed rank exact test",
    "wilcox test paired true", "wilcoxon paired"))
SIGNED_RANK_CORRECTED = TestName("Wilcoxon signed rank test with continuity correction", (
    "signed rank continuity correction", "signed rank normal approximation",
    "wilcox test paired true exact false"))

CLASSICAL_ANOVA = TestName("One-way analysis of variance (equal variances)", (
    "anova", "one way anova", "analysis of variance", "one way analysis of variance", "f test", "classical anova",
    "aov", "one way test var equal true", "fisher one way anova", "one way analysis of mean"))
WELCH_ANOVA = TestName("Welch one-way ANOVA", (
    "welch anova", "welch f", "welch f test", "welch one way anova", "welch test", "one way test",
    "one way analysis of mean not assuming equal variance", "anova not assuming equal variance",
    "heteroscedastic anova", "welch analysis of variance", "anova without assuming equal variance"))
KRUSKAL_WALLIS = TestName("Kruskal-Wallis rank sum test", (
    "kruskal wallis", "kruskal wallis h", "kruskal test", "kruskal wallis rank sum test", "h test"))

PEARSON = TestName("Pearson correlation test", (
    "pearson", "pearson correlation", "pearson product moment correlation", "pearson r", "cor test",
    "correlation test", "cor test method pearson"))
SPEARMAN = TestName("Spearman rank correlation test", (
    "spearman", "spearman rho", "spearman rank correlation", "spearman correlation", "cor test method spearman"))
KENDALL = TestName("Kendall rank correlation test", (
    "kendall", "kendall tau", "kendall rank correlation", "cor test method kendall", "kendall tau b"))


def _of_differences(test: TestName, label: str, phrases: tuple[str, ...]) -> TestName:
    """``test`` run on first differences: each of its phrases with "difference",
    "first difference", "change" or "differenced" after it or "differenced"
    before it, so that a line naming both the test and the differences is
    covered by this name's phrases alone, and ``phrases`` of its own."""
    bases = (test.label, *test.phrases)
    return TestName(label, (*phrases, *(f"{base} {after}" for base in bases
                                        for after in ("difference", "first difference", "change", "differenced")),
                            *(f"{before} {base}" for base in bases for before in ("differenced", "first differenced"))))


CLUSTER_MEANS_T = TestName("Two-sample t-test on cluster means", (
    "t test on cluster mean", "t test of cluster mean", "two sample t test on cluster mean",
    "student t test on cluster mean", "pooled t test on cluster mean", "cluster level t test",
    "cluster level analysis", "t test on the cluster mean", "t test of the cluster mean", "analysis of cluster mean",
    "t test var equal true on cluster mean", "t test on mean per cluster", "aggregate cluster mean t test"))
CLUSTER_MEANS_WELCH_T = TestName("Welch t-test on cluster means", (
    "welch t test on cluster mean", "welch t test of cluster mean", "welch on cluster mean",
    "welch t test on the cluster mean", "unequal variance t test on cluster mean", "welch cluster level t test"))

CLUSTER_PROPORTIONS_T = TestName("Two-sample t-test on cluster proportions", (
    "t test on cluster proportion", "t test of cluster proportion", "two sample t test on cluster proportion",
    "student t test on cluster proportion", "pooled t test on cluster proportion", "t test on the cluster proportion",
    "t test of the cluster proportion", "cluster level t test on proportion", "t test on proportion per cluster",
    "t test on cluster level proportion", "t test on cluster prevalence",
    "t test var equal true on cluster proportion", "analysis of cluster proportion"))
CLUSTER_PROPORTIONS_WELCH_T = TestName("Welch t-test on cluster proportions", (
    "welch t test on cluster proportion", "welch t test of cluster proportion", "welch on cluster proportion",
    "welch t test on the cluster proportion", "unequal variance t test on cluster proportion",
    "welch t test on cluster rate"))

CLUSTER_RATES_T = TestName("Two-sample t-test on cluster event rates", (
    "t test on cluster event rate", "t test of cluster event rate", "two sample t test on cluster event rate",
    "student t test on cluster event rate", "pooled t test on cluster event rate", "t test on the cluster event rate",
    "t test on cluster incidence rate", "t test on event rate per cluster", "t test on events per person time",
    "cluster level t test on event rate", "t test var equal true on cluster event rate",
    "analysis of cluster event rate"))
CLUSTER_RATES_WELCH_T = TestName("Welch t-test on cluster event rates", (
    "welch t test on cluster event rate", "welch t test of cluster event rate", "welch on cluster event rate",
    "welch t test on the cluster event rate", "unequal variance t test on cluster event rate",
    "welch t test on cluster incidence rate"))


CLUSTER_MEANS_ANOVA = TestName("One-way ANOVA on cluster means", (
    "anova on cluster mean", "anova of cluster mean", "one way anova on cluster mean", "f test on cluster mean",
    "one way test on cluster mean", "anova on the cluster mean", "cluster level anova",
    "analysis of variance of cluster mean",
    "oneway test var equal true on cluster mean", "cluster level analysis of variance"))


PEARSON_DIFFERENCES = _of_differences(PEARSON, "Pearson correlation of first differences", (
    "first difference", "differenced", "correlation difference", "correlation change", "cor test diff"))
SPEARMAN_DIFFERENCES = _of_differences(SPEARMAN, "Spearman rank correlation of first differences", (
    "rank correlation difference", "rank correlation change", "cor test diff method spearman"))
KENDALL_DIFFERENCES = _of_differences(KENDALL, "Kendall rank correlation of first differences", (
    "cor test diff method kendall",))

OLS = TestName("Linear regression t-test of the coefficient", (
    "linear regression", "multiple regression", "multiple linear regression", "ols", "ordinary least square",
    "summary lm", "lm", "regression t test", "t test of the coefficient", "adjusted regression",
    "linear model", "ols t test"))
UNADJUSTED_OLS = TestName("Simple linear regression without the covariates", (
    "simple linear regression", "simple regression", "unadjusted regression", "unadjusted linear regression",
    "bivariate regression", "regression without covariate", "lm without covariate"))
OLS_QUADRATIC = TestName("Linear regression with quadratic terms for the covariates", (
    "quadratic term", "squared term", "quadratic covariate", "quadratic adjustment", "polynomial adjustment",
    "second degree polynomial", "linear regression quadratic", "linear model quadratic", "lm quadratic",
    "lm squared term", "lm poly", "ols quadratic", "ols squared term", "ols polynomial", "regression quadratic",
    "regression polynomial", "regression squared term"))
OLS_HC3 = TestName("Linear regression with HC3 robust standard errors", (
    "robust standard error", "heteroscedasticity consistent", "heteroskedasticity consistent", "hc3",
    "vcovhc", "sandwich", "white standard error", "huber white", "robust regression standard error",
    "heteroscedasticity robust", "heteroskedasticity robust", "coeftest vcovhc", "ols robust standard error",
    "ols white standard error", "ols hc3", "lm hc3", "lm robust standard error", "regression robust standard error"))
OLS_CLUSTER = TestName("Linear regression with cluster-robust standard errors", (
    "cluster robust", "clustered standard error", "cluster robust standard error", "vcovcl",
    "coeftest vcovcl", "standard error clustered by", "cluster sandwich", "cluster adjusted standard error",
    "ols clustered standard error", "ols cluster robust standard error", "lm clustered standard error",
    "regression clustered standard error"))
CLUSTER_WITHIN = TestName("Linear regression with cluster fixed effects (within clusters)", (
    "cluster fixed effects", "fixed effects", "fixed effect", "fixed effects regression", "fixed effects model",
    "within estimator", "within cluster estimator", "within cluster regression", "within model",
    "least squares dummy variable", "lsdv", "cluster dummies", "regression with cluster dummies",
    "demeaned regression", "cluster demeaned regression", "lm factor cluster", "school fixed effects",
    "firm fixed effects", "village fixed effects", "practice fixed effects", "linear regression fixed effects",
    "regression fixed effects", "ols fixed effects", "lm fixed effects", "lm factor", "regression factor cluster",
    "fixed effects cluster robust", "fixed effects clustered standard error"))
WITHIN_BETWEEN = TestName("Linear mixed model with the cluster mean of the exposure (within-between)", (
    "within between model", "within between", "within and between", "mundlak", "mundlak model", "mundlak device",
    "hybrid model", "hybrid mixed model", "correlated random effects", "cluster mean centred", "cluster mean centered",
    "group mean centred", "group mean centered", "random intercept with the cluster mean",
    "mixed model with the cluster mean", "contextual effect model", "within between mixed model",
    "mundlak mixed model", "mixed model cluster mean", "linear mixed model cluster mean", "random intercept cluster mean",
    "lmer cluster mean", "mixed model mundlak", "hybrid mixed model mundlak"))
LINEAR_MIXED = TestName("Linear mixed model with a random intercept (REML, Satterthwaite t-test)", (
    "linear mixed model", "linear mixed effects model", "mixed model", "mixed effects model", "mixed effects regression",
    "lmer", "lmertest", "lme4", "random intercept", "random intercept model", "random intercept regression",
    "multilevel model", "multilevel regression", "hierarchical linear model", "lmm",
    "linear mixed model satterthwaite t test", "mixed model satterthwaite t test",
    "random intercept satterthwaite t test", "lmer satterthwaite t test", "lmertest satterthwaite t test",
    "satterthwaite degree of freedom mixed model"))
IV_2SLS = TestName("Instrumental-variable regression (two-stage least squares) t-test", (
    "instrumental variable", "instrumental variables", "instrumental variable regression",
    "instrumental variables regression", "iv regression", "iv estimation", "iv estimator", "2sls", "tsls",
    "two stage least square", "two stage least squares", "ivreg", "aer ivreg", "iv2sls",
    "2sls t test", "tsls t test", "ivreg t test", "iv2sls t test", "iv t test", "iv regression t test",
    "2sls t test of the coefficient", "ivreg t test of the coefficient", "iv regression t test of the coefficient",
    "iv t test of the coefficient", "iv2sls t test of the coefficient", "tsls t test of the coefficient",
    "instrumental variable t test of the coefficient", "instrumental variables t test of the coefficient",
    "two stage least square t test of the coefficient", "two stage least squares t test of the coefficient",
    "instrumental variable linear regression", "instrumental variables linear regression"))

LOGISTIC = TestName("Logistic regression Wald z-test", (
    "logistic regression", "logit", "logit model", "binomial glm", "glm binomial", "glm family binomial",
    "logistic model", "binary logistic regression", "wald z logistic"))
UNADJUSTED_LOGISTIC = TestName("Logistic regression without the covariates", (
    "unadjusted logistic regression", "simple logistic regression", "crude logistic regression",
    "logistic regression without covariate", "univariable logistic regression",
    "logistic regression on the exposure alone"))
POISSON = TestName("Poisson regression Wald z-test", (
    "poisson regression", "poisson glm", "glm poisson", "glm family poisson", "poisson model",
    "log linear poisson", "poisson rate regression", "poisson regression with offset"))
POISSON_NO_OFFSET = TestName("Poisson regression without the exposure-time offset", (
    "poisson regression without offset", "poisson without offset", "poisson glm without offset",
    "poisson ignoring exposure time"))
NEGATIVE_BINOMIAL = TestName("Negative binomial regression Wald z-test", (
    "negative binomial", "negative binomial regression", "glm nb", "mass glm nb", "negbin", "nb2",
    "negative binomial glm", "overdispersed poisson", "gamma poisson"))

FISHER = TestName("Fisher's exact test", (
    "fisher", "fisher exact", "fisher exact test", "fisher test", "exact test for count data",
    "fisher exact test for count data", "hypergeometric test"))
BINOMIAL = TestName("Exact binomial test", (
    "binomial", "binomial test", "exact binomial", "binom test", "clopper pearson", "exact test of a proportion"))
PROP_Z_ONE = TestName("One-sample proportion z-test", (
    "one sample proportion", "one proportion z test", "z test for a proportion", "1 sample proportion test",
    "one sample z test for proportion", "normal approximation", "prop test correct false"))
MCNEMAR = TestName("McNemar's test", (
    "mcnemar", "mcnemar test", "mcnemar chi square", "mcnemar chi square test", "mcnemar test with continuity "
    "correction", "test of marginal homogeneity", "exact mcnemar"))
FRIEDMAN = TestName("Friedman rank sum test", (
    "friedman", "friedman test", "friedman rank sum test", "friedman anova", "friedman chi square"))
FACTORIAL = TestName("Two-way ANOVA interaction F test", (
    "two way anova", "factorial anova", "two factor anova", "interaction", "anova of lm a b",
    "two way analysis of variance", "aov a b", "interaction f test"))
CHI_SQUARE = TestName("Pearson chi-square test of independence", (
    "chi square", "chi square test", "pearson chi square", "chi square test of independence", "chisq test",
    "test of independence", "chi square test of association"))
CHI_SQUARE_GOF = TestName("Chi-square goodness-of-fit test", (
    "goodness of fit", "chi square goodness of fit", "chi square goodness of fit test", "chisq test p",
    "chi squared test for given probabilities", "test for given probabilities"))
PROP_TEST = TestName("Two-sample test for equality of proportions with continuity correction", (
    "prop test", "test for equality of proportion", "two proportion test", "yates",
    "continuity corrected two proportion z test", "two proportion z test with continuity correction",
    "chi square test with yates continuity correction", "two proportion z test with yates correction",
    "yates corrected"))
PROP_Z = TestName("Two-proportion z-test without continuity correction", (
    "two proportion z test", "z test for two proportion", "z test of proportion", "pooled z test",
    "two sample z test for proportion", "prop test correct false", "prop test without continuity correction",
    "proportion test without continuity correction", "uncorrected z test", "uncorrected prop test",
    "two sample test for equality of proportion without continuity correction"))

LOG_RANK = TestName("Log-rank test", (
    "log rank", "logrank", "log rank test", "survdiff", "mantel cox", "mantel cox test", "log rank chi square",
    "mantel haenszel log rank", "survdiff rho 0"))
COX_PH = TestName("Cox proportional hazards regression Wald z-test", (
    "cox", "cox regression", "cox model", "coxph", "cox proportional hazard", "proportional hazard regression",
    "proportional hazard model", "adjusted cox regression", "multivariable cox regression", "wald z cox"))

PANEL_WITHIN = TestName("Panel regression with unit fixed effects (within estimator)", (
    "fixed effect", "fixed effects", "fixed effects regression", "fixed effects model", "unit fixed effects",
    "entity fixed effects", "individual fixed effects", "panel fixed effects", "fixed effect regression",
    "within estimator", "within model", "within regression", "plm within", "plm model within",
    "least squares dummy variable", "lsdv", "demeaned regression", "one way within model"))
POOLED_OLS = TestName("Pooled linear regression ignoring the units", (
    "pooled ols", "pooled regression", "pooled linear regression", "pooled ordinary least squares",
    "plm pooling", "pooling model", "pooled cross section regression"))
DID_CLUSTER = TestName("Difference-in-differences regression with cluster-robust standard errors", (
    "difference in differences cluster robust", "difference in differences clustered",
    "difference in differences vcovcl", "difference in differences standard errors clustered",
    "did cluster robust", "did clustered", "did vcovcl", "diff in diff cluster robust", "diff in diff clustered",
    "did standard errors clustered", "treated post coeftest vcovcl", "difference in difference cluster robust",
    "difference in difference clustered"))
DID_CLASSICAL = TestName("Difference-in-differences regression with classical standard errors", (
    "difference in differences", "difference in difference", "diff in diff", "did regression", "did ols",
    "difference in differences regression", "difference in differences classical standard errors",
    "difference in differences ols", "did classical standard errors", "summary lm treated post"))
TOBIT = TestName("Tobit regression Wald z-test", (
    "tobit", "tobit regression", "tobit model", "aer tobit", "censored regression", "censored regression model",
    "censored normal regression", "left censored regression", "censored linear regression", "type i tobit",
    "survreg gaussian", "survreg dist gaussian", "censreg", "tobit left 0"))
HOLM_WELCH = TestName("Welch t-tests over the panel with Holm adjustment", (
    "holm", "holm bonferroni", "holm adjusted", "holm adjustment", "holm correction", "holm corrected",
    "holm method", "holm step down", "step down bonferroni", "sequentially rejective bonferroni",
    "p adjust holm", "p adjust method holm", "holm adjusted t test", "holm adjusted welch t test",
    "welch t test holm", "t test holm", "two sample t test holm", "welch two sample t test holm",
    "welch t test holm bonferroni", "two sample t test holm bonferroni"))
BH_WELCH = TestName("Welch t-tests over the panel with Benjamini-Hochberg adjustment", (
    "benjamini hochberg", "bh", "fdr", "false discovery rate", "benjamini hochberg adjusted",
    "benjamini hochberg correction", "benjamini hochberg procedure", "bh adjusted", "fdr adjusted",
    "fdr correction", "fdr corrected", "p adjust bh", "p adjust method bh", "p adjust fdr", "p adjust method fdr",
    "welch t test bh", "welch t test fdr", "welch t test benjamini hochberg", "t test bh", "t test fdr",
    "t test benjamini hochberg", "bh adjusted t test", "fdr adjusted t test", "two sample t test bh",
    "two sample t test fdr", "two sample t test benjamini hochberg", "welch two sample t test benjamini hochberg"))

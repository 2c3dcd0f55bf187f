"""scikit-learn's own estimator checks; the ones that cannot apply to an online learner are
expected failures whose reasons come from ``sketchlearn.expected_failed_checks``."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sketchlearn import (
    DRPClassifier,
    DRPRegressor,
    FMClassifier,
    FMRegressor,
    FrequentDirections,
    OnlineClassifier,
    OnlineRegressor,
    expected_failed_checks,
)


@parametrize_with_checks(
    [
        OnlineClassifier(),
        OnlineClassifier(algo="newton", curvature="oja", loss="hinge"),
        OnlineRegressor(),
        FrequentDirections(size=4),
        FMClassifier(),
        FMRegressor(),
        DRPClassifier(),
        DRPClassifier(loss="smooth-hinge", iterations=3),
        DRPRegressor(),
        DRPRegressor(size=50, iterations=3),
    ],
    expected_failed_checks=expected_failed_checks,
    xfail_strict=True,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)

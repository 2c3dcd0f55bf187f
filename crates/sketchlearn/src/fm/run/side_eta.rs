//! sftrl-split's default pairwise step with side features ([`FmOverrides::config`]): why 0.5
//! (ids alone) diverges once a row holds more feature pairs, and the steps measured for each
//! kind of side feature.
//!
//! [`FmOverrides::config`]: super::FmOverrides::config

/// sftrl-split's default pairwise step η_p with side-feature columns (`--columns` with more
/// than three entries) instead of 0.5. The pairwise part's step moves a prediction by about
/// η_p·g·q with q = ‖xxᵀ − diag(x²)‖²_F = (Σx²)² − Σx⁴, the pairs of features a row holds: q = 2
/// for a user-item pair, so η_p = 0.5 fits each residual exactly; every side feature adds pairs
/// (q ≈ 7 on MovieLens-100K with five side columns) and 0.5 diverges. Measured (`fm --quiet
/// --columns … --eta-pairwise E`): on MovieLens-100K with age, gender, occupation, genres, year
/// E = 0.5 diverges, 0.1 → test RMSE 1.0196, 0.05 → 0.9706, 0.02 → 0.9511, 0.01 → 0.9480,
/// 0.005 → 0.9480; on tests/data/ratings_side.csv 0.5 → 17.97, 0.1 → 0.371, 0.02 → 0.350.
pub const SIDE_COLUMNS_ETA_PAIRWISE: f64 = 0.01;

/// sftrl-split's default pairwise step η_p with MovieLens side files (`--user-features`,
/// `--item-features`) instead of 0.5, by the reasoning of [`SIDE_COLUMNS_ETA_PAIRWISE`]: here every
/// side feature is a one-hot of value 1 (age bucket, gender, occupation, each genre, decade), so a
/// MovieLens-100K row holds about n = 8 features and q = n(n − 1) ≈ 56 pairs (side columns are
/// scaled to weigh about one id together, so they add fewer), and η_p must be about 28 times
/// smaller than 0.5 only to stay stable. Measured on MovieLens-100K (`fm --quiet --user-features
/// movielens100k_users.psv --item-features movielens100k_items.psv --eta-pairwise E
/// movielens100k.tsv`, test RMSE): E = 0.5 and 0.05 diverge, 0.02 → 1.2669, 0.01 → 1.0683,
/// 0.005 → 0.9938, 0.002 → 0.9658, 0.001 → 0.9595, 0.0005 → 0.9570 (ids alone at 0.5: 0.9472).
/// 0.001 is within 0.003 of the smallest step tried and keeps a pairwise part that learns.
pub const SIDE_FILES_ETA_PAIRWISE: f64 = 0.001;

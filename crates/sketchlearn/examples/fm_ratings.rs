//! A factorization machine on ratings: a small table of (user, item, rating) is generated from
//! rank-3 user and item profiles plus noise (ratings rounded to 1–5, like MovieLens), each
//! rating becomes a one-hot row `[user; item]`, and Sketched FTRL (`sftrl-split`: exact
//! first-order part, doubling sketch of the pairwise part, square loss, default steps) learns
//! it progressively over two passes; the last 20 % of the ratings are held out. The held-out
//! RMSE is compared with predicting the training mean and with a linear model of the same rows
//! (user and item biases only), which cannot represent the user × item interactions that the
//! FM's pairwise term captures.
//!
//! ```text
//! cargo run --release -p sketchlearn --example fm_ratings
//! ```

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::prelude::*;

const USERS: usize = 60;
const ITEMS: usize = 40;
const RATINGS: usize = 12_000;
const RANK: usize = 3;

/// Rows `[user one-hot; item one-hot]` with the rating as label, in random order.
fn ratings_table(seed: u64) -> Vec<Example> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut profile = |n: usize| -> Vec<[f64; RANK]> {
        (0..n)
            .map(|_| std::array::from_fn(|_| rng.random::<f64>() * 2.0 - 1.0))
            .collect()
    };
    let (users, items) = (profile(USERS), profile(ITEMS));
    (0..RATINGS)
        .map(|_| {
            let (u, i) = (rng.random_range(0..USERS), rng.random_range(0..ITEMS));
            let affinity: f64 = users[u].iter().zip(&items[i]).map(|(a, b)| a * b).sum();
            let noise = rng.random::<f64>() - 0.5;
            let rating = (3.0 + 2.0 * affinity + noise).round().clamp(1.0, 5.0);
            Example {
                label: rating,
                weight: 1.0,
                indices: vec![u as u32, (USERS + i) as u32],
                values: vec![1.0, 1.0],
            }
        })
        .collect()
}

fn rmse(model: &impl Learner, rows: &[Example]) -> f64 {
    let se: f64 = rows
        .iter()
        .map(|ex| (model.predict(ex.row()) - ex.label).powi(2))
        .sum();
    (se / rows.len() as f64).sqrt()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = ratings_table(2018);
    let (train, test) = data.split_at(data.len() * 4 / 5);
    let dim = USERS + ITEMS;
    let mean = train.iter().map(|ex| ex.label).sum::<f64>() / train.len() as f64;
    println!(
        "{} ratings by {USERS} users of {ITEMS} items (d = {dim}); {} learned, {} held out",
        data.len(),
        train.len(),
        test.len()
    );

    let fm_config = FmConfig {
        intercept: Some(mean),
        ..FmConfig::new(FmAlgorithm::SftrlSplit)
    };
    println!("FM: {}", fm_config.describe());
    let mut fm = FmModel::new(fm_config, fm_config.build(dim)?);
    let linear_config = LearnerConfig {
        loss: Loss::Squared,
        ..LearnerConfig::default()
    };
    let mut linear = LinearModel::new(linear_config.clone(), linear_config.build(dim)?);
    for pass in 1..=2 {
        let (mut fm_se, mut lin_se) = (0.0, 0.0);
        for ex in train {
            fm_se += (fm.learn(ex.row(), ex.label)? - ex.label).powi(2);
            lin_se += (linear.learn(ex.row(), ex.label)? - ex.label).powi(2);
        }
        let n = train.len() as f64;
        println!(
            "pass {pass}: progressive RMSE  FM {:.3}  linear {:.3}",
            (fm_se / n).sqrt(),
            (lin_se / n).sqrt()
        );
    }
    let base =
        (test.iter().map(|ex| (ex.label - mean).powi(2)).sum::<f64>() / test.len() as f64).sqrt();
    println!(
        "held-out RMSE: FM {:.3}, linear {:.3}, training mean {base:.3}",
        rmse(&fm, test),
        rmse(&linear, test)
    );
    Ok(())
}

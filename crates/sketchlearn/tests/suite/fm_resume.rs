//! Every FM learner resumes bit-exactly: learning `k` examples, saving, loading and learning the
//! rest gives the same progressive predictions, final predictions and weights, to the bit, as
//! one uninterrupted run. (A model saved after [`AnyFm::compact`] does not: the compaction changes
//! the arithmetic of later steps, so `sketchlearn fm` saves before it compacts.)

use sketchlearn::fm::{AnyFm, FmAlgorithm, FmConfig, FmModel};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::loss::Loss;
use sketchlearn::Row;

type Data = Vec<(Vec<u32>, Vec<f64>, f64)>;

/// One-hot user + item rows (20 users, 15 items, d = 35) with ratings from user and item effects.
fn ratings(n: usize) -> Data {
    let mut state = 12345u64;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (u, i) = ((state >> 33) % 20, (state >> 17) % 15);
            let r = (1 + (u % 3) + (i % 3)).min(5) as f64;
            (vec![u as u32, 20 + i as u32], vec![1.0, 1.0], r)
        })
        .collect()
}

fn learn_all(fm: &mut AnyFm, data: &[(Vec<u32>, Vec<f64>, f64)]) -> Vec<u64> {
    data.iter()
        .map(|(i, v, y)| {
            let x = Row::Sparse {
                indices: i,
                values: v,
            };
            fm.learn(x, *y, 1.0).unwrap().to_bits()
        })
        .collect()
}

fn fingerprint(fm: &AnyFm, data: &Data) -> Vec<u64> {
    let preds = data.iter().map(|(i, v, _)| {
        fm.predict(Row::Sparse {
            indices: i,
            values: v,
        })
    });
    preds
        .chain(fm.weights().iter().copied())
        .map(f64::to_bits)
        .collect()
}

/// A fixed intercept (each learner's own centring) or `None`: the default, the running label
/// mean, whose state (mean and weight) the model file must carry.
fn config(algorithm: FmAlgorithm, intercept: Option<f64>) -> FmConfig {
    let mut c = FmConfig::for_loss(algorithm, Loss::Squared);
    c.size = 6; // below d + 2: the sketches compress
    c.radius = 10.0;
    c.ocg_block = 5;
    c.intercept = intercept;
    c
}

#[test]
fn every_fm_algorithm_resumes_bit_exactly() {
    let data = ratings(300);
    let d = 35;
    let dir = std::env::temp_dir().join(format!("sketchlearn-fm-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (algorithm, intercept) in FmAlgorithm::ALL
        .into_iter()
        .flat_map(|a| [(a, Some(3.0)), (a, None)])
    {
        for k in [1, 37, 150] {
            let c = config(algorithm, intercept);
            let mut straight = c.build(d).unwrap();
            let preds_a = learn_all(&mut straight, &data);
            let mut first = FmModel::new(c, c.build(d).unwrap());
            let mut preds_b = learn_all(&mut first.learner, &data[..k]);
            let path = dir.join(format!("{algorithm}-{k}.skl"));
            first.save(&path).unwrap();
            let mut resumed = FmModel::load(&path).unwrap();
            preds_b.extend(learn_all(&mut resumed.learner, &data[k..]));
            let what = format!("{algorithm} intercept={intercept:?} k={k}");
            assert!(preds_a == preds_b, "{what}: progressive predictions differ");
            assert!(
                fingerprint(&straight, &data) == fingerprint(&resumed.learner, &data),
                "{what}: final predictions or weights differ"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

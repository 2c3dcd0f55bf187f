use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::*;
use sketchlearn::Row;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let curv: CurvatureKind = a[1].parse().unwrap();
    let n: usize = a[2].parse().unwrap();
    let diag = a.get(3).is_some_and(|s| s == "diag");
    let d = 1usize << 18;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let w: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
    let data: Vec<(Vec<u32>, Vec<f64>, f64)> = (0..n).map(|_| {
        let mut idx: Vec<u32> = (0..50).map(|_| rng.random_range(0..d as u32)).collect();
        idx.sort(); idx.dedup();
        let v: Vec<f64> = idx.iter().map(|_| rng.random_range(-0.3..0.3)).collect();
        let s: f64 = idx.iter().zip(&v).map(|(i, x)| w[*i as usize] * x).sum();
        (idx, v, if s > 0.0 { 1.0 } else { -1.0 })
    }).collect();
    let cfg = LearnerConfig { algorithm: Algorithm::Newton, curvature: curv, diag, alpha: 2.0, ..Default::default() };
    let mut l = cfg.build(d).unwrap();
    let t = std::time::Instant::now();
    let mut err = 0;
    for (i, v, y) in &data {
        let p = l.learn(Row::Sparse { indices: i, values: v }, *y, 1.0).unwrap();
        if (p > 0.0) != (*y > 0.0) { err += 1; }
    }
    let s = t.elapsed().as_secs_f64();
    println!("{curv} diag={diag}: {:.2} us/ex, {:.0} ex/s, err {:.3}", s / n as f64 * 1e6, n as f64 / s, err as f64 / n as f64);
}

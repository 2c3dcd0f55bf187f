//! Probe: softmax members and online mixtures of them, one pass in file order.
//!
//! `MEMBERS="[curvature:]c,ridge,alpha,m[,d0] ..."` (softmax, row-scaled, `alpha` both `α` and
//! `α₀`, rfd-fast unless a curvature is named, the representation the CLI would choose; the
//! member `default` is the untuned default, `MulticlassConfig::from_member`); prints each member's progressive error and the errors of mixtures of all
//! of them: Bayes (`η = 1` on log loss), AdaHedge on the multiclass Brier score, and following
//! the leader on log loss.

mod common;

use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassLearner, Reduction};

use common::read_with_classes as read;

fn member(k: usize, spec: &str) -> MulticlassConfig {
    if spec == "default" {
        // The untuned default, as `train --multiclass --reduction softmax` builds it.
        let member = sketchlearn::linear::LearnerConfig::default();
        let given = sketchlearn::linear::multiclass::SoftmaxGiven::default();
        let c = MulticlassConfig::from_member(Reduction::Softmax, member, given).unwrap();
        return MulticlassConfig { classes: k, ..c };
    }
    let (curvature, spec) = match spec.split_once(':') {
        Some((c, rest)) => (c.parse().unwrap(), rest),
        None => (sketchlearn::linear::CurvatureKind::RfdFast, spec),
    };
    let v: Vec<f64> = spec.split(',').map(|s| s.parse().unwrap()).collect();
    let base = MulticlassConfig {
        reduction: Reduction::Softmax,
        classes: k,
        ..MulticlassConfig::default()
    };
    MulticlassConfig {
        c: v[0],
        ridge: v[1],
        alpha0: v[2],
        alpha: v[2],
        curvature,
        size: v[3] as usize,
        diag: v.get(4).is_some_and(|&d0| d0 > 0.0),
        diag_d0: v.get(4).copied().unwrap_or(base.diag_d0),
        ..base
    }
}

fn argmax(p: &[f64]) -> usize {
    (0..p.len()).fold(0, |b, j| if p[j] > p[b] { j } else { b })
}

/// AdaHedge (de Rooij et al. 2014, Alg. 1) weights from cumulative losses `l` and gap `delta`.
fn adahedge_weights(l: &[f64], delta: f64) -> Vec<f64> {
    let n = l.len() as f64;
    let min = l.iter().copied().fold(f64::INFINITY, f64::min);
    if delta <= 0.0 {
        let w: Vec<f64> = l.iter().map(|&x| (x == min) as u8 as f64).collect();
        let s: f64 = w.iter().sum();
        return w.iter().map(|x| x / s).collect();
    }
    let eta = n.ln() / delta;
    let w: Vec<f64> = l.iter().map(|&x| (-eta * (x - min)).exp()).collect();
    let s: f64 = w.iter().sum();
    w.iter().map(|x| x / s).collect()
}

fn mix(p: &[Vec<f64>], w: &[f64]) -> Vec<f64> {
    let k = p[0].len();
    (0..k)
        .map(|j| p.iter().zip(w).map(|(q, wi)| wi * q[j]).sum())
        .collect()
}

fn main() {
    let specs = std::env::var("MEMBERS").expect("MEMBERS");
    let specs: Vec<&str> = specs.split_whitespace().collect();
    for path in std::env::args().skip(1) {
        let (data, d, k) = read(&path);
        let n = data.len() as f64;
        let avg_nnz = data.iter().map(|(e, _)| e.indices.len()).sum::<usize>() as f64 / n;
        let mut learners: Vec<_> = specs
            .iter()
            .map(|s| {
                member(k, s)
                    .for_input(d, false, Some(avg_nnz))
                    .build(d)
                    .unwrap()
            })
            .collect();
        let nm = learners.len();
        let mut mistakes = vec![0usize; nm];
        let mut logloss = vec![0.0; nm];
        let mut brier = vec![0.0; nm];
        let mut delta = 0.0;
        let (mut m_bayes, mut m_ada, mut m_ftl) = (0usize, 0usize, 0usize);
        for (ex, class) in &data {
            let ps: Vec<Vec<f64>> = learners
                .iter_mut()
                .map(|l| {
                    l.learn(ex.row(), *class, ex.weight)
                        .unwrap_or_else(|_| l.predict_proba(ex.row()))
                })
                .collect();
            // Bayes.
            let minl = logloss.iter().copied().fold(f64::INFINITY, f64::min);
            let wb: Vec<f64> = logloss.iter().map(|&x: &f64| (minl - x).exp()).collect();
            let s: f64 = wb.iter().sum();
            let wb: Vec<f64> = wb.iter().map(|x| x / s).collect();
            m_bayes += (argmax(&mix(&ps, &wb)) != *class) as usize;
            // AdaHedge on Brier/2.
            let wa = adahedge_weights(&brier, delta);
            m_ada += (argmax(&mix(&ps, &wa)) != *class) as usize;
            // FTL on log loss.
            let best = (0..nm).fold(0, |b, j| if logloss[j] < logloss[b] { j } else { b });
            m_ftl += (argmax(&ps[best]) != *class) as usize;
            // Losses.
            let lt: Vec<f64> = ps
                .iter()
                .map(|p| {
                    p.iter()
                        .enumerate()
                        .map(|(j, &q)| (q - (j == *class) as u8 as f64).powi(2))
                        .sum::<f64>()
                        / 2.0
                })
                .collect();
            let h: f64 = wa.iter().zip(&lt).map(|(w, l)| w * l).sum();
            let mixloss = if delta <= 0.0 {
                let minb = brier.iter().copied().fold(f64::INFINITY, f64::min);
                (0..nm)
                    .filter(|&j| brier[j] == minb)
                    .map(|j| lt[j])
                    .fold(f64::INFINITY, f64::min)
            } else {
                let eta = (nm as f64).ln() / delta;
                let s: f64 = wa.iter().zip(&lt).map(|(w, l)| w * (-eta * l).exp()).sum();
                -s.ln() / eta
            };
            delta += (h - mixloss).max(0.0);
            for j in 0..nm {
                brier[j] += lt[j];
                logloss[j] -= ps[j][*class].max(1e-15).ln();
                mistakes[j] += (argmax(&ps[j]) != *class) as usize;
            }
        }
        println!("{path}: n = {n}, d = {d}, K = {k}");
        let e = |m: usize| {
            let p = m as f64 / n;
            format!("{p:.4} (s.e. {:.4})", (p * (1.0 - p) / n).sqrt())
        };
        for j in 0..nm {
            println!(
                "  member {:<28} error {}  logloss {:.4}",
                specs[j],
                e(mistakes[j]),
                logloss[j] / n
            );
        }
        println!("  mixture bayes      error {}", e(m_bayes));
        println!("  mixture adahedge   error {}", e(m_ada));
        println!("  mixture ftl-logloss error {}", e(m_ftl));
    }
}

//! Helpers shared by the CLI's integration tests (each test file that needs them says
//! `mod common;`).

mod fm;
mod process;
#[allow(unused_imports)] // the FM tests use them
pub use fm::*;
pub use process::*;

/// 300 LIBSVM rows of ten features between 5 and 10 with a real-valued label near 1: rows far
/// larger than the default constant steps assume (one-hot ratings, unit rows), so a
/// constant-step learner diverges on them unless they are scaled.
#[allow(dead_code)] // the CLI and FM tests use it
pub fn large_rows_libsvm() -> String {
    let mut text = String::new();
    let mut state = 7u64;
    for _ in 0..300 {
        let mut row = String::new();
        let mut sum = 0.0;
        for j in 1..=10 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 5.0 + ((state >> 33) % 1000) as f64 / 200.0;
            sum += v;
            row.push_str(&format!(" {j}:{v}"));
        }
        text.push_str(&format!("{}{row}\n", 1.0 + (sum / 10.0 - 5.0) * 0.8));
    }
    text
}

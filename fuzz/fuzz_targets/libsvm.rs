//! Fuzz target: the LIBSVM reader on arbitrary bytes, 1-based and 0-based.
//!
//! Invariants: no panic; every example has strictly increasing indices below `u32::MAX`, finite
//! values and label, weight 1; errors point at a real line and column; the reader never yields
//! more items than there are lines; `max_index_plus_one` matches the examples returned.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sketchlearn::data::{LibsvmOptions, LibsvmReader};
use sketchlearn::Example;

fn check(data: &[u8], zero_based: bool) {
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let mut reader = LibsvmReader::new(data, "fuzz", LibsvmOptions { zero_based });
    let mut ex = Example::default();
    let mut items = 0u64;
    let mut max = 0usize;
    loop {
        match reader.read_into(&mut ex) {
            Ok(false) => break,
            Ok(true) => {
                assert_eq!(ex.indices.len(), ex.values.len());
                assert!(ex.indices.windows(2).all(|w| w[0] < w[1]), "{ex:?}");
                assert!(ex.indices.iter().all(|&i| i < u32::MAX));
                assert!(ex.values.iter().all(|v| v.is_finite()), "{ex:?}");
                assert!(ex.label.is_finite());
                assert_eq!(ex.weight, 1.0);
                max = max.max(ex.row().max_index_plus_one());
            }
            Err(e) => {
                assert!(e.line >= 1 && e.line <= lines, "{e}");
                assert!(e.column >= 1, "{e}");
                let _ = e.to_string();
            }
        }
        items += 1;
        assert!(items <= lines);
        assert!(reader.line() <= lines);
    }
    assert_eq!(reader.max_index_plus_one(), max);
}

fuzz_target!(|data: &[u8]| {
    check(data, false);
    check(data, true);
});

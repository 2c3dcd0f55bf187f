//! Fuzz target: the CSV reader on arbitrary bytes, with the header auto-detected, forced and off,
//! separated by commas and by tabs.
//!
//! Invariants: no panic; every row is non-empty, finite and as wide as the first row; errors
//! point at a real line; the reader never yields more items than there are lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sketchlearn::data::{CsvOptions, CsvReader, Separator};

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let options = [None, Some(true), Some(false)]
        .into_iter()
        .flat_map(|h| [Separator::COMMA, Separator::TAB].map(|s| (h, s)));
    for (has_header, separator) in options {
        let options = CsvOptions {
            separator,
            has_header,
        };
        let mut reader = CsvReader::new(data, "fuzz", options);
        let mut row = Vec::new();
        let mut items = 0u64;
        let mut width = None;
        loop {
            match reader.read_into(&mut row) {
                Ok(false) => break,
                Ok(true) => {
                    assert!(!row.is_empty());
                    assert!(row.iter().all(|x| x.is_finite()));
                    assert_eq!(*width.get_or_insert(row.len()), row.len());
                    assert_eq!(reader.num_columns(), Some(row.len()));
                }
                Err(e) => {
                    assert!(e.line >= 1 && e.line <= lines, "{e}");
                    let _ = e.to_string();
                }
            }
            items += 1;
            assert!(items <= lines);
        }
    }
});

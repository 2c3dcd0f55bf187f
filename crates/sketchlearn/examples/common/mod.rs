//! What the multiclass examples share: a LIBSVM file read with its class ids.

use sketchlearn::labels::{ClassLabel, Classes};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader};

/// The examples of a LIBSVM file with their class ids (the library's sorted order of the labels,
/// [`Classes::from_observed`]); `(examples, d, K)`.
pub fn read_with_classes(path: &str) -> (Vec<(Example, usize)>, usize, usize) {
    let mut r = LibsvmReader::open(path, LibsvmOptions::default()).expect("open");
    let mut examples = Vec::new();
    let mut ex = Example::default();
    while r.read_into(&mut ex).expect("parse") {
        examples.push(ex.clone());
    }
    let label = |e: &Example| ClassLabel::Number(e.label);
    let classes = Classes::from_observed(examples.iter().map(label)).expect("classes");
    let data = examples
        .into_iter()
        .map(|e| {
            let class = classes.index_of(&label(&e)).expect("a class");
            (e, class)
        })
        .collect();
    (data, r.max_index_plus_one(), classes.len())
}

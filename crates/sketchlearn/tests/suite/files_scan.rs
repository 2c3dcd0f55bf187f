//! The scan of several CSV files as one input with a given separator
//! (`Schema::scan_files_separated`, what the Python package's `partial_fit_file` and
//! `sketchlearn.dask` read with `sep=`): the separator for every file whatever its name, the
//! labels that differ only by case with the file, line and column where each first appears,
//! and the other separator's hint on a schema's first line.

use proptest::prelude::*;
use sketchlearn::data::{
    CaseTwins, ColumnRef, CsvExampleOptions, CsvExampleReader, Example, FilesScan, ParseError,
    Schema, Separator,
};
use sketchlearn::labels::{differ_only_by_case, ClassLabel};
use std::io::Cursor;

fn options() -> CsvExampleOptions {
    CsvExampleOptions {
        label_column: Some(ColumnRef::Name("y".into())),
        ..Default::default()
    }
}

/// The scan of `files` (name, text), read with `separator`.
fn scan(files: &[(&str, String)], separator: Option<Separator>) -> Result<FilesScan, ParseError> {
    let sources = files
        .iter()
        .map(|(name, text)| Ok((Cursor::new(text.clone()), name.to_string())));
    Schema::scan_files_separated(sources, separator, &options())
}

/// Rows `x,colour,y` with the labels `labels`, separated by `sep`.
fn rows(labels: &[&str], sep: char) -> String {
    let mut text = ["x", "colour", "y"].join(&sep.to_string()) + "\n";
    for (i, l) in labels.iter().enumerate() {
        let colour = ["red", "blue"][i % 2];
        text.push_str(&format!("{i}.5{sep}{colour}{sep}{l}\n"));
    }
    text
}

#[test]
fn a_given_separator_reads_every_file_whatever_its_name() {
    let labels = ["no", "yes", "no", "yes"];
    let tabs = rows(&labels, '\t');
    let commas = rows(&labels, ',');
    let by_name = scan(&[("a.tsv", tabs.clone()), ("b.tsv", tabs.clone())], None).unwrap();
    let told = [("a.txt", tabs.clone()), ("b.dat", tabs.clone())];
    let given = scan(&told, Some(Separator::TAB)).unwrap();
    let as_csv = scan(&[("a.csv", commas.clone()), ("b.csv", commas)], None).unwrap();
    assert_eq!(given.schema, by_name.schema);
    assert_eq!(given.schema, as_csv.schema);
    assert_eq!(given.labels, by_name.labels);
    assert_eq!(given.schema.rows(), 8);
    assert!(given.case_twins.is_none() && given.mixed.is_empty());
    // Not told, a .txt is read with commas: one field holding tabs, and the fix named.
    let err = scan(&told, None).unwrap_err().to_string();
    assert!(
        err.starts_with("a.txt:1:1: the first line is one field holding a tab"),
        "{err}"
    );
    assert!(err.contains("--format tsv (in Python: sep='\\t')"), "{err}");
    // Told tabs, a comma file names sep=','.
    let err = scan(&[("c.csv", rows(&labels, ','))], Some(Separator::TAB))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sep='\\t')") && err.contains("(in Python: sep=',')"),
        "{err}"
    ); // A later file holding the other separator: the same fix, at that file's first line.
    let mixed = [("a.dat", rows(&labels, ',')), ("b.dat", tabs)];
    let err = scan(&mixed, Some(Separator::COMMA))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("b.dat:1:1: the first line is one field holding a tab"),
        "{err}"
    );
    assert!(err.contains("(in Python: sep='\\t')"), "{err}");
}

#[test]
fn case_twins_name_the_file_line_and_column_of_each_first_appearance() {
    // `yes` first in a.csv's line 3; `Yes` first in b.csv's line 4 (and again later); `YES`
    // later still: the first pair is yes/Yes.
    let a = rows(&["no", "yes", "no"], ',');
    let b = rows(&["no", "no", "Yes", "YES", "Yes"], ',');
    let found = scan(&[("a.csv", a), ("b.csv", b)], None).unwrap();
    let twins = found.case_twins.clone().expect("twins");
    assert_eq!(
        (twins.first.0.as_str(), twins.second.0.as_str()),
        ("yes", "Yes")
    );
    let places = [&twins.first.1, &twins.second.1].map(|at| (at.source.as_str(), at.line));
    assert_eq!(places, [("a.csv", 3), ("b.csv", 4)]);
    assert_eq!(twins.column, "y");
    let told = twins.to_string();
    assert!(
        told.starts_with(
            "b.csv:4:9: the labels yes (first at a.csv:3:10) and Yes (first at b.csv:4:9) in \
             column 'y' differ only by case"
        ),
        "{told}"
    );
    assert!(
        told.ends_with("make their case uniform in the files)"),
        "{told}"
    );
    // The labels are still all found, sorted (the twins are two classes).
    let names: Vec<String> = found.labels.iter().map(|l| l.to_string()).collect();
    assert_eq!(names, ["YES", "Yes", "no", "yes"]);
}

/// The first appearance of `label` in the files: (file index, 1-based line).
fn first_place(files: &[Vec<&str>], label: &str) -> (usize, u64) {
    for (k, labels) in files.iter().enumerate() {
        if let Some(i) = labels.iter().position(|l| *l == label) {
            return (k, i as u64 + 2); // the header is line 1
        }
    }
    unreachable!("{label} is in the files")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Over random files of labels from a small alphabet with case variants, the scan's twins
    /// are exactly the first label (in file, then line order) whose lower case was seen before,
    /// with that earlier one, each at its first file and line; none when no two differ only by
    /// case.
    #[test]
    fn the_scans_twins_are_the_first_pair_in_reading_order(
        files in prop::collection::vec(
            prop::collection::vec(prop::sample::select(vec!["a", "A", "b", "B", "c", "7"]), 1..6),
            1..4,
        )
    ) {
        let texts: Vec<(String, String)> = files
            .iter()
            .enumerate()
            .map(|(k, labels)| (format!("f{k}.csv"), rows(labels, ',')))
            .collect();
        let named: Vec<(&str, String)> = texts.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        let found = scan(&named, None).unwrap();
        // Expected: walk in reading order, keep the first spelling of each lower case.
        let mut seen: Vec<&str> = Vec::new();
        let mut expected = None;
        'walk: for labels in &files {
            for &l in labels {
                if seen.contains(&l) {
                    continue;
                }
                if let Some(&first) = seen.iter().find(|&&s| differ_only_by_case(s, l)) {
                    expected = Some((first, l));
                    break 'walk;
                }
                seen.push(l);
            }
        }
        match (expected, found.case_twins) {
            (None, None) => {}
            (Some((a, b)), Some(CaseTwins { first, second, .. })) => {
                prop_assert_eq!((first.0.as_str(), second.0.as_str()), (a, b));
                let (fa, la) = first_place(&files, a);
                let (fb, lb) = first_place(&files, b);
                prop_assert_eq!((first.1.source.clone(), first.1.line), (format!("f{fa}.csv"), la));
                prop_assert_eq!((second.1.source.clone(), second.1.line), (format!("f{fb}.csv"), lb));
            }
            (e, f) => prop_assert!(false, "expected {:?}, found {:?}", e, f),
        }
        let distinct: std::collections::BTreeSet<ClassLabel> = files
            .iter()
            .flatten()
            .map(|l| ClassLabel::parse(l).unwrap())
            .collect();
        prop_assert_eq!(found.labels.len(), distinct.len());
    }
}

#[test]
fn a_schemas_first_line_holding_the_other_separator_names_the_fix() {
    let labels = ["no", "yes", "no"];
    let schema = scan(&[("train.csv", rows(&labels, ','))], None)
        .unwrap()
        .schema;
    let read = |text: String, name: &str, separator| {
        let mut reader =
            CsvExampleReader::new(Cursor::new(text), name, schema.clone()).separated_by(separator);
        let mut ex = Example::default();
        let mut n = 0;
        while reader.read_into(&mut ex)? {
            n += 1;
        }
        Ok::<_, ParseError>(n)
    };
    // The same rows with tabs, under a name that says commas: refused at line 1, sep= named.
    let err = read(rows(&labels, '\t'), "more.csv", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("more.csv:1:1: the first line is one field holding a tab"),
        "{err}"
    );
    assert!(err.contains("in Python: sep='\\t'"), "{err}");
    // Read with the separator given, the model's schema reads them.
    assert_eq!(
        read(rows(&labels, '\t'), "more.txt", Some(Separator::TAB)).unwrap(),
        3
    );
    // A file without the header: its first row is one field, refused with the same fix.
    let body: String = rows(&labels, '\t')
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    let err = read(body, "more.csv", None).unwrap_err().to_string();
    assert!(err.contains("one field holding a tab"), "{err}");
    // Told tabs, the comma rows name sep=','.
    let err = read(rows(&labels, ','), "more.txt", Some(Separator::TAB))
        .unwrap_err()
        .to_string();
    assert!(err.contains("in Python: sep=','"), "{err}");
}

//! CSV with a header and a named label column on the shared data sets (penguins, attrition)
//! and on small inline cases (errors with file:line:column).

use sketchlearn::data::{
    scan_classes, ColumnKind, ColumnRef, CsvExampleOptions, CsvExampleReader, ExampleSource,
    LabelMap, Labeled, Schema,
};
use sketchlearn::Example;
use std::io::Cursor;
use std::path::{Path, PathBuf};

fn shared(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(name);
    p.exists().then_some(p)
}

fn labelled(name: &str) -> CsvExampleOptions {
    CsvExampleOptions {
        label_column: Some(ColumnRef::Name(name.into())),
        ..Default::default()
    }
}

/// A headerless file's options, the label in its first column.
fn headerless_label_first() -> CsvExampleOptions {
    CsvExampleOptions {
        label_column: Some(ColumnRef::Index(0)),
        has_header: Some(false),
        ..Default::default()
    }
}

/// The shared data file `file` (when it is there) and its schema scanned with the label column
/// `label`, under the display name `name`.
fn scan_shared(file: &str, name: &str, label: &str) -> Option<(PathBuf, Schema)> {
    let path = shared(file)?;
    let input = sketchlearn::open_input(path.to_str().unwrap()).unwrap();
    let schema = Schema::scan(input, name, &labelled(label)).unwrap();
    Some((path, schema))
}

/// The rows of `path` through `schema`, their labels mapped by the one label map of a run
/// (`multiclass`: class indices, else `±1`) over the classes scanned from the labels as
/// written, and those labels as text.
fn read_all(path: &Path, schema: Schema, multiclass: bool) -> (Vec<Example>, Vec<String>) {
    let open = || CsvExampleReader::open(path.to_str().unwrap(), schema.clone()).unwrap();
    let scan = scan_classes(&mut open(), "f.csv").unwrap();
    let map = match multiclass {
        true => LabelMap::Multiclass(scan.classes().unwrap()),
        false => LabelMap::Binary(scan.binary().unwrap()),
    };
    let mut r = Labeled::new(open(), map, "f.csv");
    let (mut out, mut labels) = (Vec::new(), Vec::new());
    let mut ex = Example::default();
    while r.read_into(&mut ex).unwrap() {
        out.push(ex.clone());
        labels.push(r.label_field().unwrap().label.to_string());
    }
    (out, labels)
}

#[test]
fn penguins_three_species_with_missing_values() {
    let Some((path, schema)) = scan_shared("penguins.shuf.csv", "penguins", "species") else {
        return;
    };
    assert_eq!(schema.rows(), 344);
    assert_eq!(
        schema.classes().unwrap().to_list(),
        "Adelie,Chinstrap,Gentoo"
    );
    // 5 numeric (bill length/depth, flipper, mass, year), island (3) and sex (2) one-hot.
    assert_eq!(schema.kind_counts(), (5, 2, 0));
    assert_eq!(schema.dim(), 10);
    let names: Vec<String> = (0..10).map(|i| schema.feature_name(i).unwrap()).collect();
    assert!(names.contains(&"island=Dream".to_string()), "{names:?}");
    let (rows, labels) = read_all(&path, schema, true);
    assert_eq!(rows.len(), 344);
    // Rows with missing values have fewer features.
    assert!(rows.iter().any(|e| e.indices.len() < 7));
    assert!(rows.iter().all(|e| [0.0, 1.0, 2.0].contains(&e.label)));
    assert_eq!((rows[0].label, labels[0].as_str()), (1.0, "Chinstrap"));
}

#[test]
fn attrition_yes_no_is_binary() {
    let Some((path, schema)) = scan_shared("attrition.csv", "attrition", "Attrition") else {
        return;
    };
    assert_eq!(schema.rows(), 1470);
    assert_eq!(schema.classes().unwrap().to_list(), "No,Yes");
    let (numeric, onehot, hashed) = schema.kind_counts();
    assert_eq!(numeric + onehot + hashed, 30);
    let (rows, labels) = read_all(&path, schema, false);
    assert_eq!(rows.len(), 1470);
    assert_eq!((rows[0].label, labels[0].as_str()), (1.0, "Yes"));
    assert_eq!((rows[1].label, labels[1].as_str()), (-1.0, "No"));
}

#[test]
fn label_by_index_ignored_columns_and_hashing() {
    let text = "id,city,x,y\n1,a,0.5,3\n2,b,,4\n3,c,NA,5\n";
    let options = CsvExampleOptions {
        label_column: Some(ColumnRef::Index(3)),
        ignore_columns: vec!["id".parse().unwrap()],
        max_categories: 2,
        hash_bits: 4,
        ..Default::default()
    };
    let schema = Schema::scan(Cursor::new(text), "t.csv", &options).unwrap();
    assert_eq!(schema.columns()[0].kind, ColumnKind::Ignored);
    assert!(matches!(
        schema.columns()[1].kind,
        ColumnKind::Hashed { base: 1, bits: 4 }
    ));
    assert_eq!(schema.dim(), 17);
    let mut r = CsvExampleReader::new(Cursor::new(text), "t.csv", schema);
    let mut ex = Example::default();
    assert!(r.read_into(&mut ex).unwrap());
    assert_eq!(ex.label, 3.0);
    assert_eq!(ex.indices.len(), 2);
    assert!(r.read_into(&mut ex).unwrap());
    assert_eq!((ex.label, ex.indices.len()), (4.0, 1));
}

#[test]
fn errors_name_file_line_and_column() {
    let scan = |text: &str, label: &str| {
        Schema::scan(Cursor::new(text.to_string()), "bad.csv", &labelled(label))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        scan("a,b\n1,2\n3,4,5\n", "a"),
        "bad.csv:3:5: expected 2 fields, found 3"
    );
    assert_eq!(
        scan("a,b\n1,2\n,4\n", "a"),
        "bad.csv:3:1: missing label in column 'a' (rows to learn from need one: drop this row, \
         or give another --label-column)"
    );
    assert!(scan("a,b\n1,\"x\n", "a").starts_with("bad.csv:2:3: unterminated"));
    assert!(scan("a,b\n1,inf\n", "a").starts_with("bad.csv:2:3: non-finite"));
    let e = scan("a,b\n1,2\n", "z");
    assert!(
        e.contains("label column 'z' is not one of the 2 columns: a, b"),
        "{e}"
    );

    // A word in a numeric column of a file read with the schema.
    let schema = Schema::scan(Cursor::new("y,x\n1,2\n0,3\n"), "t.csv", &labelled("y")).unwrap();
    let mut r = CsvExampleReader::new(Cursor::new("y,x\n1,oops\n"), "new.csv", schema.clone());
    let e = r
        .read_into(&mut Example::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "new.csv:2:3: column 'x' is numeric, found \"oops\" (missing values are written as empty, NA or NaN)"
    );
    let mut r = CsvExampleReader::new(Cursor::new("y,q\n1,2\n"), "new.csv", schema);
    let e = r
        .read_into(&mut Example::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("new.csv:1:3: column 'q' is not in the model's schema"),
        "{e}"
    );
}

/// A CSV model given LIBSVM or VW text (`test -i csv.model data.libsvm`: a CSV model reads any
/// file as CSV) names the format it sees and the model's columns, not a "column" made of the
/// whole LIBSVM line.
#[test]
fn libsvm_or_vw_text_through_a_csv_schema_is_named_as_such() {
    let schema = Schema::scan(Cursor::new("y,x\n1,2\n0,3\n"), "t.csv", &labelled("y")).unwrap();
    for (line, format) in [("+1 1:0.7 2:1 13:-1\n", "LIBSVM"), ("1 |a x:1 y\n", "VW")] {
        let mut r = CsvExampleReader::new(Cursor::new(line), "heart.libsvm", schema.clone());
        let e = r
            .read_into(&mut Example::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("heart.libsvm:1:1: this line looks like ") && e.contains(format),
            "{e}"
        );
        assert!(
            e.contains("the model was trained on CSV with the columns y, x"),
            "{e}"
        );
    }
}

/// The LIBSVM/VW diagnosis replaces only an error: a headerless file's first line (the line it
/// reads) that is one field looking like such text, but holding a value seen in training, is
/// read as CSV (rows to score of a label + one text column). Fails if the first line is refused
/// for its looks.
#[test]
fn a_seen_one_field_first_line_that_looks_like_vw_or_libsvm_is_read_as_csv() {
    let rows = "1,red |x 2:1\n0,+1 1:0.7\n";
    let by_index = CsvExampleOptions {
        label_column: Some(ColumnRef::Index(0)),
        ..Default::default()
    };
    let schema = Schema::scan(Cursor::new(rows), "t.csv", &by_index).unwrap();
    assert!(!schema.has_header());
    for line in ["red |x 2:1\n", "+1 1:0.7\n"] {
        let mut r = CsvExampleReader::new(Cursor::new(line), "new.csv", schema.clone());
        let tally = r.unseen_categories();
        let mut ex = Example::default();
        assert!(r.read_into(&mut ex).unwrap(), "{line}");
        assert_eq!(ex.indices.len(), 1, "{line}");
        assert_eq!(tally.report(1), None, "{line}");
    }
}

/// After a header, which shows the file is CSV, a row is never refused for looking like LIBSVM
/// or VW text: a one-field row that does, holding a value unseen in training, is read as CSV
/// (the value counts as missing, and is counted for the warning), where the same line first in
/// a headerless file is refused. Fails if the refusal reaches the row after a header.
#[test]
fn after_a_header_a_row_that_looks_like_vw_or_libsvm_is_read_as_csv() {
    let schema =
        Schema::scan(Cursor::new("y,c\n1,red\n0,blue\n"), "t.csv", &labelled("y")).unwrap();
    assert!(schema.has_header());
    for line in ["+1 1:0.7 2:1", "1 |a x:1 y"] {
        let text = format!("c\n{line}\n");
        let mut r = CsvExampleReader::new(Cursor::new(text), "new.csv", schema.clone());
        let tally = r.unseen_categories();
        let mut ex = Example::default();
        assert!(r.read_into(&mut ex).unwrap(), "{line}");
        assert!(ex.indices.is_empty(), "{line}");
        let unseen = tally.report(1).unwrap();
        assert_eq!(unseen.first.unwrap().line, 2, "{line}");
    }
}

/// A headerless schema of a label and two columns maps a one-field line to no columns ("expected
/// 2 fields, found 1"); when that line reads as LIBSVM or VW text, the error names the format
/// instead, and another one-field line keeps the field count's error.
#[test]
fn a_headerless_line_of_other_format_text_is_named_in_place_of_a_field_count_error() {
    let by_index = headerless_label_first();
    let schema = Schema::scan(Cursor::new("1,2,3\n0,4,5\n"), "t.csv", &by_index).unwrap();
    let first_error = |text: &str| {
        let mut r =
            CsvExampleReader::new(Cursor::new(text.to_string()), "rows.txt", schema.clone());
        r.read_into(&mut Example::default())
            .unwrap_err()
            .to_string()
    };
    for (line, format) in [("+1 1:0.7 2:1\n", "LIBSVM"), ("1 |a x:1 y\n", "VW")] {
        let e = first_error(line);
        let expected = format!("rows.txt:1:1: this line looks like {format} text, but the model");
        assert!(e.starts_with(&expected), "{e}");
        assert!(
            e.contains("the columns column 0, column 1, column 2"),
            "{e}"
        );
    }
    assert_eq!(first_error("7\n"), "rows.txt:1: expected 2 fields, found 1");
}

/// A model of a label and one numeric column, given LIBSVM or VW text: each line is one field,
/// not a number. The error names the format (and the model's columns) in place of "column 'x'
/// is numeric", with a header or without, on the first line and on a later one (files joined
/// with `cat`).
#[test]
fn libsvm_or_vw_text_through_a_label_and_one_numeric_column_is_named_as_such() {
    let by_index = headerless_label_first();
    let headerless = Schema::scan(Cursor::new("1,0.5\n0,2\n"), "t.csv", &by_index).unwrap();
    let headed = Schema::scan(Cursor::new("y,x\n1,0.5\n0,2\n"), "t.csv", &labelled("y")).unwrap();
    let cases = [
        (&headerless, "", 1, "column 0, column 1"),
        (&headerless, "1,0.5\n", 2, "column 0, column 1"),
        (&headed, "", 1, "y, x"),
        (&headed, "y,x\n1,0.5\n", 3, "y, x"),
    ];
    for (schema, before, line, columns) in cases {
        for (text, format) in [("+1 1:0.7 2:1", "LIBSVM"), ("1 |a x:1 y", "VW")] {
            let rows = format!("{before}{text}\n");
            let mut r = CsvExampleReader::new(Cursor::new(rows), "rows.txt", schema.clone());
            let mut ex = Example::default();
            let e = loop {
                match r.read_into(&mut ex) {
                    Ok(true) => continue,
                    Ok(false) => panic!("{before}{text}: read"),
                    Err(e) => break e.to_string(),
                }
            };
            let expected = format!("rows.txt:{line}:1: this line looks like {format} text");
            assert!(e.starts_with(&expected), "{e}");
            let model = format!("the model was trained on CSV with the columns {columns}:");
            assert!(e.contains(&model), "{e}");
        }
    }
}

#[test]
fn headerless_files_are_detected() {
    let text = "1,Yes,2.5\n0,No,3\n";
    let schema = Schema::scan(
        Cursor::new(text),
        "h.csv",
        &CsvExampleOptions {
            label_column: Some(ColumnRef::Index(0)),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!schema.has_header());
    assert_eq!(schema.rows(), 2);
    assert_eq!(schema.feature_name(0).as_deref(), Some("column 2"));
}

/// `(reader, name)` sources over in-memory texts, for [`Schema::scan_files`].
fn sources<'a>(
    texts: &'a [(&'a str, &'a str)],
) -> impl Iterator<Item = Result<(Cursor<&'a str>, String), sketchlearn::ParseError>> + 'a {
    texts
        .iter()
        .map(|(name, text)| Ok((Cursor::new(*text), name.to_string())))
}

#[test]
fn files_scanned_as_one_input_give_the_schema_of_their_concatenation() {
    // A category ("c"), a text value in a numeric-looking column and a label seen only in the
    // second file: one schema for both, as if the files were one.
    let one = "id,colour,x,y\n1,a,0.5,no\n2,b,1.5,no\n";
    let two = "id,colour,x,y\n3,c,?,yes\n4,a,2,no\n";
    let whole = "id,colour,x,y\n1,a,0.5,no\n2,b,1.5,no\n3,c,?,yes\n4,a,2,no\n";
    let options = CsvExampleOptions {
        label_column: Some(ColumnRef::Name("y".into())),
        ignore_columns: vec![ColumnRef::Index(0)],
        ..Default::default()
    };
    let (schema, labels) =
        Schema::scan_files(sources(&[("1.csv", one), ("2.csv", two)]), &options).unwrap();
    assert_eq!(
        schema,
        Schema::scan(Cursor::new(whole), "w.csv", &options).unwrap()
    );
    assert_eq!(schema.rows(), 4);
    assert_eq!(schema.dim(), 4); // x, colour=a, colour=b, colour=c
    assert_eq!(schema.feature_name(3).as_deref(), Some("colour=c"));
    let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    assert_eq!(names, ["no", "yes"]);
    // Each file read through the common schema: the second file's "c" is a feature.
    let mut reader = CsvExampleReader::new(Cursor::new(two), "2.csv", schema.clone());
    let mut ex = Example::default();
    assert!(reader.read_into(&mut ex).unwrap());
    assert_eq!(ex.indices, [3]);
    // Without a header, every line of every file is a row.
    let plain = CsvExampleOptions {
        has_header: Some(false),
        label_column: Some(ColumnRef::Index(1)),
        ..Default::default()
    };
    let (schema, labels) = Schema::scan_files(
        sources(&[("a.csv", "1,0\n2,1\n"), ("b.csv", "3,1\n")]),
        &plain,
    )
    .unwrap();
    assert_eq!((schema.rows(), schema.dim(), labels.len()), (3, 1, 2));
}

/// The files' columns of numbers with other values are judged over all the files at once:
/// one warning for a column whose other value is in the second file, none for a column whose
/// values are numbers in each file, and the same warning as the concatenated text's.
#[test]
fn scanned_files_warn_once_of_a_mixed_column_over_all_of_them() {
    let options = labelled("y");
    let mut one = String::from("size,x,y\n");
    let mut two = String::from("size,x,y\n");
    for k in 0..10 {
        one.push_str(&format!("{k},{k}.5,{}\n", k % 2));
        let size = if k == 3 {
            "XL".to_string()
        } else {
            k.to_string()
        };
        two.push_str(&format!("{size},{k},{}\n", k % 2));
    }
    let texts = [("1.csv", one.as_str()), ("2.csv", two.as_str())];
    let found = Schema::scan_files_separated(sources(&texts), None, &options).unwrap();
    let (schema, labels, mixed) = (found.schema, found.labels, found.mixed);
    assert_eq!(labels.len(), 2);
    assert_eq!(mixed.len(), 1, "{mixed:?}");
    let w = mixed[0].to_string();
    assert!(
        w.starts_with("2.csv: column 'size' is read as strings (one-hot)"),
        "{w}"
    );
    assert!(
        w.contains("19 of its 20 values are numbers and 1 is not, the first \"XL\" at 2.csv:5:1"),
        "{w}"
    );
    assert_eq!(
        schema,
        Schema::scan_files(sources(&texts), &options).unwrap().0
    );
    let plain = [("1.csv", one.as_str())];
    let mixed = Schema::scan_files_separated(sources(&plain), None, &options)
        .unwrap()
        .mixed;
    assert!(mixed.is_empty(), "{mixed:?}");
}

#[test]
fn a_later_file_with_another_header_or_width_is_an_error_at_its_line() {
    let options = labelled("y");
    let texts = [("1.csv", "x,y\n1,0\n"), ("2.csv", "z,y\n1,0\n")];
    let e = Schema::scan_files(sources(&texts), &options)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("2.csv:1:1:"), "{e}");
    assert!(e.contains("the header differs from that of 1.csv"), "{e}");
    assert!(e.contains("expected x,y, found z,y"), "{e}");
    let texts = [("1.csv", "x,y\n1,0\n"), ("2.csv", "x,y\n1,0\n2,1,5\n")];
    let e = Schema::scan_files(sources(&texts), &options)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("2.csv:3:"), "{e}");
    // An empty later file adds nothing; no file at all is an error.
    let texts = [("1.csv", "x,y\n1,0\n"), ("2.csv", "")];
    assert_eq!(
        Schema::scan_files(sources(&texts), &options)
            .unwrap()
            .0
            .rows(),
        1
    );
    assert!(Schema::scan_files(sources(&[]), &options).is_err());
}

/// Through a label and one string column, a headerless file's first line that reads as LIBSVM
/// or VW text and holds a value unseen in training is refused as that format (it would be one
/// unseen category, scored as the intercept alone); later unseen values are counted for the
/// warning, with the first line, its column and its value.
#[test]
fn a_first_line_of_other_format_text_with_an_unseen_value_is_refused_later_ones_are_counted() {
    let by_index = headerless_label_first();
    let schema = Schema::scan(Cursor::new("1,red\n0,blue\n"), "t.csv", &by_index).unwrap();
    for (line, format) in [("+1 1:0.7 2:1\nred\n", "LIBSVM"), ("|a x:1 y\n", "VW")] {
        let mut r = CsvExampleReader::new(Cursor::new(line), "rows.txt", schema.clone());
        let e = r
            .read_into(&mut Example::default())
            .unwrap_err()
            .to_string();
        let expected = format!("rows.txt:1:1: this line looks like {format} text, but the model");
        assert!(e.starts_with(&expected), "{e}");
        assert!(e.contains("the columns column 0, column 1"), "{e}");
    }
    let rows = "red\nblue\n+1 1:0.7\npurple\n";
    let mut r = CsvExampleReader::new(Cursor::new(rows), "rows.txt", schema);
    let tally = r.unseen_categories();
    let mut ex = Example::default();
    let mut read = 0;
    while r.read_into(&mut ex).unwrap() {
        read += 1;
    }
    assert_eq!(read, 4);
    let unseen = tally.report(read).unwrap();
    assert_eq!((unseen.rows, unseen.examples), (2, 4));
    assert_eq!(unseen.columns, [("column 1".to_string(), 2)]);
    let first = unseen.first.as_ref().unwrap();
    assert_eq!(
        (first.line, first.value.as_str(), first.looks_like),
        (3, "+1 1:0.7", Some("LIBSVM"))
    );
    let text = unseen.to_string();
    assert!(
        text.contains("(the first at line 3: \"+1 1:0.7\")"),
        "{text}"
    );
    assert!(text.ends_with("; that line looks like LIBSVM text, but the model was trained on CSV with the columns column 0, column 1: give the data as CSV with these columns (a model reads the format it was trained on)"), "{text}");
}

/// A numeric column with the missing markers of spreadsheets and pandas (Excel's `#N/A`,
/// Python's `None`, pandas' `<NA>`, `n/a`, `-nan`) stays numeric: those rows lack the feature.
/// Before, one `#N/A` made the column a string column (one-hot, or hashed past 64 values).
#[test]
fn spreadsheet_and_pandas_missing_markers_keep_a_column_numeric() {
    let text =
        "y,x,z\n1,0.5,2\n0,#N/A,3\n1,None,4\n0,<NA>,5\n1,n/a,6\n0,-nan,7\n1,#N/A N/A,8\n0,1.5,9\n";
    let schema = Schema::scan(Cursor::new(text), "m.csv", &labelled("y")).unwrap();
    assert_eq!(schema.dim(), 2);
    assert_eq!(schema.columns()[1].kind, ColumnKind::Numeric { index: 0 });
    let mut r = CsvExampleReader::new(Cursor::new(text), "m.csv", schema);
    let mut ex = Example::default();
    let mut lengths = Vec::new();
    while r.read_into(&mut ex).unwrap() {
        lengths.push(ex.indices.len());
    }
    assert_eq!(lengths, [2, 1, 1, 1, 1, 1, 1, 2]);
}

/// Two columns of one name (`x,x`, as spreadsheets allow) are two features, named as pandas
/// names them (`x`, `x.1`), in the scanned file and in a later file without the label. Before,
/// both fields mapped to the first `x` by name: its feature came twice, the second never.
#[test]
fn duplicate_header_names_are_two_columns() {
    let text = "y,x,x\n1,1,10\n0,2,20\n";
    let schema = Schema::scan(Cursor::new(text), "d.csv", &labelled("y")).unwrap();
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["y", "x", "x.1"]);
    for (file, text) in [("d.csv", text), ("new.csv", "x,x\n1,10\n2,20\n")] {
        let mut r = CsvExampleReader::new(Cursor::new(text), file, schema.clone());
        let mut ex = Example::default();
        assert!(r.read_into(&mut ex).unwrap());
        assert_eq!(
            (ex.indices.as_slice(), ex.values.as_slice()),
            (&[0, 1][..], &[1.0, 10.0][..]),
            "{file}"
        );
    }
}

/// A `;`- or tab-separated file (Excel in a comma-decimal locale, R's `write.csv2`, a `.tsv`)
/// is refused at its first line with what it looks like and how to convert it. Before, it read
/// as one column: "no label column: give --label-column" (misleading), or "expected 1 fields".
#[test]
fn semicolon_and_tab_separated_files_are_named_as_such() {
    for (text, says) in [
        ("label;x;y\n1;1,5;2\n0;3;4\n", "separated by semicolons"),
        ("label;x;y\n1;1.5;2\n", "separated by semicolons"),
        ("label\tx\ty\n1\t1.5\t2\n", "separated by tabs"),
    ] {
        let fix = if says.ends_with("tabs") {
            "name it .tsv"
        } else {
            "read_csv(path, sep="
        };
        let err =
            Schema::scan(Cursor::new(text), "s.csv", &CsvExampleOptions::default()).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("s.csv:1:1: the first line is one field"),
            "{message}"
        );
        assert!(message.contains(says) && message.contains(fix), "{message}");
    }
    // A comma-separated file whose fields hold `;` is read as it is.
    let text = "label,note\n1,a;b\n0,c\n";
    assert!(Schema::scan(Cursor::new(text), "c.csv", &CsvExampleOptions::default()).is_ok());
}

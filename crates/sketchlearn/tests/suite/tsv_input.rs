//! Tab-separated input (`.tsv`, `.tsv.gz`), a trailing separator on data rows, and text in
//! another encoding than UTF-8, through the data layer.

use sketchlearn::data::ratings::{read_ratings, RatingsOptions};
use sketchlearn::data::{
    ColumnRef, CsvExampleOptions, CsvExampleReader, CsvOptions, CsvReader, Example, Format,
    LibsvmOptions, LibsvmReader, ParseError, Schema, Separator,
};
use std::io::Cursor;

fn options(label: &str) -> CsvExampleOptions {
    CsvExampleOptions {
        label_column: Some(ColumnRef::Name(label.into())),
        ..Default::default()
    }
}

/// Every example of `text` read as a file named `name`, with its schema.
fn examples(text: &str, name: &str, label: &str) -> Result<(Schema, Vec<Example>), ParseError> {
    let schema = Schema::scan(Cursor::new(text), name, &options(label))?;
    let mut reader = CsvExampleReader::new(Cursor::new(text.to_string()), name, schema.clone());
    let mut out = Vec::new();
    let mut ex = Example::default();
    while reader.read_into(&mut ex)? {
        out.push(ex.clone());
    }
    Ok((schema, out))
}

#[test]
fn tsv_names_resolve_to_csv_read_with_tabs() {
    assert_eq!(Format::Auto.resolve("d.tsv"), Format::Csv);
    assert_eq!(Format::Auto.resolve("d.tsv.gz"), Format::Csv);
    assert_eq!(Format::Auto.resolve("d.tsvx"), Format::Libsvm);
    assert_eq!(Separator::for_path("d.tsv.gz"), Separator::TAB);
    assert_eq!(Separator::for_path("d.csv"), Separator::COMMA);
    assert_eq!(Separator::for_path("d.tsv.csv"), Separator::COMMA);
}

#[test]
fn a_tsv_file_gives_the_examples_of_the_same_csv() {
    let csv = "size,colour,\"note, quoted\",y\n1.5,red,\"a, b\",yes\n2,blue,,no\n-3,red,c,yes\n";
    let tsv = "size\tcolour\t\"note, quoted\"\ty\n1.5\tred\t\"a, b\"\tyes\n2\tblue\t\tno\n-3\tred\tc\tyes\n";
    let (cs, ce) = examples(csv, "d.csv", "y").unwrap();
    let (ts, te) = examples(tsv, "d.tsv", "y").unwrap();
    assert_eq!(cs, ts);
    assert_eq!(format!("{ce:?}"), format!("{te:?}"));
    assert_eq!(te.len(), 3);
    let names: Vec<&str> = ts.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["size", "colour", "note, quoted", "y"]);
    // Read with commas, the tab file is one column: refused, with the fix named.
    let err = examples("a\tb\ty\n1\t2\t0\n", "d.csv", "y")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("d.csv:1:1: "), "{err}");
    assert!(
        err.contains("separated by tabs") && err.contains(".tsv"),
        "{err}"
    );
}

#[test]
fn a_quoted_tsv_field_may_hold_a_tab_and_a_comma() {
    let tsv = "k\ty\n\"a\tb, c\"\t1\n\"\"\"q\"\"\"\t0\n";
    let (schema, ex) = examples(tsv, "q.tsv", "y").unwrap();
    assert_eq!(ex.len(), 2);
    let names: Vec<String> = (0..schema.dim())
        .filter_map(|i| schema.feature_name(i))
        .collect();
    assert!(names.iter().any(|n| n.contains("a\tb, c")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("\"q\"")), "{names:?}");
}

#[test]
fn the_dense_reader_takes_a_separator() {
    let tsv = "x\ty\n1\t 2 \n\t3\n";
    let opts = CsvOptions {
        separator: Separator::TAB,
        ..Default::default()
    };
    let mut r = CsvReader::new(Cursor::new(tsv), "m.tsv", opts);
    assert_eq!(r.next().unwrap().unwrap(), [1.0, 2.0]);
    assert_eq!(r.header().unwrap(), ["x", "y"]);
    // An empty first field is empty, not a blank before the next one.
    let err = r.next().unwrap().unwrap_err();
    assert_eq!((err.line, err.column), (3, 1), "{err}");
    let semi = "1;2,5\n";
    let opts = CsvOptions {
        separator: "semicolon".parse().unwrap(),
        has_header: Some(false),
    };
    let err = CsvReader::new(Cursor::new(semi), "s", opts)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("2,5"), "{err}");
    assert!("ab".parse::<Separator>().is_err());
    assert!("#".parse::<Separator>().is_err());
}

#[test]
fn a_trailing_separator_is_named_at_its_column() {
    let csv = "a,b,y\n1,2,yes\n3,4,no,\n";
    let err = examples(csv, "t.csv", "y").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("t.csv:3:7: a trailing ','"), "{text}");
    assert!(
        text.contains("4 fields") && text.contains("3 are expected"),
        "{text}"
    );
    // The scoring reader (a trained schema) says the same.
    let schema = Schema::scan(
        Cursor::new("a,b,y\n1,2,yes\n3,4,no\n"),
        "t.csv",
        &options("y"),
    )
    .unwrap();
    let mut reader = CsvExampleReader::new(Cursor::new("a,b,y\n1,2,yes,\n"), "s.csv", schema);
    let err = reader
        .read_into(&mut Example::default())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("s.csv:2:8: a trailing ','"), "{err}");
    // In a TSV, a trailing tab.
    let err = examples("a\tb\ty\n1\t2\tyes\t\n", "t.tsv", "y")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t.tsv:2:8: a trailing tab"), "{err}");
    // Two fields too many is the plain count.
    let err = examples("a,b,y\n1,2,yes,,\n", "t.csv", "y")
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected 3 fields, found 5"), "{err}");
}

#[test]
fn a_latin1_byte_in_a_csv_row_names_the_encoding() {
    let csv = b"name,y\nab,1\ncaf\xe9,0\n";
    let text = String::from_utf8_lossy(csv);
    let schema = Schema::scan(Cursor::new(&csv[..]), "l.csv", &options("y"));
    let err = schema.unwrap_err().to_string();
    assert!(
        err.starts_with("l.csv:3:4: not UTF-8 text (byte 0xe9)"),
        "{err} ({text})"
    );
    assert!(err.contains("iconv -f latin1 -t utf-8"), "{err}");
}

#[test]
fn a_latin1_byte_after_the_first_libsvm_line_names_the_encoding() {
    let data = b"1 1:2\n-1 2:0.5 3:1\xe9\n";
    let mut r = LibsvmReader::new(Cursor::new(&data[..]), "l.libsvm", LibsvmOptions::default());
    let mut ex = Example::default();
    assert!(r.read_into(&mut ex).unwrap());
    let err = r.read_into(&mut ex).unwrap_err().to_string();
    assert!(
        err.starts_with("l.libsvm:2:13: not UTF-8 text (byte 0xe9)"),
        "{err}"
    );
    assert!(err.contains("iconv"), "{err}");
    // A plain bad value is still a bad value.
    let mut r = LibsvmReader::new(Cursor::new("1 1:x\n"), "b", LibsvmOptions::default());
    let err = r.read_into(&mut ex).unwrap_err().to_string();
    assert_eq!(err, r#"b:1:5: cannot parse value "x""#);
}

#[test]
fn ratings_tsv_keeps_its_own_detection() {
    let dir = std::env::temp_dir().join(format!("sketchlearn-tsv-ratings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.tsv");
    std::fs::write(
        &path,
        "196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n",
    )
    .unwrap();
    let t = read_ratings(path.to_str().unwrap(), &RatingsOptions::default()).unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t.rating_range(), Some((1.0, 3.0)));
    std::fs::remove_dir_all(&dir).ok();
}

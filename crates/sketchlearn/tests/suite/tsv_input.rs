//! Tab-separated input (`.tsv`, `.tsv.gz`, or `Format::Tsv` for a stream or another name), a
//! trailing separator on data rows, and text in another encoding than UTF-8, through the data
//! layer and a run.

use sketchlearn::data::ratings::{read_ratings, RatingsOptions};
use sketchlearn::data::{
    ColumnRef, CsvExampleOptions, CsvExampleReader, CsvOptions, CsvReader, Example, Format,
    LibsvmOptions, LibsvmReader, ParseError, Schema, Separator, VwOptions, VwReader,
};
use sketchlearn::linear::LearnerConfig;
use sketchlearn::run::{self, Input, ReadOptions, Silent, Start, TrainOptions};
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
    assert_eq!(Format::Auto.resolve("d.tsv"), Format::Tsv);
    assert_eq!(Format::Auto.resolve("d.tsv.gz"), Format::Tsv);
    assert_eq!(Format::Tsv.resolve("d.csv"), Format::Tsv); // given, whatever the name
    assert_eq!("tsv".parse::<Format>().unwrap(), Format::Tsv);
    assert!(Format::Tsv.is_csv() && !Format::Libsvm.is_csv());
    assert_eq!(Format::Tsv.kind(), Format::Csv); // what a model keeps
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

/// The penguin-like rows of the tests below, comma-separated.
const ROWS: &str = "island,mass,species\nDream,3750,Adelie\nBiscoe,5000,Gentoo\nDream,NA,Adelie\n\
                    Torgersen,3400,Adelie\nBiscoe,5400,Gentoo\n";

#[test]
fn a_stream_or_another_name_is_read_as_tsv_when_told() {
    let tsv = ROWS.replace(',', "\t");
    let (csv_schema, csv_ex) = examples(ROWS, "p.csv", "species").unwrap();
    // A name that does not say: the separator given.
    let (schema, mixed) = Schema::scan_separated(
        Cursor::new(&tsv),
        "<stdin>",
        Some(Separator::TAB),
        &options("species"),
    )
    .unwrap();
    assert!(mixed.is_empty());
    assert_eq!(schema, csv_schema, "the same columns, names and schema");
    let mut reader = CsvExampleReader::new(Cursor::new(tsv.clone()), "data.txt", schema)
        .separated_by(Some(Separator::TAB));
    let mut got = Vec::new();
    let mut ex = Example::default();
    while reader.read_into(&mut ex).unwrap() {
        got.push(ex.clone());
    }
    assert_eq!(format!("{got:?}"), format!("{csv_ex:?}"));
    // Read with commas, a CSV schema scores the TSV's rows as one column: not silently.
    let mut commas = CsvExampleReader::new(Cursor::new(tsv.clone()), "data.txt", csv_schema);
    assert!(commas.read_into(&mut ex).is_err());
    // Told TSV, a comma-separated file is one field holding commas: the fix is named.
    let err = Schema::scan_separated(
        Cursor::new(ROWS),
        "data.txt",
        Some(Separator::TAB),
        &options("species"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("data.txt:1:1: "), "{err}");
    assert!(
        err.contains("separated by commas") && err.contains("--format csv"),
        "{err}"
    );
    // A semicolon stream read as TSV still names the conversion.
    let semi = ROWS.replace(',', ";");
    let err = Schema::scan_separated(
        Cursor::new(semi),
        "<stdin>",
        Some(Separator::TAB),
        &options("species"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("separated by semicolons") && err.contains("sep=';'"),
        "{err}"
    );
}

#[test]
fn a_run_reads_tsv_on_standard_input_and_its_model_scores_the_csv() {
    let tsv = ROWS.replace(',', "\t");
    let read = |format: Format| ReadOptions {
        format,
        csv: options("species"),
        ..ReadOptions::default()
    };
    let train = |input: Input, format: Format| {
        let options = TrainOptions {
            read: read(format),
            ..TrainOptions::default()
        };
        let start = Start::New(LearnerConfig::default());
        run::train(input, start, &options, &mut Silent).unwrap()
    };
    let csv = train(
        Input::bytes("p.csv", ROWS.as_bytes().to_vec()),
        Format::Auto,
    );
    let stream = Input::reader("<stdin>", Box::new(Cursor::new(tsv.clone().into_bytes())));
    let from_tsv = train(stream, Format::Tsv);
    let other_name = train(Input::bytes("p.txt", tsv.clone().into_bytes()), Format::Tsv);
    let bytes = csv.model.to_bytes().unwrap();
    assert_eq!(
        from_tsv.model.to_bytes().unwrap(),
        bytes,
        "column names kept"
    );
    assert_eq!(other_name.model.to_bytes().unwrap(), bytes);
    assert_eq!(from_tsv.examples, 5);
    // The TSV's model scores the CSV, and the CSV's the TSV, alike.
    let on_csv = run::evaluate(
        Input::bytes("p.csv", ROWS.as_bytes().to_vec()),
        &from_tsv.model,
        &read(Format::Auto),
        &mut Silent,
    )
    .unwrap();
    let on_tsv = run::evaluate(
        Input::bytes("q.txt", tsv.into_bytes()),
        &csv.model,
        &read(Format::Tsv),
        &mut Silent,
    )
    .unwrap();
    assert_eq!(on_csv.examples, 5);
    assert_eq!(
        format!("{:?}", on_csv.metrics),
        format!("{:?}", on_tsv.metrics)
    );
}

#[test]
fn the_dense_reader_names_a_trailing_separator_as_the_schema_reader_does() {
    let mut r = CsvReader::new(
        Cursor::new("a,b,c\n1,2,3\n4,5,6,\n"),
        "d.csv",
        CsvOptions::default(),
    );
    assert_eq!(r.next().unwrap().unwrap(), [1.0, 2.0, 3.0]);
    let dense = r.next().unwrap().unwrap_err().to_string();
    assert!(dense.starts_with("d.csv:3:6: a trailing ','"), "{dense}");
    assert!(
        dense.contains("4 fields") && dense.contains("3 are expected"),
        "{dense}"
    );
    // The same words as the schema's reader on the same row.
    let schema = examples("a,b,y\n1,2,3\n4,5,6,\n", "d.csv", "y")
        .unwrap_err()
        .to_string();
    assert_eq!(
        dense.split_once(": ").unwrap().1,
        schema.split_once(": ").unwrap().1
    );
    // Tabs; and an empty field elsewhere is still an empty field.
    let tab = CsvOptions {
        separator: Separator::TAB,
        ..Default::default()
    };
    let err = CsvReader::new(Cursor::new("1\t2\n3\t4\t\r\n"), "d.tsv", tab)
        .nth(1)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("d.tsv:2:4: a trailing tab"), "{err}");
    let err = CsvReader::new(Cursor::new("1,2\n,4\n"), "e.csv", CsvOptions::default())
        .nth(1)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert_eq!(err, "e.csv:2:1: empty field");
}

#[test]
fn latin1_in_ratings_and_vw_names_the_encoding() {
    use sketchlearn::data::ratings::parse_ratings;
    let data = b"1,10,4\n2,caf\xe9,5\n";
    let err = parse_ratings(Cursor::new(&data[..]), "r.csv", &RatingsOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("r.csv:2:6: not UTF-8 text (byte 0xe9)"),
        "{err}"
    );
    assert!(err.contains("iconv -f latin1 -t utf-8"), "{err}");
    // VW: a label or value that does not parse because of the byte says so.
    let vw = |text: &[u8]| {
        let mut r =
            VwReader::new(Cursor::new(text.to_vec()), "l.vw", VwOptions::default()).unwrap();
        let mut ex = Example::default();
        assert!(r.read_into(&mut ex).unwrap());
        r.read_into(&mut ex).map(|_| ex)
    };
    let err = vw(b"1 |f a\n-1 |f x:2\xe9 y\n").unwrap_err().to_string();
    assert!(
        err.starts_with("l.vw:2:10: not UTF-8 text (byte 0xe9)"),
        "{err}"
    );
    assert!(err.contains("iconv"), "{err}");
    let err = vw(b"1 |f a\n\xb11 |f y\n").unwrap_err().to_string();
    assert!(
        err.starts_with("l.vw:2:1: not UTF-8 text (byte 0xb1)"),
        "{err}"
    );
    // A plain bad value is still a bad value; a Latin-1 name is hashed as its bytes, as VW does.
    let err = vw(b"1 |f a\n1 |f x:2z\n").unwrap_err().to_string();
    assert_eq!(err, r#"l.vw:2:8: cannot parse value "2z""#);
    assert_eq!(vw(b"1 |f a\n1 |f caf\xe9\n").unwrap().indices.len(), 1);
}

//! Tests of the dense CSV reader.

use std::io::{Cursor, Write};

use proptest::prelude::*;
use sketchlearn::data::{CsvOptions, CsvReader, ParseError, ParseErrorKind};

const AUTO: CsvOptions = CsvOptions {
    has_header: None,
    separator: sketchlearn::data::Separator::COMMA,
};

fn reader(bytes: &[u8], options: CsvOptions) -> CsvReader<Cursor<Vec<u8>>> {
    CsvReader::new(Cursor::new(bytes.to_vec()), "m.csv", options)
}

fn parse_all(text: &str, options: CsvOptions) -> Result<Vec<Vec<f64>>, ParseError> {
    reader(text.as_bytes(), options).collect()
}

#[test]
fn header_is_auto_detected() {
    let mut r = reader(b"a,\"b, quoted \"\"x\"\"\",c\n1,2,3\n", AUTO);
    assert_eq!(r.next().unwrap().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(r.header().unwrap(), ["a", "b, quoted \"x\"", "c"]);
    assert_eq!(r.num_columns(), Some(3));
    assert!(r.next().is_none());

    let mut r = reader(b",x,y\n0,1,2\n", AUTO);
    assert_eq!(r.next().unwrap().unwrap(), vec![0.0, 1.0, 2.0]);
    assert_eq!(r.header().unwrap(), ["", "x", "y"]);

    // An empty field does not make a header: the first line is a (bad) data row.
    let err = parse_all("1,2,\n3,4,5\n", AUTO).unwrap_err();
    assert_eq!(
        (err.kind, err.line, err.column),
        (ParseErrorKind::EmptyField, 1, 5)
    );

    let mut r = reader(b"1,2\n3,4\n", AUTO);
    assert_eq!(r.by_ref().count(), 2);
    assert_eq!(r.header(), None);
    assert_eq!(r.num_columns(), Some(2));
}

#[test]
fn header_can_be_forced_on_or_off() {
    let got = parse_all(
        "1,2\n3,4\n",
        CsvOptions {
            has_header: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(got, vec![vec![3.0, 4.0]]);
    let err = parse_all(
        "x,y\n3,4\n",
        CsvOptions {
            has_header: Some(false),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind, ParseErrorKind::UnparsableValue("x".into()));
    assert_eq!((err.line, err.column), (1, 1));
}

#[test]
fn comments_blank_lines_crlf_blanks_and_quotes() {
    let text = "# a matrix\r\n\r\n x , y\r\n 1 ,\t2.5\r\n\n  # indented comment\n\"3\",-4e-1\n5,6";
    let mut r = reader(text.as_bytes(), AUTO);
    let rows: Vec<Vec<f64>> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(rows, vec![vec![1.0, 2.5], vec![3.0, -0.4], vec![5.0, 6.0]]);
    assert_eq!(r.header().unwrap(), ["x", "y"]);
    assert_eq!(r.line(), 8);
    assert_eq!(r.rows_read(), 3);
}

#[test]
fn single_column_and_bom() {
    let got = parse_all("\u{feff}1\n2\n", AUTO).unwrap();
    assert_eq!(got, vec![vec![1.0], vec![2.0]]);
}

#[test]
fn malformed_rows_report_kind_line_and_column() {
    use ParseErrorKind::*;
    let cases: Vec<(&[u8], ParseErrorKind, usize)> = vec![
        (
            b"1,2,3,4",
            WrongFieldCount {
                expected: 3,
                found: 4,
            },
            7,
        ),
        (
            b"1,2",
            WrongFieldCount {
                expected: 3,
                found: 2,
            },
            0,
        ),
        (b"1,x,3", UnparsableValue("x".into()), 3),
        (b"1, 2 3 ,3", UnparsableValue("2 3".into()), 4),
        (b"1,nan,3", NonFiniteValue("nan".into()), 3),
        (b"1,2,-inf", NonFiniteValue("-inf".into()), 5),
        (b"1,2,1e999", NonFiniteValue("1e999".into()), 5),
        (b"1,,3", EmptyField, 3),
        (b"1,2,", EmptyField, 5),
        (b"1,\"2,3", UnterminatedQuote, 3),
        (b"1,\"2\"x,3", UnparsableValue("\"2\"x".into()), 3),
        (b"1,\xff,3", UnparsableValue("\u{fffd}".into()), 3),
    ];
    for (bad, kind, column) in cases {
        let mut input = b"a,b,c\n1,2,3\n# comment\n".to_vec();
        input.extend_from_slice(bad);
        input.extend_from_slice(b"\n7,8,9\n");
        let shown = String::from_utf8_lossy(bad).into_owned();
        let mut r = reader(&input, AUTO);
        assert_eq!(r.next().unwrap().unwrap(), vec![1.0, 2.0, 3.0]);
        let err = match r.next() {
            Some(Err(e)) => e,
            other => panic!("{shown:?}: expected an error, got {other:?}"),
        };
        assert_eq!(err.kind, kind, "{shown:?}");
        assert_eq!((err.line, err.column), (4, column), "{shown:?}");
        assert_eq!(r.next().unwrap().unwrap(), vec![7.0, 8.0, 9.0], "{shown:?}");
        assert!(r.next().is_none());
    }
}

#[test]
fn field_count_without_header_comes_from_first_row() {
    let err = parse_all("1,2\n3,4,5\n", AUTO).unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::WrongFieldCount {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(err.to_string(), "m.csv:2:5: expected 2 fields, found 3");
    let err = parse_all("1,2\n3\n", AUTO).unwrap_err();
    assert_eq!(err.to_string(), "m.csv:2: expected 2 fields, found 1");
}

#[test]
fn invalid_utf8_header_is_reported() {
    let mut r = reader(b"a,\xffb\n1,2\n", AUTO);
    let err = r.next().unwrap().unwrap_err();
    assert!(
        err.to_string().contains("not UTF-8 text (byte 0xff)"),
        "{err}"
    );
    assert!(
        err.to_string().contains("iconv -f latin1 -t utf-8"),
        "{err}"
    );
    assert_eq!((err.line, err.column), (1, 3));
}

#[test]
fn gzip_csv_through_open() {
    let path = std::env::temp_dir().join(format!(
        "sketchlearn-csv-test-{}-{}.csv.gz",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    ));
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b"x,y\n1,2\n3,4\n").unwrap();
    std::fs::write(&path, enc.finish().unwrap()).unwrap();
    let got: Result<Vec<Vec<f64>>, _> = CsvReader::open(path.to_str().unwrap(), AUTO)
        .unwrap()
        .collect();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(got.unwrap(), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
    assert!(CsvReader::open("/no/such/matrix.csv", AUTO).is_err());
}

#[test]
fn read_into_reuses_the_row() {
    let mut r = reader(b"1,2,3\n4,5,6\n", AUTO);
    let mut row = vec![9.0; 10];
    assert!(r.read_into(&mut row).unwrap());
    assert_eq!(row, [1.0, 2.0, 3.0]);
    assert!(r.read_into(&mut row).unwrap());
    assert_eq!(row, [4.0, 5.0, 6.0]);
    assert!(!r.read_into(&mut row).unwrap());
}

proptest! {
    #[test]
    fn arbitrary_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                                    text in "[-+0-9,.eE#\"a \t\r\n]{0,200}") {
        for input in [bytes.as_slice(), text.as_bytes()] {
            for has_header in [None, Some(true), Some(false)] {
                let mut width = None;
                for item in reader(input, CsvOptions { has_header, ..Default::default() }) {
                    match item {
                        Ok(row) => {
                            prop_assert!(row.iter().all(|x| x.is_finite()));
                            prop_assert!(!row.is_empty());
                            prop_assert_eq!(*width.get_or_insert(row.len()), row.len());
                        }
                        Err(e) => prop_assert!(e.line >= 1),
                    }
                }
            }
        }
    }

    #[test]
    fn round_trip(rows in (1usize..6).prop_flat_map(|d| proptest::collection::vec(
                      proptest::collection::vec(
                          any::<f64>().prop_filter("finite", |x| x.is_finite()), d), 0..20)),
                  header in any::<bool>()) {
        let mut text = String::new();
        if header && !rows.is_empty() {
            let names: Vec<String> = (0..rows[0].len()).map(|j| format!("col{j}")).collect();
            text.push_str(&names.join(","));
            text.push('\n');
        }
        for row in &rows {
            let fields: Vec<String> = row.iter().map(|x| x.to_string()).collect();
            text.push_str(&fields.join(","));
            text.push('\n');
        }
        let got = parse_all(&text, AUTO).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let bits = |m: &[Vec<f64>]| m.iter().map(|r| r.iter().map(|x| x.to_bits()).collect::<Vec<_>>()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&got), bits(&rows));
    }
}

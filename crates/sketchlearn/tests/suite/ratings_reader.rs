//! The ratings reader and the one-hot encoder: MovieLens `u.data` and `ratings.csv`, empty
//! lines, headers, ratings outside the declared scale, malformed rows, unseen ids at test time,
//! side features (u.user / u.item, latin-1) — all with documented behaviour and never a panic.

use proptest::prelude::*;
use sketchlearn::data::ratings::{
    parse_ratings, read_ratings, Malformed, OutOfScale, RatingsEncoder, RatingsError,
    RatingsFormat, RatingsOptions, SideFeatures, Unseen,
};
use sketchlearn::data::ParseErrorKind;
use sketchlearn::Example;
use std::path::PathBuf;

fn parse(
    text: &str,
    opts: RatingsOptions,
) -> Result<sketchlearn::data::RatingsTable, RatingsError> {
    parse_ratings(text.as_bytes(), "test", &opts)
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ratings-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn movielens_u_data_tsv() {
    let text = "196\t242\t3\t881250949\n186\t302\t3\t891717742\n196\t302\t1\t878887116\n";
    let t = parse(text, RatingsOptions::default()).unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t.users, vec!["196", "186"]);
    assert_eq!(t.items, vec!["242", "302"]);
    assert_eq!(t.ratings[2].user, 0);
    assert_eq!(t.ratings[2].item, 1);
    assert_eq!(t.ratings[2].rating, 1.0);
    assert_eq!(t.ratings[2].timestamp, Some(878887116));
    assert_eq!(t.ratings[2].line, 3);
    assert!(!t.stats.header);
}

#[test]
fn ratings_csv_with_header_crlf_bom_and_blank_lines() {
    let text = "\u{feff}userId,movieId,rating,timestamp\r\n1,1,4.0,964982703\r\n\r\n  \n1,3,4.5,964981247\r\n";
    let t = parse(text, RatingsOptions::default()).unwrap();
    assert!(t.stats.header);
    assert_eq!(t.stats.empty_lines, 2);
    assert_eq!(t.stats.lines, 5);
    assert_eq!(t.len(), 2);
    assert_eq!(t.ratings[1].rating, 4.5);
    assert_eq!(t.ratings[1].line, 5);
    // The header is only recognised on the first non-empty line.
    let err = parse("1,1,4\nuserId,movieId,rating\n", RatingsOptions::default()).unwrap_err();
    assert!(
        matches!(err, RatingsError::Parse(ref e) if e.line == 2),
        "{err}"
    );
    // A timestamp is optional.
    let t = parse("a,b,2\n", RatingsOptions::default()).unwrap();
    assert_eq!(t.ratings[0].timestamp, None);
}

#[test]
fn dat_format_and_explicit_formats() {
    let t = parse(
        "1::1193::5::978300760\n1::661::3::978302109\n",
        Default::default(),
    )
    .unwrap();
    assert_eq!((t.len(), t.items[1].as_str()), (2, "661"));
    // Forcing TSV on a CSV line: one field only → malformed.
    let opts = RatingsOptions {
        format: RatingsFormat::Tsv,
        ..Default::default()
    };
    let err = parse("1,1,4\n", opts).unwrap_err();
    assert!(matches!(
        err,
        RatingsError::Parse(ref e) if matches!(e.kind, ParseErrorKind::WrongFieldCount { expected: 3, found: 1 })
    ));
}

#[test]
fn out_of_scale_policies() {
    let text = "1 1 5\n1 2 6\n2 1 0.5\n2 2 1\n";
    let scale = Some((1.0, 5.0));
    let err = parse(
        text,
        RatingsOptions {
            scale,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "test:2: rating 6 is outside the declared scale [1, 5]"
    );
    let with = |out_of_scale| {
        let options = RatingsOptions {
            scale,
            out_of_scale,
            ..Default::default()
        };
        parse(text, options).unwrap()
    };
    let skip = with(OutOfScale::Skip);
    assert_eq!(skip.len(), 2);
    assert_eq!(skip.stats.out_of_scale, 2);
    let clamp = with(OutOfScale::Clamp);
    let r: Vec<f64> = clamp.ratings.iter().map(|r| r.rating).collect();
    assert_eq!(r, vec![5.0, 5.0, 1.0, 1.0]);
    assert_eq!(clamp.rating_range(), Some((1.0, 5.0)));
    // An inverted or non-finite scale is an option error.
    for bad in [Some((5.0, 1.0)), Some((f64::NAN, 1.0))] {
        assert!(matches!(
            parse(
                text,
                RatingsOptions {
                    scale: bad,
                    ..Default::default()
                }
            ),
            Err(RatingsError::InvalidOption(_))
        ));
    }
}

#[test]
fn malformed_rows_name_line_and_column_or_are_skipped() {
    let cases: [(&str, u64, usize, &str); 7] = [
        ("1 2\n", 1, 0, "expected 3 fields, found 2"),
        ("1 2 3\n1 2 abc\n", 2, 5, "cannot parse value \"abc\""),
        ("1 2 NaN\n", 1, 5, "non-finite number"),
        ("1 2 inf\n", 1, 5, "non-finite number"),
        ("1,,3\n", 1, 3, "empty field"),
        ("1 2 3 12:30\n", 1, 7, "cannot parse value \"12:30\""),
        ("1 2 3\n\u{0}\u{1} x\n", 2, 0, "expected 3 fields"),
    ];
    for (text, line, column, msg) in cases {
        let err = parse(text, RatingsOptions::default()).unwrap_err();
        let RatingsError::Parse(e) = &err else {
            panic!("{text:?}: {err}")
        };
        assert_eq!((e.line, e.column), (line, column), "{text:?}: {err}");
        assert!(err.to_string().contains(msg), "{text:?}: {err}");
    }
    // Invalid UTF-8 is an error with its column, or skipped.
    let bytes = b"1 2 3\n1 \xff 3\n2 2 4\n";
    let err = parse_ratings(&bytes[..], "bin", &RatingsOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("bin:2:3: not UTF-8 text (byte 0xff)"),
        "{text}"
    );
    assert!(text.contains("iconv -f latin1 -t utf-8"), "{text}");
    let skip = RatingsOptions {
        malformed: Malformed::Skip,
        ..Default::default()
    };
    let t = parse_ratings(&bytes[..], "bin", &skip).unwrap();
    assert_eq!((t.len(), t.stats.malformed), (2, 1));
    let t = parse("1 2\n1 2 x\n3 4 5\n", skip).unwrap();
    assert_eq!((t.len(), t.stats.malformed), (1, 2));
}

#[test]
fn empty_input_and_missing_file() {
    let t = parse("", RatingsOptions::default()).unwrap();
    assert!(t.is_empty());
    assert_eq!(t.split_point(0.8), 0);
    let t = parse("\n\n", RatingsOptions::default()).unwrap();
    assert!(t.is_empty() && t.stats.empty_lines == 2);
    let err = read_ratings("/nonexistent/ratings.csv", &RatingsOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/ratings.csv"),
        "{err}"
    );
}

#[test]
fn encoder_remaps_densely_and_handles_unseen_ids() {
    let text = "u9 i5 4\nu3 i5 3\nu9 i7 5\nu3 i8 2\nu4 i5 1\n";
    let t = parse(text, RatingsOptions::default()).unwrap();
    let n_train = t.split_point(0.6);
    assert_eq!(n_train, 3);
    let enc = RatingsEncoder::fit(&t, 0..n_train, None);
    assert_eq!((enc.n_users(), enc.n_items(), enc.dim()), (2, 2, 4));
    let map = enc.map_table(&t);
    let mut ex = Example::default();
    // u9 → 0, u3 → 1; i5 → 2, i7 → 3 (users first, then items, in order of appearance).
    let out = enc.encode(&t, &map, 2, &mut ex);
    assert_eq!(
        (ex.indices.clone(), ex.values.clone()),
        (vec![0, 3], vec![1.0, 1.0])
    );
    assert_eq!(ex.label, 5.0);
    assert!(!out.unseen_user && !out.unseen_item);
    // i8 is unseen: only the user's feature remains.
    let out = enc.encode(&t, &map, 3, &mut ex);
    assert_eq!(ex.indices, vec![1]);
    assert!(out.unseen_item && !out.unseen_user);
    // u4 is unseen: only the item's feature remains.
    let out = enc.encode(&t, &map, 4, &mut ex);
    assert_eq!(ex.indices, vec![2]);
    assert!(out.unseen_user);
    // With Unseen::Error it is an error naming the id.
    let mut strict = enc.clone();
    strict.unseen = Unseen::Error;
    let err = strict.encode_checked(&t, &map, 4, &mut ex).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "test:5: user id \"u4\" in field 1 was not seen in training (without --unseen-error"
        ),
        "{err}"
    );
    assert!(strict.encode_checked(&t, &map, 0, &mut ex).is_ok());
    // An unseen item of a file with a header: its line and the field's header name.
    let named = parse(
        "who,what,stars\nu9,i5,4\nu9,i6,3\n",
        RatingsOptions::default(),
    )
    .unwrap();
    let named_map = enc.map_table(&named);
    let err = strict
        .encode_checked(&named, &named_map, 1, &mut ex)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("test:3: item id \"i6\" in field 2 (\"what\") was not seen in training"),
        "{err}"
    );
    // The encoder works on another table (ids are compared as strings).
    let other = parse("u3 i7 2\nzz i5 3\n", RatingsOptions::default()).unwrap();
    let map2 = enc.map_table(&other);
    enc.encode(&other, &map2, 0, &mut ex);
    assert_eq!(ex.indices, vec![1, 3]);
    let out = enc.encode(&other, &map2, 1, &mut ex);
    assert!(out.unseen_user && ex.indices == vec![2]);
}

#[test]
fn side_features_users_and_latin1_items() {
    let users = tmp(
        "u.user",
        b"1|24|M|technician|85711\n2|53|F|other|94043\n\n3|17|M|student|1\n",
    );
    let mut items =
        b"1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n"
            .to_vec();
    // A latin-1 title (0xE9 = é) must not stop the reader.
    items.extend_from_slice(
        b"2|Caf\xe9 (1994)|01-Jan-1994||http://y|0|1|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0\n",
    );
    let items = tmp("u.item", &items);
    let side =
        SideFeatures::movielens(Some(users.to_str().unwrap()), Some(items.to_str().unwrap()))
            .unwrap();
    assert!(side.users.names.contains(&"gender=F".to_string()));
    assert!(side.users.names.contains(&"age=<18".to_string()));
    assert_eq!(side.users.features["1"].len(), 3);
    assert!(side.items.names.contains(&"genre=Animation".to_string()));
    assert!(side.items.names.contains(&"decade=1990s".to_string()));
    assert_eq!(side.items.features["2"].len(), 2); // decade + Action

    let t = parse("1 1 4\n2 2 3\n3 1 5\n", RatingsOptions::default()).unwrap();
    let enc = RatingsEncoder::fit(&t, 0..2, Some(side.clone()));
    assert_eq!(enc.dim(), 2 + 2 + side.users.len() + side.items.len());
    let map = enc.map_table(&t);
    let mut ex = Example::default();
    // User 3 is unseen but its side features are known: a cold start with demographics.
    let out = enc.encode(&t, &map, 2, &mut ex);
    assert!(out.unseen_user);
    assert_eq!(ex.indices.len(), 1 + 3 + 4); // item + 3 user features + item 1's 4 features
    assert!(ex.indices.windows(2).all(|w| w[0] < w[1]));

    // Malformed side files are errors with the line.
    let bad = tmp("bad.user", b"1|24|M|technician|1\n2|x|F|other|2\n");
    let err = SideFeatures::movielens(Some(bad.to_str().unwrap()), None).unwrap_err();
    assert!(err.to_string().contains(":2:"), "{err}");
    let short = tmp("bad.item", b"1|title|date\n");
    assert!(SideFeatures::movielens(None, Some(short.to_str().unwrap())).is_err());
}

/// The shared MovieLens files (not in the repository: skipped when the data folder is absent,
/// except under `CI=true`, where a missing folder is a failure — it must not pass by skipping).
#[test]
fn shared_movielens_files() {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let path = base.join("movielens100k.tsv");
    if !path.exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {} is missing: the MovieLens test would be skipped",
            path.display()
        );
        eprintln!("skipping: {} not found", path.display());
        return;
    }
    let opts = RatingsOptions {
        scale: Some((1.0, 5.0)),
        ..Default::default()
    };
    let t = read_ratings(path.to_str().unwrap(), &opts).unwrap();
    assert_eq!(
        (t.len(), t.users.len(), t.items.len()),
        (100_000, 943, 1682)
    );
    let enc = RatingsEncoder::fit(&t, 0..t.split_point(0.8), None);
    assert!(enc.dim() <= 943 + 1682);
    let side = SideFeatures::movielens(
        base.join("movielens100k_users.psv").to_str(),
        base.join("movielens100k_items.psv").to_str(),
    )
    .unwrap();
    assert_eq!(side.users.features.len(), 943);
    assert_eq!(side.items.features.len(), 1682);
    let small = base.join("movielens_latest_small.tsv");
    let opts = RatingsOptions {
        scale: Some((0.5, 5.0)),
        ..Default::default()
    };
    let t = read_ratings(small.to_str().unwrap(), &opts).unwrap();
    assert_eq!((t.len(), t.users.len()), (100_836, 610));
}

proptest! {
    /// Any bytes give a table or an error, never a panic, whatever the options.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                    skip in any::<bool>(), clamp in any::<bool>()) {
        let opts = RatingsOptions {
            scale: Some((1.0, 5.0)),
            out_of_scale: if clamp { OutOfScale::Clamp } else { OutOfScale::Error },
            malformed: if skip { Malformed::Skip } else { Malformed::Error },
            ..Default::default()
        };
        if let Ok(t) = parse_ratings(&bytes[..], "fuzz", &opts) {
            let enc = RatingsEncoder::fit(&t, 0..t.split_point(0.5), None);
            let map = enc.map_table(&t);
            let mut ex = Example::default();
            for k in 0..t.len() {
                enc.encode(&t, &map, k, &mut ex);
                prop_assert!(ex.indices.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(ex.indices.iter().all(|&i| (i as usize) < enc.dim()));
                prop_assert!((1.0..=5.0).contains(&ex.label));
            }
        }
    }

    /// Well-formed lines round-trip.
    #[test]
    fn well_formed_lines_round_trip(rows in proptest::collection::vec((0u32..50, 0u32..80, 1u32..=10), 1..60)) {
        let text: String = rows.iter().map(|(u, i, r)| format!("{u}\t{i}\t{}\t7\n", *r as f64 / 2.0)).collect();
        let t = parse_ratings(text.as_bytes(), "p", &RatingsOptions::default()).unwrap();
        prop_assert_eq!(t.len(), rows.len());
        for (r, (u, i, v)) in t.ratings.iter().zip(&rows) {
            prop_assert_eq!(&t.users[r.user as usize], &u.to_string());
            prop_assert_eq!(&t.items[r.item as usize], &i.to_string());
            prop_assert_eq!(r.rating, *v as f64 / 2.0);
        }
    }
}

//! Side-feature columns of ratings ([`sketchlearn::data::side_columns`]) in FM model files: the
//! schema survives save/load (an optional trailer), and a file whose schema would index past the
//! learner is refused on load, never a panic later.

use sketchlearn::data::ratings::{parse_ratings_with_side, RatingsEncoder, RatingsOptions};
use sketchlearn::data::side_columns::{SideColumns, SideKind, SideTable};
use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel};
use sketchlearn::model::ModelError;
use sketchlearn::Example;

fn encoder() -> RatingsEncoder {
    let text = "user,item,rating,age,genres\n1,a,4,20,X|Y\n2,b,3,NA,Y\n3,a,5,40,Z\n";
    let mut side = SideTable::new(vec![("age".into(), 3), ("genres".into(), 4)]);
    side.spec = ["user", "item", "rating", "age", "genres"]
        .map(String::from)
        .to_vec();
    let t = parse_ratings_with_side(text.as_bytes(), "r.csv", &RatingsOptions::default(), side)
        .unwrap();
    RatingsEncoder::fit(&t, 0..3, None)
}

fn saved(enc: RatingsEncoder, dim: usize, name: &str) -> std::path::PathBuf {
    let config = FmConfig::new(FmAlgorithm::SftrlSplit);
    let mut model = FmModel::new(config, config.build(dim).unwrap());
    model.encoder = Some(enc);
    let path = std::env::temp_dir().join(format!("side-{}-{name}.skl", std::process::id()));
    model.save(&path).unwrap();
    path
}

#[test]
fn the_schema_round_trips_and_encodes_rows() {
    let enc = encoder();
    // 3 users + 2 items + age + genres X, Y, Z.
    assert_eq!(enc.dim(), 9);
    let path = saved(enc.clone(), 9, "ok");
    let back = FmModel::load(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(back.encoder.as_ref(), Some(&enc));
    let mut ex = Example::default();
    enc.encode_pair_with_side("1", "a", &["40", "Y|X"], &mut ex)
        .unwrap();
    // User 0, item 3, age (40 − 30)/10 · 1/√2, genres X and Y at 1/√2 · 1/√2 each.
    assert_eq!(ex.indices, vec![0, 3, 5, 6, 7]);
    let h = 0.5f64.sqrt();
    for (got, want) in ex.values.iter().zip([1.0, 1.0, h, 0.5, 0.5]) {
        assert!((got - want).abs() < 1e-15, "{:?}", ex.values);
    }
    let err = enc
        .encode_pair_with_side("1", "a", &["old", ""], &mut ex)
        .unwrap_err();
    assert_eq!((err.column.as_str(), err.text.as_str()), ("age", "old"));
}

#[test]
fn a_schema_past_the_learner_is_refused_on_load() {
    let mut enc = encoder();
    let path = saved(enc.clone(), 8, "dim");
    let err = FmModel::load(&path).unwrap_err();
    std::fs::remove_file(&path).ok();
    assert!(matches!(err, ModelError::Invalid { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("gives 9 features, the learner has 8"),
        "{err}"
    );
    let mut cols: SideColumns = enc.side_columns().unwrap().clone();
    if let SideKind::Categorical { values } = &mut cols.columns[1].kind {
        *values.get_mut("Z").unwrap() = 7;
    }
    enc.set_side_columns(Some(cols));
    let path = saved(enc, 9, "index");
    let err = FmModel::load(&path).unwrap_err();
    std::fs::remove_file(&path).ok();
    assert!(err.to_string().contains("value index 7"), "{err}");
}

//! One member of a mixture as a report shows it (`sketchlearn train --json`, `inspect --json`,
//! [`LinearModel::mixture_weights`](super::LinearModel::mixture_weights)): its description,
//! weight, and whether and when it retired (`mixture_retirement.rs`).
//!
//! JSON has no infinity, and `serde_json` writes a non-finite number as `null`; a retirement
//! point is `+∞` when importance weights near `f64::MAX` took the weight seen there
//! (`Retirement::from_saved`). So each member says `"retired"` in so many words, and an
//! infinite point is the string `"inf"` (which Python's `float` reads back); a finite point
//! stays a number.

use serde::{Deserialize, Serialize};

/// One member of a mixture and its weight ([`LinearModel::mixture_weights`]).
///
/// [`LinearModel::mixture_weights`]: super::LinearModel::mixture_weights
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Read")]
pub struct MemberWeight {
    /// The member's description ([`LearnerConfig::describe`](super::LearnerConfig::describe)).
    pub learner: String,
    /// Its weight in the mixture.
    pub weight: f64,
    /// Whether it retired (its weight has been 0 since, `mixture_retirement.rs`); it then
    /// neither learns nor predicts.
    pub retired: bool,
    /// The importance weight (examples, with unit weights) the mixture had seen when the member
    /// retired: a number, or `"inf"` in JSON for `+∞` (see the [module](self) docs); absent
    /// while it learns.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "point::serialize"
    )]
    pub retired_at: Option<f64>,
}

impl MemberWeight {
    /// Member `learner` of weight `weight`, retired at `retired_at` (`None`: active).
    pub fn new(learner: String, weight: f64, retired_at: Option<f64>) -> Self {
        MemberWeight {
            learner,
            weight,
            retired: retired_at.is_some(),
            retired_at,
        }
    }
}

/// A [`MemberWeight`] as read: a summary written before `"retired"` existed says only
/// `retired_at`, which then implies it (so a read member never says both "active" and a
/// retirement point).
#[derive(Deserialize)]
struct Read {
    learner: String,
    weight: f64,
    #[serde(default)]
    retired: bool,
    #[serde(default, deserialize_with = "point::deserialize")]
    retired_at: Option<f64>,
}

impl From<Read> for MemberWeight {
    fn from(r: Read) -> Self {
        MemberWeight {
            learner: r.learner,
            weight: r.weight,
            retired: r.retired || r.retired_at.is_some(),
            retired_at: r.retired_at,
        }
    }
}

/// A retirement point in JSON: a number, or `"inf"` for `+∞`.
mod point {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    /// The text of `+∞`.
    const INFINITE: &str = "inf";

    pub fn serialize<S: Serializer>(point: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match *point {
            Some(p) if p == f64::INFINITY => s.serialize_str(INFINITE),
            Some(p) => s.serialize_f64(p),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Point {
            Number(f64),
            Text(String),
        }
        match Option::<Point>::deserialize(d)? {
            None => Ok(None),
            Some(Point::Number(p)) => Ok(Some(p)),
            Some(Point::Text(t)) if t == INFINITE => Ok(Some(f64::INFINITY)),
            Some(Point::Text(t)) => Err(D::Error::custom(format!(
                "a retirement point is a number or \"{INFINITE}\", got \"{t}\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn to_json(m: &MemberWeight) -> Value {
        serde_json::to_value(m).unwrap()
    }

    /// Every member says whether it retired; a finite point is a number, `+∞` is `"inf"` (it
    /// was `null`, which read as an active member), and each reads back.
    #[test]
    fn a_retired_member_says_so_and_an_infinite_point_is_not_null() {
        let active = MemberWeight::new("a".into(), 1.0, None);
        let finite = MemberWeight::new("b".into(), 0.0, Some(5888.0));
        let infinite = MemberWeight::new("c".into(), 0.0, Some(f64::INFINITY));
        assert_eq!(
            to_json(&active),
            json!({"learner": "a", "weight": 1.0, "retired": false})
        );
        assert_eq!(
            to_json(&finite),
            json!({"learner": "b", "weight": 0.0, "retired": true, "retired_at": 5888.0})
        );
        assert_eq!(
            to_json(&infinite),
            json!({"learner": "c", "weight": 0.0, "retired": true, "retired_at": "inf"})
        );
        for m in [active, finite, infinite] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(
                serde_json::from_str::<MemberWeight>(&text).unwrap(),
                m,
                "{text}"
            );
        }
        // A summary written before `retired` existed still reads.
        let old: MemberWeight =
            serde_json::from_str(r#"{"learner":"b","weight":0.0,"retired_at":64.0}"#).unwrap();
        assert_eq!(old.retired_at, Some(64.0));
        assert!(old.retired, "a retirement point implies retired");
        let contradictory: MemberWeight = serde_json::from_str(
            r#"{"learner":"b","weight":0.0,"retired":false,"retired_at":64.0}"#,
        )
        .unwrap();
        assert!(contradictory.retired);
        let bad = r#"{"learner":"b","weight":0.0,"retired":true,"retired_at":"soon"}"#;
        assert!(serde_json::from_str::<MemberWeight>(bad).is_err());
    }
}

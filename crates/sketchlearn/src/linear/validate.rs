//! Checks of a loaded [`LinearModel`] beyond its configuration (issue 26, item 4): a model file
//! with a valid checksum can still hold numbers no training produces. No number in the
//! learner's state may be NaN — found by walking the state with a [`Serializer`] that stores
//! nothing and stops at the first NaN, so no learner type has to list its fields (infinities
//! are legitimate in places: `clip = ∞` means no clipping) — the weights must be finite, and the
//! model must answer a prediction with a finite number.

use super::{weight_ok, AnyLearner, LinearModel, OnlineLearner, MAX_WEIGHT};
use crate::Row;
use serde::ser::{self, Serialize, Serializer};
use std::fmt;

/// Why a model's state is invalid.
#[derive(Debug)]
pub(crate) struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

impl ser::Error for Invalid {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Invalid(msg.to_string())
    }
}

/// Checks a decoded model: every number finite, a finite prediction for the zero row and the
/// row of ones (a model whose weights are finite but whose state cannot score is no model).
pub(crate) fn check_model(model: &LinearModel) -> Result<(), Invalid> {
    check_learner(&model.learner)
}

/// Checks any state for NaN (see the module documentation).
pub(crate) fn check_no_nan<T: Serialize + ?Sized>(state: &T) -> Result<(), Invalid> {
    state.serialize(NanCheck)
}

/// [`check_model`]'s checks of one learner (also a multiclass model's members).
pub(crate) fn check_learner(learner: &AnyLearner) -> Result<(), Invalid> {
    learner.serialize(NanCheck)?;
    check_sparse(learner).map_err(Invalid)?;
    let d = learner.dim();
    if d > crate::run::MAX_DIM {
        return Err(Invalid(format!("dimension {d} is above 2^32")));
    }
    let weights = learner.weights();
    if weights.len() < d {
        return Err(Invalid(format!(
            "{} weights for dimension {d}",
            weights.len()
        )));
    }
    if let Some(j) = weights.iter().position(|w| !weight_ok(*w)) {
        return Err(Invalid(format!(
            "weight {j} is {:e} (beyond any a step may produce, {MAX_WEIGHT:e})",
            weights[j]
        )));
    }
    // Only a few entries: a sparse row, so that the check costs O(1) whatever d is.
    let indices: Vec<u32> = (0..d.min(8) as u32).collect();
    let values = vec![1.0; indices.len()];
    for row in [
        Row::Sparse {
            indices: &[],
            values: &[],
        },
        Row::Sparse {
            indices: &indices,
            values: &values,
        },
    ] {
        let p = learner.predict(row);
        if !p.is_finite() || p.abs() > MAX_WEIGHT * 8.0 {
            return Err(Invalid(format!("the model predicts {p}")));
        }
    }
    Ok(())
}

/// Checks the state of every sparse-time learner in `learner` (members of mixtures, learners
/// inside wrappers) before anything indexes with it (`sparse/validate.rs`), and the sizes of
/// the gradient sketches of Ada-FD and Sketchy.
fn check_sparse(learner: &AnyLearner) -> Result<(), String> {
    match learner {
        AnyLearner::Sparse(l) => super::sparse::validate::check(l),
        AnyLearner::Diagonal(l) => check_sparse(l.inner()),
        AnyLearner::Intercept(l) => check_sparse(l.inner()),
        AnyLearner::TargetStandardization(l) => check_sparse(l.inner()),
        AnyLearner::FeatureScaling(l) => check_sparse(l.inner()),
        AnyLearner::RowScaling(l) => check_sparse(l.inner()),
        AnyLearner::UnitScaling(l) => {
            l.check_state()?;
            check_sparse(l.inner())
        }
        AnyLearner::Mixture(l) => l.members().iter().try_for_each(check_sparse),
        AnyLearner::AdaFd(l) => l.check_state(),
        AnyLearner::Sketchy(l) => l.check_state(),
        AnyLearner::ScaledMixture(l) => l.mixture().members().iter().try_for_each(check_sparse),
        AnyLearner::Ogd(_)
        | AnyLearner::AdaGrad(_)
        | AnyLearner::Newton(_)
        | AnyLearner::Fixed(_)
        | AnyLearner::RunningMean(_)
        | AnyLearner::ProximalOgd(_)
        | AnyLearner::ProximalAdaGrad(_) => Ok(()),
    }
}

/// A serializer that checks no float is NaN and stores nothing.
#[derive(Clone, Copy)]
struct NanCheck;

fn float(v: f64) -> Result<(), Invalid> {
    if v.is_nan() {
        Err(Invalid("a number in the learner's state is NaN".into()))
    } else {
        Ok(())
    }
}

/// Methods of [`Serializer`] that accept their value without looking at it.
macro_rules! accept {
    ($($name:ident($($t:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $t),*) -> Result<(), Invalid> { Ok(()) })*
    };
}

/// Methods of [`Serializer`] that open a compound value: its parts are checked one by one (by
/// the `compound!` impls below).
macro_rules! open {
    ($($name:ident($($t:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $t),*) -> Result<Self, Invalid> { Ok(self) })*
    };
}

impl Serializer for NanCheck {
    type Ok = ();
    type Error = Invalid;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    accept!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
        serialize_none(),
        serialize_unit(),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    open!(
        serialize_seq(Option<usize>),
        serialize_tuple(usize),
        serialize_tuple_struct(&'static str, usize),
        serialize_tuple_variant(&'static str, u32, &'static str, usize),
        serialize_map(Option<usize>),
        serialize_struct(&'static str, usize),
        serialize_struct_variant(&'static str, u32, &'static str, usize),
    );
    fn serialize_f32(self, v: f32) -> Result<(), Invalid> {
        float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Invalid> {
        float(v)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Invalid> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Invalid> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Result<(), Invalid> {
        v.serialize(self)
    }
}

macro_rules! compound {
    ($trait:ident, $method:ident $(, $key:ty)?) => {
        impl ser::$trait for NanCheck {
            type Ok = ();
            type Error = Invalid;
            fn $method<T: Serialize + ?Sized>(&mut self, $(_: $key,)? v: &T) -> Result<(), Invalid> {
                v.serialize(*self)
            }
            fn end(self) -> Result<(), Invalid> {
                Ok(())
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);
compound!(SerializeStruct, serialize_field, &'static str);
compound!(SerializeStructVariant, serialize_field, &'static str);

impl ser::SerializeMap for NanCheck {
    type Ok = ();
    type Error = Invalid;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Invalid> {
        k.serialize(*self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Invalid> {
        v.serialize(*self)
    }
    fn end(self) -> Result<(), Invalid> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::LearnerConfig;

    #[test]
    fn trained_models_pass_and_a_nan_is_found() {
        let config = LearnerConfig::default();
        let mut model = LinearModel::new(config.clone(), config.build(4).unwrap());
        model
            .learner
            .learn(Row::Dense(&[1.0, 0.5, 0.0, -1.0]), 1.0, 1.0)
            .unwrap();
        check_model(&model).unwrap();
        assert!(vec![1.0, f64::NAN].serialize(NanCheck).is_err());
        assert!((1.0, vec![(2u32, f32::NAN)]).serialize(NanCheck).is_err());
        assert!((1.0, vec![(2u32, f64::INFINITY)])
            .serialize(NanCheck)
            .is_ok());
    }
}

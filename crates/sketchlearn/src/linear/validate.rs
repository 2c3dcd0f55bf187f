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
    // The bound is exact or above every weight, so a model it passes passes the full check;
    // only a model it cannot pass pays for the full check (which names the weight).
    if !weight_bound(learner).is_some_and(|b| b <= MAX_WEIGHT) {
        check_all_weights(learner, d)?;
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

/// Every one of the `d` weights is acceptable (`O(d)` memory, and `O(m²d)` time for a
/// sparse-time learner: the reason [`weight_bound`] comes first).
fn check_all_weights(learner: &AnyLearner, d: usize) -> Result<(), Invalid> {
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
    Ok(())
}

/// An upper bound of `max_j |w_j|` over the weights [`OnlineLearner::weights`] returns, at a
/// cost proportional to the stored state (issue 26: a `-b 27` model loaded in minutes when its
/// `2^27` weights were built; `+∞` for a NaN). A learner that is neither a mixture nor over a
/// sparse-time core stores its weights (or is small): its own [`OnlineLearner::weights`] then.
/// A mixture's weights are `Σ π_k w_k`, so `Σ |π_k| · max|w_k|` bounds them; a learner over a
/// sparse-time core gives its exact maximum from [`column_weights`].
fn weight_bound(learner: &AnyLearner) -> Option<f64> {
    let mixture = |m: &super::Mixture| -> Option<f64> {
        let pi = m.member_weights();
        let mut bound = 0.0;
        for (member, p) in m.members().iter().zip(pi) {
            bound += p.abs() * weight_bound(member)?;
        }
        Some(if bound.is_nan() { f64::INFINITY } else { bound })
    };
    match learner {
        AnyLearner::Mixture(m) => mixture(m),
        AnyLearner::ScaledMixture(m) => mixture(m.mixture()),
        _ => match column_weights(learner, &mut Vec::new()) {
            Some(w) => Some(largest(w.iter().map(|(_, w)| *w))),
            None => wrapper_bound(learner),
        },
    }
}

/// [`weight_bound`] of a learner that is neither a mixture nor over a sparse-time core: a
/// wrapper multiplies each weight of its inner learner by at most a known factor; the
/// first-order learners (OGD, AdaGrad and their proximal versions) read their touched features;
/// the rest store their weights.
fn wrapper_bound(learner: &AnyLearner) -> Option<f64> {
    let (inner, factor) = match learner {
        // The intercept multiplies one weight by its value.
        AnyLearner::Intercept(l) => (l.inner(), l.value().abs().max(1.0)),
        // The rescaling wrappers multiply each weight by a factor (the intercept's by 1).
        AnyLearner::RowScaling(l) => (l.inner(), l.inverse_scale().abs().max(1.0)),
        AnyLearner::UnitScaling(l) => (l.inner(), l.largest_inverse_scale()),
        AnyLearner::FeatureScaling(l) => (l.inner(), l.largest_inverse_scale()),
        AnyLearner::Diagonal(l) => (l.inner(), l.largest_scale()),
        // Label units: the wrapped learner's weights times `σ`.
        AnyLearner::TargetStandardization(l) => (l.inner(), l.location_scale().1.abs()),
        // From the features touched, not the `d` entries.
        AnyLearner::AdaGrad(l) => return Some(l.largest_weight()),
        AnyLearner::Ogd(l) => return Some(l.largest_weight()),
        AnyLearner::ProximalOgd(l) => return Some(l.largest_weight()),
        AnyLearner::ProximalAdaGrad(l) => return Some(l.largest_weight()),
        AnyLearner::RunningMean(_) => return Some(0.0),
        // Learners that store their `d` weights (borrowed, no copy) and the rest.
        _ => return Some(largest(learner.weights().iter().copied())),
    };
    Some(weight_bound(inner)? * factor)
}

/// `max |w|`, `+∞` if a weight is NaN.
pub(crate) fn largest(w: impl Iterator<Item = f64>) -> f64 {
    w.fold(0.0, |a, w| {
        if w.is_nan() {
            f64::INFINITY
        } else {
            a.max(w.abs())
        }
    })
}

/// The weights of a sparse-time core under intercept and diagonal wrappers at the columns whose
/// magnitudes include every weight's (`extra`: the wrappers' columns with state of their own;
/// [`super::sparse::validate::bounding_weights`] adds the core's and says why the rest are
/// covered — a diagonal wrapper scales every column it has not adapted by the same `1/√d₀`);
/// `None` for other learners.
fn column_weights(learner: &AnyLearner, extra: &mut Vec<u32>) -> Option<Vec<(u32, f64)>> {
    match learner {
        AnyLearner::Sparse(l) => Some(super::sparse::validate::bounding_weights(l, extra)),
        AnyLearner::Intercept(l) => {
            let mut w = column_weights(l.inner(), extra)?;
            let last = l.inner().dim().checked_sub(1)? as u32;
            if l.value() != 1.0 {
                // The bounding columns always include the last one.
                let (j, b) = w.last_mut()?;
                if *j != last {
                    return None;
                }
                *b *= l.value();
            }
            Some(w)
        }
        AnyLearner::Diagonal(l) => {
            extra.extend(l.adapted_columns());
            let w = column_weights(l.inner(), extra)?;
            w.into_iter()
                .map(|(j, wj)| Some((j, wj * l.scale_at(j as usize)?)))
                .collect()
        }
        _ => None,
    }
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

    /// The bound from the stored columns is exactly the largest weight of a sparse-time learner
    /// (every curvature, with and without an intercept and diagonal adaptation), and bounds the
    /// default mixture's, after steps that touch a few of `d` columns.
    #[test]
    fn weight_bound_is_the_largest_weight() {
        use crate::linear::{Algorithm, CurvatureKind, Representation};
        let d = 97;
        let rows: Vec<(Vec<u32>, Vec<f64>)> = (0..40u32)
            .map(|t| {
                let idx = vec![t % 7, 11 + (t * 5) % 13, 60 + t % 3];
                let val = vec![1.0, 0.5 - (t % 4) as f64 * 0.4, 2.0];
                (idx, val)
            })
            .collect();
        let mut configs = vec![LearnerConfig::default()];
        for curvature in [
            CurvatureKind::Fd,
            CurvatureKind::FdFast,
            CurvatureKind::Rfd,
            CurvatureKind::RfdFast,
            CurvatureKind::Oja,
            CurvatureKind::Rp,
        ] {
            for (diag, intercept) in [(false, false), (true, true), (false, true)] {
                configs.push(LearnerConfig {
                    algorithm: Algorithm::Newton,
                    representation: Representation::Sparse,
                    curvature,
                    size: 4,
                    diag,
                    bias: intercept,
                    bias_value: 0.5,
                    ..LearnerConfig::default()
                });
            }
        }
        for config in configs {
            let mut learner = config.build(d).unwrap();
            for (t, (indices, values)) in rows.iter().enumerate() {
                let y = if t % 3 == 0 { -1.0 } else { 1.0 };
                let x = Row::Sparse { indices, values };
                learner.learn(x, y, 1.0).unwrap();
            }
            let full = largest(learner.weights().iter().copied());
            let bound = weight_bound(&learner).unwrap();
            assert!(bound >= full, "{config:?}: {bound} < {full}");
            assert!(full > 0.0, "{config:?}");
            // Under the row scaling of a single learner, the sparse-time core's bound is exact.
            let core = match &learner {
                AnyLearner::RowScaling(l) => l.inner(),
                other => other,
            };
            if let Some(w) = column_weights(core, &mut Vec::new()) {
                let core_full = largest(core.weights().iter().copied());
                assert_eq!(largest(w.iter().map(|(_, w)| *w)), core_full, "{config:?}");
                // Stronger: every weight's magnitude is one of the bounding columns'.
                let seen: Vec<u64> = w.iter().map(|(_, w)| w.abs().to_bits()).collect();
                for (j, wj) in core.weights().iter().enumerate() {
                    assert!(seen.contains(&wj.abs().to_bits()), "{config:?}: column {j}");
                }
            } else {
                assert!(matches!(core, AnyLearner::Mixture(_)), "{config:?}");
            }
        }
    }

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

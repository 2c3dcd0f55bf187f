//! River dictionaries → sparse rows, with Vowpal Wabbit's feature hashing (the core's
//! [`sketchlearn::data::hashing`]): a feature named `f` with value `v` lands where VW puts
//! `| f:v` (default namespace), so a model trained by `sketchlearn train` on a VW file with
//! `-b bits` scores the same features from Python.
//!
//! A string value `s` of feature `f` is the indicator feature `f=s` (value 1), as River's
//! one-hot habit and VW's `f=s` token; `None` values are skipped; features hashing to the same
//! index are added up, zero values dropped.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};
use sketchlearn::data::hashing::feature_index;
use sketchlearn::Row;

/// A reusable buffer holding the last hashed dictionary.
#[derive(Default)]
pub struct HashedRow {
    pairs: Vec<(u32, f64)>,
    indices: Vec<u32>,
    values: Vec<f64>,
    name: Vec<u8>,
}

impl HashedRow {
    /// Hashes `x` into `2^bits` features.
    pub fn fill(&mut self, x: &Bound<'_, PyDict>, bits: u32) -> PyResult<()> {
        self.pairs.clear();
        for (k, v) in x.iter() {
            if v.is_none() {
                continue;
            }
            self.name.clear();
            match k.cast::<PyString>() {
                Ok(s) => self.name.extend_from_slice(s.to_cow()?.as_bytes()),
                Err(_) => self.name.extend_from_slice(k.str()?.to_cow()?.as_bytes()),
            }
            let value = if let Ok(s) = v.cast::<PyString>() {
                self.name.push(b'=');
                self.name.extend_from_slice(s.to_cow()?.as_bytes());
                1.0
            } else if let Ok(b) = v.cast::<PyBool>() {
                f64::from(u8::from(b.is_true()))
            } else {
                v.extract::<f64>().map_err(|_| {
                    PyValueError::new_err(format!(
                        "feature {:?}: value {} is not a number or a string",
                        String::from_utf8_lossy(&self.name),
                        v
                    ))
                })?
            };
            if !value.is_finite() {
                return Err(PyValueError::new_err(format!(
                    "feature {:?} has the non-finite value {value}",
                    String::from_utf8_lossy(&self.name)
                )));
            }
            if value != 0.0 {
                self.pairs.push((feature_index(&self.name, 0, bits), value));
            }
        }
        self.pairs.sort_unstable_by_key(|p| p.0);
        self.indices.clear();
        self.values.clear();
        for &(i, v) in &self.pairs {
            if self.indices.last() == Some(&i) {
                *self.values.last_mut().expect("same length") += v;
            } else {
                self.indices.push(i);
                self.values.push(v);
            }
        }
        Ok(())
    }

    /// The hashed row.
    pub fn row(&self) -> Row<'_> {
        Row::Sparse {
            indices: &self.indices,
            values: &self.values,
        }
    }
}

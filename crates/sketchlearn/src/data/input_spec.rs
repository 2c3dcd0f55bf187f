//! What a model was trained on — the input format, LIBSVM's index base, VW's hash bits, a CSV
//! file's schema — kept in the model file (format version 6) so that `test` and `predict` read
//! new data the same way and refuse data that cannot be the same kind (a VW model on a LIBSVM
//! file, a hashed model with other bits, a 1-based model on 0-based rows).
//!
//! ```
//! use sketchlearn::data::{Format, InputSpec};
//! let vw = InputSpec::new(Format::Vw, false, Some(18), None);
//! assert!(vw.check(Format::Vw, false, Some(18), "t.vw").is_ok());
//! let e = vw.check(Format::Libsvm, false, None, "t.libsvm").unwrap_err();
//! assert!(e.starts_with("t.libsvm: the model was trained on VW text") && e.contains("--format vw"), "{e}");
//! ```

use super::{Format, Schema};
use serde::{Deserialize, Serialize};

/// How a model's training input was read (see the [module](self) documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputSpec {
    /// The format (resolved: LIBSVM, VW or CSV).
    pub format: Format,
    /// LIBSVM indices started at 0.
    pub zero_based: bool,
    /// VW: the hash bits (`d = 2^bits`).
    pub bits: Option<u32>,
    /// CSV: the columns' mapping to features (the header, one-hot levels, hashing).
    pub schema: Option<Schema>,
}

impl InputSpec {
    /// The description of an input read as `format` (`Auto` is taken as LIBSVM).
    pub fn new(
        format: Format,
        zero_based: bool,
        bits: Option<u32>,
        schema: Option<Schema>,
    ) -> Self {
        let format = match format {
            Format::Auto => Format::Libsvm,
            f => f.kind(), // TSV is kept as CSV: a model reads both
        };
        InputSpec {
            format,
            zero_based: zero_based && format == Format::Libsvm,
            bits: bits.filter(|_| format == Format::Vw),
            schema: schema.filter(|_| format == Format::Csv),
        }
    }

    /// Checks data read as `format` (resolved), `zero_based` and with `bits` (VW; `None`:
    /// the model's) against the model's input; the error names `source` and the flag to give.
    pub fn check(
        &self,
        format: Format,
        zero_based: bool,
        bits: Option<u32>,
        source: &str,
    ) -> Result<(), String> {
        let format = format.kind();
        let name = |f: Format| match f {
            Format::Vw => "VW text",
            Format::Csv => "CSV",
            _ => "LIBSVM",
        };
        if format == Format::Csv && self.format != Format::Csv {
            return Err(format!(
                "{source}: the model was not trained on CSV (it was trained on {}), so it has \
                 no columns to read this file with: give --format {} (in Python: format='{}'; \
                 or data in the model's format)",
                name(self.format),
                self.format.name(),
                self.format.name()
            ));
        }
        if format != self.format {
            return Err(format!(
                "{source}: the model was trained on {} but this input is read as {}: give \
                 --format {} (in Python: format='{}'; or data in the model's format)",
                name(self.format),
                name(format),
                self.format.name(),
                self.format.name()
            ));
        }
        match format {
            Format::Vw => match (self.bits, bits) {
                (Some(m), Some(b)) if m != b => Err(format!(
                    "{source}: --bits {b} does not match the model, which hashes VW features \
                     into 2^{m} weights: give --bits {m} (or no --bits)"
                )),
                _ => Ok(()),
            },
            Format::Libsvm if zero_based != self.zero_based => Err(format!(
                "{source}: the model was trained on {}-based LIBSVM indices: {}",
                if self.zero_based { "0" } else { "1" },
                if self.zero_based {
                    "give --zero-based"
                } else {
                    "drop --zero-based"
                }
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_bits_and_index_base_must_match() {
        let libsvm = InputSpec::new(Format::Auto, false, Some(18), None);
        assert_eq!((libsvm.format, libsvm.bits), (Format::Libsvm, None));
        assert!(libsvm.check(Format::Libsvm, false, None, "f").is_ok());
        let e = libsvm.check(Format::Libsvm, true, None, "f").unwrap_err();
        assert!(e.contains("drop --zero-based"), "{e}");
        assert!(libsvm.check(Format::Vw, false, None, "f").is_err());
        let e = libsvm.check(Format::Csv, false, None, "f").unwrap_err();
        assert!(
            e.contains("not trained on CSV") && e.contains("--format libsvm"),
            "{e}"
        );
        // Python users read the keyword argument's spelling beside the flag.
        assert!(e.contains("in Python: format='libsvm'"), "{e}");
        let e = libsvm.check(Format::Vw, false, None, "f").unwrap_err();
        assert!(
            e.contains("--format libsvm (in Python: format='libsvm'"),
            "{e}"
        );
        let vw = InputSpec::new(Format::Vw, false, Some(12), None);
        assert!(vw.check(Format::Vw, false, None, "f").is_ok());
        let e = vw.check(Format::Vw, false, Some(18), "f").unwrap_err();
        assert!(e.contains("--bits 12"), "{e}");
    }
}

//! The integration tests of the `sketchlearn` command, one module per concern, compiled into
//! one test binary (one link; `cargo test -p sketchlearn-cli --test suite NAME::` runs one
//! file). A new top-level `tests/*.rs` file still builds as its own binary (autotests stay
//! on), but belongs here: add it as `mod NAME;` below.

mod common;
mod everyday;
mod label_helpers;

mod cache_cli;
mod cli;
mod closed_pipe;
mod csv_cli;
mod drp_cli;
mod evaluation_cli;
mod fm_cli;
mod fm_side_cli;
mod inspect_cli;
mod keep_names_cli;
mod label_map_cli;
mod labels_cli;
mod learner_options_cli;
mod multiclass_cli;
mod multiclass_options_cli;
mod paths_cli;
mod predict_cli;
mod robustness;
mod sparse_cli;
mod tsv_cli;

//! The integration tests of `sketchlearn`, one module per concern, compiled into one test
//! binary (one link, the library's generics compiled once; `cargo test -p sketchlearn --test
//! suite NAME::` runs one file). A new top-level `tests/*.rs` file still builds as its own binary
//! (autotests stay on), but belongs here: add it as `mod NAME;` below.

mod common;

mod cache;
mod cancel_run;
mod csv_examples;
mod csv_reader;
mod data_sparsity;
mod decimal_parse;
mod default_scale_invariance;
mod drp_recovery;
mod drp_regression;
mod drp_solvers;
mod eval_metrics;
mod fd_adagrad;
mod files_scan;
mod fm_label_mean;
mod fm_pairwise;
mod fm_refusal;
mod fm_resume;
mod fm_sftrl;
mod fm_sftrl_split;
mod fm_sgd_gradient;
mod golden;
mod golden_models;
mod hostile_models;
mod interactions;
mod libsvm_parser;
mod linear_learners;
mod merge_properties;
mod merge_refusals;
mod mixture;
mod mixture_retirement;
mod model_delta;
mod model_files;
mod model_size;
mod multiclass;
mod multiclass_labels;
mod ocg_reference;
mod ogd_reference;
mod oja_rank_one;
mod oja_subspace;
mod ratings_reader;
mod refused_rows;
mod regression_default;
mod regularization;
mod resume;
mod row_block;
mod shared_scaling;
mod side_columns;
mod single_learner_scaling;
mod sketch_properties;
mod son_reference;
mod sparse_bench;
mod sparse_equivalence;
mod sparse_learners;
mod sparse_merge;
mod sparse_model_v4;
mod sparse_softmax;
mod sparse_softmax_sketches;
mod tsv_input;
mod v8_models;
mod v9_models;
mod vw_reader;

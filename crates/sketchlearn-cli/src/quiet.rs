//! `--quiet`, the same flag with the same meaning in every subcommand: nothing on stderr but
//! warnings and errors (no progress table, notes or summary); what a command writes to stdout
//! or to its output files is unchanged.

/// The `--quiet` flag (flattened into each subcommand's arguments).
#[derive(clap::Args, Debug, Default, Clone, Copy)]
pub struct Quiet {
    /// Nothing on stderr but warnings and errors (stdout unchanged)
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
}

//! How the command ends when its environment goes away, as Unix tools end:
//!
//! - a reader that goes away (`sketchlearn predict … | head -1`): Rust programs start with
//!   SIGPIPE ignored, so a write to a closed pipe returns an error and `println!` panics (exit
//!   101). Restoring the default action lets the kernel end the process on that write with the
//!   conventional status (killed by SIGPIPE: 141 in a shell), as `cat` or `vw` end;
//! - an output that fails (`> /dev/full`, a full disk): `println!` panics with "failed printing
//!   to stdout"; a panic hook turns that one panic into `error: …` and exit status 1;
//! - SIGINT or SIGTERM (Ctrl-C, `kill`): a thread ([`signal_hook`]) removes the temporary files
//!   of model saves in progress ([`sketchlearn::model::remove_temporary_files`]), then ends the
//!   process by the signal's default action (status 130 / 143 in a shell).

/// Installs all three behaviours; first thing in `main`.
pub fn install() {
    restore_default_sigpipe();
    exit_on_failed_output();
    remove_temporary_files_on_termination();
}

/// Restores the default action of SIGPIPE (a no-op outside Unix).
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists; setting SIG_DFL changes
    // only the disposition of one signal and installs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A failed write to standard output or error (the panic of `print!`/`eprint!`) ends the
/// command with `error: failed printing to stdout: <why>` and exit status 1; other panics keep
/// the default report.
fn exit_on_failed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to std") {
            sketchlearn::model::remove_temporary_files();
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "error: {message}");
            std::process::exit(1);
        }
        default(info);
    }));
}

/// On SIGINT or SIGTERM: remove the temporary files of saves in progress, then end by the
/// signal's default action.
fn remove_temporary_files_on_termination() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                sketchlearn::model::remove_temporary_files();
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    }
}

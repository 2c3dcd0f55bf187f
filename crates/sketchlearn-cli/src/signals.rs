//! A command whose reader goes away (`sketchlearn predict … | head -1`) ends quietly, as Unix
//! tools do. Rust programs start with SIGPIPE ignored, so a write to a closed pipe returns an
//! error and `println!` panics (exit 101). Restoring the default action lets the kernel end the
//! process on that write with the conventional status (killed by SIGPIPE: 141 in a shell), as
//! `cat` or `vw` end.

/// Restores the default action of SIGPIPE (a no-op outside Unix).
pub fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists; setting SIG_DFL changes
    // only the disposition of one signal and installs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

//! What the reports say about the run's conditions: the load of the (shared) machine, the date,
//! and CPU time read from `/proc`.

use std::process::Command;

/// `/proc/loadavg`'s first three fields (1/5/15 min), `?` when unreadable.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The current UTC date and time (`date -u`), `?` when unavailable.
pub fn utc_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into())
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Howard Hinnant's civil_from_days.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// User + system CPU seconds from a `/proc/.../stat` file: fields `first` and `first + 1`
/// counted after the `(comm)` field (11, 12 = utime, stime; 13, 14 = cutime, cstime).
pub fn proc_cpu(path: &str, first: usize) -> Option<f64> {
    let s = std::fs::read_to_string(path).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let a: f64 = f.get(first)?.parse().ok()?;
    let b: f64 = f.get(first + 1)?.parse().ok()?;
    Some((a + b) / clock_ticks())
}

/// `getconf CLK_TCK` (100 on Linux).
fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// CPU seconds of the calling thread: `/proc/thread-self/schedstat` (nanoseconds), else the
/// 10 ms ticks of `/proc/thread-self/stat`.
pub fn thread_cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns * 1e-9)
        .or_else(|| proc_cpu("/proc/thread-self/stat", 11))
        .unwrap_or(f64::NAN)
}

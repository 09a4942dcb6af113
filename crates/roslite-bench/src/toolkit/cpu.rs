//! CPU time of a process as `/proc` reports it.
//!
//! - [`cpu_time`]: user plus system time of all its threads, living and exited, from
//!   `/proc/<pid>/stat`, in `USER_HZ` ticks (100 per second on every architecture the benches
//!   run on), so 10 ms resolution: over seconds at tens of percent CPU the error is a few
//!   percent, which the throughput figures allow for.
//! - [`thread_cpu_time`]: the time its living threads spent on a CPU, in nanoseconds, from
//!   `/proc/<pid>/task/<tid>/schedstat`: what an idle process's few milliseconds need. Threads
//!   that exit between two readings drop out, so it is for steady states.

use std::time::Duration;

use anyhow::Context as _;

/// `USER_HZ`: the unit of `/proc`'s CPU times.
const TICKS_PER_SECOND: u64 = 100;

/// User plus system CPU time of process `pid` so far (all threads).
///
/// # Errors
/// When `/proc/<pid>/stat` cannot be read (the process has exited) or does not parse.
pub fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    parse_stat_cpu(&text).with_context(|| format!("no CPU times in {path}"))
}

/// Time on a CPU of every living thread of process `pid` (`/proc/<pid>/task/*/schedstat`,
/// first field, nanoseconds).
///
/// # Errors
/// When the process's task list cannot be read (it has exited).
pub fn thread_cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let dir = format!("/proc/{pid}/task");
    let mut total = 0u64;
    for task in std::fs::read_dir(&dir).with_context(|| format!("reading {dir}"))? {
        let path = task?.path().join("schedstat");
        // A thread that ended since the listing is simply not counted.
        if let Ok(text) = std::fs::read_to_string(&path) {
            if let Some(ns) = text
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<u64>().ok())
            {
                total = total.saturating_add(ns);
            }
        }
    }
    Ok(Duration::from_nanos(total))
}

/// utime + stime from the text of `/proc/<pid>/stat`. The command name (field 2) is in
/// parentheses and may itself contain spaces and parentheses, so fields are counted from the
/// last `)`: after it come state (field 3), ..., utime (field 14) and stime (field 15).
fn parse_stat_cpu(text: &str) -> Option<Duration> {
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_millis(
        ticks.checked_mul(1000 / TICKS_PER_SECOND)?,
    ))
}

/// CPU time of several processes at one instant, to be compared with a later reading.
#[derive(Clone, Debug)]
pub struct CpuReading {
    pub at: std::time::Instant,
    /// Per process, `None` once it could not be read.
    pub times: Vec<Option<Duration>>,
}

impl CpuReading {
    /// Reads every one of `pids` now ([`cpu_time`]).
    pub fn of(pids: &[u32]) -> Self {
        Self {
            at: std::time::Instant::now(),
            times: pids.iter().map(|pid| cpu_time(*pid).ok()).collect(),
        }
    }

    /// Reads every one of `pids` now, to the nanosecond ([`thread_cpu_time`]).
    pub fn of_threads(pids: &[u32]) -> Self {
        Self {
            at: std::time::Instant::now(),
            times: pids.iter().map(|pid| thread_cpu_time(*pid).ok()).collect(),
        }
    }

    /// Per process, the CPU time used since `earlier` as a fraction of the wall time between
    /// the readings (1.0: one core busy throughout).
    pub fn share_since(&self, earlier: &CpuReading) -> Vec<Option<f64>> {
        let wall = self.at.duration_since(earlier.at).as_secs_f64();
        self.used_since(earlier)
            .into_iter()
            .map(|used| used.filter(|_| wall > 0.0).map(|u| u.as_secs_f64() / wall))
            .collect()
    }

    /// Per process, the CPU time used since `earlier`.
    pub fn used_since(&self, earlier: &CpuReading) -> Vec<Option<Duration>> {
        self.times
            .iter()
            .zip(&earlier.times)
            .map(|(now, then)| Some(now.as_ref()?.saturating_sub(*then.as_ref()?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_user_plus_system_time() {
        // A command name with a space and a parenthesis, as `(roslite) x` would print.
        let line = "4242 (a) b) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 37 0 0 20 0 9 0 \
                    100 1000000 500 18446744073709551615";
        assert_eq!(parse_stat_cpu(line), Some(Duration::from_millis(2870)));
        assert_eq!(parse_stat_cpu("4242 (cut) S 1"), None);
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        let mut spin = 0u64;
        for i in 0..5_000_000u64 {
            spin = std::hint::black_box(spin.wrapping_add(i));
        }
        let me = std::process::id();
        assert!(cpu_time(me).is_ok(), "{spin}");
        assert!(thread_cpu_time(me).unwrap() > Duration::ZERO);
        let first = CpuReading::of(&[me, u32::MAX]);
        let second = CpuReading::of(&[me, u32::MAX]);
        let used = second.used_since(&first);
        assert!(used[0].is_some());
        assert!(used[1].is_none(), "no such process");
    }
}

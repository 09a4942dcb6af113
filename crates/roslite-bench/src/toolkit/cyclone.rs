//! Cyclone DDS's `ddsperf` (Debian `cyclonedds-tools`) as a peer: `ddsperf pong` and `ddsperf
//! ping size N` (reliable, keep-last 1) for round trips ([`ping`]), `ddsperf pub` and `ddsperf
//! sub` for throughput ([`throughput`]), confined to 127.0.0.1 and given the socket buffer
//! sizes roslite asks for ([`CYCLONE_LOOPBACK_URI`]).
//!
//! Two things about `ddsperf`'s figures:
//! - it prints *half* the round trip: `(tnow - t_ping) / 2` (ddsperf.c `process_pong`); the
//!   benches double them so that they are full round trips, like roslite's (a printed 64 B
//!   figure of about 13 us is below this machine's raw UDP ping-pong of 17 us, so it cannot be
//!   a round trip);
//! - it prints percentiles per one-second interval only, so Cyclone's p50 and p99 here are the
//!   count-weighted medians of the per-interval p50 and p99, and its max is the largest
//!   interval max; the first interval, which includes discovery, is dropped
//!   ([`CycloneRtt::from_intervals`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::PoisonError;
use std::time::Duration;

use anyhow::bail;
use roslite::Instant;

use super::cpu::CpuReading;
use super::memory::ProcMemory;
use super::process::{Conversation, Helper};
use super::stats::weighted_median;

/// `ddsperf` on the PATH, if installed.
pub fn find_ddsperf() -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join("ddsperf"))
        .find(|path| path.is_file())
}

/// Why Cyclone is not measured when `ddsperf` is not on the PATH.
pub const NOT_INSTALLED: &str = "not installed (ddsperf from Debian cyclonedds-tools not on PATH)";

/// The installed Cyclone DDS version (Debian `cyclonedds-tools`), if dpkg knows it.
pub fn cyclone_version() -> Option<String> {
    let output = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", "cyclonedds-tools"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let version = String::from_utf8(output.stdout).ok()?;
    let version = version.trim();
    // "0.10.2-2" -> "0.10.2".
    let upstream = version.split('-').next().unwrap_or(version);
    (output.status.success() && !upstream.is_empty()).then(|| upstream.to_owned())
}

/// `CYCLONEDDS_URI` confining Cyclone to 127.0.0.1 (the only network interface, no
/// multicast, 127.0.0.1 as the one discovery peer), with the socket buffer sizes a roslite
/// participant requests (4 MiB receive, 1 MiB send).
pub const CYCLONE_LOOPBACK_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
<NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast>\
</General><Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address=\"127.0.0.1\"/>\
</Peers></Discovery><Internal><SocketReceiveBufferSize min=\"4MiB\"/>\
<SocketSendBufferSize min=\"1MiB\"/></Internal></Domain></CycloneDDS>";

/// `ddsperf` with the loopback configuration, in `domain`.
pub fn ddsperf_command(ddsperf: &Path, domain: u32) -> Command {
    let mut command = Command::new(ddsperf);
    command
        .env("CYCLONEDDS_URI", CYCLONE_LOOPBACK_URI)
        .arg("-i")
        .arg(domain.to_string());
    command
}

/// One per-second line of `ddsperf ping`, as printed (half round trips).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DdsperfInterval {
    pub time_s: f64,
    pub size: usize,
    pub mean_us: f64,
    pub min_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub count: u64,
}

/// Parses `[pid] 2.000  host:pid size 64 mean 14.241us min 10.980us 50% 13.169us 90% 15.103us
/// 99% 22.141us max 4224.636us cnt 34953`; other lines give `None`.
pub fn parse_ddsperf_interval(line: &str) -> Option<DdsperfInterval> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let time_s = tokens.get(1)?.parse().ok()?;
    let at = tokens.iter().position(|t| *t == "size")?;
    let value = |key: &str| -> Option<&str> {
        let i = tokens[at..].iter().position(|t| *t == key)? + at;
        tokens.get(i + 1).copied()
    };
    let us = |key: &str| -> Option<f64> { value(key)?.strip_suffix("us")?.parse().ok() };
    Some(DdsperfInterval {
        time_s,
        size: value("size")?.parse().ok()?,
        mean_us: us("mean")?,
        min_us: us("min")?,
        p50_us: us("50%")?,
        p90_us: us("90%")?,
        p99_us: us("99%")?,
        max_us: us("max")?,
        count: value("cnt")?.parse().ok()?,
    })
}

/// Cyclone's round trips for one size, already doubled to full round trips.
#[derive(Clone, Copy, Debug)]
pub struct CycloneRtt {
    pub intervals: usize,
    pub round_trips: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl CycloneRtt {
    /// From `ddsperf ping`'s per-second lines (half round trips); the first interval is
    /// dropped when there are others.
    pub fn from_intervals(mut intervals: Vec<DdsperfInterval>) -> Option<Self> {
        intervals.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        if intervals.len() > 1 {
            intervals.remove(0);
        }
        let round_trips: u64 = intervals.iter().map(|i| i.count).sum();
        if round_trips == 0 {
            return None;
        }
        let p50 = weighted_median(intervals.iter().map(|i| (i.p50_us, i.count)).collect())?;
        let p99 = weighted_median(intervals.iter().map(|i| (i.p99_us, i.count)).collect())?;
        let mean = intervals
            .iter()
            .map(|i| i.mean_us * i.count as f64)
            .sum::<f64>()
            / round_trips as f64;
        Some(Self {
            intervals: intervals.len(),
            round_trips,
            min_us: 2.0 * intervals.iter().map(|i| i.min_us).fold(f64::MAX, f64::min),
            mean_us: 2.0 * mean,
            p50_us: 2.0 * p50,
            p99_us: 2.0 * p99,
            max_us: 2.0 * intervals.iter().map(|i| i.max_us).fold(0.0, f64::max),
        })
    }
}

/// What one [`ping`] run gave.
pub struct Ping<T> {
    /// The round trips, or why there are none (`ddsperf ping`'s exit status and last lines).
    pub rtt: Result<CycloneRtt, String>,
    /// The last reading of the ping process's memory before it exited.
    pub sender: Option<ProcMemory>,
    /// What `during` returned.
    pub during: T,
}

/// One size: `ddsperf pong`, then `ddsperf ping` for `duration` (at least 2 s), at `hz` pings
/// per second or back to back, in `domain`. `during` runs once both have started, given the
/// pong's pid (the sweep counts its pages then); meanwhile and afterwards the ping process's
/// memory is sampled every 100 ms.
///
/// # Errors
/// When a process cannot be started, or `ddsperf ping` does not end 20 s after `duration`.
pub fn ping<T>(
    ddsperf: &Path,
    domain: u32,
    size: usize,
    hz: Option<u32>,
    duration: Duration,
    during: impl FnOnce(u32) -> T,
) -> anyhow::Result<Ping<T>> {
    let mut pong = ddsperf_command(ddsperf, domain);
    pong.arg("pong").stdin(Stdio::null()).stdout(Stdio::null());
    let pong = Helper::spawn("ddsperf pong", &mut pong)?;
    // ddsperf's KeyedSeq sample is 12 bytes of header plus the octet sequence; its "size"
    // counts both and must be 0 or at least 12.
    let size_arg = size.max(12).to_string();
    let seconds = format!("{:.1}", duration.as_secs_f64().max(2.0));
    let mut ping = ddsperf_command(ddsperf, domain);
    ping.args(["-D", &seconds, "ping"]);
    if let Some(hz) = hz {
        ping.arg(format!("{hz}Hz"));
    }
    ping.args(["size", &size_arg]).stdin(Stdio::null());
    let (mut ping, lines) = Helper::spawn_reading("ddsperf ping", &mut ping)?;
    let during = during(pong.pid());
    // Sample the sender's memory while it runs; the last reading before it exits is kept.
    let mut sender = None;
    let give_up = Instant::monotonic_now() + duration + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = ping.child.try_wait()? {
            break status;
        }
        if Instant::monotonic_now() > give_up {
            bail!("ddsperf ping did not end {duration:?} after it started");
        }
        if let Ok(memory) = ProcMemory::of(Some(ping.pid())) {
            sender = Some(memory);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(pong);
    // The reader thread ends at EOF; give it a moment to take the last lines.
    std::thread::sleep(Duration::from_millis(50));
    let lines = lines.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let intervals: Vec<DdsperfInterval> = lines
        .iter()
        .filter_map(|l| parse_ddsperf_interval(l))
        .collect();
    let rtt = CycloneRtt::from_intervals(intervals).ok_or_else(|| {
        let tail: Vec<&str> = lines.iter().rev().take(3).map(String::as_str).collect();
        format!(
            "ddsperf ping ({status}) reported no round trips: {}",
            tail.join(" | ")
        )
    });
    Ok(Ping {
        rtt,
        sender,
        during,
    })
}

/// One per-second line of `ddsperf sub`, as printed: `[pid] 2.000  size 64 total 2527681 lost 0
/// delta 1177649 lost 0 rate 1177.66 kS/s 602.96 Mb/s (...)`. The first `lost` is the total
/// so far, the second the interval's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DdsperfSubInterval {
    pub time_s: f64,
    pub size: usize,
    pub total: u64,
    pub lost_total: u64,
}

/// Parses a `ddsperf sub` interval line; other lines (`rss:...`, participants) give `None`.
pub fn parse_ddsperf_sub_interval(line: &str) -> Option<DdsperfSubInterval> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let time_s = tokens.get(1)?.parse().ok()?;
    let after = |key: &str| -> Option<&str> {
        let i = tokens.iter().position(|t| *t == key)?;
        tokens.get(i + 1).copied()
    };
    Some(DdsperfSubInterval {
        time_s,
        size: after("size")?.parse().ok()?,
        total: after("total")?.parse().ok()?,
        lost_total: after("lost")?.parse().ok()?,
    })
}

/// Parses a `ddsperf pub` interval line, `[pid] 2.000 1.18M/s   0n |@___...|   0%   4m`:
/// its time and the samples published per second in the interval.
pub fn parse_ddsperf_pub_rate(line: &str) -> Option<(f64, f64)> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let time_s: f64 = tokens.get(1)?.parse().ok()?;
    let rate = tokens.get(2)?.strip_suffix("/s")?;
    let (number, scale) = match rate.chars().last()? {
        'k' => (&rate[..rate.len() - 1], 1e3),
        'M' => (&rate[..rate.len() - 1], 1e6),
        'G' => (&rate[..rate.len() - 1], 1e9),
        _ => (rate, 1.0),
    };
    Some((time_s, number.parse::<f64>().ok()? * scale))
}

/// What one [`throughput`] run measured, over whole seconds after the first.
#[derive(Clone, Copy, Debug)]
pub struct CycloneThroughput {
    /// Samples the subscriber received per second.
    pub messages_per_s: f64,
    pub received: u64,
    /// Samples the subscriber saw missing (sequence-number gaps).
    pub lost: u64,
    /// Samples published per second, as `ddsperf pub` reports it (its mean over the window).
    pub published_per_s: Option<f64>,
    /// CPU time (user + system, all threads) per sample, publisher per sample published,
    /// subscriber per sample received.
    pub pub_cpu_us_per_msg: Option<f64>,
    pub sub_cpu_us_per_msg: Option<f64>,
}

/// `ddsperf sub` and `ddsperf pub size N` as fast as it goes, reliable, keep-all (`depth`
/// `None`) or keep-last `depth`, in `domain`, for `duration` of whole one-second intervals
/// after the first (which includes discovery). Both processes' CPU time is read when the
/// subscriber prints the interval lines that open and close the window, so the count of
/// samples and the CPU time cover the same seconds.
///
/// # Errors
/// When a process cannot be started. A run that reports nothing is `Ok(Err(why))`.
pub fn throughput(
    ddsperf: &Path,
    domain: u32,
    size: usize,
    depth: Option<u32>,
    duration: Duration,
) -> anyhow::Result<Result<CycloneThroughput, String>> {
    let seconds = duration.as_secs().max(1);
    let run_for = (seconds + 4).to_string();
    let history = depth.map_or_else(|| "all".to_owned(), |d| d.to_string());
    let mut sub = ddsperf_command(ddsperf, domain);
    sub.args(["-D", &run_for, "-k", &history, "sub"])
        .stderr(Stdio::null());
    let mut sub = Conversation::spawn("ddsperf sub", &mut sub)?;
    let size_arg = size.max(12).to_string();
    let mut publisher = ddsperf_command(ddsperf, domain);
    publisher
        .args(["-D", &run_for, "-k", &history, "pub", "size", &size_arg])
        .stderr(Stdio::null());
    let (publisher, pub_lines) = Helper::spawn_reading("ddsperf pub", &mut publisher)?;
    let pids = [publisher.pid(), sub.pid()];
    let wait = Duration::from_secs(seconds + 10);
    let next_interval = |sub: &mut Conversation| -> Option<DdsperfSubInterval> {
        loop {
            let line = sub.expect("[", wait).ok()?;
            if let Some(interval) = parse_ddsperf_sub_interval(&format!("[{line}")) {
                return Some(interval);
            }
        }
    };
    let Some(first) = next_interval(&mut sub) else {
        return Ok(Err("ddsperf sub reported no samples".to_owned()));
    };
    let start = CpuReading::of(&pids);
    let mut last = first;
    while last.time_s - first.time_s < seconds as f64 - 0.5 {
        match next_interval(&mut sub) {
            Some(interval) => last = interval,
            None => break,
        }
    }
    let end = CpuReading::of(&pids);
    drop(publisher);
    drop(sub);
    let window = last.time_s - first.time_s;
    if window <= 0.0 {
        return Ok(Err("ddsperf sub reported one interval only".to_owned()));
    }
    let received = last.total.saturating_sub(first.total);
    let lost = last.lost_total.saturating_sub(first.lost_total);
    let rates: Vec<f64> = pub_lines
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(|l| parse_ddsperf_pub_rate(l))
        .filter(|(t, _)| *t > first.time_s - 0.5 && *t < last.time_s + 0.5)
        .map(|(_, rate)| rate)
        .collect();
    let published_per_s =
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64);
    let used = end.used_since(&start);
    let per = |cpu: Option<Duration>, count: f64| {
        cpu.filter(|_| count > 0.0)
            .map(|c| c.as_secs_f64() * 1e6 / count)
    };
    Ok(Ok(CycloneThroughput {
        messages_per_s: received as f64 / window,
        received,
        lost,
        published_per_s,
        pub_cpu_us_per_msg: per(
            used[0],
            published_per_s.map_or(received as f64, |r| r * window),
        ),
        sub_cpu_us_per_msg: per(used[1], received as f64),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddsperf_throughput_lines_parse() {
        let sub = "[17437] 2.000  size 64 total 2527681 lost 3 delta 1177649 lost 1 rate \
                   1177.66 kS/s 602.96 Mb/s (252.77 kS/s 129.42 Mb/s)";
        assert_eq!(
            parse_ddsperf_sub_interval(sub),
            Some(DdsperfSubInterval {
                time_s: 2.0,
                size: 64,
                total: 2_527_681,
                lost_total: 3,
            })
        );
        assert_eq!(
            parse_ddsperf_sub_interval("[17437] 2.000  rss:7.2MB vcsw:736 ivcsw:308"),
            None
        );
        let (t, rate) =
            parse_ddsperf_pub_rate("[17438] 2.000 1.18M/s   0n |@___.... ...|   0%   4m").unwrap();
        assert_eq!(t, 2.0);
        assert!((rate - 1.18e6).abs() < 1.0);
        let (_, rate) = parse_ddsperf_pub_rate("[1] 3.000 520.50k/s 0n |@|").unwrap();
        assert!((rate - 520_500.0).abs() < 1e-6);
        assert_eq!(
            parse_ddsperf_pub_rate("[1] 3.000  rss:10.5MB vcsw:759"),
            None
        );
    }

    #[test]
    fn ddsperf_lines_parse_and_double() {
        let line = "[13613] 2.000  vm:13603 size 64 mean 14.241us min 10.980us 50% 13.169us \
                    90% 15.103us 99% 22.141us max 4224.636us cnt 34953";
        let first = parse_ddsperf_interval(line).unwrap();
        assert_eq!(first.size, 64);
        assert_eq!(first.count, 34953);
        assert!((first.p50_us - 13.169).abs() < 1e-9);
        assert!(parse_ddsperf_interval("[13613] 2.000  rss:7.5MB vcsw:32757").is_none());
        let later = DdsperfInterval {
            time_s: 3.0,
            p50_us: 10.0,
            p99_us: 20.0,
            max_us: 30.0,
            count: 10,
            ..first
        };
        let latest = DdsperfInterval {
            time_s: 4.0,
            p50_us: 12.0,
            count: 30,
            ..later
        };
        // The first interval (discovery) is dropped; the rest are doubled.
        let rtt = CycloneRtt::from_intervals(vec![latest, first, later]).unwrap();
        assert_eq!(rtt.intervals, 2);
        assert_eq!(rtt.round_trips, 40);
        assert!((rtt.p50_us - 24.0).abs() < 1e-9);
        assert!((rtt.max_us - 60.0).abs() < 1e-9);
    }
}

//! The sweep's DDS peers: Cyclone's `ddsperf` and the Fast DDS ping-pong, with their pongs'
//! pages counted at a rate.

use std::path::Path;
use std::time::Duration;

use super::model::{Kind, Mode, Pace, Series};
use crate::toolkit::cyclone::{self, cyclone_version};
use crate::toolkit::fastdds;
use crate::toolkit::memory::TouchedPages;
use crate::toolkit::pingpong::Point;
use crate::toolkit::stats::Summary;

/// At a rate, a DDS pong's pages touched per ping, counted as the roslite echoes are (median
/// of windows of one period each, [`TouchedPages`]), `windows` of them after a `skip`. These
/// pings are not ours to time, so the windows are not aligned with them, but a window of one
/// period holds one ping. The caller places the windows over pings that are not measured (so
/// that clearing the accessed bits never lands on a measured round trip).
pub(super) fn dds_pong_pages(pong: u32, pace: Pace, skip: Duration, windows: usize) -> Option<u64> {
    if windows == 0 {
        return None;
    }
    std::thread::sleep(skip);
    let mut pages = TouchedPages::of(pong);
    for _ in 0..windows {
        pages.next_window();
        std::thread::sleep(pace.ping_period());
    }
    pages.close_window();
    pages.median()
}

pub(super) fn measure_cyclone(
    ddsperf: &Path,
    domain: u32,
    sizes: &[usize],
    pace: Pace,
    duration: Duration,
) -> anyhow::Result<Series> {
    let mut points = Vec::new();
    for &size in sizes {
        // In rate mode: the pings of one series plus the dropped first second.
        let (hz, duration) = match pace.mode {
            Mode::Rate => (
                Some(pace.hz),
                Duration::from_secs_f64(pace.count as f64 / f64::from(pace.hz) + 1.5),
            ),
            Mode::BackToBack => (None, duration),
        };
        // The windows fall in ddsperf's first second, which it reports but we drop (see
        // `CycloneRtt::from_intervals`); by 0.4 s the pair has matched on loopback.
        let count_pages = |pong: u32| match pace.mode {
            Mode::Rate => {
                let skip = Duration::from_millis(400);
                let room = Duration::from_secs(1) - skip;
                let windows = (room.as_secs_f64() * f64::from(pace.hz)) as usize;
                dds_pong_pages(pong, pace, skip, windows.min(pace.warmup))
            }
            Mode::BackToBack => None,
        };
        let ping = cyclone::ping(ddsperf, domain, size, hz, duration, count_pages)?;
        let summary = ping.rtt.ok().map(|c| Summary {
            count: usize::try_from(c.round_trips).unwrap_or(usize::MAX),
            min_us: c.min_us,
            mean_us: c.mean_us,
            p50_us: c.p50_us,
            p99_us: c.p99_us,
            max_us: c.max_us,
            stddev_us: f64::NAN,
        });
        points.push(Point {
            size,
            summary,
            lost: 0,
            sender_rss_kib: ping.sender.map(|m| m.vm_rss_kib),
            echo_pages: ping.during,
        });
    }
    let name = match cyclone_version() {
        Some(v) => format!("Cyclone {v}"),
        None => "Cyclone".to_owned(),
    };
    Ok(Series {
        name,
        kind: Kind::Peer,
        requested: None,
        observed: None,
        points,
    })
}

// ---------------------------------------------------------------------------------------------
// Fast DDS.

pub(super) fn measure_fastdds(
    binary: &Path,
    version: &str,
    domain: u32,
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<Series> {
    let pacing = fastdds::Pacing {
        hz: (pace.mode == Mode::Rate).then_some(pace.hz),
        count: pace.count,
        warmup: pace.warmup,
    };
    // The ping announces a size right before its first warm-up ping of that size; a window
    // per warm-up ping but the last, which would close on a measured one.
    let points = fastdds::ping_pong(binary, domain, sizes, pacing, |pong| match pace.mode {
        Mode::Rate => {
            let windows = pace.warmup.saturating_sub(1);
            dds_pong_pages(pong, pace, Duration::ZERO, windows)
        }
        Mode::BackToBack => None,
    })?;
    Ok(Series {
        name: format!("Fast DDS {version}"),
        kind: Kind::Peer,
        requested: None,
        observed: None,
        points,
    })
}

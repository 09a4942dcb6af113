//! The sweep's references: the bare roslite-shm transports and this machine's floors, and the
//! 64 B floor goals measured in interleaved rounds.

use anyhow::Context as _;

use super::api::ApiSession;
use super::model::{us_summary, Goal, GoalRounds, Kind, MedianRound, Mode, Pace, Route, Series};
use crate::toolkit::pingpong::Point;
use crate::toolkit::stats::median_round;
use crate::toolkit::transport;

pub(super) fn measure_transport(
    transport: transport::BenchTransport,
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<Series> {
    let rows = transport::rtt(transport, sizes, pace.transport(), pace.warmup)
        .with_context(|| format!("{} transport ping-pong", transport.name()))?;
    Ok(Series {
        name: format!("{} (transport only)", transport.name()),
        kind: Kind::Transport,
        requested: None,
        observed: None,
        points: rows
            .iter()
            .map(|r| Point {
                size: r.size,
                summary: us_summary(&r.rtt),
                lost: 0,
                sender_rss_kib: Some(r.sender_rss_kib),
                echo_pages: r.rtt.echo_pages_per_ping,
            })
            .collect(),
    })
}

/// Name of the futex floor paced like the series (rate mode only).
pub(super) fn paced_futex_name(hz: u32) -> String {
    format!("futex @{hz}Hz")
}

/// Name of the raw socket floor paced like the series (rate mode only).
pub(super) fn paced_raw_uds_name(hz: u32) -> String {
    format!("raw UDS @{hz}Hz")
}

/// The floors back to back (the machine's best case), and in rate mode also paced like the
/// series, at 64 B: a ping every 100 ms meets cold caches and idle CPUs, for the floor as for
/// roslite, so only a floor paced alike says what roslite adds at that rate.
pub(super) fn measure_floors(sizes: &[usize], pace: Pace) -> anyhow::Result<Vec<Series>> {
    let count = pace.count;
    let futex = transport::futex_floor(count.max(1000)).context("futex floor")?;
    let floor = |name: &str, points: Vec<Point>| Series {
        name: name.to_owned(),
        kind: Kind::Floor,
        requested: None,
        observed: None,
        points,
    };
    let point = |size, s: &transport::Summary| Point {
        size,
        summary: us_summary(s),
        lost: 0,
        sender_rss_kib: None,
        echo_pages: s.echo_pages_per_ping,
    };
    let mut raw = Vec::new();
    let mut memcpy = Vec::new();
    for &size in sizes {
        let uds = transport::raw_uds_floor(size, count.max(200)).context("raw UDS floor")?;
        raw.push(point(size, &uds));
        memcpy.push(point(size, &transport::memcpy_floor(size, 200)));
    }
    // The futex floor carries no payload: the same figure at every size.
    let futex_points = sizes.iter().map(|&size| point(size, &futex)).collect();
    let mut floors = vec![
        floor("futex floor", futex_points),
        floor("raw UDS floor", raw),
        floor("memcpy", memcpy),
    ];
    if pace.mode == Mode::Rate && sizes.contains(&64) {
        let paced = pace.transport();
        let futex =
            transport::futex_floor_paced(paced, pace.warmup).context("paced futex floor")?;
        let futex_points = sizes.iter().map(|&size| point(size, &futex)).collect();
        floors.push(floor(&paced_futex_name(pace.hz), futex_points));
        let uds = transport::raw_uds_floor_paced(64, paced, pace.warmup)
            .context("paced raw UDS floor")?;
        floors.push(floor(&paced_raw_uds_name(pace.hz), vec![point(64, &uds)]));
    }
    Ok(floors)
}

/// One 64 B floor goal measured in alternating rounds (back-to-back mode): per round the floor,
/// then the series judged against it right after it. This shared VM drifts between fast and
/// slow phases lasting seconds; measured minutes apart in the sweep, a floor and a path can
/// land in different phases and their ratio says more about the phase than about roslite.
pub(super) struct FloorRounds {
    /// The series judged, named as in the sweep (`shm`, `uds (transport only)`, ...).
    pub(super) series: String,
    pub(super) floor: &'static str,
    /// Per round, in measuring order: `(series p50, floor p50)`, `None` where a side
    /// completed no round trip.
    pub(super) rounds: Vec<(Option<f64>, Option<f64>)>,
    /// Why no round was measured (the path fell back to another transport).
    pub(super) why_not: Option<String>,
}

impl FloorRounds {
    pub(super) fn new(series: String, floor: &'static str) -> Self {
        Self {
            series,
            floor,
            rounds: Vec::new(),
            why_not: None,
        }
    }

    pub(super) fn ratios(&self) -> Vec<Option<f64>> {
        self.rounds
            .iter()
            .map(|&(ours, floor)| Some(ours? / floor?))
            .collect()
    }

    /// The goal "`series` 64 B p50 <= 1.3x `floor`" (the sweep's wording), judged on the round
    /// with the median ratio, every round's ratio carried along.
    pub(super) fn goal(&self) -> Goal {
        let text = format!("{} 64 B p50 <= 1.3x {}", self.series, self.floor);
        let ratios = self.ratios();
        let median = median_round(&ratios).and_then(|index| {
            let (ours, floor) = self.rounds[index];
            Some(MedianRound {
                index,
                p50_us: ours?,
                floor_p50_us: floor?,
            })
        });
        Goal {
            text,
            ratio: median.map(|m| (m.p50_us / m.floor_p50_us, FLOOR_LIMIT)),
            why_not: match (&self.why_not, median) {
                (Some(why), _) => Some(why.clone()),
                (None, None) => Some("not measured".to_owned()),
                (None, Some(_)) => None,
            },
            rounds: Some(GoalRounds { ratios, median }),
            bound: None,
        }
    }
}

/// How much slower than its floor a 64 B round trip may be.
pub(super) const FLOOR_LIMIT: f64 = 1.3;

/// The back-to-back floor that `path`'s 64 B goal is judged against, with the sweep's counts
/// ([`measure_floors`]), so a round's floor is the sweep's floor measured again.
pub(super) fn floor_p50_64(path: Route, pace: Pace) -> anyhow::Result<Option<f64>> {
    let floor = match path {
        Route::Shm => transport::futex_floor(pace.count.max(1000)).context("futex floor")?,
        _ => transport::raw_uds_floor(64, pace.count.max(200)).context("raw UDS floor")?,
    };
    Ok(us_summary(&floor).map(|s| s.p50_us))
}

/// The 64 B floor goals of shm (futex floor) and uds (raw UDS floor), through the API and as
/// transport only, in `rounds` rounds per path: the floor, then the path through the API, then
/// the bare transport (the API path, the goal proper, is the one right after its floor).
pub(super) fn measure_floor_rounds(
    routes: &[Route],
    domain: u32,
    pace: Pace,
    rounds: usize,
) -> anyhow::Result<Vec<FloorRounds>> {
    let mut out = Vec::new();
    for (index, &path) in Route::ALL.iter().enumerate() {
        let (floor, transport) = match path {
            Route::Shm => ("futex floor", transport::BenchTransport::Shm),
            Route::Uds => ("raw UDS floor", transport::BenchTransport::Uds),
            _ => continue,
        };
        if !routes.contains(&path) {
            continue;
        }
        let mut api = FloorRounds::new(path.name().to_owned(), floor);
        let mut bare = FloorRounds::new(format!("{} (transport only)", transport.name()), floor);
        // The sweep's own session for this path has ended: its domain is free again.
        let mut session = ApiSession::start(path, domain + index as u32, pace.period)
            .with_context(|| format!("starting the {} ping-pong again", path.name()))?;
        session.wait_for_match()?;
        let observed = session.observed_path();
        let mut session = if observed == path.name() {
            Some(session)
        } else {
            api.why_not = Some(format!(
                "not measured: {} fell back to {observed}",
                path.name()
            ));
            None
        };
        for _ in 0..rounds {
            let floor = floor_p50_64(path, pace)?;
            if let Some(session) = &mut session {
                let ours = session.measure(64, pace)?.summary.map(|s| s.p50_us);
                api.rounds.push((ours, floor));
            }
            let row = transport::rtt(transport, &[64], pace.transport(), pace.warmup)
                .with_context(|| format!("{} transport ping-pong", transport.name()))?;
            let ours = row
                .first()
                .and_then(|r| us_summary(&r.rtt))
                .map(|s| s.p50_us);
            bare.rounds.push((ours, floor));
        }
        out.push(api);
        out.push(bare);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_rounds_are_judged_on_the_median_round() {
        let mut shm = FloorRounds::new("shm".to_owned(), "futex floor");
        shm.rounds = vec![
            (Some(13.0), Some(10.0)), // 1.3
            (Some(8.0), Some(10.0)),  // 0.8
            (None, Some(10.0)),       // no round trip: not a candidate
            (Some(16.0), Some(10.0)), // 1.6
        ];
        let goal = shm.goal();
        assert_eq!(goal.text, "shm 64 B p50 <= 1.3x futex floor");
        // Three ratios: the middle one, the first round.
        let (ratio, limit) = goal.ratio.unwrap();
        assert!((ratio - 1.3).abs() < 1e-9 && limit == FLOOR_LIMIT);
        let rounds = goal.rounds.unwrap();
        assert_eq!(rounds.ratios.len(), 4);
        assert_eq!(rounds.ratios[2], None);
        let median = rounds.median.unwrap();
        assert_eq!((median.index, median.p50_us), (0, 13.0));
        // Even count: the upper middle, the less flattering one.
        shm.rounds.truncate(2);
        assert_eq!(shm.goal().met(), Some(true));
        shm.rounds.push((Some(14.0), Some(10.0)));
        shm.rounds.push((Some(7.0), Some(10.0)));
        let goal = shm.goal();
        assert!((goal.ratio.unwrap().0 - 1.3).abs() < 1e-9);
        // A path that fell back is not judged.
        let mut uds = FloorRounds::new("uds".to_owned(), "raw UDS floor");
        uds.why_not = Some("not measured: uds fell back to udp".to_owned());
        let goal = uds.goal();
        assert_eq!(goal.met(), None);
        assert!(goal.why_not.unwrap().contains("fell back"));
    }
}

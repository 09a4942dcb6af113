//! The sweep's shared data: what `bench rtt` hands over ([`Options`]), how pings are paced,
//! the series measured, and the goals judged on them. Every part of the sweep reads these.

use std::path::Path;
use std::time::Duration;

use crate::toolkit::pingpong::Point;
use crate::toolkit::stats::Summary;
use crate::toolkit::transport;

/// The sweep's sizes when `--sizes` is not given: the IPC framework comparison's 256 B to
/// 4 MiB, plus 64 B for the comparison with the floors.
pub const DEFAULT_SIZES: &str = "64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB";
/// The sweep's chart when `--svg` is not given.
pub const DEFAULT_SVG: &str = "target/bench-rtt/rtt.svg";

/// How pings are paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// `--count` pings per size at `--hz` (the IPC framework comparison sent 100 at 10 Hz).
    Rate,
    /// `--count` pings per size, each sent as soon as the previous echo arrived.
    BackToBack,
}

impl Mode {
    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::Rate => "rate",
            Mode::BackToBack => "back-to-back",
        }
    }
}

/// Which roslite paths to sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Intra,
    Shm,
    Uds,
    Udp,
    /// Shared memory with loaned messages on both sides ([`loan`](super::loan)).
    ShmLoan,
}

impl Route {
    pub const ALL: [Route; 5] = [
        Route::Intra,
        Route::Shm,
        Route::Uds,
        Route::Udp,
        Route::ShmLoan,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Route::Intra => "intra",
            Route::Shm => "shm",
            Route::Uds => "uds",
            Route::Udp => "udp",
            Route::ShmLoan => "shm-loan",
        }
    }
}

/// What `bench rtt` hands over for the sweep.
pub struct Options<'a> {
    pub routes: Vec<Route>,
    pub sizes: &'a [usize],
    pub domain: u32,
    pub cyclone_duration: Duration,
    pub no_cyclone: bool,
    pub svg: &'a Path,
    pub json: bool,
    pub mode: Mode,
    /// Round trips measured per size and series.
    pub count: usize,
    /// Pings per second in [`Mode::Rate`].
    pub hz: u32,
    pub no_fastdds: bool,
    /// Back-to-back mode: interleaved rounds for the 64 B floor goals (see
    /// [`measure_floor_rounds`](super::floors::measure_floor_rounds)).
    pub rounds: usize,
}

/// Domains used from `--domain` on: one per roslite path, then Cyclone, then Fast DDS, then
/// shm-loan (added last, so the others keep their domains).
pub const DOMAINS_USED: u32 = 7;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// roslite through the user API.
    Api,
    /// A bare roslite-shm transport.
    Transport,
    Floor,
    /// Another DDS implementation.
    Peer,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Api => "roslite",
            Kind::Transport => "transport",
            Kind::Floor => "floor",
            Kind::Peer => "peer",
        }
    }
}

pub(super) struct Series {
    pub(super) name: String,
    pub(super) kind: Kind,
    /// For [`Kind::Api`]: the path asked for and the one the pair took.
    pub(super) requested: Option<&'static str>,
    pub(super) observed: Option<String>,
    pub(super) points: Vec<Point>,
}

impl Series {
    pub(super) fn p50(&self, size: usize) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.size == size)?
            .summary
            .map(|s| s.p50_us)
    }

    /// Whether an API series ran on the path it asked for.
    pub(super) fn on_requested_path(&self) -> bool {
        match (self.requested, &self.observed) {
            (Some(want), Some(got)) => want == got,
            _ => true,
        }
    }
}

pub(super) fn us_summary(s: &transport::Summary) -> Option<Summary> {
    // The bare transports report p50/p99/max only; the other fields stay unknown (NaN is printed as
    // null in JSON and never compared).
    (s.samples > 0).then_some(Summary {
        count: s.samples,
        min_us: f64::NAN,
        mean_us: f64::NAN,
        p50_us: s.p50_us,
        p99_us: s.p99_us,
        max_us: s.max_us,
        stddev_us: f64::NAN,
    })
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Pace {
    pub(super) mode: Mode,
    pub(super) hz: u32,
    pub(super) count: usize,
    pub(super) warmup: usize,
    pub(super) period: Option<Duration>,
}

impl Pace {
    /// The time between pings at a rate.
    pub(super) fn ping_period(self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.hz.max(1)))
    }

    pub(super) fn transport(self) -> transport::Pace {
        match self.mode {
            Mode::Rate => transport::Pace::Rate {
                hz: self.hz,
                count: self.count,
            },
            Mode::BackToBack => transport::Pace::BackToBack { count: self.count },
        }
    }
}

pub(super) struct Skipped {
    pub(super) name: String,
    pub(super) reason: String,
}

pub(super) struct Goal {
    pub(super) text: String,
    /// `(measured ratio, limit)`.
    pub(super) ratio: Option<(f64, f64)>,
    /// Why it could not be evaluated.
    pub(super) why_not: Option<String>,
    /// For a goal measured in interleaved rounds ([`FloorRounds`](super::floors::FloorRounds)).
    pub(super) rounds: Option<GoalRounds>,
    /// The best ratio this run's floors leave the measured path, with why, where the floors
    /// set one ([`owned_copy_bound`](super::goals::owned_copy_bound)).
    pub(super) bound: Option<Bound>,
}

/// The lowest ratio a goal's path could reach on this run's floors.
pub(super) struct Bound {
    pub(super) ratio: f64,
    pub(super) why: String,
}

/// Every round of a [`FloorRounds`](super::floors::FloorRounds) goal and the one it is judged on.
pub(super) struct GoalRounds {
    /// p50 ratio of each round, in measuring order.
    pub(super) ratios: Vec<Option<f64>>,
    pub(super) median: Option<MedianRound>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct MedianRound {
    /// From 0, in measuring order.
    pub(super) index: usize,
    pub(super) p50_us: f64,
    pub(super) floor_p50_us: f64,
}

impl Goal {
    pub(super) fn met(&self) -> Option<bool> {
        self.ratio.map(|(r, limit)| r <= limit)
    }
}

pub(super) fn find<'a>(series: &'a [Series], name: &str) -> Option<&'a Series> {
    series.iter().find(|s| s.name == name)
}

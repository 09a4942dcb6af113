//! `bench service`'s results: the configurations, each request as a client reported it, and a
//! configuration's run at one period. The bench's entry, its plots and its report share them.

use std::time::Duration;

use crate::toolkit::stats::Distribution;

/// The roslite configurations' service and type.
pub const ROSLITE_TYPE: &str = "example_interfaces/srv/AddTwoInts";
/// rclpy's: the venv has no example_interfaces.
pub const RCLPY_TYPE: &str = "std_srvs/srv/SetBool";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Roslite,
    /// roslite with its same-host links off (`ROSLITE_TRANSPORTS=udp`): RTPS over loopback.
    RosliteUdp,
    RosliteImpaired,
    Rclpy,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Roslite => "roslite",
            Kind::RosliteUdp => "roslite over UDP",
            Kind::RosliteImpaired => "roslite, impaired link",
            Kind::Rclpy => "rclpy (ROS 2)",
        }
    }

    pub fn service_type(self) -> &'static str {
        match self {
            Kind::Roslite | Kind::RosliteUdp | Kind::RosliteImpaired => ROSLITE_TYPE,
            Kind::Rclpy => RCLPY_TYPE,
        }
    }
}

/// One request as a client reported it.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub jitter_ns: i64,
    /// `None`: no reply within the client's timeout.
    pub response_ns: Option<i64>,
    pub ok: bool,
}

/// One configuration at one period.
pub struct Run {
    pub kind: Kind,
    pub period: Duration,
    pub samples: Vec<Sample>,
    /// The transport the calls took, as the roslite client's graph showed it (`shm`, `uds`,
    /// `udp`); `None` for rclpy.
    pub path: Option<String>,
    /// Why there are no samples.
    pub note: Option<String>,
}

impl Run {
    pub fn replies(&self) -> usize {
        self.samples
            .iter()
            .filter(|s| s.response_ns.is_some())
            .count()
    }

    pub fn wrong(&self) -> usize {
        self.samples
            .iter()
            .filter(|s| s.response_ns.is_some() && !s.ok)
            .count()
    }

    pub fn response_us(&self) -> Vec<f64> {
        self.samples
            .iter()
            .filter_map(|s| s.response_ns.map(|ns| ns as f64 / 1e3))
            .collect()
    }

    pub fn jitter_us(&self) -> Vec<f64> {
        self.samples
            .iter()
            .map(|s| s.jitter_ns as f64 / 1e3)
            .collect()
    }

    pub fn response(&self) -> Option<Distribution> {
        Distribution::of(&self.response_us())
    }

    pub fn jitter(&self) -> Option<Distribution> {
        Distribution::of(&self.jitter_us())
    }
}

/// `500 ms`, `250 us`.
pub fn period_label(period: Duration) -> String {
    let us = period.as_micros();
    let (ms, rest) = (us / 1000, us % 1000);
    if rest == 0 {
        format!("{ms} ms")
    } else {
        format!("{us} us")
    }
}

/// The period in milliseconds, for the JSON keys that say `_ms`.
pub fn period_ms(period: Duration) -> f64 {
    period.as_secs_f64() * 1e3
}

//! `roslite topic hz` and `roslite topic bw`: ros2topic's receiving rate and bandwidth verbs.
//!
//! Both subscribe to the serialized messages (nothing is decoded) and print once a second
//! until interrupted, or until `--timeout`. `hz` measures the time between arrivals over the
//! last `--window` arrivals; `bw` the bytes received over the last `--window` messages,
//! divided by the time from the oldest of them to now. The figures are the subscription's,
//! not the publisher's: QoS and the machine's load shape them too.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use roslite::Executor;
use roslite_cdr::SharedBuf;

use super::graph;
use super::{print_now, QosArgs};

/// `ros2 topic hz`'s default `--window`.
const HZ_WINDOW: usize = 10_000;
/// `ros2 topic bw`'s default `--window`.
const BW_WINDOW: usize = 100;
/// How often a line is printed.
const REPORT_PERIOD: Duration = Duration::from_secs(1);

#[derive(clap::Args)]
pub struct HzArgs {
    /// Name of the ROS topic to listen to (e.g. '/chatter')
    topic_name: String,
    /// Window size, in # of messages, for calculating rate
    #[arg(short = 'w', long = "window", value_name = "WINDOW", default_value_t = HZ_WINDOW,
          value_parser = positive_count)]
    window: usize,
    /// Time arrivals by the system (wall) clock instead of the monotonic clock
    #[arg(long)]
    wall_time: bool,
    #[command(flatten)]
    common: RateArgs,
}

#[derive(clap::Args)]
pub struct BwArgs {
    /// Topic name to monitor for bandwidth utilization
    topic: String,
    /// Maximum window size, in # of messages, for calculating rate
    #[arg(short = 'w', long = "window", value_name = "WINDOW", default_value_t = BW_WINDOW,
          value_parser = positive_count)]
    window: usize,
    #[command(flatten)]
    common: RateArgs,
}

/// What `hz` and `bw` share.
#[derive(clap::Args)]
struct RateArgs {
    #[command(flatten)]
    qos: QosArgs,
    /// Stop after this many seconds (by default, run until interrupted)
    #[arg(long, value_name = "N", value_parser = super::positive_float)]
    timeout: Option<f64>,
    /// Longest wait in seconds for discovery of the topic's publishers (default: 2)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
    /// The name of the measuring node; by default, a hidden node name
    #[arg(short = 'n', long)]
    node_name: Option<String>,
}

fn positive_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a positive whole number of messages"
        )),
    }
}

/// Receiving rate over the last `window` gaps between arrivals (times in nanoseconds).
#[derive(Debug)]
pub(crate) struct RateWindow {
    window: usize,
    gaps_ns: VecDeque<u64>,
    last_arrival_ns: Option<u64>,
    /// Arrival time of the newest message when a line was last printed (0: never).
    last_reported_ns: u64,
}

/// One `hz` line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RateReport {
    pub rate_hz: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub std_dev_s: f64,
    /// Gaps averaged over.
    pub window: usize,
}

impl RateReport {
    /// The lines ros2 prints.
    pub(crate) fn text(&self) -> String {
        format!(
            "average rate: {:.3}\n\tmin: {:.3}s max: {:.3}s std dev: {:.5}s window: {}\n",
            self.rate_hz, self.min_s, self.max_s, self.std_dev_s, self.window
        )
    }
}

impl RateWindow {
    pub(crate) fn new(window: usize) -> Self {
        Self {
            window: window.max(1),
            gaps_ns: VecDeque::new(),
            last_arrival_ns: None,
            last_reported_ns: 0,
        }
    }

    /// A message arrived at `at_ns`. A clock that went back (the wall clock was set) starts
    /// over, as ros2 does.
    pub(crate) fn arrived(&mut self, at_ns: u64) {
        match self.last_arrival_ns {
            Some(last) if last <= at_ns => {
                self.gaps_ns.push_back(at_ns - last);
                if self.gaps_ns.len() > self.window {
                    self.gaps_ns.pop_front();
                }
            }
            _ => self.gaps_ns.clear(),
        }
        self.last_arrival_ns = Some(at_ns);
    }

    /// The line to print now, if any: not before the first gap, then once for each second of
    /// arrivals (the newest arrival at least a second after the one last reported); nothing
    /// while no message comes.
    pub(crate) fn report(&mut self) -> Option<RateReport> {
        let newest = self.last_arrival_ns?;
        if self.gaps_ns.is_empty() {
            return None;
        }
        if self.last_reported_ns == 0 {
            self.last_reported_ns = newest;
            return None;
        }
        if newest < self.last_reported_ns.saturating_add(1_000_000_000) {
            return None;
        }
        self.last_reported_ns = newest;
        let n = self.gaps_ns.len() as f64;
        let seconds = |ns: u64| ns as f64 * 1e-9;
        let mean = self.gaps_ns.iter().map(|&g| seconds(g)).sum::<f64>() / n;
        let variance = self
            .gaps_ns
            .iter()
            .map(|&g| (seconds(g) - mean).powi(2))
            .sum::<f64>()
            / n;
        Some(RateReport {
            rate_hz: if mean > 0.0 { 1.0 / mean } else { 0.0 },
            min_s: seconds(*self.gaps_ns.iter().min()?),
            max_s: seconds(*self.gaps_ns.iter().max()?),
            std_dev_s: variance.sqrt(),
            window: self.gaps_ns.len(),
        })
    }
}

/// Bytes received over the last `window` messages.
#[derive(Debug)]
pub(crate) struct BandwidthWindow {
    window: usize,
    /// `(arrival ns, serialized size)`, oldest first.
    messages: VecDeque<(u64, usize)>,
}

/// One `bw` line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BandwidthReport {
    pub bytes_per_s: f64,
    pub messages: usize,
    pub mean_bytes: f64,
    pub min_bytes: usize,
    pub max_bytes: usize,
}

impl BandwidthReport {
    /// The lines ros2 prints: every figure in the unit the rate needs (B, KB, MB; powers of
    /// 1000).
    pub(crate) fn text(&self) -> String {
        let (divisor, unit, decimals) = if self.bytes_per_s < 1e3 {
            (1.0, "B", 0)
        } else if self.bytes_per_s < 1e6 {
            (1e3, "KB", 2)
        } else {
            (1e6, "MB", 2)
        };
        let show = |v: f64| format!("{:.*} {unit}", decimals, v / divisor);
        format!(
            "{}/s from {} messages\n\tMessage size mean: {} min: {} max: {}\n",
            show(self.bytes_per_s),
            self.messages,
            show(self.mean_bytes),
            show(self.min_bytes as f64),
            show(self.max_bytes as f64)
        )
    }
}

impl BandwidthWindow {
    pub(crate) fn new(window: usize) -> Self {
        Self {
            window: window.max(1),
            messages: VecDeque::new(),
        }
    }

    pub(crate) fn arrived(&mut self, at_ns: u64, bytes: usize) {
        self.messages.push_back((at_ns, bytes));
        if self.messages.len() > self.window {
            self.messages.pop_front();
        }
    }

    /// The figures at `now_ns`: nothing below two messages; a clock behind the oldest message
    /// starts over.
    pub(crate) fn report(&mut self, now_ns: u64) -> Option<BandwidthReport> {
        if self.messages.len() < 2 {
            return None;
        }
        let oldest = self.messages.front()?.0;
        if now_ns <= oldest {
            self.messages.clear();
            return None;
        }
        let total: usize = self.messages.iter().map(|&(_, b)| b).sum();
        let count = self.messages.len();
        Some(BandwidthReport {
            bytes_per_s: total as f64 / ((now_ns - oldest) as f64 * 1e-9),
            messages: count,
            mean_bytes: total as f64 / count as f64,
            min_bytes: self.messages.iter().map(|&(_, b)| b).min()?,
            max_bytes: self.messages.iter().map(|&(_, b)| b).max()?,
        })
    }
}

/// Nanoseconds on the clock arrivals are timed by.
fn clock_ns(wall_time: bool, start: Instant) -> u64 {
    if wall_time {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    } else {
        // Offset by a second so that the first arrival is never at 0 ("never reported").
        u64::try_from((start.elapsed() + Duration::from_secs(1)).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Subscribes to `topic` (as its publishers announce it; `verb` names the command in errors,
/// and `announce` prints ros2's `Subscribed to [...]` first), hands every arrival's serialized
/// size to `arrived` and calls `tick` after each turn of the executor, until `--timeout`
/// or stdout closes (`tick` fails).
fn measure(
    verb: &str,
    announce: bool,
    topic: &str,
    args: &RateArgs,
    mut arrived: impl FnMut(usize),
    mut tick: impl FnMut() -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let topic = super::resolve_topic(topic)?;
    let set = crate::interface::load_interfaces()?;
    let ctx = super::networked_context()?;
    let net = super::network(&ctx);
    let max_wait = graph::spin_time(args.spin_time, graph::DEFAULT_SPIN_TIME);
    let start = Instant::now();
    let view = graph::wait_for_graph(&net, max_wait, |view| {
        view.publishers_on(&topic).next().is_some()
    });
    let ty = super::echo::discovered_type(verb, &view, &topic, start.elapsed().as_secs_f64())?;
    let type_info = super::type_info(&set, &ty)?;
    let qos = super::echo::choose_qos(&args.qos, view.publishers_on(&topic))?;
    let node = super::tool_node(&ctx, args.node_name.as_deref())?;
    let (sender, sizes) = mpsc::channel::<usize>();
    let _subscription = node
        .create_serialized_subscription(&topic, type_info, qos, move |bytes: &SharedBuf, _| {
            let _ = sender.send(bytes.bytes().len());
        })
        .with_context(|| format!("cannot subscribe to '{topic}'"))?;
    if announce {
        println!("Subscribed to [{topic}]");
    }
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let deadline = super::Deadline::after(args.timeout);
    loop {
        deadline.spin_once(&executor, Duration::from_millis(50));
        while let Ok(size) = sizes.try_recv() {
            arrived(size);
        }
        // A closed stdout (`| head`) ends the command, quietly (see main).
        tick()?;
        if deadline.passed() {
            return Ok(());
        }
    }
}

pub fn run_hz(args: &HzArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let window = std::cell::RefCell::new(RateWindow::new(args.window));
    measure(
        "hz",
        false,
        &args.topic_name,
        &args.common,
        |_| window.borrow_mut().arrived(clock_ns(args.wall_time, start)),
        || match window.borrow_mut().report() {
            Some(report) => print_now(&report.text()),
            None => Ok(()),
        },
    )
}

pub fn run_bw(args: &BwArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let window = std::cell::RefCell::new(BandwidthWindow::new(args.window));
    let mut next_report = Instant::now() + REPORT_PERIOD;
    measure(
        "bw",
        true,
        &args.topic,
        &args.common,
        |size| window.borrow_mut().arrived(clock_ns(false, start), size),
        || {
            if Instant::now() < next_report {
                return Ok(());
            }
            next_report += REPORT_PERIOD;
            match window.borrow_mut().report(clock_ns(false, start)) {
                Some(report) => print_now(&report.text()),
                None => Ok(()),
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_rate_is_reported_a_second_after_the_first_gap_then_every_second() {
        let mut w = RateWindow::new(HZ_WINDOW);
        assert_eq!(w.report(), None, "nothing arrived");
        w.arrived(1000 * MS);
        assert_eq!(w.report(), None, "one message has no gap");
        w.arrived(1100 * MS);
        assert_eq!(w.report(), None, "the first gap only starts the count");
        // A line once the newest arrival is a second past the one that started the count.
        for i in 2..=11 {
            w.arrived(1000 * MS + i * 100 * MS);
            if i < 11 {
                assert_eq!(w.report(), None, "less than a second of arrivals at {i}");
            }
        }
        let report = w.report().expect("a second after the first gap");
        assert!((report.rate_hz - 10.0).abs() < 1e-9, "{report:?}");
        assert_eq!((report.min_s, report.max_s, report.window), (0.1, 0.1, 11));
        assert!(report.std_dev_s < 1e-12);
        assert_eq!(
            report.text(),
            "average rate: 10.000\n\tmin: 0.100s max: 0.100s std dev: 0.00000s window: 11\n"
        );
        assert_eq!(w.report(), None, "no new message, no line");
    }

    #[test]
    fn uneven_gaps_give_their_mean_rate_spread_and_extremes() {
        let mut w = RateWindow::new(HZ_WINDOW);
        let mut at = 1000 * MS;
        w.arrived(at);
        for gap in [100, 300, 100, 300] {
            at += gap * MS;
            w.arrived(at);
        }
        w.report();
        at += 1000 * MS;
        w.arrived(at);
        let r = w.report().unwrap();
        // Gaps 0.1, 0.3, 0.1, 0.3, 1.0: mean 0.36 s.
        assert!((r.rate_hz - 1.0 / 0.36).abs() < 1e-9, "{r:?}");
        assert_eq!((r.min_s, r.max_s, r.window), (0.1, 1.0, 5));
        let mean: f64 = 0.36;
        let var = [0.1f64, 0.3, 0.1, 0.3, 1.0]
            .iter()
            .map(|g| (g - mean).powi(2))
            .sum::<f64>()
            / 5.0;
        assert!((r.std_dev_s - var.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn the_window_keeps_the_newest_gaps_and_a_clock_going_back_starts_over() {
        let mut w = RateWindow::new(2);
        for at in [10, 20, 40, 80] {
            w.arrived(at * MS);
        }
        assert_eq!(w.gaps_ns, [20 * MS, 40 * MS]);
        w.arrived(5 * MS);
        assert!(w.gaps_ns.is_empty());
        w.arrived(6 * MS);
        assert_eq!(w.gaps_ns, [MS]);
    }

    #[test]
    fn bandwidth_counts_the_window_over_the_time_since_its_oldest_message() {
        let mut w = BandwidthWindow::new(3);
        w.arrived(1000 * MS, 100);
        assert_eq!(w.report(1500 * MS), None, "one message");
        w.arrived(1100 * MS, 300);
        w.arrived(1200 * MS, 200);
        w.arrived(1300 * MS, 400);
        // The window keeps the last three (300 + 200 + 400 bytes) since 1.1 s; at 2.1 s that
        // is 900 B over one second.
        let r = w.report(2100 * MS).unwrap();
        assert_eq!((r.messages, r.min_bytes, r.max_bytes), (3, 200, 400));
        assert!((r.bytes_per_s - 900.0).abs() < 1e-6, "{r:?}");
        assert_eq!(
            r.text(),
            "900 B/s from 3 messages\n\tMessage size mean: 300 B min: 200 B max: 400 B\n"
        );
        assert_eq!(
            w.report(1000 * MS),
            None,
            "a clock behind the window starts over"
        );
        assert!(w.messages.is_empty());
    }

    #[test]
    fn bandwidth_lines_use_one_unit_chosen_by_the_rate() {
        let line = |bytes_per_s| {
            BandwidthReport {
                bytes_per_s,
                messages: 10,
                mean_bytes: 1234.0,
                min_bytes: 1000,
                max_bytes: 2_500_000,
            }
            .text()
        };
        assert_eq!(
            line(12_345.0),
            "12.35 KB/s from 10 messages\n\tMessage size mean: 1.23 KB min: 1.00 KB \
             max: 2500.00 KB\n"
        );
        assert_eq!(
            line(2_500_000.0),
            "2.50 MB/s from 10 messages\n\tMessage size mean: 0.00 MB min: 0.00 MB max: 2.50 MB\n"
        );
    }

    #[test]
    fn windows_must_be_positive() {
        assert_eq!(positive_count("5"), Ok(5));
        assert!(positive_count("0").unwrap_err().contains("positive"));
        assert!(positive_count("-3").is_err());
    }
}

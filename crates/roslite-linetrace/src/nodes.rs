//! The robot (`raspimouse`) and the follower (`follower`) as roslite nodes, with the topics,
//! types and QoS depths of the upstream application (docs/experiments.md, the mROS 2
//! line-follower evaluation).
//!
//! Latency is measured as that evaluation did: the publisher reads `CLOCK_MONOTONIC` just before
//! `publish`, the subscriber first thing in its callback. The two readings are joined by the
//! publisher's sequence number: the publisher counts its own publications (1, 2, ...), which is
//! the RTPS sequence number of each sample (a roslite or Fast DDS writer numbers every write
//! from 1), and the subscriber gets that number from `MessageInfo::publication_sequence_number`
//! (rclpy: `MessageInfo['publication_sequence_number']`). `MessageInfo::source_timestamp`
//! cannot be used: for a message from another process roslite stamps it on arrival (RTPS
//! carries no sender monotonic time). Each process streams its records to a trace file
//! ([`Trace`]); the launcher joins the files when the processes have stopped. `CLOCK_MONOTONIC`
//! is one clock for all processes of a host, so the differences are one-way latencies.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::Duration;

use roslite::msgs::geometry_msgs::msg::{Twist, TwistStamped};
use roslite::msgs::raspimouse_msgs::msg::{Leds, LightSensors, Switches};
use roslite::msgs::std_msgs::msg::Int16;
use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use roslite::{
    Client, Instant, MessageInfo, Node, NodeError, Publisher, ResponseFuture, Service,
    Subscription, Timer,
};

use crate::follower::{Action, Follower, TIMER_PERIOD_S};
use crate::robot::{Operator, Robot, FIELD_POSE, LIGHT_SENSORS_PERIOD_S, SWITCHES_PERIOD_S};

/// Settings shared by both nodes (and by the rclpy nodes' command lines).
#[derive(Clone, Copy, Debug)]
pub struct NodeOptions {
    /// Time scale: every period and sleep is divided by it, so the application runs this many
    /// times faster than on the real robot (1 = upstream's rates).
    pub speed: f64,
    /// Seed of the robot's sensor noise.
    pub seed: u64,
    /// `/cmd_vel` as `geometry_msgs/TwistStamped` (Jazzy and later) instead of `Twist`.
    pub twist_stamped: bool,
}

impl Default for NodeOptions {
    fn default() -> Self {
        Self {
            speed: 1.0,
            seed: 1,
            twist_stamped: false,
        }
    }
}

impl NodeOptions {
    fn scaled(&self, seconds: f64) -> Duration {
        Duration::from_secs_f64(seconds / self.speed)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The two measured topics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measured {
    LightSensors,
    CmdVel,
}

impl Measured {
    pub fn name(self) -> &'static str {
        match self {
            Self::LightSensors => "light_sensors",
            Self::CmdVel => "cmd_vel",
        }
    }
}

/// One process's measurements, streamed as text lines to its trace file. Lines:
/// `pub|sub <topic> <seq> <monotonic ns>`, `mark following <ns>`, `count <what> <n>`,
/// `pose <sim s> <x> <y> <theta> <last /light_sensors seq>`, `summary <key> <value>`.
///
/// Streamed, not kept: the trace is the measuring apparatus, and records held in memory for a
/// whole run (thousands per topic) would inflate the very process memory being measured. A
/// buffered write reaches the file every few hundred records; callers record after the
/// measured publish, never between a time stamp and the work it times.
pub struct Trace {
    out: Mutex<TraceOut>,
}

enum TraceOut {
    Open(std::io::BufWriter<std::fs::File>),
    /// A write failed: the first error, kept for [`Trace::finish`]; nothing more is written.
    Broken(std::io::Error),
    Closed,
}

impl Trace {
    /// Creates (truncates) the trace file at `path`.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: &Path) -> std::io::Result<Arc<Self>> {
        let file = std::fs::File::create(path)?;
        Ok(Arc::new(Self {
            out: Mutex::new(TraceOut::Open(std::io::BufWriter::with_capacity(
                8 * 1024,
                file,
            ))),
        }))
    }

    fn write(&self, args: std::fmt::Arguments<'_>) {
        use std::io::Write as _;
        let mut out = lock(&self.out);
        let TraceOut::Open(w) = &mut *out else { return };
        if let Err(e) = w.write_fmt(args).and_then(|()| w.write_all(b"\n")) {
            *out = TraceOut::Broken(e);
        }
    }

    fn published(&self, topic: Measured, seq: u64, at: Instant) {
        self.write(format_args!("pub {} {seq} {}", topic.name(), at.as_nanos()));
    }

    fn received(&self, topic: Measured, seq: u64, at: Instant) {
        self.write(format_args!("sub {} {seq} {}", topic.name(), at.as_nanos()));
    }

    /// Appends one free-form line (`mark`, `count`, `pose`, `summary`).
    pub fn line(&self, args: std::fmt::Arguments<'_>) {
        self.write(args);
    }

    /// Flushes and closes the file; later records are dropped.
    ///
    /// # Errors
    /// The first write error of the run, or the flush's.
    pub fn finish(&self) -> std::io::Result<()> {
        use std::io::Write as _;
        match std::mem::replace(&mut *lock(&self.out), TraceOut::Closed) {
            TraceOut::Open(mut w) => w.flush(),
            TraceOut::Broken(e) => Err(e),
            TraceOut::Closed => Ok(()),
        }
    }
}

/// What the robot reports while it runs (the launcher watches these on stdout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    MotorPower(bool),
    /// A lap completed.
    Lap(u32),
    /// `/cmd_vel` messages received since the motors were switched on (every 100).
    CmdVel(u64),
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MotorPower(on) => {
                write!(f, "event motor_power {}", if *on { "on" } else { "off" })
            }
            Self::Lap(n) => write!(f, "event lap {n}"),
            Self::CmdVel(n) => write!(f, "event cmd_vel {n}"),
        }
    }
}

pub type EventSink = Box<dyn FnMut(Event) + Send>;

/// Per-topic message counts, to show every topic and the service carried traffic.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    light_sensors: u64,
    switches: u64,
    cmd_vel: u64,
    leds: u64,
    buzzer: u64,
    motor_power_requests: u64,
    motor_power_responses: u64,
}

enum CmdVelPublisher {
    Twist(Publisher<Twist>),
    Stamped(Publisher<TwistStamped>, Node),
}

// ---------------------------------------------------------------------------------------------
// Robot

struct RobotState {
    robot: Robot,
    operator: Operator,
    tick: u64,
    follower_alive: bool,
    counts: Counts,
    cmd_vel_since_power: u64,
    laps_reported: u32,
    light_sensors_seq: u64,
    max_cross_track: f64,
    events: EventSink,
}

/// The simulated robot's driver node: publishes `/light_sensors` and `/switches`, obeys
/// `/cmd_vel` and `/motor_power`, shows `/leds` and `/buzzer`.
pub struct RobotNode {
    state: Arc<Mutex<RobotState>>,
    trace: Arc<Trace>,
    _timer: Timer,
    _cmd_vel: CmdVelSubscription,
    _leds: Subscription<Leds>,
    _buzzer: Subscription<Int16>,
    _motor_power: Service<SetBool>,
}

enum CmdVelSubscription {
    Twist(#[allow(dead_code)] Subscription<Twist>),
    Stamped(#[allow(dead_code)] Subscription<TwistStamped>),
}

impl RobotNode {
    /// Creates the robot's endpoints on `node` (name it `raspimouse`).
    ///
    /// # Errors
    /// [`NodeError`] if an endpoint cannot be created.
    pub fn new(
        node: &Node,
        options: NodeOptions,
        trace: Arc<Trace>,
        events: EventSink,
    ) -> Result<Self, NodeError> {
        let state = Arc::new(Mutex::new(RobotState {
            robot: Robot::new(options.seed, FIELD_POSE),
            operator: Operator::new(),
            tick: 0,
            follower_alive: false,
            counts: Counts::default(),
            cmd_vel_since_power: 0,
            laps_reported: 0,
            light_sensors_seq: 0,
            max_cross_track: 0.0,
            events,
        }));
        let light_sensors = node.create_publisher::<LightSensors>("light_sensors", 10)?;
        let switches = node.create_publisher::<Switches>("switches", 10)?;

        let on_cmd_vel = {
            let state = state.clone();
            let trace = trace.clone();
            move |twist: &Twist, info: &MessageInfo| {
                let at = Instant::monotonic_now();
                trace.received(Measured::CmdVel, info.publication_sequence_number, at);
                let mut s = lock(&state);
                s.counts.cmd_vel += 1;
                s.robot.handle_cmd_vel(twist.linear.x, twist.angular.z);
                if s.robot.motor_power() {
                    s.cmd_vel_since_power += 1;
                    if s.cmd_vel_since_power % 100 == 0 {
                        let n = s.cmd_vel_since_power;
                        (s.events)(Event::CmdVel(n));
                    }
                }
            }
        };
        let cmd_vel = if options.twist_stamped {
            let on_twist = on_cmd_vel;
            CmdVelSubscription::Stamped(node.create_subscription(
                "cmd_vel",
                10,
                move |msg: &TwistStamped, info: &MessageInfo| on_twist(&msg.twist, info),
            )?)
        } else {
            CmdVelSubscription::Twist(node.create_subscription("cmd_vel", 10, on_cmd_vel)?)
        };
        let leds = {
            let state = state.clone();
            node.create_subscription("leds", 10, move |msg: &Leds| {
                let mut s = lock(&state);
                s.counts.leds += 1;
                s.follower_alive = true;
                s.robot.leds = [msg.led0, msg.led1, msg.led2, msg.led3];
            })?
        };
        let buzzer = {
            let state = state.clone();
            node.create_subscription("buzzer", 10, move |msg: &Int16| {
                let mut s = lock(&state);
                s.counts.buzzer += 1;
                s.robot.buzzer_hz = msg.data;
                let now = s.robot.time();
                s.operator.handle_beep(now, msg.data);
            })?
        };
        let motor_power = {
            let state = state.clone();
            node.create_service::<SetBool, _>("motor_power", move |req: SetBool_Request| {
                let mut s = lock(&state);
                s.counts.motor_power_requests += 1;
                let message = s.robot.set_motor_power(req.data).to_owned();
                s.cmd_vel_since_power = 0;
                (s.events)(Event::MotorPower(req.data));
                SetBool_Response {
                    success: true,
                    message,
                }
            })?
        };
        let timer = {
            let state = state.clone();
            let trace = trace.clone();
            let switches_every = (SWITCHES_PERIOD_S / LIGHT_SENSORS_PERIOD_S).round() as u64;
            node.create_timer(options.scaled(LIGHT_SENSORS_PERIOD_S), move || {
                let mut guard = lock(&state);
                let s = &mut *guard;
                s.robot.step(LIGHT_SENSORS_PERIOD_S);
                let reading = s.robot.read_light_sensors();
                s.light_sensors_seq += 1;
                let seq = s.light_sensors_seq;
                let tick = s.tick;
                s.tick += 1;
                let switch_msg = (tick % switches_every == 0).then(|| {
                    let now = s.robot.time();
                    let alive = s.follower_alive;
                    s.operator.poll(now, &mut s.robot, alive)
                });
                if s.robot.motor_power() {
                    s.max_cross_track = s.max_cross_track.max(s.robot.cross_track().abs());
                    if tick % 10 == 0 {
                        let p = s.robot.pose();
                        trace.line(format_args!(
                            "pose {:.2} {:.5} {:.5} {:.4} {seq}",
                            s.robot.time(),
                            p.x,
                            p.y,
                            p.theta
                        ));
                    }
                    let laps = s.robot.laps().max(0.0).floor() as u32;
                    if laps > s.laps_reported {
                        s.laps_reported = laps;
                        (s.events)(Event::Lap(laps));
                    }
                }
                drop(guard);
                let at = Instant::monotonic_now();
                // Errors only for unserializable messages, which these fixed-size ones are not.
                let _ = light_sensors.publish(reading);
                trace.published(Measured::LightSensors, seq, at);
                if let Some(msg) = switch_msg {
                    let _ = switches.publish(msg);
                }
            })?
        };
        Ok(Self {
            state,
            trace,
            _timer: timer,
            _cmd_vel: cmd_vel,
            _leds: leds,
            _buzzer: buzzer,
            _motor_power: motor_power,
        })
    }

    /// Adds the run's summary (counts, laps, cross-track error) to the trace.
    pub fn finish(&self) {
        let s = lock(&self.state);
        let c = s.counts;
        let t = &self.trace;
        t.line(format_args!("count cmd_vel {}", c.cmd_vel));
        t.line(format_args!("count leds {}", c.leds));
        t.line(format_args!("count buzzer {}", c.buzzer));
        t.line(format_args!(
            "count motor_power_requests {}",
            c.motor_power_requests
        ));
        t.line(format_args!(
            "count light_sensors_published {}",
            s.light_sensors_seq
        ));
        t.line(format_args!(
            "count switch_presses {}",
            s.operator.presses()
        ));
        t.line(format_args!("summary laps {:.3}", s.robot.laps().max(0.0)));
        t.line(format_args!(
            "summary max_cross_track_m {:.5}",
            s.max_cross_track
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Follower

struct FollowerCore {
    follower: Follower,
    options: NodeOptions,
    cmd_vel: CmdVelPublisher,
    leds: Publisher<Leds>,
    buzzer: Publisher<Int16>,
    motor_power: Client<SetBool>,
    /// Motor-power calls whose replies have not been seen (upstream ignores them; polled
    /// only to count them).
    pending: Vec<ResponseFuture<SetBool>>,
    cmd_vel_seq: u64,
    counts: Counts,
    following_marked: bool,
    trace: Arc<Trace>,
}

struct NoopWake;
impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}

impl FollowerCore {
    fn run(&mut self, actions: impl IntoIterator<Item = Action>) {
        for action in actions {
            match action {
                Action::MotorPower(on) => self.set_motor_power(on),
                Action::Beep(beep) => {
                    for (hz, ms) in beep.steps() {
                        let _ = self.buzzer.publish(Int16 { data: *hz });
                        if *ms > 0 {
                            std::thread::sleep(self.options.scaled(f64::from(*ms) / 1000.0));
                        }
                    }
                }
                Action::CmdVel { linear, angular } => {
                    let mut twist = Twist::default();
                    twist.linear.x = linear;
                    twist.angular.z = angular;
                    self.cmd_vel_seq += 1;
                    let seq = self.cmd_vel_seq;
                    match &self.cmd_vel {
                        CmdVelPublisher::Twist(p) => {
                            let at = Instant::monotonic_now();
                            let _ = p.publish(twist);
                            self.trace.published(Measured::CmdVel, seq, at);
                        }
                        CmdVelPublisher::Stamped(p, node) => {
                            let mut msg = TwistStamped {
                                twist,
                                ..Default::default()
                            };
                            msg.header.stamp = node.now().to_msg();
                            let at = Instant::monotonic_now();
                            let _ = p.publish(msg);
                            self.trace.published(Measured::CmdVel, seq, at);
                        }
                    }
                }
                Action::Leds(l) => {
                    let _ = self.leds.publish(Leds {
                        led0: l[0],
                        led1: l[1],
                        led2: l[2],
                        led3: l[3],
                    });
                }
            }
        }
        if self.follower.is_following() && !self.following_marked {
            self.following_marked = true;
            self.trace.line(format_args!(
                "mark following {}",
                Instant::monotonic_now().as_nanos()
            ));
        }
    }

    /// Upstream's `set_motor_power`: an asynchronous SetBool call whose reply is not awaited.
    fn set_motor_power(&mut self, on: bool) {
        match self.motor_power.call_async(SetBool_Request { data: on }) {
            Ok(future) => self.pending.push(future),
            Err(e) => eprintln!("[follower] motor_power call failed: {e}"),
        }
    }

    fn poll_replies(&mut self) {
        let waker = Waker::from(Arc::new(NoopWake));
        let mut cx = TaskContext::from_waker(&waker);
        let mut responses = 0;
        self.pending
            .retain_mut(|future| match Pin::new(future).poll(&mut cx) {
                Poll::Ready(result) => {
                    if result.is_ok_and(|r| r.success) {
                        responses += 1;
                    }
                    false
                }
                Poll::Pending => true,
            });
        self.counts.motor_power_responses += responses;
    }
}

/// The line follower node: subscribes `/light_sensors` and `/switches`, publishes `/cmd_vel`,
/// `/leds` and `/buzzer`, calls `/motor_power`.
pub struct FollowerNode {
    core: Arc<Mutex<FollowerCore>>,
    _light_sensors: Subscription<LightSensors>,
    _switches: Subscription<Switches>,
    _timer: Timer,
}

impl FollowerNode {
    /// Creates the follower's endpoints on `node` (name it `follower`).
    ///
    /// # Errors
    /// [`NodeError`] if an endpoint cannot be created.
    pub fn new(node: &Node, options: NodeOptions, trace: Arc<Trace>) -> Result<Self, NodeError> {
        let cmd_vel = if options.twist_stamped {
            CmdVelPublisher::Stamped(node.create_publisher("cmd_vel", 1)?, node.clone())
        } else {
            CmdVelPublisher::Twist(node.create_publisher("cmd_vel", 1)?)
        };
        let core = Arc::new(Mutex::new(FollowerCore {
            follower: Follower::new(),
            options,
            cmd_vel,
            leds: node.create_publisher("leds", 1)?,
            buzzer: node.create_publisher("buzzer", 1)?,
            motor_power: node.create_client::<SetBool>("motor_power")?,
            pending: Vec::new(),
            cmd_vel_seq: 0,
            counts: Counts::default(),
            following_marked: false,
            trace: trace.clone(),
        }));
        let light_sensors = {
            let core = core.clone();
            node.create_subscription(
                "light_sensors",
                1,
                move |msg: &LightSensors, info: &MessageInfo| {
                    let at = Instant::monotonic_now();
                    let mut c = lock(&core);
                    c.counts.light_sensors += 1;
                    let beep = c.follower.handle_light_sensors(msg);
                    c.run(beep);
                    drop(c);
                    // After the reaction is published: the trace's file writes stay out of the
                    // control path (the record keeps the arrival time taken first).
                    trace.received(Measured::LightSensors, info.publication_sequence_number, at);
                },
            )?
        };
        let switches = {
            let core = core.clone();
            node.create_subscription("switches", 1, move |msg: &Switches| {
                let mut c = lock(&core);
                c.counts.switches += 1;
                c.follower.handle_switches(msg);
            })?
        };
        let timer = {
            let core = core.clone();
            node.create_timer(options.scaled(TIMER_PERIOD_S), move || {
                let mut c = lock(&core);
                c.poll_replies();
                let actions = c.follower.handle_timer();
                c.run(actions);
            })?
        };
        Ok(Self {
            core,
            _light_sensors: light_sensors,
            _switches: switches,
            _timer: timer,
        })
    }

    /// Waits up to `timeout` for the robot's `/motor_power` server, as upstream's
    /// `on_configure` does (5 s there).
    pub fn wait_for_motor_power(&self, timeout: Duration) -> bool {
        let client_ready = lock(&self.core).motor_power.service_is_ready();
        client_ready || {
            let deadline = std::time::Instant::now() + timeout;
            loop {
                if lock(&self.core).motor_power.service_is_ready() {
                    break true;
                }
                if std::time::Instant::now() >= deadline {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Adds the follower's counts to the trace.
    pub fn finish(&self) {
        let mut c = lock(&self.core);
        c.poll_replies();
        let counts = c.counts;
        let t = &c.trace;
        t.line(format_args!("count light_sensors {}", counts.light_sensors));
        t.line(format_args!("count switches {}", counts.switches));
        t.line(format_args!(
            "count motor_power_responses {}",
            counts.motor_power_responses
        ));
        t.line(format_args!("count cmd_vel_published {}", c.cmd_vel_seq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_keeps_its_lines_and_reports_the_first_write_error() {
        let path = std::env::temp_dir().join(format!("roslite-trace-{}.txt", std::process::id()));
        let trace = Trace::create(&path).unwrap();
        trace.line(format_args!("mark following 5"));
        trace.published(Measured::CmdVel, 7, Instant::from_nanos(9));
        trace.finish().unwrap();
        trace.line(format_args!("after finish"));
        trace.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(text, "mark following 5\npub cmd_vel 7 9\n");

        // /dev/full refuses every write: the error surfaces once the buffer spills.
        let full = Trace::create(Path::new("/dev/full")).unwrap();
        for i in 0..2000 {
            full.line(format_args!("count lines {i}"));
        }
        let error = full.finish().expect_err("writes to /dev/full fail");
        assert_eq!(error.raw_os_error(), Some(28), "ENOSPC: {error}");
    }
}

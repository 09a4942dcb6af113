//! The simulated Raspberry Pi Mouse: what rt-net's `raspimouse` driver node does with the real
//! hardware (rt-net `raspimouse2`, `raspimouse/src/raspimouse_component.cpp`; summarised in
//! docs/experiments.md), on a simulated body.
//!
//! - Differential drive: `cmd_vel` becomes wheel step rates exactly as the driver computes
//!   them (`vel_l = (v - w T/2) / (d/2)`, `round(vel / 2pi * 400)` pulses/s, d = 48 mm wheels,
//!   T = 92.5 mm tread); the body moves with the rates the steppers actually run at.
//! - Motor power (`/motor_power`, std_srvs/SetBool) gates the motors; switching on starts a
//!   60 s watchdog that stops the motors unless a `cmd_vel` arrives.
//! - Four reflectance sensors in a row [`SENSOR_AHEAD`] in front of the axle (geometry in
//!   [`SENSORS`]). Each sees a spot of radius [`SPOT_RADIUS`] on the floor and reads its own
//!   floor level, its own tape level, or the blend across an edge, plus seeded noise with
//!   standard deviation [`NOISE_SIGMA`]: bright floor gives large values, black tape small ones,
//!   as on the real robot (docs/experiments.md, the mROS 2 line-follower evaluation).
//!
//! Time is simulated: [`Robot::step`] advances it, so a run is deterministic for a seed and a
//! sequence of commands.

use std::f64::consts::PI;

use roslite::msgs::raspimouse_msgs::msg::{LightSensors, Switches};

use crate::course;
use crate::rng::SplitMix64;

pub const WHEEL_DIAMETER: f64 = 0.048;
pub const WHEEL_TREAD: f64 = 0.0925;
pub const PULSES_PER_REVOLUTION: f64 = 400.0;
/// `light_sensors_hz` 100 in the driver's params.yaml.
pub const LIGHT_SENSORS_PERIOD_S: f64 = 0.010;
/// `switches_hz` 10.
pub const SWITCHES_PERIOD_S: f64 = 0.100;
/// The driver's motor watchdog.
pub const WATCHDOG_S: f64 = 60.0;
/// Distance of the sensor row in front of the axle, in metres.
pub const SENSOR_AHEAD: f64 = 0.065;
/// Radius of the floor spot one sensor sees, in metres.
pub const SPOT_RADIUS: f64 = 0.004;
/// Standard deviation of the sensor noise, in sensor counts.
pub const NOISE_SIGMA: f64 = 8.0;

/// The `LightSensors` field a sensor is published in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    ForwardL,
    ForwardR,
    Left,
    Right,
}

/// One reflectance sensor: where it sits and what it reads.
#[derive(Clone, Copy, Debug)]
pub struct SensorSpec {
    pub channel: Channel,
    /// Left of the robot's centre line, in metres (negative: to the right).
    pub lateral: f64,
    /// Reading over white floor.
    pub floor_level: f64,
    /// Reading over black tape.
    pub line_level: f64,
}

/// The four sensors from left to right. The line-sensor board reuses the light-sensor
/// channels in another order (follower's `LEFT = forward_r, MID_LEFT = right,
/// MID_RIGHT = left, RIGHT = forward_l`), so the leftmost sensor is published as `forward_r`.
pub const SENSORS: [SensorSpec; 4] = [
    SensorSpec {
        channel: Channel::ForwardR,
        lateral: 0.025,
        floor_level: 1010.0,
        line_level: 150.0,
    },
    SensorSpec {
        channel: Channel::Right,
        lateral: 0.007,
        floor_level: 980.0,
        line_level: 135.0,
    },
    SensorSpec {
        channel: Channel::Left,
        lateral: -0.007,
        floor_level: 1000.0,
        line_level: 160.0,
    },
    SensorSpec {
        channel: Channel::ForwardL,
        lateral: -0.025,
        floor_level: 1030.0,
        line_level: 145.0,
    },
];

/// Position on the floor (metres) and heading (radians, counter-clockwise from +x).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pose {
    pub x: f64,
    pub y: f64,
    pub theta: f64,
}

/// Where the operator puts the robot to sample the floor: the middle of the course.
pub const FIELD_POSE: Pose = Pose {
    x: 0.75,
    y: 0.50,
    theta: 0.0,
};

/// Where the operator puts the robot to sample the line: turned across the lower straight so
/// that all four sensors are over the tape (the line is narrower than the sensor row).
pub const LINE_SAMPLE_POSE: Pose = Pose {
    x: 0.60,
    y: 0.25 - SENSOR_AHEAD,
    theta: PI / 2.0,
};

/// Where the operator puts the robot to start: on the lower straight, heading along it.
pub const LINE_START_POSE: Pose = Pose {
    x: 0.55,
    y: 0.25,
    theta: 0.0,
};

/// Rounds half away from zero, like C's `round` in the driver.
fn round_half_away(x: f64) -> f64 {
    x.signum() * (x.abs() + 0.5).floor()
}

/// Wheel step rates (pulses/s, left and right) for a commanded velocity, as the driver
/// writes them to the motor devices.
pub fn wheel_pulse_rates(linear: f64, angular: f64) -> (f64, f64) {
    let radius = WHEEL_DIAMETER / 2.0;
    let vel_l = (linear - angular * WHEEL_TREAD / 2.0) / radius;
    let vel_r = (linear + angular * WHEEL_TREAD / 2.0) / radius;
    let pulses = |vel: f64| round_half_away(vel / (2.0 * PI) * PULSES_PER_REVOLUTION);
    (pulses(vel_l), pulses(vel_r))
}

/// The body's velocity when the wheels step at these rates.
fn body_velocity(pulses_l: f64, pulses_r: f64) -> (f64, f64) {
    let radius = WHEEL_DIAMETER / 2.0;
    let wl = pulses_l / PULSES_PER_REVOLUTION * 2.0 * PI * radius;
    let wr = pulses_r / PULSES_PER_REVOLUTION * 2.0 * PI * radius;
    ((wl + wr) / 2.0, (wr - wl) / WHEEL_TREAD)
}

/// The simulated robot.
#[derive(Clone, Debug)]
pub struct Robot {
    pose: Pose,
    /// Simulated seconds since start.
    time: f64,
    motor_power: bool,
    /// Commanded (linear, angular) velocity.
    command: (f64, f64),
    watchdog_deadline: Option<f64>,
    rng: SplitMix64,
    /// Centre-line distance travelled since the robot was last placed.
    progress: f64,
    last_s: f64,
    pub leds: [bool; 4],
    pub buzzer_hz: i16,
}

impl Robot {
    pub fn new(seed: u64, pose: Pose) -> Self {
        let mut robot = Self {
            pose,
            time: 0.0,
            motor_power: false,
            command: (0.0, 0.0),
            watchdog_deadline: None,
            rng: SplitMix64::new(seed),
            progress: 0.0,
            last_s: 0.0,
            leds: [false; 4],
            buzzer_hz: 0,
        };
        robot.place(pose);
        robot
    }

    pub fn pose(&self) -> Pose {
        self.pose
    }

    pub fn time(&self) -> f64 {
        self.time
    }

    pub fn motor_power(&self) -> bool {
        self.motor_power
    }

    /// The operator picks the robot up and puts it down at `pose`.
    pub fn place(&mut self, pose: Pose) {
        self.pose = pose;
        self.progress = 0.0;
        self.last_s = course::project(pose.x, pose.y).0;
    }

    /// `/motor_power`: the driver's response message.
    pub fn set_motor_power(&mut self, on: bool) -> &'static str {
        self.motor_power = on;
        if on {
            self.watchdog_deadline = Some(self.time + WATCHDOG_S);
            "Motors are on"
        } else {
            self.command = (0.0, 0.0);
            self.watchdog_deadline = None;
            "Motors are off"
        }
    }

    /// `/cmd_vel`.
    pub fn handle_cmd_vel(&mut self, linear: f64, angular: f64) {
        self.command = (linear, angular);
        if self.motor_power {
            self.watchdog_deadline = Some(self.time + WATCHDOG_S);
        }
    }

    /// Advances the simulation by `dt` seconds.
    pub fn step(&mut self, dt: f64) {
        if self.watchdog_deadline.is_some_and(|d| self.time >= d) {
            self.command = (0.0, 0.0);
            self.watchdog_deadline = None;
        }
        self.time += dt;
        if !self.motor_power {
            return;
        }
        let (pl, pr) = wheel_pulse_rates(self.command.0, self.command.1);
        let (v, w) = body_velocity(pl, pr);
        let Pose { x, y, theta } = self.pose;
        let (nx, ny) = if w.abs() < 1e-12 {
            (x + v * theta.cos() * dt, y + v * theta.sin() * dt)
        } else {
            let r = v / w;
            let t2 = theta + w * dt;
            (
                x + r * (t2.sin() - theta.sin()),
                y - r * (t2.cos() - theta.cos()),
            )
        };
        self.pose = Pose {
            x: nx,
            y: ny,
            theta: (theta + w * dt).rem_euclid(2.0 * PI),
        };
        let s = course::project(nx, ny).0;
        let lap = course::lap_length();
        let mut ds = s - self.last_s;
        if ds > lap / 2.0 {
            ds -= lap;
        } else if ds < -lap / 2.0 {
            ds += lap;
        }
        self.progress += ds;
        self.last_s = s;
    }

    /// Laps of the course completed (fractional) since the robot was last placed.
    pub fn laps(&self) -> f64 {
        self.progress / course::lap_length()
    }

    /// Signed distance of the axle centre from the line's centre line (positive: inside).
    pub fn cross_track(&self) -> f64 {
        course::project(self.pose.x, self.pose.y).1
    }

    /// Floor position of sensor `i` of [`SENSORS`].
    pub fn sensor_position(pose: Pose, i: usize) -> (f64, f64) {
        let (s, c) = pose.theta.sin_cos();
        let lateral = SENSORS[i].lateral;
        (
            pose.x + SENSOR_AHEAD * c - lateral * s,
            pose.y + SENSOR_AHEAD * s + lateral * c,
        )
    }

    /// One reading of the four sensors (draws noise: call once per published message).
    pub fn read_light_sensors(&mut self) -> LightSensors {
        let mut msg = LightSensors::default();
        for (i, spec) in SENSORS.iter().enumerate() {
            let (x, y) = Self::sensor_position(self.pose, i);
            let cover = course::line_coverage(x, y, SPOT_RADIUS);
            let clean = spec.floor_level + (spec.line_level - spec.floor_level) * cover;
            let noisy = clean + NOISE_SIGMA * self.rng.normalish();
            // Rounded half up and clamped to the sensor's 12-bit range.
            let value = (noisy + 0.5).floor().clamp(0.0, 4095.0) as i16;
            match spec.channel {
                Channel::ForwardL => msg.forward_l = value,
                Channel::ForwardR => msg.forward_r = value,
                Channel::Left => msg.left = value,
                Channel::Right => msg.right = value,
            }
        }
        msg
    }
}

/// What the operator is doing: the upstream README's procedure (SW2 on the floor, SW1 on the
/// line, SW0 to start), pressing again when the follower did not react (a press the follower
/// never saw, e.g. before discovery finished).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Waiting for the follower's first `/leds` (it is up and connected).
    WaitFollower {
        since: Option<f64>,
    },
    Press {
        switch: usize,
        pose: Pose,
    },
    /// Waiting for the start beep of the sampling the last press asked for.
    AwaitBeep {
        switch: usize,
        pose: Pose,
        pressed: f64,
    },
    /// Beep heard: the follower samples for 10 readings, then beeps success.
    Sampling {
        switch: usize,
        until: f64,
    },
    AwaitPower {
        pressed: f64,
    },
    Running,
}

/// Seconds to wait for the follower's reaction to a press before pressing again.
const REACTION_S: f64 = 1.5;
/// Start beep (0.5 s) + 11 readings + success beep (0.3 s), with margin.
const SAMPLING_S: f64 = 1.5;

/// The scripted operator who presses the switches and carries the robot.
#[derive(Clone, Debug)]
pub struct Operator {
    step: Step,
    /// Set by the robot node when a 1000 Hz `/buzzer` arrives; cleared at each press.
    beep_heard_at: Option<f64>,
    presses: u32,
}

impl Default for Operator {
    fn default() -> Self {
        Self::new()
    }
}

impl Operator {
    pub fn new() -> Self {
        Self {
            step: Step::WaitFollower { since: None },
            beep_heard_at: None,
            presses: 0,
        }
    }

    /// The follower beeped (`/buzzer` with a non-zero frequency).
    pub fn handle_beep(&mut self, now: f64, hz: i16) {
        if hz == 1000 && self.beep_heard_at.is_none() {
            self.beep_heard_at = Some(now);
        }
    }

    /// Switch presses so far (for reports).
    pub fn presses(&self) -> u32 {
        self.presses
    }

    pub fn is_running(&self) -> bool {
        self.step == Step::Running
    }

    /// Called at each `/switches` publication: the switch states to publish. May move the
    /// robot. `follower_alive`: the robot has received `/leds`.
    pub fn poll(&mut self, now: f64, robot: &mut Robot, follower_alive: bool) -> Switches {
        let mut switches = Switches::default();
        self.step = match self.step {
            Step::WaitFollower { since: None } if follower_alive => {
                Step::WaitFollower { since: Some(now) }
            }
            Step::WaitFollower { since: Some(t) } if now - t >= 0.5 => {
                robot.place(FIELD_POSE);
                Step::Press {
                    switch: 2,
                    pose: FIELD_POSE,
                }
            }
            Step::Press { switch, pose } => {
                robot.place(pose);
                match switch {
                    0 => switches.switch0 = true,
                    1 => switches.switch1 = true,
                    _ => switches.switch2 = true,
                }
                self.presses += 1;
                self.beep_heard_at = None;
                if switch == 0 {
                    Step::AwaitPower { pressed: now }
                } else {
                    Step::AwaitBeep {
                        switch,
                        pose,
                        pressed: now,
                    }
                }
            }
            Step::AwaitBeep {
                switch,
                pose,
                pressed,
            } => match self.beep_heard_at {
                Some(at) => Step::Sampling {
                    switch,
                    until: at + SAMPLING_S,
                },
                None if now - pressed > REACTION_S => Step::Press { switch, pose },
                None => self.step,
            },
            Step::Sampling { switch: 2, until } if now >= until => {
                robot.place(LINE_SAMPLE_POSE);
                Step::Press {
                    switch: 1,
                    pose: LINE_SAMPLE_POSE,
                }
            }
            Step::Sampling { switch: _, until } if now >= until => {
                robot.place(LINE_START_POSE);
                Step::Press {
                    switch: 0,
                    pose: LINE_START_POSE,
                }
            }
            Step::AwaitPower { .. } if robot.motor_power() => Step::Running,
            Step::AwaitPower { pressed } if now - pressed > REACTION_S => Step::Press {
                switch: 0,
                pose: LINE_START_POSE,
            },
            other => other,
        };
        switches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_rates_follow_the_driver_formula() {
        // 0.08 m/s straight: 0.08 / 0.024 rad/s = 3.333 rad/s = 212.2 pulses/s -> 212.
        assert_eq!(wheel_pulse_rates(0.08, 0.0), (212.0, 212.0));
        // Turning left slows the left wheel.
        let (l, r) = wheel_pulse_rates(0.08, 0.8);
        assert!(l < r);
        assert_eq!(wheel_pulse_rates(0.0, 0.0), (0.0, 0.0));
    }

    #[test]
    fn motors_off_means_no_motion_and_power_gates_commands() {
        let mut robot = Robot::new(1, LINE_START_POSE);
        robot.handle_cmd_vel(0.08, 0.0);
        for _ in 0..100 {
            robot.step(0.01);
        }
        assert_eq!(robot.pose(), LINE_START_POSE);
        assert_eq!(robot.set_motor_power(true), "Motors are on");
        robot.handle_cmd_vel(0.08, 0.0);
        for _ in 0..100 {
            robot.step(0.01);
        }
        let moved = robot.pose().x - LINE_START_POSE.x;
        assert!((moved - 0.0799).abs() < 1e-3, "moved {moved}");
        assert_eq!(robot.set_motor_power(false), "Motors are off");
        let here = robot.pose();
        robot.step(0.01);
        assert_eq!(robot.pose(), here);
    }

    #[test]
    fn watchdog_stops_the_motors_without_cmd_vel() {
        let mut robot = Robot::new(1, LINE_START_POSE);
        robot.set_motor_power(true);
        robot.handle_cmd_vel(0.01, 0.0);
        for _ in 0..6100 {
            robot.step(0.01);
        }
        let here = robot.pose();
        robot.step(0.01);
        assert_eq!(robot.pose(), here, "still moving after the 60 s watchdog");
    }

    #[test]
    fn sensors_read_dark_over_the_line_and_bright_on_the_floor() {
        let mut robot = Robot::new(3, LINE_START_POSE);
        let on_line = robot.read_light_sensors();
        // The two middle sensors are over the tape, the outer ones on the floor.
        assert!(on_line.right < 300 && on_line.left < 300, "{on_line:?}");
        assert!(
            on_line.forward_r > 900 && on_line.forward_l > 900,
            "{on_line:?}"
        );
        robot.place(LINE_SAMPLE_POSE);
        let across = robot.read_light_sensors();
        for v in [
            across.forward_r,
            across.right,
            across.left,
            across.forward_l,
        ] {
            assert!(v < 300, "{across:?}");
        }
        robot.place(FIELD_POSE);
        let floor = robot.read_light_sensors();
        for v in [floor.forward_r, floor.right, floor.left, floor.forward_l] {
            assert!(v > 900, "{floor:?}");
        }
    }

    #[test]
    fn readings_are_deterministic_for_a_seed() {
        let read = |seed| {
            let mut robot = Robot::new(seed, LINE_START_POSE);
            (0..50)
                .map(|_| robot.read_light_sensors())
                .collect::<Vec<_>>()
        };
        assert_eq!(read(5), read(5));
        assert_ne!(read(5), read(6));
    }
}

//! The line follower's logic (rt-net `raspimouse_ros2_examples`,
//! `src/line_follower_component.cpp`, the same on its `humble` and `master` branches apart from
//! the `cmd_vel` type) as a pure state machine: messages in, [`Action`]s out, no clock and no
//! I/O. The roslite node and the tests drive the same code.
//!
//! Upstream's quirks are kept: the 11th sample does the averaging and its own reading is
//! discarded, thresholds are the integer midpoint, the line's polarity is decided from the
//! `RIGHT` sensor alone, a switch press is consumed once per timer tick, and beeps block the
//! timer (the node sleeps; [`Beep::steps`]).

use roslite::msgs::raspimouse_msgs::msg::{LightSensors, Switches};

pub const NUM_OF_SAMPLES: u32 = 10;
/// The follower's timer period, in seconds.
pub const TIMER_PERIOD_S: f64 = 0.050;
pub const VEL_LINEAR_X: f64 = 0.08;
pub const VEL_ANGULAR_Z: f64 = 0.8;
pub const LOW_VEL_ANGULAR_Z: f64 = 0.5;

/// Sensor indices in the follower's `present` array.
pub const LEFT: usize = 0;
pub const MID_LEFT: usize = 1;
pub const MID_RIGHT: usize = 2;
pub const RIGHT: usize = 3;

/// The follower's view of a `LightSensors` message: `[forward_r, right, left, forward_l]`.
pub fn present(msg: &LightSensors) -> [i32; 4] {
    [
        i32::from(msg.forward_r),
        i32::from(msg.right),
        i32::from(msg.left),
        i32::from(msg.forward_l),
    ]
}

/// A buzzer pattern; each beep publishes its frequency and then 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beep {
    /// 1000 Hz for 500 ms: sampling starts.
    Start,
    /// 1000 Hz 100 ms, 100 ms gap, 1000 Hz 100 ms.
    Success,
    /// 4 x (500 Hz 100 ms + 100 ms gap).
    Failure,
}

impl Beep {
    /// `(frequency to publish, milliseconds to sleep after it)` in order.
    pub fn steps(self) -> &'static [(i16, u32)] {
        match self {
            Self::Start => &[(1000, 500), (0, 0)],
            Self::Success => &[(1000, 100), (0, 100), (1000, 100), (0, 0)],
            Self::Failure => &[
                (500, 100),
                (0, 100),
                (500, 100),
                (0, 100),
                (500, 100),
                (0, 100),
                (500, 100),
                (0, 100),
            ],
        }
    }

    /// How long the pattern blocks, in seconds.
    pub fn duration_s(self) -> f64 {
        self.steps()
            .iter()
            .map(|(_, ms)| f64::from(*ms))
            .sum::<f64>()
            / 1000.0
    }
}

/// What the follower asks its node to do, in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Call `/motor_power` (asynchronously; upstream ignores the response).
    MotorPower(bool),
    /// Publish the pattern on `/buzzer`, sleeping between steps.
    Beep(Beep),
    /// Publish `/cmd_vel` with this linear x and angular z.
    CmdVel { linear: f64, angular: f64 },
    /// Publish `/leds`: `[led0, led1, led2, led3]`.
    Leds([bool; 4]),
}

/// The follower's state (upstream's member variables).
#[derive(Clone, Debug, Default)]
pub struct Follower {
    present: [i32; 4],
    sum: [i32; 4],
    count: u32,
    line_sampling: bool,
    field_sampling: bool,
    line_sampled: bool,
    field_sampled: bool,
    line_values: [i32; 4],
    field_values: [i32; 4],
    thresholds: [i32; 4],
    detected: [bool; 4],
    switches: Switches,
    following: bool,
}

impl Follower {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_following(&self) -> bool {
        self.following
    }

    pub fn is_sampling(&self) -> bool {
        self.line_sampling || self.field_sampling
    }

    pub fn detected(&self) -> [bool; 4] {
        self.detected
    }

    pub fn thresholds(&self) -> Option<[i32; 4]> {
        (self.line_sampled && self.field_sampled).then_some(self.thresholds)
    }

    /// `/switches`: the latest message replaces the previous one until a timer tick takes it.
    pub fn handle_switches(&mut self, msg: &Switches) {
        self.switches = msg.clone();
    }

    /// `/light_sensors`. Returns a success beep when this reading finished a sampling.
    pub fn handle_light_sensors(&mut self, msg: &LightSensors) -> Option<Action> {
        self.present = present(msg);
        let mut beep = None;
        if self.line_sampling || self.field_sampling {
            beep = self.multisampling();
        }
        if self.line_sampled && self.field_sampled {
            self.update_line_detection();
        }
        beep
    }

    fn multisampling(&mut self) -> Option<Action> {
        if self.count < NUM_OF_SAMPLES {
            for (sum, value) in self.sum.iter_mut().zip(self.present) {
                *sum += value;
            }
            self.count += 1;
            return None;
        }
        let average = self.sum.map(|s| s / NUM_OF_SAMPLES as i32);
        if self.line_sampling {
            self.line_values = average;
            self.line_sampled = true;
        } else {
            self.field_values = average;
            self.field_sampled = true;
        }
        self.sum = [0; 4];
        self.count = 0;
        self.line_sampling = false;
        self.field_sampling = false;
        self.set_line_thresholds();
        Some(Action::Beep(Beep::Success))
    }

    fn set_line_thresholds(&mut self) {
        if !(self.line_sampled && self.field_sampled) {
            return;
        }
        for i in 0..4 {
            let (line, field) = (self.line_values[i], self.field_values[i]);
            // Upstream: min + |line - field| * 0.5, stored as an int (truncated).
            self.thresholds[i] = line.min(field) + (f64::from((line - field).abs()) * 0.5) as i32;
        }
    }

    fn line_is_bright(&self) -> bool {
        self.line_values[RIGHT] > self.field_values[RIGHT]
    }

    fn update_line_detection(&mut self) {
        let bright = self.line_is_bright();
        for i in 0..4 {
            self.detected[i] = (self.present[i] > self.thresholds[i]) == bright;
        }
    }

    /// The velocity for the current detections: forward with steering while the line is under
    /// some but not all sensors, stop otherwise.
    pub fn twist(&self) -> (f64, f64) {
        let d = self.detected;
        if !(d.iter().any(|x| *x) && d.iter().any(|x| !*x)) {
            return (0.0, 0.0);
        }
        let mut angular = 0.0;
        if d[LEFT] {
            angular += VEL_ANGULAR_Z;
        }
        if d[RIGHT] {
            angular -= VEL_ANGULAR_Z;
        }
        if d[MID_LEFT] {
            angular += LOW_VEL_ANGULAR_Z;
        }
        if d[MID_RIGHT] {
            angular -= LOW_VEL_ANGULAR_Z;
        }
        (VEL_LINEAR_X, angular)
    }

    /// The 50 ms timer.
    pub fn handle_timer(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.line_sampling || self.field_sampling {
            return actions;
        }
        if self.switches.switch0 {
            if self.line_sampled && self.field_sampled && !self.following {
                actions.push(Action::MotorPower(true));
                actions.push(Action::Beep(Beep::Success));
                self.following = true;
            } else {
                actions.push(Action::MotorPower(false));
                actions.push(Action::Beep(Beep::Failure));
                self.following = false;
            }
        } else if self.switches.switch1 {
            actions.push(Action::Beep(Beep::Start));
            self.line_sampling = true;
        } else if self.switches.switch2 {
            actions.push(Action::Beep(Beep::Start));
            self.field_sampling = true;
        }
        self.switches = Switches::default();
        if self.following {
            let (linear, angular) = self.twist();
            actions.push(Action::CmdVel { linear, angular });
        }
        let d = self.detected;
        actions.push(Action::Leds([d[RIGHT], d[MID_RIGHT], d[MID_LEFT], d[LEFT]]));
        actions
    }
}

#[cfg(test)]
mod tests;

//! The robot, its operator and the follower in one loop on simulated time, with the message
//! flow of the real application (100 Hz `/light_sensors`, 10 Hz `/switches`, the follower's
//! 50 ms timer, keep-last-1 subscriptions on the follower) but instant delivery and no
//! threads. Deterministic for a seed: what the tests use to check the follower completes laps.

use roslite::msgs::raspimouse_msgs::msg::{LightSensors, Switches};

use crate::follower::{Action, Follower};
use crate::robot::{Operator, Pose, Robot, FIELD_POSE};

/// Ticks are 10 ms: the light sensors' period.
const TICK_S: f64 = 0.010;
const TICKS_PER_TIMER: u64 = 5;
const TICKS_PER_SWITCHES: u64 = 10;

/// What happened in a closed-loop run.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Laps completed after the start (fractional).
    pub laps: f64,
    /// Largest distance of the axle centre from the line's centre line while following, m.
    pub max_cross_track: f64,
    /// Largest distance of the sensor row's centre from the centre line while following, m.
    pub max_sensor_offset: f64,
    /// Simulated seconds until the run ended.
    pub time_s: f64,
    /// Seconds from start to the motors being switched on.
    pub started_at_s: Option<f64>,
    /// `/cmd_vel` messages the follower sent.
    pub cmd_vel: u64,
    /// The robot's pose every 100 ms while following.
    pub path: Vec<Pose>,
    pub switch_presses: u32,
    /// The follower stopped the robot (all or no sensors on the line) before the end.
    pub stopped: bool,
}

#[derive(Default)]
struct Inbox {
    light_sensors: Option<LightSensors>,
    switches: Option<Switches>,
    timer_due: bool,
}

/// Runs until `laps` laps are done or `max_time_s` simulated seconds have passed.
pub fn run(seed: u64, laps: f64, max_time_s: f64) -> Outcome {
    let mut robot = Robot::new(seed, FIELD_POSE);
    let mut operator = Operator::new();
    let mut follower = Follower::new();
    let mut outcome = Outcome::default();
    let mut inbox = Inbox::default();
    let mut follower_alive = false;
    // The follower's executor is blocked (beeping) until this time.
    let mut busy_until = 0.0;
    let max_ticks = (max_time_s / TICK_S) as u64;
    for tick in 0..max_ticks {
        let now = tick as f64 * TICK_S;
        robot.step(TICK_S);
        // Keep-last-1 subscriptions: a newer message replaces an unread one.
        inbox.light_sensors = Some(robot.read_light_sensors());
        if tick % TICKS_PER_SWITCHES == 0 {
            inbox.switches = Some(operator.poll(now, &mut robot, follower_alive));
        }
        if tick % TICKS_PER_TIMER == 0 {
            inbox.timer_due = true;
        }
        if now >= busy_until {
            let mut actions = Vec::new();
            if let Some(msg) = inbox.switches.take() {
                follower.handle_switches(&msg);
            }
            if let Some(msg) = inbox.light_sensors.take() {
                actions.extend(follower.handle_light_sensors(&msg));
            }
            if std::mem::take(&mut inbox.timer_due) {
                actions.extend(follower.handle_timer());
            }
            for action in actions {
                match action {
                    Action::MotorPower(on) => {
                        robot.set_motor_power(on);
                        if on && outcome.started_at_s.is_none() {
                            outcome.started_at_s = Some(now);
                        }
                    }
                    Action::Beep(beep) => {
                        let mut at = busy_until.max(now);
                        for (hz, ms) in beep.steps() {
                            robot.buzzer_hz = *hz;
                            operator.handle_beep(at, *hz);
                            at += f64::from(*ms) / 1000.0;
                        }
                        busy_until = at;
                    }
                    Action::CmdVel { linear, angular } => {
                        outcome.cmd_vel += 1;
                        robot.handle_cmd_vel(linear, angular);
                        if linear == 0.0 && angular == 0.0 && robot.motor_power() {
                            outcome.stopped = true;
                        }
                    }
                    Action::Leds(leds) => {
                        robot.leds = leds;
                        follower_alive = true;
                    }
                }
            }
        }
        if outcome.started_at_s.is_some() && robot.motor_power() {
            let pose = robot.pose();
            outcome.max_cross_track = outcome.max_cross_track.max(robot.cross_track().abs());
            let (sx, sy) = (
                pose.x + crate::robot::SENSOR_AHEAD * pose.theta.cos(),
                pose.y + crate::robot::SENSOR_AHEAD * pose.theta.sin(),
            );
            let offset = crate::course::distance_to_centre_line(sx, sy);
            outcome.max_sensor_offset = outcome.max_sensor_offset.max(offset);
            if tick % 10 == 0 {
                outcome.path.push(pose);
            }
        }
        outcome.time_s = now;
        outcome.laps = if outcome.started_at_s.is_some() {
            robot.laps()
        } else {
            0.0
        };
        if outcome.laps >= laps || outcome.stopped {
            break;
        }
    }
    outcome.switch_presses = operator.presses();
    outcome
}

use super::*;

/// A message whose follower-order values are `[LEFT, MID_LEFT, MID_RIGHT, RIGHT]`.
fn reading(values: [i16; 4]) -> LightSensors {
    LightSensors {
        forward_r: values[LEFT],
        right: values[MID_LEFT],
        left: values[MID_RIGHT],
        forward_l: values[RIGHT],
    }
}

fn press(follower: &mut Follower, switch: usize) -> Vec<Action> {
    let mut msg = Switches::default();
    match switch {
        0 => msg.switch0 = true,
        1 => msg.switch1 = true,
        _ => msg.switch2 = true,
    }
    follower.handle_switches(&msg);
    follower.handle_timer()
}

/// Samples `values` as upstream does: the press, then 11 readings (the 11th averages).
fn sample(follower: &mut Follower, switch: usize, values: [i16; 4]) {
    let actions = press(follower, switch);
    assert_eq!(actions[0], Action::Beep(Beep::Start));
    assert!(follower.is_sampling());
    assert!(
        follower.handle_timer().is_empty(),
        "timer idles while sampling"
    );
    for _ in 0..NUM_OF_SAMPLES {
        assert_eq!(follower.handle_light_sensors(&reading(values)), None);
    }
    // The 11th reading is discarded and triggers the averaging.
    let beep = follower.handle_light_sensors(&reading([0, 0, 0, 0]));
    assert_eq!(beep, Some(Action::Beep(Beep::Success)));
    assert!(!follower.is_sampling());
}

fn calibrated() -> Follower {
    let mut follower = Follower::new();
    sample(&mut follower, 2, [1000, 1001, 999, 1000]);
    assert_eq!(follower.thresholds(), None, "only the floor is sampled");
    sample(&mut follower, 1, [201, 200, 200, 200]);
    follower
}

#[test]
fn thresholds_are_the_truncated_midpoint() {
    let follower = calibrated();
    // min + |line - field| * 0.5: 201 + 399.5 -> 600; 200 + 400.5 -> 600; 200 + 399.5 -> 599.
    assert_eq!(follower.thresholds(), Some([600, 600, 599, 600]));
}

#[test]
fn commands_match_the_table_of_detections() {
    // [LEFT, MID_LEFT, MID_RIGHT, RIGHT] detected -> (linear.x, angular.z).
    let table: [([u8; 4], f64, f64); 16] = [
        ([0, 0, 0, 0], 0.0, 0.0),
        ([1, 1, 1, 1], 0.0, 0.0),
        ([0, 1, 1, 0], 0.08, 0.0),
        ([0, 1, 0, 0], 0.08, 0.5),
        ([0, 0, 1, 0], 0.08, -0.5),
        ([1, 0, 0, 0], 0.08, 0.8),
        ([0, 0, 0, 1], 0.08, -0.8),
        ([1, 1, 0, 0], 0.08, 1.3),
        ([0, 0, 1, 1], 0.08, -1.3),
        ([1, 1, 1, 0], 0.08, 0.8),
        ([0, 1, 1, 1], 0.08, -0.8),
        ([1, 0, 0, 1], 0.08, 0.0),
        ([1, 0, 1, 0], 0.08, 0.3),
        ([0, 1, 0, 1], 0.08, -0.3),
        ([1, 0, 1, 1], 0.08, -0.5),
        ([1, 1, 0, 1], 0.08, 0.5),
    ];
    let mut follower = calibrated();
    let start = press(&mut follower, 0);
    assert_eq!(start[0], Action::MotorPower(true));
    assert_eq!(start[1], Action::Beep(Beep::Success));
    assert!(follower.is_following());
    for (pattern, linear, angular) in table {
        // Dark tape reads low: a detected sensor reads below its threshold.
        let values = pattern.map(|d| if d == 1 { 150 } else { 1050 });
        assert_eq!(follower.handle_light_sensors(&reading(values)), None);
        let actions = follower.handle_timer();
        let [Action::CmdVel {
            linear: l,
            angular: a,
        }, Action::Leds(leds)] = actions[..]
        else {
            panic!("{pattern:?}: {actions:?}");
        };
        assert!(
            (l - linear).abs() < 1e-12 && (a - angular).abs() < 1e-12,
            "{pattern:?}: got ({l}, {a}), want ({linear}, {angular})"
        );
        // led0 = RIGHT, led1 = MID_RIGHT, led2 = MID_LEFT, led3 = LEFT.
        let want = [pattern[3], pattern[2], pattern[1], pattern[0]].map(|d| d == 1);
        assert_eq!(leds, want, "{pattern:?}");
    }
}

#[test]
fn a_bright_line_inverts_the_detection() {
    let mut follower = Follower::new();
    sample(&mut follower, 2, [200, 200, 200, 200]);
    sample(&mut follower, 1, [900, 900, 900, 900]);
    follower.handle_light_sensors(&reading([200, 900, 900, 200]));
    assert_eq!(follower.detected(), [false, true, true, false]);
}

#[test]
fn start_without_calibration_fails_and_a_second_start_stops() {
    let mut follower = Follower::new();
    let actions = press(&mut follower, 0);
    assert_eq!(
        actions,
        vec![
            Action::MotorPower(false),
            Action::Beep(Beep::Failure),
            Action::Leds([false; 4])
        ]
    );
    assert!(!follower.is_following());

    let mut follower = calibrated();
    press(&mut follower, 0);
    assert!(follower.is_following());
    let stop = press(&mut follower, 0);
    assert_eq!(
        stop[..2],
        [Action::MotorPower(false), Action::Beep(Beep::Failure)]
    );
    assert!(!stop.iter().any(|a| matches!(a, Action::CmdVel { .. })));
    assert!(!follower.is_following());
}

#[test]
fn a_press_is_consumed_by_one_tick() {
    let mut follower = calibrated();
    press(&mut follower, 0);
    // The next tick sees no press: still following, no second power call.
    let actions = follower.handle_timer();
    assert!(!actions.iter().any(|a| matches!(a, Action::MotorPower(_))));
    assert!(follower.is_following());
}

#[test]
fn beep_patterns_last_as_upstream() {
    assert_eq!(Beep::Start.duration_s(), 0.5);
    assert_eq!(Beep::Success.duration_s(), 0.3);
    assert_eq!(Beep::Failure.duration_s(), 0.8);
}

//! The follower drives the simulated robot around the course (simulated time, no sleeping).

use roslite_linetrace::sim;

#[test]
fn follows_the_line_for_three_laps_within_two_centimetres() {
    for seed in [1, 2, 3] {
        let outcome = sim::run(seed, 3.0, 200.0);
        assert!(
            !outcome.stopped,
            "seed {seed}: the follower lost the line: {outcome:?}"
        );
        assert!(
            outcome.laps >= 3.0,
            "seed {seed}: only {} laps",
            outcome.laps
        );
        assert!(
            outcome.max_cross_track < 0.02,
            "seed {seed}: axle {:.4} m off the line",
            outcome.max_cross_track
        );
        eprintln!(
            "seed {seed}: {:.2} laps in {:.1} s, started at {:?} s, max cross-track {:.4} m, sensor row {:.4} m, {} presses",
            outcome.laps, outcome.time_s, outcome.started_at_s, outcome.max_cross_track,
            outcome.max_sensor_offset, outcome.switch_presses
        );
    }
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    let a = sim::run(9, 0.5, 60.0);
    let b = sim::run(9, 0.5, 60.0);
    assert_eq!(a.path, b.path);
    assert!(!a.path.is_empty());
}

//! The line follower across implementations: a roslite node and an rclpy node (real ROS 2
//! Kilted from PyPI, Fast DDS) exchange every topic and the `/motor_power` service. Both run
//! as separate processes on 127.0.0.1 only (roslite: LOCALHOST discovery; Fast DDS: the
//! loopback-only profile without shared memory), in a domain of their own. The C++ follower
//! (mROS 2 API, `crates/roslite-linetrace/cpp/follower.cpp`) drives the roslite robot the same
//! way, as `roslite bench linetrace` runs it, and so does that follower compiled to WebAssembly
//! in roslite's lean Wasm host, on wasmtime (AOT) and on wasmi.

use std::path::{Path, PathBuf};
use std::time::Duration;

use roslite_linetrace::launch::{self, LaunchOptions, RunResult, Setup, Side, WasmFollower};
use roslite_linetrace::node_program::NodeProgram;
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::{cpp_build, wasm_build};

fn python() -> PathBuf {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test` once to create the venv with rclpy",
        python.display()
    );
    python
}

fn run(setup: Setup, domain: u32, twist_stamped: bool) -> RunResult {
    run_with(setup, domain, twist_stamped, Some(python()), None, None)
}

/// Where a run on `domain` keeps its nodes' logs and traces: under the target directory, by
/// domain alone, so they stay to be read after a failure and nothing piles up in the system's
/// temporary directory. Emptied first: a trace of an earlier run must not stand in for one
/// this run's node never wrote.
fn work_dir(domain: u32) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("linetrace-{domain}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run_with(
    setup: Setup,
    domain: u32,
    twist_stamped: bool,
    python: Option<PathBuf>,
    cpp_follower: Option<PathBuf>,
    wasm_follower: Option<WasmFollower>,
) -> RunResult {
    let work_dir = work_dir(domain);
    let options = LaunchOptions {
        node_program: NodeProgram::Cli(PathBuf::from(env!("CARGO_BIN_EXE_roslite"))),
        python,
        cpp_follower,
        wasm_follower,
        work_dir,
        domain,
        node: NodeOptions {
            speed: 4.0,
            seed: 3,
            twist_stamped,
        },
        samples: 100,
        min_laps: 0,
        timeout: Duration::from_secs(90),
    };
    launch::run(setup, &options).unwrap_or_else(|e| panic!("{}: {e}", setup.label()))
}

fn assert_every_topic_and_the_service(r: &RunResult) {
    let count = |name: &str| r.counts.get(name).copied().unwrap_or(0);
    // Robot -> follower.
    assert!(count("light_sensors") > 0, "{:?}", r.counts);
    assert!(count("switches") > 0, "{:?}", r.counts);
    // Follower -> robot.
    assert!(count("cmd_vel") > 0, "{:?}", r.counts);
    assert!(count("leds") > 0, "{:?}", r.counts);
    assert!(count("buzzer") > 0, "calibration beeps: {:?}", r.counts);
    // The service, both ways: the robot served the call, the follower saw the reply.
    assert!(count("motor_power_requests") >= 1, "{:?}", r.counts);
    assert!(count("motor_power_responses") >= 1, "{:?}", r.counts);
    assert_eq!(r.light_sensors_us.len(), 100);
    assert_eq!(r.cmd_vel_us.len(), 100);
    assert_eq!(r.unmatched, 0, "subscriber records without a publication");
    assert!(r.laps > 0.2, "the robot hardly moved: {} laps", r.laps);
}

#[test]
fn roslite_follower_drives_the_rclpy_robot() {
    let r = run(Setup::MIXED, 91, false);
    assert_every_topic_and_the_service(&r);
}

#[test]
fn rclpy_follower_drives_the_roslite_robot_with_twist_stamped() {
    let setup = Setup {
        robot: Side::Roslite,
        follower: Side::Rclpy,
        one_process: false,
    };
    let r = run(setup, 93, true);
    assert_every_topic_and_the_service(&r);
}

#[test]
fn cpp_follower_drives_the_roslite_robot() {
    // Built as `roslite bench linetrace` builds it: the C ABI's static library in the size
    // profile (cargo, first time slow), then c++ -Os -static.
    let exe = cpp_build::build(cpp_build::FOLLOWER, roslite_linetrace::small_build::PROFILE)
        .unwrap_or_else(|e| panic!("building the C++ follower: {e}"));
    let r = run_with(Setup::CPP_FOLLOWER, 95, false, None, Some(exe), None);
    assert_eq!(r.label, "roslite C++ follower <-> roslite robot");
    assert_every_topic_and_the_service(&r);
    assert!(
        r.memory
            .iter()
            .any(|m| m.process == "follower (roslite C++)"),
        "{:?}",
        r.memory
    );
}

/// The Wasm follower and its host, as `roslite bench linetrace` builds them (the host in the
/// size profile with cargo, first time slow; the module with Debian's wasm32 clang toolchain,
/// which `cargo xtask test` installs).
fn wasm_follower() -> WasmFollower {
    wasm_build::build().unwrap_or_else(|e| panic!("building the Wasm follower: {e}"))
}

fn assert_wasm_follower_drove_the_robot(setup: Setup, domain: u32) {
    let r = run_with(setup, domain, false, None, None, Some(wasm_follower()));
    assert_every_topic_and_the_service(&r);
    let process = setup.follower.follower_process();
    assert!(
        r.memory.iter().any(|m| m.process == process),
        "{process}: {:?}",
        r.memory
    );
}

#[test]
fn wasm_follower_on_wasmtime_drives_the_roslite_robot() {
    assert_eq!(
        Setup::WASM_WASMTIME.label(),
        "roslite Wasm follower (wasmtime AOT) <-> roslite robot"
    );
    assert_wasm_follower_drove_the_robot(Setup::WASM_WASMTIME, 97);
}

#[test]
fn wasm_follower_on_wasmi_drives_the_roslite_robot() {
    assert_eq!(
        Setup::WASM_WASMI.label(),
        "roslite Wasm follower (wasmi) <-> roslite robot"
    );
    assert_wasm_follower_drove_the_robot(Setup::WASM_WASMI, 99);
}

/// `roslite demo --migrate`'s run: the Wasm follower moves between two lean hosts and back
/// while it drives the robot; each move is recorded and marked on the path, and no
/// `/light_sensors` message around a move is lost or given twice.
#[test]
fn wasm_follower_moves_between_two_hosts_while_it_drives_the_robot() {
    use roslite_linetrace::migrating::{self, MigrationPlan};
    let work_dir = work_dir(87);
    let options = LaunchOptions {
        node_program: NodeProgram::Cli(PathBuf::from(env!("CARGO_BIN_EXE_roslite"))),
        python: None,
        cpp_follower: None,
        wasm_follower: Some(wasm_follower()),
        work_dir,
        domain: 87,
        node: NodeOptions {
            speed: 4.0,
            seed: 3,
            twist_stamped: false,
        },
        samples: 100,
        min_laps: 0,
        timeout: Duration::from_secs(90),
    };
    let plan = MigrationPlan {
        moves: 4,
        interval: Duration::from_millis(300),
        emulated: None,
    };
    let moved = migrating::run(&options, &plan).unwrap_or_else(|e| panic!("{e}"));
    let r = &moved.run;
    for topic in [
        "light_sensors",
        "switches",
        "cmd_vel",
        "leds",
        "motor_power_responses",
    ] {
        assert!(
            r.counts.get(topic).copied().unwrap_or(0) > 0,
            "{topic}: {:?}",
            r.counts
        );
    }
    assert!(r.laps > 0.2, "the robot hardly moved: {} laps", r.laps);
    assert_eq!(moved.moves.len(), 4);
    for (i, m) in moved.moves.iter().enumerate() {
        let (from, to) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        assert_eq!(m.from, migrating::HOSTS[from]);
        assert_eq!(m.to, migrating::HOSTS[to]);
        assert!(m.snapshot_bytes > 0 && m.downtime_us > 0.0, "{m:?}");
    }
    assert_eq!(
        moved.run.path_marks.len(),
        4,
        "each move marked on the path"
    );
    assert_eq!(moved.light_sensors_lost, 0);
    assert_eq!(moved.light_sensors_duplicated, 0);
}

//! The `roslite` binary as a user runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn roslite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .env_remove("AMENT_PREFIX_PATH")
        .output()
        .expect("run roslite")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "roslite failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn interface_show_twist_expands_nested_types_like_ros2() {
    let out = stdout(&roslite(&["interface", "show", "geometry_msgs/msg/Twist"]));
    let expected = "\
# This expresses velocity in free space broken into its linear and angular parts.

Vector3  linear
\tfloat64 x
\tfloat64 y
\tfloat64 z
Vector3  angular
\tfloat64 x
\tfloat64 y
\tfloat64 z
";
    assert_eq!(out, expected);
}

#[test]
fn interface_show_service() {
    let out = stdout(&roslite(&["interface", "show", "std_srvs/srv/SetBool"]));
    assert!(out.contains("bool data"), "{out}");
    assert!(out.contains("\n---\n"), "{out}");
    assert!(out.contains("string message"), "{out}");
}

/// `ros2 interface proto`: the default value as YAML, quoted; a service's request, an
/// action's goal.
#[test]
fn interface_proto_prints_a_prototype_to_fill_in() {
    let out = stdout(&roslite(&["interface", "proto", "geometry_msgs/msg/Twist"]));
    assert_eq!(
        out,
        "\"linear:\n  x: 0.0\n  y: 0.0\n  z: 0.0\nangular:\n  x: 0.0\n  y: 0.0\n  z: 0.0\n\"\n"
    );
    let out = stdout(&roslite(&[
        "interface",
        "proto",
        "example_interfaces/srv/AddTwoInts",
    ]));
    assert_eq!(out, "\"a: 0\nb: 0\n\"\n");
    let out = stdout(&roslite(&[
        "interface",
        "proto",
        "--no-quotes",
        "example_interfaces/action/Fibonacci",
    ]));
    assert_eq!(out, "order: 0\n\n");
    let out = stdout(&roslite(&["interface", "proto", "std_msgs/msg/Empty"]));
    assert_eq!(out, "\"{}\n\"\n");
    let out = roslite(&["interface", "proto", "nope/msg/X"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("roslite interface list"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn interface_hash_matches_ros2() {
    let out = stdout(&roslite(&["interface", "hash", "std_msgs/msg/String"]));
    assert_eq!(
        out.trim(),
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
    );
    let out = stdout(&roslite(&[
        "interface",
        "hash",
        "std_srvs/srv/SetBool_Request",
    ]));
    assert_eq!(
        out.trim(),
        "RIHS01_c62fbb99d94e1b25e8ef9e109f9581956bb1b3361a45a4e5810c36a90d29932e"
    );
}

#[test]
fn interface_list_has_all_builtin_packages() {
    let out = stdout(&roslite(&["interface", "list"]));
    for name in [
        "builtin_interfaces/msg/Time",
        "example_interfaces/srv/AddTwoInts",
        "example_interfaces/action/Fibonacci",
        "raspimouse_msgs/msg/LightSensors",
        "rmw_dds_common/msg/ParticipantEntitiesInfo",
        "sensor_msgs/msg/PointCloud2",
        "type_description_interfaces/srv/GetTypeDescription",
        "test_msgs/action/Fibonacci",
        "roslite_interfaces/srv/MigrateNode",
    ] {
        assert!(out.contains(&format!("    {name}\n")), "{name} missing");
    }
    let packages = stdout(&roslite(&["interface", "packages"]));
    assert_eq!(packages.lines().count(), 18, "{packages}");
}

#[test]
fn bad_type_names_get_a_clear_error() {
    let out = roslite(&["interface", "show", "geometry_msgs/Twist"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("<package>/<msg|srv|action>/<Name>"));
    let out = roslite(&["interface", "show", "nope_msgs/msg/Nothing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown interface type"));
}

#[test]
fn definitions_under_ament_prefix_path_are_found() {
    let prefix = std::env::temp_dir().join(format!("roslite-ament-{}", std::process::id()));
    let msg_dir: PathBuf = prefix.join("share/my_robot_msgs/msg");
    std::fs::create_dir_all(&msg_dir).unwrap();
    std::fs::write(
        msg_dir.join("Status.msg"),
        "# robot status\nstd_msgs/Header header\nuint8 level\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(["interface", "show", "my_robot_msgs/msg/Status"])
        .env(
            "AMENT_PREFIX_PATH",
            format!("/nonexistent:{}", prefix.display()),
        )
        .output()
        .unwrap();
    let out = stdout(&output);
    assert!(out.starts_with("# robot status\nstd_msgs/Header header\n\tbuiltin_interfaces/Time stamp\n\t\tint32 sec"), "{out}");
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(["interface", "hash", "my_robot_msgs/msg/Status"])
        .env("AMENT_PREFIX_PATH", prefix.display().to_string())
        .output()
        .unwrap();
    assert!(stdout(&output).starts_with("RIHS01_"));
    std::fs::remove_dir_all(&prefix).unwrap();
}

#[test]
fn demo_runs_and_exits_on_its_own() {
    let out_dir = std::env::temp_dir().join(format!("roslite-demo-test-{}", std::process::id()));
    let out_arg = out_dir.to_string_lossy().into_owned();
    let out = stdout(&roslite(&[
        "demo",
        "--samples",
        "100",
        "--laps",
        "1",
        "--out",
        &out_arg,
    ]));
    assert!(out.contains("The robot completed 1."), "{out}");
    // The measured processes are the lean node binary the demo builds, not the CLI.
    assert!(
        out.contains("roslite processes: roslite-linetrace-node"),
        "{out}"
    );
    for heading in [
        "/light_sensors",
        "/cmd_vel",
        "raspimouse (roslite)",
        "follower (roslite)",
    ] {
        assert!(out.contains(heading), "{heading} missing in {out}");
    }
    for file in [
        "README.md",
        "light_sensors.svg",
        "cmd_vel.svg",
        "memory.svg",
        "path.svg",
    ] {
        assert!(out_dir.join(file).is_file(), "{file} not written");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn bench_intra_json_has_raw_figures() {
    let out = stdout(&roslite(&["bench", "intra", "--samples", "8", "--json"]));
    let line = out.trim();
    assert!(line.starts_with("{\"bench\":\"intra\""), "{line}");
    for key in [
        "\"size_bytes\":64,",
        "\"size_bytes\":4194304,",
        "\"size_bytes\":67108864,",
        "\"p50_us\":",
        "\"p99_us\":",
    ] {
        assert!(line.contains(key), "{key} missing in {line}");
    }
}

#[test]
fn bench_timer_runs_every_variant_and_writes_a_histogram() {
    let svg = std::env::temp_dir().join(format!("roslite-timer-{}.svg", std::process::id()));
    let svg_arg = svg.display().to_string();
    let out = stdout(&roslite(&[
        "bench",
        "timer",
        "--period",
        "2ms",
        "--duration",
        "100ms",
        "--no-rclpy",
        "--json",
        "--svg",
        &svg_arg,
    ]));
    let line = out.trim();
    for variant in [
        "clock_nanosleep",
        "futex wait",
        "roslite timer",
        "roslite timer + busy sub",
    ] {
        assert!(
            line.contains(&format!("\"variant\":\"{variant}\",\"samples\":")),
            "{variant}: {line}"
        );
    }
    assert!(!line.contains("\"samples\":0"), "{line}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("roslite timer + busy sub"));
    std::fs::remove_file(&svg).unwrap();
}

#[test]
fn bench_timer_rejects_bad_durations_and_refused_settings_clearly() {
    let out = roslite(&["bench", "timer", "--period", "10 parsecs"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown unit"));
    let out = roslite(&[
        "bench",
        "timer",
        "--duration",
        "10ms",
        "--no-rclpy",
        "--cpus",
        "1000",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("CPU affinity [1000] refused"));
}

/// `roslite <args>` with its stdout a pipe whose reader is already gone, as after `| head -1`
/// took its line: every write fails with EPIPE.
fn with_reader_gone(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("make a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .env_remove("AMENT_PREFIX_PATH")
        // Only this process: `topic pub` below sends nothing anywhere.
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")
        .env("RUST_BACKTRACE", "1")
        .stdout(writer)
        .output()
        .expect("run roslite")
}

/// A reader that goes away ends every command quietly, with the ros2 CLI's status (1), not a
/// panic (101) and its "failed printing to stdout: Broken pipe" with a backtrace.
#[test]
fn a_reader_that_goes_away_ends_each_command_quietly() {
    for args in [
        &["interface", "proto", "sensor_msgs/msg/PointCloud2"][..],
        &["interface", "show", "sensor_msgs/msg/PointCloud2"],
        &["interface", "list"],
        &["interface", "packages"],
        &[
            "topic",
            "pub",
            "-w",
            "0",
            "--once",
            "/chatter",
            "std_msgs/msg/String",
            "data: hi",
        ],
    ] {
        let output = with_reader_gone(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "roslite {args:?} ended with {}: {stderr}",
            output.status
        );
        assert_eq!(stderr, "", "roslite {args:?} was not quiet");
    }
}

/// The same through a shell pipeline into `head -1`, as a user types it.
#[test]
fn interface_proto_into_head_prints_one_line_and_no_error() {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' interface proto sensor_msgs/msg/PointCloud2 | head -1",
            env!("CARGO_BIN_EXE_roslite")
        ))
        .env("RUST_BACKTRACE", "1")
        .env_remove("AMENT_PREFIX_PATH")
        .output()
        .expect("run sh");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "\"header:\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

/// A user's mistake is a message, not a program fault: even with `RUST_BACKTRACE=1` (common in
/// a Rust developer's shell) no backtrace follows it.
#[test]
fn user_errors_print_their_message_only_under_rust_backtrace() {
    for (args, message) in [
        (
            &["interface", "show", "nope_msgs/msg/Missing"][..],
            "Error: unknown interface type 'nope_msgs/msg/Missing'",
        ),
        (
            &[
                "topic",
                "pub",
                "/chatter",
                "std_msgs/msg/String",
                "{data: [1]}",
            ],
            "Error: field `data` expects string but got a list of 1 items",
        ),
        (
            &["service", "call", "/x", "std_srvs/srv/Missing"],
            "Error: unknown service type 'std_srvs/srv/Missing'",
        ),
        (
            &["topic", "pub", "bad topic", "std_msgs/msg/String", "{}"],
            "Error: invalid topic or service name 'bad topic': character ' ' at index 3 is not allowed; use only",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .env("RUST_LIB_BACKTRACE", "1")
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")
            .env_remove("AMENT_PREFIX_PATH")
            .output()
            .expect("run roslite");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "roslite {args:?}: {stderr}");
        assert!(stderr.starts_with(message), "roslite {args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "roslite {args:?}: {stderr}");
        assert!(!stderr.contains("backtrace"), "roslite {args:?}: {stderr}");
    }
}

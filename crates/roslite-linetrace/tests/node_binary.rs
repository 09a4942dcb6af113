//! The standalone node executable: bad command lines get a clear message and exit status 2,
//! and a `both` process runs the application and writes its trace.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

fn node() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roslite-linetrace-node"));
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[test]
fn bad_command_lines_are_explained() {
    for (args, expected) in [
        (&["walker"][..], "unknown role"),
        (&["robot"][..], "--trace is required"),
        (
            &["robot", "--trace", "/tmp/x", "--speed", "-1"][..],
            "expected a positive number",
        ),
        (&["robot", "--trace"][..], "--trace needs a value"),
    ] {
        let out = node().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(stderr.contains("usage:"), "{args:?}: {stderr}");
    }
}

#[test]
fn both_nodes_in_one_process_follow_the_line_and_write_a_trace() {
    let trace =
        std::env::temp_dir().join(format!("roslite-node-binary-{}.trace", std::process::id()));
    let mut child = node()
        .args(["both", "--trace"])
        .arg(&trace)
        .args(["--speed", "8", "--seed", "2"])
        .spawn()
        .unwrap();
    // `both` uses an intra-process context: nothing goes on any network.
    std::thread::sleep(Duration::from_secs(6));
    child.stdin.take().unwrap().write_all(b"stop\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("motor_power on"), "{stdout}");
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
    assert!(count("pub light_sensors ") > 100, "{text:.400}");
    assert!(count("sub light_sensors ") > 100, "{text:.400}");
    assert!(count("sub cmd_vel ") > 10, "{text:.400}");
    assert!(text.contains("mark following "), "{text:.400}");
    assert!(text.contains("summary laps "), "{text:.400}");
}

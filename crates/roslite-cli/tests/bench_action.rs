//! Smoke test of `roslite bench action`: a roslite server and client process and an rclpy pair
//! run end to end on 127.0.0.1 (LOCALHOST discovery, domains of this test's own) and every goal
//! gives a sample. Timing figures are printed, not asserted: they belong to the machine.

use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn bench_action_measures_every_goal_of_both_pairs() {
    // Two domains of its own, in 230..232 (the other benches' tests stay below).
    let domain = 230 + std::process::id() % 2;
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(["bench", "action", "--goals", "20", "--json", "--domain"])
        .arg(domain.to_string())
        .arg("--python")
        .arg(workspace().join(".venv/bin/python"))
        .env_remove("ROSLITE_NETWORK")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "bench action failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{stdout}");
    let line = stdout.lines().last().unwrap_or_default();
    assert!(line.starts_with("{\"bench\":\"action\""), "{line}");
    assert_eq!(line.matches("\"goals\":20").count(), 2, "{line}");
    for key in ["\"accept_ratio\":", "\"feedback_ratio\":"] {
        assert!(line.contains(key), "{key} missing: {line}");
    }
}

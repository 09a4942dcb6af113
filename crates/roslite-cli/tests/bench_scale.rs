//! Smoke test of `roslite bench scale` inside a network namespace made for the test (the bench
//! makes one per graph inside it): two small roslite graphs and one rclpy graph match fully,
//! and the capture sorted their discovery traffic. Times and memory are printed, not asserted.

use std::path::PathBuf;

use roslite_transport::netns::NetNs;
use serde_json::Value;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn bench_scale_small_graphs_match_and_their_discovery_is_counted() {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    let ns = NetNs::create("bench-scale").expect("create a network namespace");
    let out = std::env::temp_dir().join(format!("roslite-scale-{}", std::process::id()));
    let output = ns
        .command(env!("CARGO_BIN_EXE_roslite"))
        .args([
            "bench",
            "scale",
            "--sizes",
            "2x1,3x4",
            "--rclpy-size",
            "2x2",
            "--settle",
            "0.2s",
            "--steady",
            "1s",
            "--match-timeout",
            "60s",
            "--json",
            "--out-dir",
        ])
        .arg(&out)
        .env("ROSLITE_PYTHON", &python)
        .output()
        .expect("run roslite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "roslite failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{stdout}");
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["bench"], "scale");
    let runs = report["runs"].as_array().expect("runs");
    let shape: Vec<(String, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["stack"].as_str().unwrap().to_owned(),
                r["processes"].as_u64().unwrap(),
                r["endpoints"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("roslite".to_owned(), 2, 1),
            ("roslite".to_owned(), 3, 4),
            ("rclpy".to_owned(), 2, 2)
        ]
    );
    for r in runs {
        assert_eq!(r["matched"], true, "not matched: {r}");
        assert_eq!(r["match_count"], r["match_count_expected"], "{r}");
        assert!(r["time_to_match_ms"].as_f64().unwrap() > 0.0, "{r}");
        let n = r["processes"].as_u64().unwrap();
        let m = r["endpoints"].as_u64().unwrap();
        assert_eq!(r["matched_remote_endpoints_per_process"], 2 * m * (n - 1));
        let d = &r["discovery"];
        // A datagram counts under the class of its first submessage (its bytes under each
        // submessage's): SEDP samples may all ride in datagrams that begin with another
        // class's submessage, so only their bytes are sure to show.
        let mut datagrams = 0;
        for class in ["spdp", "sedp"] {
            assert!(d[class]["bytes"].as_u64().unwrap() > 0, "no {class}: {r}");
            datagrams += d[class]["datagrams"].as_u64().unwrap();
        }
        assert!(datagrams > 0, "no discovery datagram: {r}");
        // rclpy's ros_discovery_info rides UDP (its profile has no shared memory), though not
        // necessarily before the topics match: nothing orders that writer's matching before
        // theirs. When Fast DDS announces that writer after the node's other endpoints (as it
        // often does), this also shows that its earlier samples count as ros_discovery_info.
        // (Between roslite processes it rides shared memory once that is set up: nothing to
        // require.)
        if r["stack"] == "rclpy" {
            let info = d["ros_discovery_info"]["bytes"].as_u64().unwrap()
                + r["settling"]["ros_discovery_info"]["bytes"]
                    .as_u64()
                    .unwrap();
            assert!(info > 0, "no ros_discovery_info: {r}");
        }
        assert_eq!(d["missed"], 0, "the capture fell behind: {r}");
        assert_eq!(r["capture_missed"], 0, "{r}");
        assert!(r["rss_kib_mean"].as_u64().unwrap() > 1000, "{r}");
        assert!(r["threads_mean"].as_u64().unwrap() >= 1, "{r}");
    }
    // Two roslite sizes that matched: the RSS slope is computed (its value is the machine's).
    assert!(report["rss_kib_per_matched_remote_endpoint"].is_number());
    for chart in ["match", "discovery", "cpu", "rss"] {
        let svg = std::fs::read_to_string(out.join(format!("scale-{chart}.svg"))).unwrap();
        assert!(
            svg.contains("roslite") && svg.contains("rclpy"),
            "{chart}: {svg}"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

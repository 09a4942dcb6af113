//! Smoke test of `roslite bench service`: it runs end to end on 127.0.0.1 (LOCALHOST discovery,
//! domains of its own), prints one JSON object with the documented keys, every request gets its
//! reply, and the plots are written. Timing figures are printed, not asserted: they belong to the
//! machine.

use std::path::PathBuf;
use std::process::Command;

/// Domains of this test process's own, in 20..60 (service.rs uses 60..100, topic.rs 100..200,
/// bench_net 150..230); the bench uses the given one and the next two.
fn domain() -> u32 {
    20 + (std::process::id() % 10) * 4
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The value after `"key":` in flat JSON text, up to the next `,` or `}`.
fn values<'a>(line: &'a str, key: &str) -> Vec<&'a str> {
    let pattern = format!("\"{key}\":");
    line.match_indices(&pattern)
        .map(|(at, _)| {
            let rest = &line[at + pattern.len()..];
            let end = rest.find([',', '}']).unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn bench_service_quick_gets_every_reply() {
    let out = std::env::temp_dir().join(format!("roslite-bench-service-{}", std::process::id()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_roslite"));
    command.args([
        "bench",
        "service",
        "--quick",
        "--json",
        "--requests",
        "20",
        "--impair",
        "delay_ms=2,jitter_ms=1,seed=7",
        "--domain",
        &domain().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    // The rclpy baseline runs when `cargo xtask test` has made the venv; otherwise it is
    // reported as skipped.
    let python = workspace().join(".venv/bin/python");
    let with_rclpy = python.exists();
    if with_rclpy {
        command.env("ROSLITE_PYTHON", &python);
    }
    let output = command.output().expect("run roslite");
    assert!(
        output.status.success(),
        "roslite failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let line = stdout.trim();
    println!("{line}");
    assert!(
        line.starts_with('{') && line.ends_with('}') && !line.contains('\n'),
        "not one JSON object: {line}"
    );
    for key in [
        "\"bench\":\"service\"",
        "\"requests_per_run\":20",
        "\"periods_ms\":[20,10]",
        "\"roslite_service_type\":\"example_interfaces/srv/AddTwoInts\"",
        "\"configuration\":\"roslite\"",
        "\"configuration\":\"roslite over UDP\"",
        "\"configuration\":\"roslite, impaired link\"",
        "\"configuration\":\"rclpy (ROS 2)\"",
        "\"response_p50_us\":",
        "\"response_p99_us\":",
        "\"jitter_p99_us\":",
        "\"response_p50_ratio_vs_rclpy\":",
        "\"goal\":\"roslite send jitter p99 < 100 us\"",
        "\"met\":",
    ] {
        assert!(line.contains(key), "missing {key} in {line}");
    }
    // Four configurations at two periods.
    let configurations = values(line, "configuration");
    assert_eq!(configurations.len(), 8, "{line}");
    // The roslite pair calls over shared memory (two processes of one host); the UDP and the
    // impaired pairs over RTPS, where the faults are injected. rclpy reports no path.
    let paths = values(line, "path");
    assert_eq!(
        paths,
        ["\"shm\"", "\"udp\"", "\"udp\"", "\"shm\"", "\"udp\"", "\"udp\""],
        "{line}"
    );
    let requests = values(line, "requests");
    let replies = values(line, "replies");
    let lost = values(line, "lost");
    let wrong = values(line, "wrong_replies");
    for (i, configuration) in configurations.iter().enumerate() {
        if configuration.starts_with("\"rclpy") && !with_rclpy {
            continue;
        }
        assert_eq!(
            (requests[i], replies[i], lost[i], wrong[i]),
            ("20", "20", "0", "0"),
            "{configuration}: {line}"
        );
    }
    if !with_rclpy {
        assert!(line.contains("\"skipped\":"), "{line}");
    }
    for plot in [
        "response-20ms.svg",
        "response-10ms.svg",
        "response-impaired-10ms.svg",
        "jitter-20ms.svg",
        "jitter-impaired.svg",
    ] {
        let text = std::fs::read_to_string(out.join(plot))
            .unwrap_or_else(|e| panic!("{plot} not written: {e}"));
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    }
    let _ = std::fs::remove_dir_all(&out);
}

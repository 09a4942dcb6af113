//! Smoke tests of the networked benches, `roslite bench rtt` and `roslite bench footprint`: they
//! run end to end on 127.0.0.1 (LOCALHOST discovery, a domain of their own), print one JSON
//! object with the documented keys, and lose nothing. Timing and memory figures are printed, not
//! asserted: they belong to the machine.

use std::process::{Command, Output};

/// Domains of this test process's own, so parallel runs (and the benches' defaults, 211-216)
/// do not discover each other; the benches use the next one or two as well.
fn domain(offset: u32) -> u32 {
    150 + (std::process::id() % 20) * 4 + offset
}

fn roslite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .output()
        .expect("run roslite")
}

fn json_line(output: &Output) -> String {
    assert!(
        output.status.success(),
        "roslite failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let line = stdout.trim().to_owned();
    assert!(
        line.starts_with('{') && line.ends_with('}') && !line.contains('\n'),
        "not one JSON object: {line}"
    );
    line
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
fn bench_rtt_round_trips_two_sizes_without_loss() {
    let svg = std::env::temp_dir().join(format!("roslite-rtt-{}.svg", std::process::id()));
    let svg_arg = svg.display().to_string();
    let domain = domain(0).to_string();
    let line = json_line(&roslite(&[
        "bench",
        "rtt",
        "--transport",
        "udp",
        "--sizes",
        "64,65536",
        "--samples",
        "5",
        "--cyclone-duration",
        "2s",
        "--domain",
        &domain,
        "--svg",
        &svg_arg,
        "--json",
    ]));
    println!("{line}");
    for key in [
        "\"bench\":\"rtt\"",
        "\"transport\":\"udp\"",
        "\"lost_samples\":0",
        "\"size_bytes\":64",
        "\"size_bytes\":65536",
        "\"p50_us\":",
        "\"p99_us\":",
        "\"max_us\":",
        "\"sender_vm_rss_kib\":",
        "\"p50_ratio_roslite_to_cyclone\":",
        "\"goals\":[",
    ] {
        assert!(line.contains(key), "{key} missing in {line}");
    }
    // Every size's roslite figures: 5 samples, none lost. Cyclone's are there when ddsperf is
    // installed, and a reason otherwise.
    assert_eq!(values(&line, "samples"), ["5", "5"], "{line}");
    assert!(
        values(&line, "lost_samples").iter().all(|v| *v == "0"),
        "{line}"
    );
    assert_eq!(
        values(&line, "round_trips").len() + values(&line, "skipped").len(),
        2,
        "{line}"
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("roslite p50"), "{chart}");
    std::fs::remove_file(&svg).unwrap();
}

#[test]
fn bench_footprint_measures_a_publisher_with_a_matched_subscriber() {
    let domain = domain(2).to_string();
    let line = json_line(&roslite(&[
        "bench",
        "footprint",
        "--steady",
        "1s",
        "--domain",
        &domain,
        "--no-rclpy",
        "--json",
    ]));
    println!("{line}");
    for key in [
        "\"bench\":\"footprint\"",
        "\"publisher\":\"roslite (CLI binary)\"",
        "\"vm_rss_kib\":",
        "\"vm_hwm_kib\":",
        "\"rss_anon_kib\":",
        "\"rss_file_kib\":",
        "\"messages_received\":",
        "\"goal_vm_rss_mb\":3",
        "\"breakdown\":[",
    ] {
        assert!(line.contains(key), "{key} missing in {line}");
    }
    // The subscriber heard the 10 Hz publisher during the one-second steady state.
    let received: u64 = values(&line, "messages_received")[0].parse().unwrap();
    assert!(received >= 3, "{line}");
    // The bench built the statically linked, size-optimised talker and measured it.
    let lean = "\"publisher\":\"roslite (talker: size profile, static)\",\"vm_rss_kib\":";
    assert!(line.contains(lean), "{lean} missing in {line}");
}

#[test]
fn bench_rtt_rejects_sizes_without_room_for_a_sequence_number() {
    let output = roslite(&["bench", "rtt", "--sizes", "4"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("too small"));
}

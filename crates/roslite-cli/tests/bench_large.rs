//! Smoke test of `roslite bench large`: a small array (100 000 elements) crosses every path
//! the bench measures on this host (intra-process; two processes over the default transport,
//! `uds,udp` and `udp`) intact, and the bench prints one JSON object. The namespace row and the
//! 55 MB point clouds are skipped here (the first needs root, the second is covered by
//! `roslite`'s `large_data` tests); figures are printed, not asserted.

use std::process::Command;

#[test]
fn bench_large_runs_every_same_host_path_intact() {
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args([
            "bench",
            "large",
            "--json",
            "--elements",
            "100000",
            "--rounds",
            "2",
            "--skip-netns",
            "--skip-cloud",
        ])
        .env_remove("ROSLITE_TRANSPORTS")
        .output()
        .expect("run roslite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "roslite failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.trim();
    println!("{line}");
    assert!(
        line.starts_with("{\"bench\":\"large\"") && line.ends_with('}') && !line.contains('\n'),
        "not one JSON object: {line}"
    );
    let transports: Vec<&str> = line
        .match_indices("\"transport\":\"")
        .map(|(i, m)| {
            let rest = &line[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(transports, ["intra", "shm", "uds", "udp"], "{line}");
    let intact: Vec<&str> = line
        .match_indices("\"intact\":")
        .map(|(i, m)| {
            let rest = &line[i + m.len()..];
            &rest[..rest.find(',').unwrap()]
        })
        .collect();
    assert_eq!(intact, ["2", "2", "2", "2"], "{line}");
    assert!(
        line.contains("\"received_as\":\"view (same buffer)\""),
        "{line}"
    );
}

//! Smoke test of `roslite bench rtt --transport all`, the sweep of the IPC framework comparison
//! (docs/experiments.md): it runs end to end with tiny counts (every roslite path through the
//! user API, the roslite-shm transports, the floors, and the DDS peers where installed), prints
//! one JSON object with the documented keys, loses nothing, lists every interleaved round of the
//! 64 B floor goals and writes its chart; and at a rate, it counts every echo process's pages
//! per ping. Figures are printed, not asserted.

use std::process::Command;

/// Domains of this test process's own (its two tests use thirteen from it).
fn domain() -> u32 {
    20 + (std::process::id() % 20) * 7
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

/// `roslite bench rtt <args> --svg <svg> --json`, which must succeed; its one line of JSON.
fn bench_rtt_json(args: &[&str], svg: &std::path::Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(["bench", "rtt"])
        .args(args)
        .arg("--svg")
        .arg(svg)
        .arg("--json")
        .env_remove("ROSLITE_TRANSPORTS")
        .output()
        .expect("run roslite");
    assert!(
        output.status.success(),
        "roslite failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    println!("{line}");
    line
}

#[test]
fn sweep_covers_every_path_floor_and_peer() {
    let svg = std::env::temp_dir().join(format!("roslite-rtt-sweep-{}.svg", std::process::id()));
    let domain = domain().to_string();
    let line = bench_rtt_json(
        &[
            "--transport",
            "all",
            "--mode",
            "back-to-back",
            "--count",
            "3",
            "--sizes",
            "64,65536",
            "--cyclone-duration",
            "2s",
            "--domain",
            &domain,
        ],
        &svg,
    );
    assert!(
        line.starts_with('{') && line.ends_with('}') && !line.contains('\n'),
        "not one JSON object: {line}"
    );
    for key in [
        "\"bench\":\"rtt\"",
        "\"sweep\":true",
        "\"transports\":[\"intra\",\"shm\",\"uds\",\"udp\",\"shm-loan\"]",
        "\"mode\":\"back-to-back\"",
        "\"count\":3",
        "\"sizes\":[64,65536]",
        "\"name\":\"intra\",\"kind\":\"roslite\",\"requested\":\"intra\",\"observed\":\"intra\"",
        "\"name\":\"shm\",\"kind\":\"roslite\",\"requested\":\"shm\"",
        "\"name\":\"uds\",\"kind\":\"roslite\",\"requested\":\"uds\"",
        "\"name\":\"udp\",\"kind\":\"roslite\",\"requested\":\"udp\",\"observed\":\"udp\"",
        "\"name\":\"shm-loan\",\"kind\":\"roslite\",\"requested\":\"shm\",\"observed\":\"shm\"",
        "\"name\":\"shm (transport only)\",\"kind\":\"transport\"",
        "\"name\":\"uds (transport only)\",\"kind\":\"transport\"",
        "\"name\":\"futex floor\",\"kind\":\"floor\"",
        "\"name\":\"raw UDS floor\",\"kind\":\"floor\"",
        "\"name\":\"memcpy\",\"kind\":\"floor\"",
        "\"sender_vm_rss_kib\":",
        "\"goals\":[",
        "\"goal\":\"shm 64 B p50 <= 1.3x futex floor\"",
        "\"goal\":\"uds 64 B p50 <= 1.3x raw UDS floor\"",
        "\"goal\":\"shm-loan 4 MiB p50 <= 2x shm-loan 64 B\"",
    ] {
        assert!(line.contains(key), "{key} missing in {line}");
    }
    // Which path shm and uds took is reported either way (it depends on the build's wiring).
    assert_eq!(values(&line, "observed").len(), 5, "{line}");
    // roslite's own series: 3 samples at each size, nothing lost.
    for name in ["intra", "shm", "uds", "udp", "shm-loan"] {
        let at = line
            .find(&format!("\"name\":\"{name}\",\"kind\":\"roslite\""))
            .unwrap();
        let series = &line[at..line[at..].find("]}").unwrap() + at];
        assert_eq!(values(series, "samples"), ["3", "3"], "{name}: {series}");
        assert_eq!(values(series, "lost"), ["0", "0"], "{name}: {series}");
    }
    // Back to back, the 64 B floor goals come from interleaved rounds (--rounds, default 3):
    // every round's ratio is listed, and a path that took another transport has none.
    for (goal, path) in [
        ("shm 64 B p50 <= 1.3x futex floor", Some("shm")),
        ("uds 64 B p50 <= 1.3x raw UDS floor", Some("uds")),
        ("shm (transport only) 64 B p50 <= 1.3x futex floor", None),
        ("uds (transport only) 64 B p50 <= 1.3x raw UDS floor", None),
    ] {
        let at = line.find(&format!("\"goal\":\"{goal}\"")).unwrap();
        let object = &line[at..line[at..].find('}').unwrap() + at];
        let on_path = path.is_none_or(|path| {
            line.contains(&format!("\"requested\":\"{path}\",\"observed\":\"{path}\""))
        });
        let rounds = if on_path { "3" } else { "0" };
        assert_eq!(values(object, "rounds"), [rounds], "{object}");
        let each = object
            .split("\"p50_ratio_each_round\":[")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .unwrap_or_else(|| panic!("no p50_ratio_each_round in {object}"));
        let listed = if each.is_empty() {
            0
        } else {
            each.split(',').count()
        };
        assert_eq!(listed.to_string(), rounds, "{object}");
        // The judged round is one of them, with both p50s.
        assert_eq!(
            values(object, "median_round").len(),
            usize::from(on_path),
            "{object}"
        );
    }
    // Each DDS peer is measured or skipped with a reason.
    for peer in ["Cyclone", "Fast DDS"] {
        let measured = line.contains(&format!("\"name\":\"{peer} "));
        let skipped = line.contains(&format!("\"name\":\"{peer}\",\"reason\":"));
        assert!(measured != skipped, "{peer}: {line}");
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.contains("roslite intra p50") || chart.contains("intra"),
        "{chart}"
    );
    assert!(chart.contains("futex floor p50"), "{chart}");
    std::fs::remove_file(&svg).unwrap();
}

/// At a rate every echo process is counted: roslite's pong, the bare transport's, the paced
/// floors' and, where installed, each DDS pong (whose windows fall on pings it does not
/// measure). Back to back nothing is counted (the TLB would hide pages), which the test above
/// leaves to `echo_pages_per_ping` being absent there.
#[test]
fn rate_mode_counts_each_echo_process_pages() {
    let svg = std::env::temp_dir().join(format!("roslite-rtt-rate-{}.svg", std::process::id()));
    // Past the seven domains the sweep above uses (this one takes at most six).
    let domain = (domain() + 7).to_string();
    let line = bench_rtt_json(
        &[
            "--transport",
            "shm",
            "--hz",
            "50",
            "--count",
            "20",
            "--sizes",
            "64",
            "--domain",
            &domain,
        ],
        &svg,
    );
    let series = |name: &str| {
        let at = line.find(&format!("\"name\":\"{name}"))?;
        Some(&line[at..line[at..].find("]}").unwrap() + at])
    };
    let mut counted = vec![
        "shm\"",
        "shm (transport only)",
        "futex @50Hz",
        "raw UDS @50Hz",
    ];
    for peer in ["Cyclone ", "Fast DDS "] {
        if series(peer).is_some() {
            counted.push(peer);
        }
    }
    for name in counted {
        let series = series(name).unwrap_or_else(|| panic!("{name} missing in {line}"));
        let pages = values(series, "echo_pages_per_ping");
        assert_eq!(pages.len(), 1, "{name}: {series}");
        // Waking, taking the ping and answering touches a stack page and code at least.
        let pages: u64 = pages[0].parse().unwrap();
        assert!(pages >= 2, "{name}: {series}");
    }
    // Floors measured back to back are not counted even in rate mode.
    let futex = series("futex floor").unwrap();
    assert!(values(futex, "echo_pages_per_ping").is_empty(), "{futex}");
    let _ = std::fs::remove_file(&svg);
}

#[test]
fn api_cpp_measures_the_cpp_pair_next_to_the_rust_pair() {
    // Builds the C++ pair first (the C ABI's static library in the release profile: slow the
    // first time), then one tiny round per path.
    let domain = (170 + (std::process::id() % 10) * 2).to_string();
    let svg = std::env::temp_dir().join(format!("roslite-rtt-cpp-{}.svg", std::process::id()));
    let line = bench_rtt_json(
        &[
            "--api",
            "cpp",
            "--samples",
            "30",
            "--rounds",
            "1",
            "--domain",
            &domain,
        ],
        &svg,
    );
    assert_eq!(values(&line, "bench"), ["\"rtt-api-cpp\""], "{line}");
    assert_eq!(values(&line, "path"), ["\"udp\"", "\"shm\""], "{line}");
    // Both pairs measured on both paths, nothing lost: four p50s, two ratios per path (the
    // round's and the judged one).
    assert_eq!(values(&line, "p50_us").len(), 4, "{line}");
    assert!(values(&line, "error").is_empty(), "{line}");
    assert!(values(&line, "lost").iter().all(|n| *n == "0"), "{line}");
    let ratios = values(&line, "p50_ratio_cpp_to_rust");
    assert_eq!(ratios.len(), 4, "{line}");
    assert!(ratios.iter().all(|r| *r != "null"), "{line}");
}

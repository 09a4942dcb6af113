//! Smoke test of `roslite bench soak`: a few seconds of every stream, checked for well-formed
//! accounting that adds up (sent = delivered + reported lost + dropped from the subscription's
//! queue, on every stream; a best-effort stream may leave the messages after its last one
//! received unreported), no panic and no abnormal exit. Rates and memory figures are printed, not asserted: they belong to the
//! machine.

use std::process::Command;

/// Domains of this test process's own, in 2..17 (the other CLI tests use 20 and up); the bench
/// uses the given one and the next two.
fn domain() -> u32 {
    2 + (std::process::id() % 5) * 3
}

/// The values after `"key":` in JSON text, in order, up to the next `,`, `}` or `]`.
fn values<'a>(line: &'a str, key: &str) -> Vec<&'a str> {
    let pattern = format!("\"{key}\":");
    line.match_indices(&pattern)
        .map(|(at, _)| {
            let rest = &line[at + pattern.len()..];
            let end = rest.find([',', '}', ']']).unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

fn numbers(line: &str, key: &str) -> Vec<i64> {
    values(line, key)
        .iter()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{key}: {v} is no integer"))
        })
        .collect()
}

#[test]
fn bench_soak_short_run_adds_up() {
    let output = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args([
            "bench",
            "soak",
            "--minutes",
            "0.1",
            "--json",
            "--domain",
            &domain().to_string(),
        ])
        .output()
        .expect("run roslite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "roslite failed: {}\n{stdout}\n{stderr}",
        output.status
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line in:\n{stdout}\n{stderr}"));
    println!("{line}");
    assert_eq!(values(line, "bench"), ["\"soak\""]);
    let sent = numbers(line, "sent");
    let delivered = numbers(line, "delivered");
    let lost = numbers(line, "reported_lost");
    let in_queue = numbers(line, "dropped_in_queue");
    let unaccounted = numbers(line, "unaccounted");
    let head = numbers(line, "unreported_head");
    let tail = numbers(line, "unreported_tail");
    let reliable = values(line, "reliable");
    let adds_up = values(line, "adds_up");
    assert!(!sent.is_empty(), "no streams in {line}");
    for list in [&delivered, &lost, &in_queue, &unaccounted, &head, &tail] {
        assert_eq!(list.len(), sent.len(), "one figure per stream in {line}");
    }
    assert_eq!(adds_up.len(), sent.len());
    assert_eq!(reliable.len(), sent.len());
    for i in 0..sent.len() {
        assert!(sent[i] > 0, "stream {i} sent nothing: {line}");
        assert_eq!(
            sent[i],
            delivered[i] + lost[i] + in_queue[i] + unaccounted[i],
            "stream {i}: the report's own sum: {line}"
        );
        // A best-effort reader learns of a loss only from a later message, and counts losses
        // only from the first message it got, so what was lost before that (the head) or
        // after the last (the tail) cannot be reported; nothing else may be missing. A
        // reliable stream receives its head and has no tail after the drain.
        let allowed = if reliable[i] == "true" {
            0
        } else {
            head[i] + tail[i]
        };
        assert!(
            (0..=allowed).contains(&unaccounted[i]),
            "stream {i}: messages neither delivered nor reported lost: {line}"
        );
        assert_eq!(adds_up[i], "true");
    }
    assert_eq!(values(line, "all_add_up"), ["true"]);
    assert!(line.contains("\"panics\":[]"), "a child panicked: {line}");
    assert!(
        line.contains("\"abnormal_exits\":[]"),
        "a child exited abnormally: {line}"
    );
    assert!(values(line, "rss_growth_mib_per_hour").len() >= 2 * sent.len());
}

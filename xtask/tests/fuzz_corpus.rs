//! The fuzz corpus, replayed on stable: every file of `fuzz/corpus/<target>/` and
//! `fuzz/regressions/<target>/` goes through the body of cargo-fuzz target `<target>`
//! (`fuzz/src/lib.rs`, included here as it is), so a crash the fuzzer found and that was fixed
//! stays fixed without nightly or cargo-fuzz. `cargo xtask test` also fuzzes each target
//! briefly when it can (xtask/src/main.rs, `fuzz_smoke`).

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `dir`, sorted; none if it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a corpus directory lists").path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut failures = Vec::new();
    for (name, body) in harness::TARGETS {
        let corpus = files(&fuzz_dir().join("corpus").join(name));
        assert!(
            !corpus.is_empty(),
            "fuzz/corpus/{name}/ is empty: the target's corpus belongs in the repository"
        );
        let regressions = files(&fuzz_dir().join("regressions").join(name));
        for file in corpus.iter().chain(&regressions) {
            let data = std::fs::read(file).expect("a corpus file reads");
            let outcome = std::panic::catch_unwind(|| body(&data));
            if outcome.is_err() {
                failures.push(file.display().to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "these inputs fail their fuzz target (the panics are printed above):\n{}",
        failures.join("\n")
    );
}

/// The `cdr` and `yaml_message` targets reach every generated message type.
#[test]
fn every_builtin_message_type_is_fuzzed() {
    let listed: BTreeSet<&str> = harness::GENERATED.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        listed.len(),
        harness::GENERATED.len(),
        "a type is listed twice"
    );
    assert!(
        listed.len() <= 255 + 256,
        "the first two bytes of an input can no longer pick every type"
    );
    let vendored: BTreeSet<String> = harness::builtins()
        .messages()
        .map(|m| m.name.to_string())
        .collect();
    let missing: Vec<&String> = vendored
        .iter()
        .filter(|name| !listed.contains(name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "add these to fuzz/src/generated_types.rs: {missing:?}"
    );
}

/// The `guest_imports` seed is the run of calls a well-behaved guest makes, and the host takes
/// every one: the fuzzer starts from calls that reach the runtime, not from refusals.
#[test]
fn the_guest_imports_seed_is_accepted_call_by_call() {
    let outcomes = harness::guest_imports_session(&harness::guest_imports_seed());
    assert_eq!(outcomes.len(), 24);
    for (import, outcome) in &outcomes {
        assert_eq!(outcome, &Ok(0), "{import}");
    }
}

/// Writes the seeds the corpus started from that are not taken from packet captures: each
/// generated type's default value in CDR (both byte orders) and as message YAML, every vendored
/// interface file, and some parameter files. Run by hand:
/// `cargo test -p xtask --test fuzz_corpus -- --ignored`, then `cargo fuzz cmin`.
#[test]
#[ignore = "writes seed files; run by hand"]
fn write_seeds() {
    use roslite_msg_gen::ast::TypeName;
    use roslite_msg_gen::dynamic;

    let out = fuzz_dir().join("seeds");
    let save = |target: &str, name: &str, data: &[u8]| {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    };
    let set = harness::builtins();
    for (index, (name, _)) in harness::GENERATED.iter().enumerate() {
        let ty = TypeName::parse(name).unwrap();
        let value = dynamic::default_value(set, &ty).unwrap();
        let selector = harness::type_index_prefix(index);
        let file = name.replace('/', "_");
        for (tag, endianness) in [
            ("le", roslite_cdr::Endianness::Little),
            ("be", roslite_cdr::Endianness::Big),
        ] {
            let mut data = selector.clone();
            data.extend(dynamic::encode(set, &ty, &value, endianness).unwrap());
            save("cdr", &format!("{file}_{tag}"), &data);
        }
        let mut data = selector.clone();
        data.extend(dynamic::to_yaml(set, &ty, &value, &Default::default()).into_bytes());
        save("yaml_message", &file, &data);
    }
    for file in roslite_msgs::INTERFACE_FILES {
        let selector = match (file.kind, file.idl) {
            ("msg", true) => 3,
            ("msg", false) => 0,
            ("srv", _) => 1,
            _ => 2,
        };
        let mut data = vec![selector];
        data.extend(file.text.as_bytes());
        save(
            "msg_parser",
            &format!("{}_{}_{}", file.package, file.kind, file.name),
            &data,
        );
    }
    // Two files referring to each other through the package, and a bounded array.
    save(
        "msg_parser",
        "two_files",
        b"\x00fuzz_pkg/B b\nint32[4] x\nstring<=5 s\n\x00float64[<=3] y 0\nuint8 K=1\n",
    );
    for (name, text) in PARAMETER_FILES {
        save("yaml_params", name, text.as_bytes());
    }
    save(
        "guest_imports",
        "node_with_one_of_each",
        &harness::guest_imports_seed(),
    );
    for (name, seed) in harness::shm_channel_seeds() {
        save("shm_channel", name, &seed);
    }
    for (name, steps, large_every, loss_every) in PARTICIPANT_SESSIONS {
        save(
            "participant",
            name,
            &harness::participant_seed(*steps, *large_every, *loss_every),
        );
    }
}

/// Recorded sessions seeding the `participant` target: name, steps of 5 ms, a 4 KiB sample
/// every n steps (0: none), every n-th datagram lost (0: none).
const PARTICIPANT_SESSIONS: &[(&str, usize, usize, usize)] = &[
    ("clean", 120, 0, 0),
    ("fragments", 120, 20, 0),
    ("lossy", 160, 0, 5),
    ("lossy_fragments", 160, 25, 7),
];

/// The `participant` target is no stub: a recorded session replayed through it matches the
/// peer's writer and delivers its samples, with nothing counted malformed; the same session
/// with its datagrams broken delivers nothing and counts them.
#[test]
fn a_recorded_session_reaches_the_participants_data_path() {
    for (name, steps, large_every, loss_every) in PARTICIPANT_SESSIONS {
        let seed = harness::participant_seed(*steps, *large_every, *loss_every);
        let whole = harness::participant_session(&seed);
        assert_eq!(
            whole.writers_matched, 3,
            "{name}: both readers match the peer's writer, the keyed reader its keyed writer"
        );
        assert!(
            whole.keyed_samples_delivered > 5,
            "{name}: {} keyed samples",
            whole.keyed_samples_delivered
        );
        assert!(
            whole.samples_delivered > 20,
            "{name}: {} samples",
            whole.samples_delivered
        );
        assert_eq!(whole.malformed, 0, "{name}");
    }
    // The same session with each datagram's RTPS magic broken: nothing matches or arrives,
    // and every datagram is counted malformed.
    let seed = harness::participant_seed(120, 0, 0);
    let mut broken = Vec::new();
    let mut datagrams = 0;
    for record in harness::participant_records(&seed) {
        let mut datagram = record.datagram.to_vec();
        if let Some(first) = datagram.first_mut() {
            *first = b'X';
            datagrams += 1;
        }
        harness::push_participant_record(&mut broken, record.ctrl, &datagram);
    }
    let broken = harness::participant_session(&broken);
    assert_eq!(broken.samples_delivered, 0);
    assert_eq!(broken.writers_matched, 0);
    assert_eq!(broken.malformed, datagrams);
}

const PARAMETER_FILES: &[(&str, &str)] = &[
    (
        "block",
        "# a comment\n/ns/node:\n  ros__parameters:\n    rate: 5   # Hz\n    name: 'it''s'\n    \
         quoted: \"a\\tb\"\n    list: [1, 2,\n           3]\n    words:\n    - a\n    - 'b c'\n    \
         nested: {x: 1.5, y: [true, false]}\n    url: http://example.com\n",
    ),
    (
        "flow",
        "node: {ros__parameters: {a: 1, b: [1, 2], c: {d: x, e: [true, false]}}}\n",
    ),
    (
        "wildcards",
        "/**:\n  ros__parameters:\n    use_sim_time: true\n/ns/*:\n  ros__parameters:\n    \
         x: 0x1f\n    y: -3.5e-2\n    z: .inf\n",
    ),
    (
        "documents",
        "---\n/ns/node:\n  ros__parameters:\n    a: 1\n---\n/ns/node:\n  ros__parameters:\n    \
         a: 2\n    b: [yes, no, on, off]\n...\n",
    ),
    (
        "block_scalars",
        "/ns/node:\n  ros__parameters:\n    s: |-\n      5\n    t: >\n      folded\n      text\n    \
         u: &anchor 7\n    v: !!str 8\n",
    ),
    (
        "arrays",
        "/ns/node:\n  ros__parameters:\n    bools: [true, false]\n    ints: [1, -2, 3]\n    \
         doubles: [1.0, 2.5]\n    strings: [a, 'b', \"c\"]\n    bytes: []\n",
    ),
];

/// The `shm_channel` target is no stub: its seeds reach what they are named for. Readers that
/// follow the protocol take samples and are not cut off; one that moves its ring's head behind
/// its tail is cut off; releases of chunks never received are counted and ignored.
#[test]
fn the_shm_channel_seeds_reach_the_writer_s_checks() {
    let runs: std::collections::BTreeMap<_, _> = harness::shm_channel_seeds()
        .into_iter()
        .map(|(name, seed)| (name, roslite_shm::fuzzing::hostile_reader(&seed)))
        .collect();
    let run = runs["keep_last_reader"];
    assert!(run.sent == 20 && run.hostile_received >= 10, "{run:?}");
    assert_eq!(
        (run.readers_misbehaved, run.bogus_releases),
        (0, 0),
        "{run:?}"
    );
    // 30 sends against a ring of 4 taken from every third: the full ring times sends out.
    let run = runs["keep_all_reader_falls_behind"];
    assert!(
        run.sent > 4 && run.sent < 30 && run.hostile_received >= 5,
        "{run:?}"
    );
    assert_eq!(
        (run.readers_misbehaved, run.bogus_releases),
        (0, 0),
        "{run:?}"
    );
    let run = runs["head_moved_behind_tail"];
    assert_eq!(run.readers_misbehaved, 1, "{run:?}");
    assert_eq!(run.sent, 5, "the honest reader is still served: {run:?}");
    let run = runs["releases_of_chunks_never_received"];
    assert_eq!(run.readers_misbehaved, 0, "{run:?}");
    assert!(run.bogus_releases >= 2, "{run:?}");
}

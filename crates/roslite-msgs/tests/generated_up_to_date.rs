//! `src/generated/` must be exactly what the generator makes of `interfaces/` today, so a change
//! to a definition, to the generator, or to the checked-in output alone is caught (Cyclone DDS's
//! `check_generated_sources` idea).

use std::fs;
use std::path::Path;

use roslite_msg_gen::build::regenerate_builtin;

#[test]
fn generated_sources_match_the_definitions() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fresh_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("roslite-msgs-generated");
    let _ = fs::remove_dir_all(&fresh_dir);
    let fresh = regenerate_builtin(&crate_dir.join("interfaces"), &fresh_dir)
        .unwrap_or_else(|e| panic!("regenerating from interfaces/ failed: {e}"));

    let checked_in = crate_dir.join("src/generated");
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for path in &fresh {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = fs::read_to_string(path).unwrap();
        match fs::read_to_string(checked_in.join(&name)) {
            Ok(actual) if actual == expected => {}
            Ok(actual) => {
                let line = actual
                    .lines()
                    .zip(expected.lines())
                    .position(|(a, e)| a != e)
                    .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
                problems.push(format!("{name} differs from line {}", line + 1));
            }
            Err(_) => problems.push(format!("{name} is missing")),
        }
        names.push(name);
    }
    for entry in fs::read_dir(&checked_in).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&name) {
            problems.push(format!("{name} is not generated any more"));
        }
    }
    assert!(
        problems.is_empty(),
        "crates/roslite-msgs/src/generated/ is out of date; run `cargo xtask codegen`:\n  {}",
        problems.join("\n  ")
    );
}

//! Shared by the tests that compile C and C++ against the C ABI.

use std::path::PathBuf;

/// This crate's static library as `cargo test` built it: in `target/<profile>/deps/` beside
/// this test binary (a `cargo build` also copies it up to `target/<profile>/`).
pub fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        deps.join("libroslite_c.a"),
        deps.parent().unwrap().join("libroslite_c.a"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("libroslite_c.a is missing: looked at {candidates:?}"))
}

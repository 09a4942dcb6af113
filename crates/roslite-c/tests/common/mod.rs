//! Shared by the tests that compile C and C++ against the C ABI.

#![allow(dead_code)] // each test binary uses a different subset

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

/// What the static C ABI links against besides itself (rustc's `--print native-static-libs`).
pub const NATIVE_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// The generated C++ types of `packages` (and what they use), written under the test
/// directory's `dir`.
pub fn generated_cpp(packages: &[&str], dir: &str) -> PathBuf {
    use roslite_msg_gen::native::{self, Lang};
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
    set.check().unwrap();
    let requests: Vec<String> = packages.iter().map(|p| (*p).to_owned()).collect();
    let interfaces = native::select(&set, &requests, true).unwrap();
    let files = native::generate(&set, &interfaces, Lang::Cpp).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    native::write(&dir, &files).unwrap();
    dir
}

/// The generated `lang` types of `my_msgs`, a package roslite does not ship (`Reading` uses
/// `Unit` and `std_msgs/Header`), written under the test directory's `dir`.
pub fn generated_user_types(lang: roslite_msg_gen::native::Lang, dir: &str) -> PathBuf {
    use roslite_msg_gen::ast::InterfaceKind;
    use roslite_msg_gen::native;
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
    for (name, text) in [
        ("Unit", "string symbol\n"),
        (
            "Reading",
            "std_msgs/Header header\nfloat64 value\nUnit unit\n",
        ),
    ] {
        let file = format!("my_msgs/msg/{name}.msg");
        set.add_source("my_msgs", InterfaceKind::Msg, name, text, &file)
            .unwrap();
    }
    set.check().unwrap();
    let interfaces = native::select(&set, &["my_msgs".to_owned()], true).unwrap();
    let generated = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    native::write(
        &generated,
        &native::generate(&set, &interfaces, lang).unwrap(),
    )
    .unwrap();
    generated
}

/// `c++ -std=c++17` of `source` against the C++ APIs (rclcpp and mROS 2), the generated types
/// in `generated` and the static library, into `out`.
pub fn compile_cpp(source: &std::path::Path, generated: &std::path::Path, out: &std::path::Path) {
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let status = std::process::Command::new("c++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(out)
        .arg(source)
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(include.join("mros2-posix"))
        .arg("-I")
        .arg(generated)
        .arg(static_library())
        .args(NATIVE_LIBS)
        .status()
        .expect("c++ runs (the C++ compiler is installed by cargo xtask test)");
    assert!(status.success(), "compiling {} failed", source.display());
}

/// A context on loopback-only discovery in `domain_id`.
pub fn context(domain_id: u32) -> roslite::Context {
    use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};
    let discovery = DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..Default::default()
    };
    roslite::Context::new(roslite::ContextOptions {
        domain_id,
        network: roslite::NetworkMode::Rtps(TransportConfig::new(discovery)),
        ..Default::default()
    })
    .unwrap()
}

/// Waits for `child` up to `limit` (then kills it) and takes its output.
pub fn finish(child: std::process::Child, limit: std::time::Duration) -> std::process::Output {
    let pid = child.id();
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    });
    child.wait_with_output().unwrap()
}

/// A child's status and output, for an assertion's message.
pub fn text(output: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

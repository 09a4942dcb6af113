//! The example guests (examples/wasm) build to WebAssembly with guest_build, and what they
//! import and export is the guest ABI of docs/wasm.md: functions of `roslite_v1` listed in the
//! doc's import table (read from the doc here, so doc and guest library cannot drift apart),
//! WASI preview 1 otherwise, and the exports the host calls.
//!
//! The toolchain (clang, lld, wasi-libc, libc++-dev-wasm32, libclang-rt-dev-wasm32) is
//! installed by `cargo xtask test`; without it these tests fail and say what to install.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use roslite_wasm::guest_build::{self, Toolchain};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toolchain() -> Toolchain {
    Toolchain::find().unwrap_or_else(|e| panic!("{e}"))
}

/// The packages the example guests and roslite-c's C++ test nodes use.
const PACKAGES: &[&str] = &[
    "std_msgs",
    "geometry_msgs",
    "example_interfaces",
    "std_srvs",
];

/// Generated message types (and the CDR runtime headers) for `lang`, under the test
/// directory's `dir`.
fn generated(lang: roslite_msg_gen::native::Lang, dir: &str) -> PathBuf {
    use roslite_msg_gen::native;
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
    set.check().unwrap();
    let packages: Vec<String> = PACKAGES.iter().map(|p| (*p).to_owned()).collect();
    let interfaces = native::select(&set, &packages, true).unwrap();
    let files = native::generate(&set, &interfaces, lang).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    native::write(&dir, &files).unwrap();
    dir
}

fn out(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasm-guests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The import names of docs/wasm.md's `roslite_v1` table: the first column of the table that
/// follows the "### Imports" heading.
fn documented_imports() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(workspace().join("docs/wasm.md")).unwrap();
    let section = doc
        .split("\n### Imports (`roslite_v1`)")
        .nth(1)
        .expect("docs/wasm.md has the section \"### Imports (`roslite_v1`)\"");
    let section = section.split("\n#").next().unwrap();
    let names: BTreeSet<String> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned())
        .collect();
    assert!(
        names.len() > 40,
        "docs/wasm.md's import table read as {names:?}"
    );
    names
}

/// The imports the guest library declares: `ROSLITE_IMPORT(name)` in roslite_guest.c.
fn declared_imports() -> BTreeSet<String> {
    let source = std::fs::read_to_string(guest_build::guest_library_source()).unwrap();
    source
        .split("ROSLITE_IMPORT(")
        .skip(1)
        .filter_map(|rest| rest.split_once(')'))
        .map(|(name, _)| name.to_owned())
        .filter(|name| name != "name") // the macro's own definition
        .collect()
}

struct Module {
    imports: Vec<(String, String)>,
    exports: BTreeSet<String>,
}

fn read_module(path: &Path) -> Module {
    let bytes = std::fs::read(path).unwrap();
    wasmparser::Validator::new()
        .validate_all(&bytes)
        .unwrap_or_else(|e| panic!("{} is not a valid module: {e}", path.display()));
    let mut module = Module {
        imports: Vec::new(),
        exports: BTreeSet::new(),
    };
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.unwrap() {
            wasmparser::Payload::ImportSection(reader) => {
                for import in reader {
                    let import = import.unwrap();
                    assert!(
                        matches!(import.ty, wasmparser::TypeRef::Func(_)),
                        "{} imports {}.{} that is not a function",
                        path.display(),
                        import.module,
                        import.name
                    );
                    module
                        .imports
                        .push((import.module.to_owned(), import.name.to_owned()));
                }
            }
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    module.exports.insert(export.unwrap().name.to_owned());
                }
            }
            _ => {}
        }
    }
    module
}

/// What every guest must be: the doc's imports only, and the exports the host calls.
fn assert_guest_abi(path: &Path) -> Module {
    let module = read_module(path);
    let documented = documented_imports();
    for (module_name, name) in &module.imports {
        match module_name.as_str() {
            "roslite_v1" => assert!(
                documented.contains(name),
                "{} imports roslite_v1.{name}, which docs/wasm.md does not list",
                path.display()
            ),
            "wasi_snapshot_preview1" => {}
            other => panic!(
                "{} imports {other}.{name}: neither roslite_v1 nor WASI",
                path.display()
            ),
        }
    }
    for export in [
        "memory",
        "_start",
        "roslite_guest_dispatch",
        "roslite_guest_alloc",
        "roslite_guest_free",
    ] {
        assert!(
            module.exports.contains(export),
            "{} does not export {export}: it exports {:?}",
            path.display(),
            module.exports
        );
    }
    module
}

fn roslite_imports(module: &Module) -> BTreeSet<&str> {
    module
        .imports
        .iter()
        .filter(|(m, _)| m == "roslite_v1")
        .map(|(_, name)| name.as_str())
        .collect()
}

#[test]
fn the_guest_library_imports_exactly_the_documented_functions() {
    assert_eq!(declared_imports(), documented_imports());
}

#[test]
fn the_c_talker_builds_to_a_guest() {
    let generated = generated(roslite_msg_gen::native::Lang::C, "wasm-generated-c");
    let wasm = out("c_talker.wasm");
    toolchain()
        .compile_c(
            &[&workspace().join("examples/wasm/c/talker.c")],
            &[&generated],
            &wasm,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let module = assert_guest_abi(&wasm);
    let imports = roslite_imports(&module);
    for used in [
        "publisher_create",
        "timer_create",
        "publish",
        "executor_spin",
    ] {
        assert!(imports.contains(used), "the talker imports {imports:?}");
    }
}

#[test]
fn the_rclcpp_minimal_publisher_builds_to_a_guest() {
    let generated = generated(
        roslite_msg_gen::native::Lang::Cpp,
        "wasm-generated-cpp-rclcpp",
    );
    let wasm = out("cpp_minimal_publisher.wasm");
    toolchain()
        .compile_cpp(
            &[&workspace().join("examples/cpp/minimal_publisher/minimal_publisher.cpp")],
            &[&generated],
            &wasm,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let module = assert_guest_abi(&wasm);
    let imports = roslite_imports(&module);
    for used in [
        "context_init",
        "publisher_create",
        "timer_create",
        "executor_spin",
    ] {
        assert!(imports.contains(used), "the publisher imports {imports:?}");
    }
}

#[test]
fn the_mros2_echoreply_builds_to_a_guest() {
    let generated = generated(
        roslite_msg_gen::native::Lang::Cpp,
        "wasm-generated-cpp-mros2",
    );
    let wasm = out("mros2_echoreply.wasm");
    toolchain()
        .compile_cpp(
            &[&workspace().join("crates/roslite-c/tests/cpp/mros2_apps/echoreply.cpp")],
            &[&generated],
            &wasm,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let module = assert_guest_abi(&wasm);
    let imports = roslite_imports(&module);
    // osDelay and mros2::spin run the callbacks on the guest's one thread.
    for used in ["subscription_create", "executor_spin_for", "executor_spin"] {
        assert!(imports.contains(used), "echoreply imports {imports:?}");
    }
}

/// The C++ API's other users build to Wasm unchanged too: roslite-c's mROS 2-shaped
/// applications, and a guest of rclcpp's service, client, future, parameter and executor
/// calls (roslite-c's own rclcpp test nodes start threads themselves, so they stay native).
/// Built, not run: running needs the host.
#[test]
fn more_cpp_nodes_build_to_guests() {
    let generated = generated(
        roslite_msg_gen::native::Lang::Cpp,
        "wasm-generated-cpp-more",
    );
    let mros2_apps = workspace().join("crates/roslite-c/tests/cpp/mros2_apps");
    let mut sources =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guests/rclcpp_services.cpp")];
    for app in ["echoback", "echoreply", "pub_twist", "sub_pose"] {
        sources.push(mros2_apps.join(format!("{app}.cpp")));
    }
    let toolchain = toolchain();
    for source in sources {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let wasm = out(&format!("more_{name}.wasm"));
        toolchain
            .compile_cpp(&[&source], &[&generated], &wasm)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_guest_abi(&wasm);
    }
}

//! `cargo xtask install --prefix DIR`: what a C or C++ node needs to build against roslite,
//! laid out as a Unix install: the `roslite` tool, the C ABI's static and shared libraries, the
//! headers (C ABI, rclcpp-shaped C++ API, mROS 2 API, the built-in packages' generated C and
//! C++ message types), a pkg-config module and a CMake package. [`check`] builds the examples
//! against such an install, as a user would, and runs them together.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Libraries the static C ABI needs besides itself (rustc's `--print native-static-libs`).
const STATIC_DEPENDENCIES: &str = "-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc";

pub fn install(root: &Path, args: &[String]) -> Result<()> {
    let prefix = match args {
        [flag, dir] if flag == "--prefix" => PathBuf::from(dir),
        _ => bail!("usage: cargo xtask install --prefix DIR"),
    };
    let prefix = std::path::absolute(&prefix)?;
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["build", "--release", "-p", "roslite-c", "-p", "roslite-cli"])
        .status()?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let release = root.join("target/release");
    let (bin, lib, include) = (
        prefix.join("bin"),
        prefix.join("lib"),
        prefix.join("include"),
    );
    for dir in [
        &bin,
        &lib,
        &include,
        &lib.join("pkgconfig"),
        &lib.join("cmake/roslite"),
    ] {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    copy(&release.join("roslite"), &bin.join("roslite"))?;
    copy(&release.join("libroslite_c.a"), &lib.join("libroslite_c.a"))?;
    copy(
        &release.join("libroslite_c.so"),
        &lib.join("libroslite_c.so"),
    )?;
    copy_tree(&root.join("crates/roslite-c/include"), &include)?;
    // The built-in packages' C and C++ types (std_msgs, geometry_msgs, sensor_msgs, ...).
    for lang in ["cpp", "c"] {
        let status = Command::new(bin.join("roslite"))
            .args(["interface", "generate", "--lang", lang, "--out"])
            .arg(&include)
            .arg("--builtin")
            .status()?;
        if !status.success() {
            bail!("generating the built-in {lang} message types failed");
        }
    }
    fs::write(lib.join("pkgconfig/roslite.pc"), pkg_config(&prefix))?;
    fs::write(lib.join("cmake/roslite/rosliteConfig.cmake"), CMAKE_CONFIG)?;
    println!("installed roslite into {}", prefix.display());
    println!(
        "  C++:  c++ -std=c++17 node.cpp $(PKG_CONFIG_PATH={}/lib/pkgconfig pkg-config --cflags --libs roslite)",
        prefix.display()
    );
    println!(
        "  CMake: cmake -DCMAKE_PREFIX_PATH={} ..  (find_package(roslite), roslite::roslite)",
        prefix.display()
    );
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            copy(&entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The pkg-config module: the flags link the shared library, with the install's library
/// folder on the run path so the node runs without LD_LIBRARY_PATH; `--static` links the
/// static one.
fn pkg_config(prefix: &Path) -> String {
    format!(
        "prefix={}\n\
         includedir=${{prefix}}/include\n\
         libdir=${{prefix}}/lib\n\
         \n\
         Name: roslite\n\
         Description: roslite, a lightweight ROS 2 runtime: C ABI, rclcpp- and mROS 2-shaped C++ APIs\n\
         Version: {}\n\
         Cflags: -I${{includedir}} -I${{includedir}}/mros2-posix\n\
         Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lroslite_c\n\
         Libs.private: {STATIC_DEPENDENCIES}\n",
        prefix.display(),
        env!("CARGO_PKG_VERSION")
    )
}

/// The CMake package: `find_package(roslite)` gives the target `roslite::roslite` (the shared
/// library and the headers) and `roslite::roslite_static`, and `roslite_generate_interfaces`.
const CMAKE_CONFIG: &str = r#"# roslite CMake package (installed by `cargo xtask install`).
get_filename_component(_roslite_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET roslite::roslite)
  add_library(roslite::roslite SHARED IMPORTED)
  set_target_properties(roslite::roslite PROPERTIES
    IMPORTED_LOCATION "${_roslite_prefix}/lib/libroslite_c.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_roslite_prefix}/include;${_roslite_prefix}/include/mros2-posix")
  add_library(roslite::roslite_static STATIC IMPORTED)
  set_target_properties(roslite::roslite_static PROPERTIES
    IMPORTED_LOCATION "${_roslite_prefix}/lib/libroslite_c.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_roslite_prefix}/include;${_roslite_prefix}/include/mros2-posix"
    INTERFACE_LINK_LIBRARIES "gcc_s;util;rt;pthread;m;dl")
endif()

set(ROSLITE_EXECUTABLE "${_roslite_prefix}/bin/roslite")

# roslite_generate_interfaces(TARGET LANG cpp|c PACKAGES pkg... [PATHS dir_or_file...])
# generates the C or C++ types of the given packages (built in, on AMENT_PREFIX_PATH, or under
# PATHS) into the build tree and adds them to TARGET's include path.
function(roslite_generate_interfaces target)
  cmake_parse_arguments(ARG "" "LANG" "PACKAGES;PATHS" ${ARGN})
  if(NOT ARG_LANG)
    set(ARG_LANG cpp)
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/roslite_generated_${target}")
  execute_process(
    COMMAND "${ROSLITE_EXECUTABLE}" interface generate --lang ${ARG_LANG} --out "${out}"
            ${ARG_PACKAGES} ${ARG_PATHS}
    RESULT_VARIABLE result
    ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "roslite interface generate failed: ${error}")
  endif()
  target_include_directories(${target} PRIVATE "${out}")
endfunction()
"#;

/// Installs into `target/install-check`, builds `examples/cpp/minimal_publisher` with CMake and
/// `examples/c/listener.c` with `cc` and pkg-config against it, and runs the two together
/// (loopback only): the listener must hear the publisher.
pub fn check(root: &Path) -> Result<()> {
    let prefix = root.join("target/install-check");
    let _ = fs::remove_dir_all(&prefix);
    install(root, &["--prefix".to_owned(), prefix.display().to_string()])?;
    let build = root.join("target/install-check-build");
    let _ = fs::remove_dir_all(&build);
    fs::create_dir_all(&build)?;
    run(Command::new("cmake")
        .arg("-S")
        .arg(root.join("examples/cpp/minimal_publisher"))
        .arg("-B")
        .arg(build.join("cpp"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())))?;
    run(Command::new("cmake").arg("--build").arg(build.join("cpp")))?;
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "roslite"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()?;
    if !flags.status.success() {
        bail!("pkg-config --cflags --libs roslite failed");
    }
    let flags = String::from_utf8(flags.stdout)?;
    let listener = build.join("listener");
    run(Command::new("cc")
        .arg(root.join("examples/c/listener.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&listener))?;
    // A domain of its own, loopback-only discovery.
    let domain = (140 + std::process::id() % 60).to_string();
    let node = |program: &Path, arg: &str| {
        let mut command = Command::new(program);
        command
            .arg(arg)
            .env("ROS_DOMAIN_ID", &domain)
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env_remove("ROS_STATIC_PEERS")
            .stdout(std::process::Stdio::piped());
        command
    };
    let mut listening = node(&listener, "3").spawn()?;
    let mut publishing = node(&build.join("cpp/minimal_publisher"), "30").spawn()?;
    let started = std::time::Instant::now();
    while listening.try_wait()?.is_none() && started.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = listening.kill();
    let heard = listening.wait_with_output()?;
    let _ = publishing.kill();
    let _ = publishing.wait();
    let text = String::from_utf8_lossy(&heard.stdout);
    if !heard.status.success() || text.matches("I heard: 'Hello, world! ").count() != 3 {
        bail!("the C listener built with pkg-config did not hear the C++ publisher built with CMake:\n{text}");
    }
    println!("install check: a CMake-built C++ publisher and a pkg-config-built C listener talked");
    check_test_nodes(root, &prefix, &build, &flags)
}

/// Builds the C and C++ test nodes (`crates/roslite-c/tests/{c,cpp}`) with CMake and with
/// pkg-config against the install, and runs a mode of each that needs no network: the C
/// node's error paths and the C++ node's parameters, logging and on-set callback.
fn check_test_nodes(root: &Path, prefix: &Path, build: &Path, flags: &str) -> Result<()> {
    let tests = root.join("crates/roslite-c/tests");
    run(Command::new("cmake")
        .arg("-S")
        .arg(tests.join("cmake"))
        .arg("-B")
        .arg(build.join("test-nodes"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())))?;
    run(Command::new("cmake")
        .arg("--build")
        .arg(build.join("test-nodes")))?;
    let c_pc = build.join("c_node_pkg_config");
    run(Command::new("cc")
        .arg("-std=c11")
        .arg(tests.join("c/node.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&c_pc))?;
    let cpp_pc = build.join("cpp_nodes_pkg_config");
    run(Command::new("c++")
        .arg("-std=c++17")
        .arg(tests.join("cpp/nodes.cpp"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&cpp_pc))?;
    let header = fs::read_to_string(prefix.join("include/std_msgs/msg/string.h"))?;
    let hash = header
        .lines()
        .find_map(|l| l.strip_prefix("#define std_msgs__msg__String__TYPE_HASH "))
        .map(|h| h.trim_matches('"').to_owned())
        .context("the installed std_msgs/msg/string.h names no type hash")?;
    for c_node in [build.join("test-nodes/c_node"), c_pc] {
        expect_output(&c_node, &["errors", &hash], "all error paths held")?;
    }
    for cpp_nodes in [build.join("test-nodes/cpp_nodes"), cpp_pc] {
        expect_output(
            &cpp_nodes,
            &["parameters"],
            "refused 1 (parameter 'rate' not set",
        )?;
    }
    println!("install check: the C and C++ test nodes built with CMake and with pkg-config run");
    Ok(())
}

/// Runs `program args` without a network and checks its output holds `expected`.
fn expect_output(program: &Path, args: &[&str], expected: &str) -> Result<()> {
    let output = Command::new(program)
        .args(args)
        .env("ROSLITE_NETWORK", "off")
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !text.contains(expected) {
        bail!(
            "{} {} did not print '{expected}':\n{text}{}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("running {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed");
    }
    Ok(())
}

//! Builds the C++ line follower (`cpp/follower.cpp`, [`crate::cpp_build::FOLLOWER`]) as a
//! WebAssembly node, and the lean host that runs it, for `roslite bench linetrace`'s Wasm
//! rows, `roslite demo --wasm` and the tests:
//!
//! - the module: the same source and the same generated C++ message types as the native
//!   build, compiled by `roslite_wasm::guest_build` (clang `--target=wasm32-wasi -O2` with the
//!   guest library; docs/wasm.md, "Building guests") into `linetrace-follower.wasm`, which
//!   wasmi interprets;
//! - its `.cwasm`: that module compiled ahead of time for this machine
//!   (`roslite_wasm::engine::wasmtime_engine::precompile`, what `roslite wasm compile` does),
//!   which wasmtime runs;
//! - the hosts: `roslite-wasm-host` built lean by [`crate::small_build`] (the size profile,
//!   static, without wasmtime's compiler), so that its memory is that of a node program, not
//!   of the CLI: for wasmtime [`HOST_WASMTIME`], runtime only, the program docs/wasm.md calls
//!   the lean host (the one for a robot); for wasmi [`HOST_WASMI`], the same with the
//!   interpreter, which adds about 0.9 MB of code the wasmtime row should not pay for.
//!
//! Module, `.cwasm` and copies of the two hosts (cargo builds both to one path) go under
//! `<target>/wasm-nodes/linetrace-follower/` of the target directory this binary lives in;
//! what is newer than its inputs is not built again.

use std::path::Path;
use std::time::SystemTime;

use crate::cpp_build;
use crate::launch::WasmFollower;
use crate::small_build::{self, Program};

/// The lean Wasm host for wasmtime: its runtime only (`.cwasm` files), no compiler.
pub const HOST_WASMTIME: Program<'static> = Program::BinFeatures {
    package: "roslite-wasm",
    name: "roslite-wasm-host",
    features: "",
};

/// The lean Wasm host for wasmi: wasmtime's runtime and wasmi, no compiler.
pub const HOST_WASMI: Program<'static> = Program::BinFeatures {
    package: "roslite-wasm",
    name: "roslite-wasm-host",
    features: "wasmi",
};

/// The module's name (and the guest's, as the host names it: the file stem).
pub const NAME: &str = "linetrace-follower";

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Whether `output` exists and is newer than every one of `inputs` (all of which exist).
fn up_to_date(output: &Path, inputs: &[Option<SystemTime>]) -> bool {
    modified(output).is_some_and(|built| inputs.iter().all(|t| t.is_some_and(|t| t <= built)))
}

/// Builds (or finds up to date) the follower's `.wasm` and `.cwasm` and the lean host, and
/// returns their paths.
///
/// # Errors
/// Why not: no source tree, the wasm32 toolchain missing (the message names the Debian
/// packages), or a compiler's or cargo's failure.
pub fn build() -> Result<WasmFollower, String> {
    // One build at a time in this process (the partial files are named by the process).
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = small_build::workspace_root()
        .ok_or("the roslite source tree this binary was built from is not there any more")?;
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let target_dir = small_build::target_dir_of(&exe).unwrap_or_else(|| root.join("target"));
    let dir = target_dir.join("wasm-nodes").join(NAME);
    let generated = dir.join("include");
    cpp_build::generate_types(cpp_build::FOLLOWER.packages, &generated)?;
    let source = root.join(cpp_build::FOLLOWER.source);
    let wasm = dir.join(format!("{NAME}.wasm"));
    let inputs = [
        modified(&source),
        cpp_build::newest_under(&root.join("crates/roslite-c/include")),
        cpp_build::newest_under(&generated),
        modified(&roslite_wasm::guest_build::guest_library_source()),
        // How guests are built (prepared for parking, for one) is part of this program.
        modified(&exe),
    ];
    // Built under names of their own and renamed: a concurrent build never runs a half file.
    let partial = |path: &Path| path.with_extension(format!("{}.partial", std::process::id()));
    if !up_to_date(&wasm, &inputs) {
        let part = partial(&wasm);
        roslite_wasm::guest_build::compile_cpp_guest(&[&source], &[&generated], &part)
            .map_err(|e| e.to_string())?;
        std::fs::rename(&part, &wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    }
    // The .cwasm holds code for this wasmtime: made again when this program is newer.
    let cwasm = dir.join(format!("{NAME}.cwasm"));
    if !up_to_date(&cwasm, &[modified(&wasm), modified(&exe)]) {
        let bytes = std::fs::read(&wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
        let code = roslite_wasm::engine::wasmtime_engine::precompile(&bytes, None)
            .map_err(|e| format!("compiling {} ahead of time: {e}", wasm.display()))?;
        let part = partial(&cwasm);
        std::fs::write(&part, code).map_err(|e| format!("{}: {e}", part.display()))?;
        std::fs::rename(&part, &cwasm).map_err(|e| format!("{}: {e}", cwasm.display()))?;
    }
    // Both hosts come out of cargo as the same file: each is copied away before the next.
    let mut hosts = Vec::new();
    for (program, engine) in [(HOST_WASMTIME, "wasmtime"), (HOST_WASMI, "wasmi")] {
        let built = small_build::build(program)?;
        let copy = dir.join(format!("roslite-wasm-host-{engine}"));
        if !up_to_date(&copy, &[modified(&built)]) {
            let part = partial(&copy);
            std::fs::copy(&built, &part).map_err(|e| format!("{}: {e}", part.display()))?;
            std::fs::rename(&part, &copy).map_err(|e| format!("{}: {e}", copy.display()))?;
        }
        hosts.push(copy);
    }
    let wasmi_host = hosts.pop().expect("two hosts");
    let wasmtime_host = hosts.pop().expect("two hosts");
    Ok(WasmFollower {
        wasmtime_host,
        wasmi_host,
        wasm,
        cwasm,
    })
}

/// What [`build`] runs, for messages.
pub fn describe() -> String {
    format!(
        "clang --target=wasm32-wasi -O2 {} with roslite's guest library, precompiled for \
         wasmtime; hosts `{}` and the same with `{}`",
        cpp_build::FOLLOWER.source,
        HOST_WASMTIME.cargo_command(),
        "--features wasmi"
    )
}

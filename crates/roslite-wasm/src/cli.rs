//! `roslite run` and `roslite wasm compile`: the arguments and what they do, shared by the
//! `roslite` tool and the lean `roslite-wasm-host` program.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::{EngineKind, Limits};
use crate::host::{GuestSpec, Host, HostOptions};

/// Run ROS 2 nodes compiled to WebAssembly (`.wasm`, or `.cwasm` from `roslite wasm compile`)
/// in one process sharing one participant.
///
/// Each node runs sandboxed on its own thread: it sees no files, sockets or environment
/// unless granted, a callback that runs past its deadline stops that node (the others keep
/// running), and its memory is capped.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The nodes: NODE.wasm or NODE.cwasm files.
    #[arg(required = true, value_name = "NODE")]
    pub nodes: Vec<PathBuf>,
    /// The engine: wasmtime (machine code; a .wasm is compiled at load) or wasmi (an
    /// interpreter; runs .wasm only).
    #[arg(long, default_value = "wasmtime")]
    pub engine: EngineKind,
    /// How long a callback may run on wasmtime before its node is stopped, in milliseconds
    /// (checked every 10 ms).
    #[arg(long, default_value_t = Limits::DEFAULT_DEADLINE.as_millis() as u64, value_name = "MS")]
    pub deadline_ms: u64,
    /// The same bound on wasmi, in fuel (about one unit per WebAssembly instruction).
    #[arg(long, default_value_t = Limits::DEFAULT_FUEL)]
    pub fuel: u64,
    /// The most linear memory a node may grow to, in MiB.
    #[arg(long, default_value_t = (Limits::DEFAULT_MAX_MEMORY_BYTES >> 20) as u64, value_name = "MIB")]
    pub max_memory_mib: u64,
    /// Let the nodes read this environment variable (repeatable; none by default).
    #[arg(long = "allow-env", value_name = "VAR")]
    pub allow_env: Vec<String>,
    /// Let the nodes use this directory, as HOST_DIR or HOST_DIR:GUEST_PATH, read-only unless
    /// suffixed with :rw (repeatable; none by default).
    #[arg(long = "allow-dir", value_name = "DIR")]
    pub allow_dir: Vec<String>,
    /// Stop the nodes when a line `stop`, or the end, arrives on standard input (for
    /// launchers that stop their processes that way), besides SIGINT and SIGTERM.
    #[arg(long)]
    pub stop_on_stdin: bool,
    /// ROS arguments for every node, as rcl reads them (remapping, -p, --params-file,
    /// --log-level).
    #[arg(long = "ros-args", num_args = 0.., allow_hyphen_values = true, value_name = "ARGS")]
    pub ros_args: Vec<String>,
    /// Arguments for the nodes' own command lines (after `--`): each node's `main` gets its
    /// file name, these, then `--ros-args ...`.
    #[arg(last = true, value_name = "NODE_ARGS")]
    pub node_args: Vec<String>,
}

impl RunArgs {
    pub fn options(&self) -> Result<HostOptions, String> {
        let dirs = self
            .allow_dir
            .iter()
            .map(|spec| crate::host::parse_allowed_dir(spec))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(HostOptions {
            engine: self.engine,
            limits: Limits {
                deadline: Duration::from_millis(self.deadline_ms.max(1)),
                fuel: self.fuel,
                max_memory_bytes: usize::try_from(self.max_memory_mib << 20).unwrap_or(usize::MAX),
            },
            ros_args: self.ros_args.clone(),
            allowed_env: self.allow_env.clone(),
            allowed_dirs: dirs,
            node_args: self.node_args.clone(),
            context: None,
        })
    }
}

/// Runs the nodes until they end (or SIGINT/SIGTERM); an error if any node faulted.
pub fn run(args: &RunArgs) -> Result<(), String> {
    let options = args.options()?;
    let specs: Vec<GuestSpec> = args
        .nodes
        .iter()
        .map(|p| GuestSpec { path: p.clone() })
        .collect();
    roslite_c::signals::roslite_install_signal_handlers();
    let host = std::sync::Arc::new(Host::start(&specs, &options).map_err(|e| e.to_string())?);
    if args.stop_on_stdin {
        let stopping = host.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                if line.trim() == "stop" {
                    break;
                }
                line.clear();
            }
            stopping.shutdown();
        });
    }
    let ends = host.wait();
    let failed: Vec<String> = ends
        .iter()
        .filter_map(|end| {
            end.outcome
                .as_ref()
                .err()
                .map(|fault| format!("node {} {fault}", end.name))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// Compile a WebAssembly node ahead of time for wasmtime, for this machine or another.
///
/// The .cwasm holds machine code for one CPU architecture and this roslite's wasmtime; the
/// .wasm stays the portable file (recompile it after upgrading roslite).
#[derive(clap::Args, Debug, Clone)]
pub struct CompileArgs {
    /// The node: NODE.wasm.
    pub wasm: PathBuf,
    /// The target, as a Rust target triple (aarch64-unknown-linux-gnu, x86_64-unknown-linux-gnu,
    /// riscv64gc-unknown-linux-gnu, ...); this machine's by default.
    #[arg(long)]
    pub target: Option<String>,
    /// Where to write the .cwasm.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

#[cfg(feature = "compiler")]
pub fn compile(args: &CompileArgs) -> Result<(), String> {
    let wasm = std::fs::read(&args.wasm).map_err(|e| format!("{}: {e}", args.wasm.display()))?;
    crate::module::check(&wasm).map_err(|e| format!("{}: {e}", args.wasm.display()))?;
    let code = crate::engine::wasmtime_engine::precompile(&wasm, args.target.as_deref())
        .map_err(|e| format!("{}: {e}", args.wasm.display()))?;
    std::fs::write(&args.output, code).map_err(|e| format!("{}: {e}", args.output.display()))
}

/// Build a C or C++ node into a WebAssembly node (a WASI command linked with roslite's guest
/// library), with the generated types of the message packages it uses, prepared for parking.
///
/// C sources (.c) are compiled as C11 against `roslite/roslite.h`; C++ sources (.cpp, .cc,
/// .cxx) as C++17 against the rclcpp and mROS 2 APIs. Needs the Debian packages clang, lld,
/// wasi-libc, libc++-dev-wasm32, libclang-rt-dev-wasm32 and binaryen (docs/wasm.md,
/// "Building guests"). Given one .wasm built elsewhere (a Rust node built by cargo), it only
/// prepares that module for parking (Binaryen's wasm-opt, docs/wasm.md, "Parking"): its
/// callbacks then run on the thread that receives their messages, and it can be migrated.
#[derive(clap::Args, Debug, Clone)]
pub struct BuildArgs {
    /// The node's sources, all C or all C++; or one .wasm to prepare for parking.
    #[arg(required = true)]
    pub sources: Vec<PathBuf>,
    /// Message packages whose C or C++ types the node includes (what they use comes too),
    /// comma-separated: built in, or under $AMENT_PREFIX_PATH.
    #[arg(long, value_delimiter = ',', default_value = "std_msgs")]
    pub msgs: Vec<String>,
    /// More include directories.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Where to write the .wasm.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

/// Builds a C or C++ guest (see [`BuildArgs`]).
pub fn build(args: &BuildArgs) -> Result<(), String> {
    use roslite_msg_gen::native::{self, Lang};
    if let [module] = args.sources.as_slice() {
        if module.extension().is_some_and(|e| e == "wasm") {
            return crate::guest_build::prepare_for_parking(module, &args.output)
                .map_err(|e| e.to_string());
        }
    }
    let cpp = args.sources.iter().any(|s| {
        matches!(
            s.extension().and_then(|e| e.to_str()),
            Some("cpp" | "cc" | "cxx" | "C")
        )
    });
    let lang = if cpp { Lang::Cpp } else { Lang::C };
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).map_err(|e| e.to_string())?;
    if let Ok(prefixes) = std::env::var("AMENT_PREFIX_PATH") {
        set.add_ament_prefix_path(&prefixes);
    }
    set.remove_unusable();
    let interfaces = native::select(&set, &args.msgs, true).map_err(|e| e.to_string())?;
    let files = native::generate(&set, &interfaces, lang).map_err(|e| e.to_string())?;
    let generated = std::env::temp_dir().join(format!("roslite-wasm-build-{}", std::process::id()));
    native::write(&generated, &files).map_err(|e| format!("{}: {e}", generated.display()))?;
    let sources: Vec<&std::path::Path> = args.sources.iter().map(PathBuf::as_path).collect();
    let mut include: Vec<&std::path::Path> = vec![generated.as_path()];
    include.extend(args.include.iter().map(PathBuf::as_path));
    let built = if cpp {
        crate::guest_build::compile_cpp_guest(&sources, &include, &args.output)
    } else {
        crate::guest_build::compile_c_guest(&sources, &include, &args.output)
    };
    std::fs::remove_dir_all(&generated).ok();
    built.map_err(|e| e.to_string())
}

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
    /// The nodes: NODE.wasm or NODE.cwasm files (at least one for `roslite run`).
    #[arg(value_name = "NODE")]
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
    if args.nodes.is_empty() {
        return Err(
            "give at least one NODE to run: a .wasm, or a .cwasm from `roslite wasm compile`"
                .into(),
        );
    }
    let options = args.options()?;
    let specs: Vec<GuestSpec> = args
        .nodes
        .iter()
        .map(|p| GuestSpec { path: p.clone() })
        .collect();
    roslite_c::signals::roslite_install_signal_handlers();
    let host = std::sync::Arc::new(Host::start(&specs, &options).map_err(|e| e.to_string())?);
    if args.stop_on_stdin {
        stop_on_stdin(host.clone());
    }
    faults(&host.wait())
}

/// Shuts `host` down when a line `stop`, or the end, arrives on standard input.
fn stop_on_stdin(host: std::sync::Arc<Host>) {
    std::thread::spawn(move || {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.trim() == "stop" {
                break;
            }
            line.clear();
        }
        host.shutdown();
    });
}

/// An error naming every node that faulted.
fn faults(ends: &[crate::host::GuestEnd]) -> Result<(), String> {
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

/// Run a roslite host: WebAssembly nodes that can move to and from other hosts while they run
/// (`roslite migrate`), reachable over ROS 2 itself as the node /roslite_host/NAME.
///
/// The host runs the NODEs given (none is fine: it waits for nodes moved to it) until SIGINT
/// or SIGTERM. It accepts nodes only from the hosts of --accept-from, and runs its own copy of
/// a node's module, NODE.cwasm (wasmtime) or NODE.wasm from its module directories
/// (docs/migration.md).
#[derive(clap::Args, Debug, Clone)]
pub struct HostArgs {
    /// This host's name: its ROS node is /roslite_host/NAME (this machine's host name by
    /// default, made a valid ROS name).
    #[arg(long)]
    pub name: Option<String>,
    /// Hosts whose nodes this host accepts (comma-separated or repeated); none by default.
    #[arg(long = "accept-from", value_delimiter = ',', value_name = "HOST")]
    pub accept_from: Vec<String>,
    /// Where the modules of nodes moved here are found (repeatable): by default the
    /// directories of the NODEs given, or the current directory.
    #[arg(long = "module-dir", value_name = "DIR")]
    pub module_dir: Vec<PathBuf>,
    /// Exit when a node's snapshot arrives (a test of a target host that dies halfway).
    #[arg(long, hide = true)]
    pub exit_on_snapshot: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

impl HostArgs {
    /// The host's name.
    pub fn name(&self) -> String {
        self.name.clone().unwrap_or_else(machine_name)
    }

    /// Where modules of incoming nodes are looked for.
    pub fn module_dirs(&self) -> Vec<PathBuf> {
        if !self.module_dir.is_empty() {
            return self.module_dir.clone();
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for node in &self.run.nodes {
            let dir = node.parent().map(PathBuf::from).unwrap_or_default();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        if dirs.is_empty() {
            dirs.push(PathBuf::new());
        }
        dirs
    }
}

/// This machine's host name as a ROS node name (letters, digits and underscores, not starting
/// with a digit).
fn machine_name() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let raw = raw.trim();
    let mut name: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "host_");
    }
    name
}

/// Runs a host until SIGINT, SIGTERM (or `stop` on standard input with --stop-on-stdin); an
/// error if any node faulted.
pub fn host(args: &HostArgs) -> Result<(), String> {
    let options = args.run.options()?;
    let specs: Vec<GuestSpec> = args
        .run
        .nodes
        .iter()
        .map(|p| GuestSpec { path: p.clone() })
        .collect();
    roslite_c::signals::roslite_install_signal_handlers();
    let host = std::sync::Arc::new(Host::start(&specs, &options).map_err(|e| e.to_string())?);
    let name = args.name();
    let hosting = crate::hosting::serve(
        host.clone(),
        crate::hosting::HostingOptions {
            name: name.clone(),
            accept_from: args.accept_from.clone(),
            module_dirs: args.module_dirs(),
            exit_on_snapshot: args.exit_on_snapshot,
        },
    )?;
    if args.run.stop_on_stdin {
        stop_on_stdin(host.clone());
    }
    eprintln!(
        "[INFO] [roslite.host]: host {name} runs {} node(s) as {}/{name}; it accepts nodes from {}",
        specs.len(),
        crate::hosting::HOST_NAMESPACE,
        if args.accept_from.is_empty() {
            "no host".to_owned()
        } else {
            args.accept_from.join(", ")
        }
    );
    let executor = roslite::Executor::new(&host.context());
    executor.add_node(&hosting.node);
    executor.spin();
    drop(hosting);
    host.shutdown();
    faults(&host.wait())
}

/// Move a running WebAssembly node to another roslite host, with its state, losing no
/// message (docs/migration.md).
///
/// Finds the host running NODE (or asks --from), which pauses the node between two callbacks
/// and hands it to the host --to; if that host refuses it or does not answer, the node goes on
/// where it was and this command says why.
#[derive(clap::Args, Debug, Clone)]
pub struct MigrateArgs {
    /// The node: its module's name (talker for talker.wasm) or a ROS node it made.
    pub node: String,
    /// The host to move it to (its --name).
    #[arg(long)]
    pub to: String,
    /// The host it runs on; found by asking every host on the graph otherwise.
    #[arg(long)]
    pub from: Option<String>,
    /// How long to wait for the hosts to appear on the ROS graph, in seconds.
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    pub discovery_timeout: f64,
    /// ROS arguments for this command's own node (domain, remapping, ...).
    #[arg(long = "ros-args", num_args = 0.., allow_hyphen_values = true, value_name = "ARGS")]
    pub ros_args: Vec<String>,
}

/// What a move did, as `roslite migrate` reports it.
#[derive(Clone, Debug)]
pub struct Moved {
    pub from: String,
    pub response: roslite::msgs::roslite_interfaces::srv::MigrateNode_Response,
}

/// Moves a node (see [`MigrateArgs`]); prints what happened.
pub fn migrate(args: &MigrateArgs) -> Result<(), String> {
    let moved = migrate_node(args)?;
    let r = &moved.response;
    println!(
            "moved node {} from host {} to host {}: paused {:.1} ms (snapshot {:.1} KiB taken in {:.1} ms, restored in {:.1} ms)",
            r.guest,
            moved.from,
            args.to,
            r.paused_us as f64 / 1e3,
            r.snapshot_bytes as f64 / 1024.0,
            r.capture_us as f64 / 1e3,
            r.restore_us as f64 / 1e3
        );
    if r.messages_lost > 0 {
        println!(
            "{} message(s) sent to it before host {} knew its copy had not reached host {} within {:?}: lost in the move",
            r.messages_lost,
            args.to,
            moved.from,
            crate::inflight::DRAIN_TIMEOUT
        );
    }
    Ok(())
}

/// Moves a node (see [`MigrateArgs`]) and returns what the source host answered.
///
/// # Errors
/// No host runs the node, a host is not on the graph, or the move failed (the node then goes
/// on where it was; the message says why).
pub fn migrate_node(args: &MigrateArgs) -> Result<Moved, String> {
    let mut argv = vec!["roslite-migrate".to_owned()];
    if !args.ros_args.is_empty() {
        argv.push("--ros-args".into());
        argv.extend(args.ros_args.iter().cloned());
    }
    let context = roslite::Context::from_env_and_args(argv).map_err(|e| e.to_string())?;
    migrate_node_in(&context, args)
}

/// [`migrate_node`] from a node of `context` (its `ros_args` unused).
///
/// # Errors
/// As [`migrate_node`].
pub fn migrate_node_in(context: &roslite::Context, args: &MigrateArgs) -> Result<Moved, String> {
    use crate::hosting::HOST_NAMESPACE;
    use roslite::msgs::roslite_interfaces::srv::{
        ListNodes, ListNodes_Request, MigrateNode, MigrateNode_Request,
    };
    let node = context
        .create_node(&format!("roslite_migrate_{}", std::process::id()))
        .map_err(|e| e.to_string())?;
    let wait = Duration::from_secs_f64(args.discovery_timeout.max(0.0));
    let deadline = std::time::Instant::now() + wait;
    let from = match &args.from {
        Some(from) => from.clone(),
        None => {
            // Every host on the graph is asked which nodes it runs, until one runs NODE.
            let mut asked = std::collections::BTreeSet::new();
            loop {
                let hosts: Vec<String> = node
                    .node_names()
                    .into_iter()
                    .filter_map(|n| {
                        n.strip_prefix(HOST_NAMESPACE)
                            .and_then(|r| r.strip_prefix('/'))
                            .map(str::to_owned)
                    })
                    .filter(|h| *h != args.to && !asked.contains(h))
                    .collect();
                let mut found = None;
                for host in hosts {
                    let client = node
                        .create_client::<ListNodes>(&format!("{HOST_NAMESPACE}/{host}/list_nodes"))
                        .map_err(|e| e.to_string())?;
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    if !client.wait_for_service(left.max(Duration::from_millis(500))) {
                        continue;
                    }
                    asked.insert(host.clone());
                    let Ok(list) =
                        client.call(ListNodes_Request::default(), Duration::from_secs(5))
                    else {
                        continue;
                    };
                    let runs = list
                        .nodes
                        .iter()
                        .any(|n| crate::host::answers_to(&args.node, &n.guest, &n.ros_nodes));
                    if runs {
                        found = Some(host);
                        break;
                    }
                }
                if let Some(host) = found {
                    break host;
                }
                if std::time::Instant::now() >= deadline {
                    return Err(format!(
                        "no roslite host on the ROS graph runs a node {} (asked {} within {wait:?}: {}); give the host it runs on with --from",
                        args.node,
                        asked.len(),
                        asked.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    let client = node
        .create_client::<MigrateNode>(&format!("{HOST_NAMESPACE}/{from}/migrate_node"))
        .map_err(|e| format!("host name {from:?}: {e}"))?;
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    if !client.wait_for_service(left.max(Duration::from_millis(500))) {
        return Err(format!(
            "no host {from} answers on the ROS graph ({HOST_NAMESPACE}/{from}/migrate_node did not appear within {wait:?})"
        ));
    }
    // The source waits up to CALL_TIMEOUT for each of the target's two steps.
    let timeout = crate::hosting::CALL_TIMEOUT * 3;
    let response = client
        .call(
            MigrateNode_Request {
                node: args.node.clone(),
                to: args.to.clone(),
            },
            timeout,
        )
        .map_err(|e| format!("host {from} did not answer: {e}"))?;
    if !response.success {
        return Err(format!(
            "node {} was not moved: {}",
            args.node, response.message
        ));
    }
    Ok(Moved { from, response })
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

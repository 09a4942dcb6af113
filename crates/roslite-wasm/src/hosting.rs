//! `roslite host`: a [`Host`] reachable over ROS 2 itself, so that nodes move between hosts
//! wherever the ROS graph reaches (docs/migration.md, "Moving a node with `roslite migrate`").
//!
//! Each host is a ROS node `/roslite_host/<NAME>` with four services of
//! `roslite_interfaces`:
//! - `list_nodes`: the WebAssembly nodes it runs;
//! - `migrate_node`: moves one of them to another host (what `roslite migrate` calls). This
//!   host is then the *source*: it asks the target to prepare, holds the node between
//!   callbacks, waits for the messages on their way to it that the target's copy lacks
//!   (crate::inflight) and takes its snapshot, sends it, and ends its copy once the target
//!   runs it, or lets it go on here if the target refused or did not answer;
//! - `prepare_migration` and `complete_migration`: the *target*'s side of a move, accepted
//!   only from the hosts of its `--accept-from` list.
//!
//! The target runs its own copy of the node's module, found by the module's name in its
//! module directories; the snapshot's module hash makes sure it is the same module.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use roslite::msgs::roslite_interfaces::msg::HostedNode;
use roslite::msgs::roslite_interfaces::srv::{
    CompleteMigration, CompleteMigration_Request, CompleteMigration_Response, ListNodes,
    ListNodes_Response, MigrateNode, MigrateNode_Request, MigrateNode_Response, PrepareMigration,
    PrepareMigration_Request, PrepareMigration_Response,
};
use roslite::{Client, Node, Service, ServiceReply};

use crate::engine::EngineKind;
use crate::host::{GuestSpec, Host, Prepared};

/// The namespace of every host's node: `/roslite_host/<NAME>`.
pub const HOST_NAMESPACE: &str = "/roslite_host";

/// How long a source waits for the target to prepare, and to restore.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a target waits for a prepared node's endpoints to match their peers.
pub const MATCH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a prepared move waits for its snapshot before it is called off (the source went
/// away between the two steps).
pub const PREPARED_LIFETIME: Duration = Duration::from_secs(60);

/// What a host needs besides its [`Host`].
#[derive(Clone, Debug)]
pub struct HostingOptions {
    /// The host's name, its node's name under [`HOST_NAMESPACE`].
    pub name: String,
    /// Hosts whose nodes this host accepts; none: it accepts no node.
    pub accept_from: Vec<String>,
    /// Where the modules of nodes moving here are looked for.
    pub module_dirs: Vec<PathBuf>,
    /// For tests of a target that dies halfway: the process exits when a snapshot arrives.
    pub exit_on_snapshot: bool,
}

/// A host's ROS node and services; dropping it removes them.
pub struct Hosting {
    pub node: Node,
    _services: Services,
}

struct Services {
    _list: Service<ListNodes>,
    _migrate: Service<MigrateNode>,
    _prepare: Service<PrepareMigration>,
    _complete: Service<CompleteMigration>,
}

/// What the services share.
struct Shared {
    host: Arc<Host>,
    options: HostingOptions,
    node: Node,
    engine: EngineKind,
    /// Moves prepared here, waiting for their snapshot, by number.
    prepared: Mutex<HashMap<u64, Incoming>>,
    next_migration: AtomicU64,
    /// Clients of other hosts' services, by host name: of hosts that answered once.
    targets: Mutex<HashMap<String, Arc<TargetClients>>>,
}

struct Incoming {
    from: String,
    guest: String,
    prepared: Prepared,
    since: Instant,
}

struct TargetClients {
    prepare: Client<PrepareMigration>,
    complete: Client<CompleteMigration>,
}

/// Makes `host` reachable as host `options.name`: its node and services, served by the
/// executors spinning the returned node.
///
/// # Errors
/// The host's name is not a valid ROS node name, or a service cannot be made.
pub fn serve(host: Arc<Host>, options: HostingOptions) -> Result<Hosting, String> {
    let context = host.context();
    let node = context
        .create_node_with_namespace(&options.name, HOST_NAMESPACE)
        .map_err(|e| format!("host name {:?}: {e}", options.name))?;
    let shared = Arc::new(Shared {
        engine: host.engine(),
        host,
        options,
        node: node.clone(),
        prepared: Mutex::new(HashMap::new()),
        next_migration: AtomicU64::new(1),
        targets: Mutex::new(HashMap::new()),
    });
    let error = |e: roslite::NodeError| e.to_string();
    let list = {
        let shared = shared.clone();
        node.create_service::<ListNodes, _>("~/list_nodes", move |_| ListNodes_Response {
            nodes: shared.list(),
        })
        .map_err(error)?
    };
    let migrate = serve_on_worker(&node, &shared, "~/migrate_node", Shared::migrate)?;
    let prepare = serve_on_worker(&node, &shared, "~/prepare_migration", Shared::prepare)?;
    let complete = serve_on_worker(&node, &shared, "~/complete_migration", Shared::complete)?;
    Ok(Hosting {
        node,
        _services: Services {
            _list: list,
            _migrate: migrate,
            _prepare: prepare,
            _complete: complete,
        },
    })
}

/// Service `name` of the host's node, each request answered by `answer` on a thread of its
/// own: a move waits on other hosts' services, and the executor answering this host's
/// services (the target's, when a move goes between two hosts of one process) must stay free
/// meanwhile.
fn serve_on_worker<S: roslite::ServiceType>(
    node: &Node,
    shared: &Arc<Shared>,
    name: &str,
    answer: fn(&Shared, S::Request) -> S::Response,
) -> Result<Service<S>, String> {
    let shared = shared.clone();
    node.create_deferred_service::<S, _>(name, move |request, reply: ServiceReply<S>| {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("roslite-host-work".into())
            .spawn(move || reply.send(answer(&shared, request)))
            .expect("spawn a host worker thread");
    })
    .map_err(|e| e.to_string())
}

impl Shared {
    fn list(&self) -> Vec<HostedNode> {
        self.host
            .nodes()
            .into_iter()
            .map(|n| HostedNode {
                guest: n.guest,
                ros_nodes: n.ros_nodes,
                engine: self.engine.name().to_owned(),
                last_callback_ns: n.last_callback_ns,
                first_callback_after_restore_ns: n.first_callback_after_restore_ns,
                guest_clock_behind_ns: n.guest_clock_behind_ns,
            })
            .collect()
    }

    /// The source's side of a move.
    fn migrate(&self, request: MigrateNode_Request) -> MigrateNode_Response {
        let node = request.node.clone();
        let answer = self.try_migrate(request);
        if !answer.success {
            // The node goes on here: its journal may forget released objects again.
            if let Some(guest) = self.host.find_guest(&node) {
                self.host.move_failed(&guest);
            }
        }
        answer
    }

    fn try_migrate(&self, request: MigrateNode_Request) -> MigrateNode_Response {
        let refuse = |message: String| MigrateNode_Response {
            success: false,
            message,
            ..Default::default()
        };
        let Some(guest) = self.host.find_guest(&request.node) else {
            return refuse(format!(
                "no node {} runs on host {}",
                request.node, self.options.name
            ));
        };
        if request.to == self.options.name {
            return refuse(format!("node {guest} runs on host {} already", request.to));
        }
        let target = match self.target(&request.to) {
            Ok(target) => target,
            Err(e) => return refuse(e),
        };
        let (journal, matched_peers) = match self.host.journal_and_peers(&guest) {
            Ok(read) => read,
            Err(e) => return refuse(e.to_string()),
        };
        let prepared = target.prepare.call(
            PrepareMigration_Request {
                from: self.options.name.clone(),
                guest: guest.clone(),
                journal: journal.into(),
                matched_peers: matched_peers.into(),
            },
            CALL_TIMEOUT,
        );
        let (migration, first_held) = match prepared {
            Ok(r) if r.success => (r.migration, r.first_held),
            Ok(r) => {
                return refuse(format!(
                    "host {} refused node {guest}: {}",
                    request.to, r.message
                ))
            }
            Err(e) => {
                return refuse(format!(
                    "host {} did not prepare node {guest}: {e}",
                    request.to
                ))
            }
        };
        let call_off = || {
            let _ = target.complete.call(
                CompleteMigration_Request {
                    from: self.options.name.clone(),
                    migration,
                    cancel: true,
                    ..Default::default()
                },
                CALL_TIMEOUT,
            );
        };
        let first_held = match crate::inflight::decode_first_held(&first_held) {
            Ok(table) => table,
            Err(e) => {
                call_off();
                return refuse(format!(
                    "host {} answered with a malformed table of the messages it holds ({e}): run the same roslite version on both hosts",
                    request.to
                ));
            }
        };
        let paused = Instant::now();
        let (snapshot, missed) = match self.freeze_covering(&guest, &first_held) {
            Ok(taken) => taken,
            Err(e) => {
                call_off();
                return refuse(format!("node {guest} goes on here: {e}"));
            }
        };
        let messages_lost = crate::inflight::missed_count(&missed);
        if messages_lost > 0 {
            eprintln!(
                "[WARN] [roslite host {}]: node {guest} moves to host {} without {messages_lost} message(s) sent to it before that host's copy was known: they had not reached this host after {:?} ({})",
                self.options.name,
                request.to,
                crate::inflight::DRAIN_TIMEOUT,
                describe_missed(&missed)
            );
        }
        let capture_us = paused.elapsed().as_micros() as u64;
        let snapshot_bytes = snapshot.len() as u64;
        let completed = target.complete.call(
            CompleteMigration_Request {
                from: self.options.name.clone(),
                migration,
                snapshot: snapshot.into(),
                cancel: false,
            },
            CALL_TIMEOUT,
        );
        let failure = match completed {
            Ok(r) if r.success => {
                let paused_us = paused.elapsed().as_micros() as u64;
                let last_callback_ns = self.host.last_callback_ns(&guest);
                let _ = self.host.end_migrated(&guest);
                return MigrateNode_Response {
                    success: true,
                    message: String::new(),
                    guest,
                    snapshot_bytes,
                    capture_us,
                    restore_us: r.restore_us,
                    paused_us,
                    last_callback_ns,
                    messages_lost,
                };
            }
            Ok(r) => format!("host {} refused its snapshot: {}", request.to, r.message),
            Err(e) => format!("host {} did not restore it: {e}", request.to),
        };
        let _ = self.host.thaw(&guest);
        MigrateNode_Response {
            success: false,
            message: format!("node {guest} goes on here: {failure}"),
            guest,
            snapshot_bytes,
            capture_us,
            ..Default::default()
        }
    }

    /// Holds guest `name` between callbacks, waits (at most [`crate::inflight::DRAIN_TIMEOUT`])
    /// for the messages on their way here that the target's copy does not hold (`first_held`,
    /// from its answer to prepare), and takes the snapshot; with it, what was still missing.
    /// If anything fails, the guest goes on here.
    fn freeze_covering(
        &self,
        guest: &str,
        first_held: &[crate::inflight::FirstHeld],
    ) -> Result<(Vec<u8>, Vec<crate::inflight::Missed>), crate::host::MigrateError> {
        self.host.freeze(guest)?;
        let missed =
            match self
                .host
                .await_covered(guest, first_held, crate::inflight::DRAIN_TIMEOUT)
            {
                Ok(missed) => missed,
                Err(e) => {
                    let _ = self.host.thaw(guest);
                    return Err(e);
                }
            };
        Ok((self.host.snapshot_frozen(guest)?, missed))
    }

    /// The clients of host `name`'s services, once it is on the graph.
    fn target(&self, name: &str) -> Result<Arc<TargetClients>, String> {
        let made = self
            .targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned();
        let clients = match made {
            Some(clients) => clients,
            None => {
                let prefix = format!("{HOST_NAMESPACE}/{name}");
                let prepare = self
                    .node
                    .create_client::<PrepareMigration>(&format!("{prefix}/prepare_migration"))
                    .map_err(|e| format!("host name {name:?}: {e}"))?;
                let complete = self
                    .node
                    .create_client::<CompleteMigration>(&format!("{prefix}/complete_migration"))
                    .map_err(|e| format!("host name {name:?}: {e}"))?;
                Arc::new(TargetClients { prepare, complete })
            }
        };
        if !clients.prepare.wait_for_service(CALL_TIMEOUT)
            || !clients.complete.wait_for_service(CALL_TIMEOUT)
        {
            // Not kept: a caller naming hosts that do not exist would leave a pair of
            // clients behind for each name.
            return Err(format!(
                "no host {name} answers on the ROS graph (its {HOST_NAMESPACE}/{name}/prepare_migration did not appear within {CALL_TIMEOUT:?}); `roslite host --name {name}` starts one"
            ));
        }
        self.targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_insert_with(|| clients.clone());
        Ok(clients)
    }

    fn accepts(&self, from: &str) -> Result<(), String> {
        if self.options.accept_from.iter().any(|a| a == from) {
            return Ok(());
        }
        let listed = if self.options.accept_from.is_empty() {
            "none".to_owned()
        } else {
            self.options.accept_from.join(", ")
        };
        Err(format!(
            "host {} accepts nodes only from the hosts of its --accept-from list ({listed}); start it with --accept-from {from} to accept host {from}",
            self.options.name
        ))
    }

    /// The target's side of a move, first step.
    fn prepare(&self, request: PrepareMigration_Request) -> PrepareMigration_Response {
        let refuse = |message: String| PrepareMigration_Response {
            success: false,
            message,
            ..Default::default()
        };
        if let Err(e) = self.accepts(&request.from) {
            return refuse(e);
        }
        self.call_off_stale();
        if self.host.find_guest(&request.guest).is_some() {
            return refuse(format!(
                "a node {} runs on host {} already",
                request.guest, self.options.name
            ));
        }
        let path = match find_module(&self.options.module_dirs, &request.guest, self.engine) {
            Ok(path) => path,
            Err(e) => return refuse(e),
        };
        match self
            .host
            .prepare_restore(&GuestSpec { path }, &request.journal)
        {
            Ok(prepared) => {
                if let Err(e) = prepared.await_matched(&request.matched_peers, MATCH_TIMEOUT) {
                    self.host.call_off(prepared);
                    return refuse(e);
                }
                // What the copy holds once it heard from each publisher (or they stayed
                // silent): the source brings every earlier message.
                prepared.await_heard(crate::inflight::HEAR_TIMEOUT);
                let first_held = prepared.first_held();
                let migration = self.next_migration.fetch_add(1, Ordering::Relaxed);
                self.prepared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(
                        migration,
                        Incoming {
                            from: request.from,
                            guest: request.guest,
                            prepared,
                            since: Instant::now(),
                        },
                    );
                PrepareMigration_Response {
                    success: true,
                    message: String::new(),
                    migration,
                    first_held: crate::inflight::encode_first_held(&first_held).into(),
                }
            }
            Err(e) => refuse(e.to_string()),
        }
    }

    /// The target's side of a move, second step.
    fn complete(&self, request: CompleteMigration_Request) -> CompleteMigration_Response {
        let refuse = |message: String| CompleteMigration_Response {
            success: false,
            message,
            restore_us: 0,
        };
        if let Err(e) = self.accepts(&request.from) {
            return refuse(e);
        }
        let incoming = {
            let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
            match prepared.get(&request.migration) {
                Some(i) if i.from == request.from => prepared.remove(&request.migration),
                _ => None,
            }
        };
        let Some(incoming) = incoming else {
            return refuse(format!(
                "host {} has no move {} prepared for host {} (called off after {PREPARED_LIFETIME:?} without a snapshot?)",
                self.options.name, request.migration, request.from
            ));
        };
        if request.cancel {
            self.host.call_off(incoming.prepared);
            return CompleteMigration_Response {
                success: true,
                message: format!("the move of node {} was called off", incoming.guest),
                restore_us: 0,
            };
        }
        if self.options.exit_on_snapshot {
            eprintln!(
                "[roslite host] exiting as told (--exit-on-snapshot) with the snapshot of node {}",
                incoming.guest
            );
            std::process::exit(3);
        }
        let started = Instant::now();
        match self
            .host
            .complete_restore(incoming.prepared, &request.snapshot)
        {
            Ok(()) => CompleteMigration_Response {
                success: true,
                message: String::new(),
                restore_us: started.elapsed().as_micros() as u64,
            },
            Err(e) => refuse(e.to_string()),
        }
    }

    /// Calls off the moves prepared long ago whose snapshot never came.
    fn call_off_stale(&self) {
        let stale: Vec<Incoming> = {
            let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
            let old: Vec<u64> = prepared
                .iter()
                .filter(|(_, i)| i.since.elapsed() >= PREPARED_LIFETIME)
                .map(|(&k, _)| k)
                .collect();
            old.iter().filter_map(|k| prepared.remove(k)).collect()
        };
        for incoming in stale {
            self.host.call_off(incoming.prepared);
        }
    }
}

/// The module of node `guest` in `dirs`: `guest.cwasm` for wasmtime if there is one (machine
/// code for this host), else `guest.wasm`.
///
/// # Errors
/// Neither is in any of the directories (the message lists where it looked).
pub fn find_module(dirs: &[PathBuf], guest: &str, engine: EngineKind) -> Result<PathBuf, String> {
    if guest.is_empty() || guest.contains(['/', '\\']) || guest.starts_with('.') {
        return Err(format!("{guest:?} is not a module name"));
    }
    let extensions: &[&str] = match engine {
        EngineKind::Wasmtime => &["cwasm", "wasm"],
        EngineKind::Wasmi => &["wasm"],
    };
    for extension in extensions {
        for dir in dirs {
            let path = dir.join(format!("{guest}.{extension}"));
            if path.is_file() {
                return Ok(path);
            }
        }
    }
    let looked: Vec<String> = dirs.iter().map(|d| display(d)).collect();
    Err(format!(
        "no module {guest}.wasm{} in {}: copy the node's module there, or start the host with --module-dir DIR",
        if engine == EngineKind::Wasmtime {
            format!(" or {guest}.cwasm")
        } else {
            String::new()
        },
        looked.join(", ")
    ))
}

fn display(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        dir.display().to_string()
    }
}

/// "numbers 4 to 6 of publisher 01.0f.…; ..." for a log line.
fn describe_missed(missed: &[crate::inflight::Missed]) -> String {
    missed
        .iter()
        .map(|m| {
            let gid: Vec<String> = m.publisher_gid.iter().map(|b| format!("{b:02x}")).collect();
            let numbers = if m.from == m.to {
                format!("number {}", m.from)
            } else {
                format!("numbers {} to {}", m.from, m.to)
            };
            format!(
                "{numbers} of publisher {} on subscription slot {}",
                gid.concat(),
                m.slot
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

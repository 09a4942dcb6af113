//! Runs guests: one context (one participant) for the process, one thread and one instance per
//! guest. A guest that faults is stopped and its entities released; the others keep running.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::engine::{self, EngineKind, Limits, Loaded};
use crate::fault::Fault;
use crate::guest::{GuestShared, GuestState};
use crate::migrate::Beginning;
use crate::wasi::{WasiConfig, WasiState};

/// One node to run.
#[derive(Clone, Debug)]
pub struct GuestSpec {
    pub path: PathBuf,
}

/// How to run the guests.
#[derive(Clone, Default)]
pub struct HostOptions {
    /// The context the guests share; None makes one from `ros_args` and the environment, as
    /// a C node's `roslite_context_init` would.
    pub context: Option<roslite::Context>,
    pub engine: EngineKind,
    pub limits: Limits,
    /// The process's ROS arguments (`--ros-args ...`), the shared context's command line.
    pub ros_args: Vec<String>,
    /// Environment variables the guests may read (`--allow-env`).
    pub allowed_env: Vec<String>,
    /// Directories the guests may use (`--allow-dir`).
    pub allowed_dirs: Vec<crate::wasi::AllowedDir>,
    /// Arguments each guest's `main` gets after its name.
    pub node_args: Vec<String>,
}

/// `HOST_DIR`, `HOST_DIR:GUEST_PATH`, either with `:rw` at the end for write access.
pub fn parse_allowed_dir(spec: &str) -> Result<crate::wasi::AllowedDir, String> {
    let (rest, writable) = match spec.strip_suffix(":rw") {
        Some(rest) => (rest, true),
        None => (spec.strip_suffix(":ro").unwrap_or(spec), false),
    };
    let (host, guest) = match rest.split_once(':') {
        Some((host, guest)) => (host, guest.to_owned()),
        None => (rest, rest.to_owned()),
    };
    let host = std::path::PathBuf::from(host);
    if !host.is_dir() {
        return Err(format!(
            "--allow-dir {spec}: {} is not a directory",
            host.display()
        ));
    }
    Ok(crate::wasi::AllowedDir {
        host,
        guest,
        writable,
    })
}

/// How one guest ended.
#[derive(Debug)]
pub struct GuestEnd {
    pub name: String,
    pub outcome: Result<(), Fault>,
}

/// How a guest has run so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestStatistics {
    pub name: String,
    /// Waits of its `main` that parked it (crate::park): 0 for a guest not prepared for
    /// parking.
    pub parks: u64,
    /// Callbacks that ran on the thread that brought their work (a receive or publishing
    /// thread) instead of the guest's own.
    pub callbacks_elsewhere: u64,
}

/// A guest as [`Host::nodes`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostedNode {
    /// Its module's file stem, its name in this host.
    pub guest: String,
    /// The ROS nodes it made, fully qualified.
    pub ros_nodes: Vec<String>,
    /// When it last finished a callback, and when it began its first callback after it was
    /// restored here: CLOCK_MONOTONIC ns, 0 for none.
    pub last_callback_ns: u64,
    pub first_callback_after_restore_ns: u64,
    /// How far its monotonic clock is behind the host's, in ns (0 unless restored here).
    pub guest_clock_behind_ns: i64,
}

/// Whether `name` names the guest `guest` that made the ROS nodes `ros_nodes` (fully
/// qualified): its module's name, one of those nodes, or one's name without its namespace.
pub fn answers_to(name: &str, guest: &str, ros_nodes: &[String]) -> bool {
    guest == name
        || ros_nodes
            .iter()
            .any(|r| r == name || r.rsplit('/').next() == Some(name))
}

/// Why the host could not start.
#[derive(Debug)]
pub enum HostError {
    Load {
        path: PathBuf,
        error: engine::LoadError,
    },
    Context(String),
    /// A grant (`--allow-env`, `--allow-dir`) that cannot be made.
    Sandbox(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Load { path, error } => write!(f, "{}: {error}", path.display()),
            Self::Context(e) => write!(f, "cannot start the ROS context: {e}"),
            Self::Sandbox(e) => write!(f, "cannot set up the sandbox: {e}"),
        }
    }
}

impl std::error::Error for HostError {}

/// The shared context, made from the host's ROS arguments; its native handle.
fn context(ros_args: &[String]) -> Result<u64, HostError> {
    let mut argv: Vec<CString> = vec![CString::new("roslite-wasm").expect("no NUL")];
    // rcl reads only what follows `--ros-args`: without it remappings and `-p` would be
    // taken for the program's own arguments and ignored.
    let marker = (!ros_args.is_empty()).then(|| "--ros-args".to_owned());
    for a in marker.iter().chain(ros_args) {
        argv.push(
            CString::new(a.as_str())
                .map_err(|_| HostError::Context(format!("argument {a:?} holds a NUL")))?,
        );
    }
    let pointers: Vec<*const std::ffi::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    let mut handle = 0;
    // SAFETY: argv holds `len` strings, valid for the call.
    let status = unsafe {
        roslite_c::context::roslite_context_init(
            pointers.len() as i32,
            pointers.as_ptr(),
            &mut handle,
        )
    };
    if status != roslite_c::ROSLITE_OK {
        return Err(HostError::Context(roslite_c::status::last_error_message()));
    }
    Ok(handle)
}

/// The fewest samples a same-host link's ring holds for a guest's keep-last subscription:
/// 160 ms of the line follower's sensors at the demo's speed (400 Hz), 640 ms at the real
/// robot's 100 Hz, in a channel of one page.
pub const MOVING_RING_DEPTH: u32 = 64;

/// A running host: its guests' threads, and the context to shut down.
pub struct Host {
    context: u64,
    options: HostOptions,
    guests: Mutex<Vec<RunningGuest>>,
    /// Modules loaded for guests moved here, by file, with the time the file was written.
    modules: Mutex<std::collections::HashMap<PathBuf, (std::time::SystemTime, Arc<Loaded>)>>,
}

/// A guest and its thread (taken when joined).
struct RunningGuest {
    shared: Arc<GuestShared>,
    thread: Mutex<Option<JoinHandle<GuestEnd>>>,
}

/// Why a guest could not be migrated out of or into this host.
#[derive(Debug)]
pub enum MigrateError {
    /// No guest of that name runs here.
    NoSuchNode(String),
    /// The guest did not stop between callbacks in time.
    Busy(String),
    Migration(crate::migrate::MigrationError),
    Host(HostError),
    /// The guest ended before it was restored.
    NotRestored(String),
    /// A snapshot was asked of a guest not frozen first ([`Host::freeze`]).
    NotFrozen(String),
}

impl std::fmt::Display for MigrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoSuchNode(name) => write!(f, "no node {name} runs on this host"),
            Self::Busy(name) => write!(
                f,
                "node {name} did not come to a wait between callbacks within {FREEZE_TIMEOUT:?}: its main must wait in a spin or a sleep, and the guest be prepared for parking (`roslite wasm build`)"
            ),
            Self::Migration(e) => write!(f, "{e}"),
            Self::Host(e) => write!(f, "{e}"),
            Self::NotRestored(why) => write!(f, "the node could not be restored: {why}"),
            Self::NotFrozen(name) => write!(
                f,
                "node {name} is not frozen: freeze it before taking its snapshot"
            ),
        }
    }
}

impl std::error::Error for MigrateError {}

/// A guest made ready on this host for a move ([`Host::prepare_restore`]).
pub struct Prepared {
    shared: Arc<GuestShared>,
    snapshot: std::sync::mpsc::SyncSender<crate::migrate::Restoring>,
}

impl Prepared {
    /// Waits up to `timeout` until each of the prepared guest's publishers and subscriptions,
    /// then each of its service servers, has at least as many peers as `peers` says (in the
    /// order the guest made them; from [`Host::matched_peers`] on the host it moves from)
    /// that know it already: publishers that send to its subscriptions, subscriptions that
    /// take its publishers' messages, clients that send its servers their requests and take
    /// their answers ([`GuestShared::acknowledged_peers`]). Matching them here is not enough:
    /// a peer that this host discovered may not have discovered the copy yet, and what it
    /// publishes (or a request it sends) in that moment reaches only the node on the host it
    /// moves from, which then ends.
    ///
    /// # Errors
    /// The endpoints that fell short when the time ran out.
    pub fn await_matched(&self, peers: &[u32], timeout: std::time::Duration) -> Result<(), String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let now = self.shared.acknowledged_peers();
            let topic_endpoints = self.shared.topic_endpoint_count();
            let short: Vec<String> = peers
                .iter()
                .enumerate()
                .filter(|&(i, &want)| now.get(i).copied().unwrap_or(0) < want)
                .map(|(i, want)| {
                    let have = now.get(i).copied().unwrap_or(0);
                    if i < topic_endpoints {
                        format!("endpoint {} is known to {have} of {want} peers", i + 1)
                    } else {
                        format!(
                            "service {} is known to {have} of {want} clients",
                            i - topic_endpoints + 1
                        )
                    }
                })
                .collect();
            if short.is_empty() {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "the node's endpoints here were not known to their peers within {timeout:?} ({})",
                    short.join(", ")
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Waits up to `timeout` until each reliable subscription of the prepared copy holds a
    /// message from each publisher that knows it ([`GuestShared::unheard_publishers`]), so that
    /// [`Self::first_held`] names them all; true if they all were heard. A publisher silent
    /// that long cannot have a message on its way to the host the guest moves from that the
    /// source would miss: a reliable writer repeats its heartbeat while a reader lacks a
    /// message (roslite and Cyclone every 100 ms), and the source is repaired meanwhile, while
    /// the guest still runs there. (A Fast DDS writer heartbeats every few seconds: a silent
    /// one is not covered, docs/migration.md.)
    pub fn await_heard(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.shared.unheard_publishers() == 0 {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Per subscription and publisher, the first message the prepared copy holds
    /// (crate::inflight): it will have every later one, so the host the guest moves from must
    /// bring every earlier one it did not give the guest ([`Host::await_covered`]).
    /// Only reliable subscriptions are named: a best-effort one may miss a message for good.
    pub fn first_held(&self) -> Vec<crate::inflight::FirstHeld> {
        let reliable: Vec<i32> = self
            .shared
            .reliable_subscriptions()
            .into_iter()
            .map(|(_, slot)| slot)
            .collect();
        let mut held = crate::inflight::first_held(
            &self
                .shared
                .mailbox
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        held.retain(|h| reliable.contains(&h.slot));
        held
    }
}

/// How long a migration waits for a guest to park between callbacks.
pub const FREEZE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

impl Host {
    /// Loads every guest (all or none start), then starts each on its own thread.
    pub fn start(specs: &[GuestSpec], options: &HostOptions) -> Result<Self, HostError> {
        // A guest's callbacks run on the thread that brings their work, same-host link
        // threads among them, which need the stack an engine needs (`GuestShared::
        // with_resident` leaves the work to the guest's thread on one that lacks it).
        roslite::backends::same_host::require_link_thread_stack(crate::guest::GUEST_STACK * 2);
        // A node moving to or from this host keeps every message its subscriptions receive
        // (`GuestShared::keep_every_message`); a link's ring as shallow as a depth-1
        // subscription would still overwrite one whenever the link's thread is late by a
        // publishing period, and neither copy of the node would get it.
        roslite::backends::same_host::require_keep_last_ring_depth(MOVING_RING_DEPTH);
        let mut loaded = Vec::new();
        for spec in specs {
            let module =
                engine::load(options.engine, &spec.path).map_err(|error| HostError::Load {
                    path: spec.path.clone(),
                    error,
                })?;
            loaded.push((spec.clone(), Arc::new(module)));
        }
        let context = match &options.context {
            Some(given) => {
                roslite_c::handles::insert(roslite_c::handles::Object::Context(given.clone()))
            }
            None => context(&options.ros_args)?,
        };
        let host = Self {
            context,
            options: options.clone(),
            guests: Mutex::new(Vec::new()),
            modules: Mutex::new(std::collections::HashMap::new()),
        };
        for (spec, module) in loaded {
            host.spawn(&spec, module, Beginning::Main)?;
        }
        Ok(host)
    }

    /// Starts `spec`'s module on a thread of its own: from its `main`, or resumed from a
    /// snapshot (`restoring`).
    fn spawn(
        &self,
        spec: &GuestSpec,
        module: Arc<Loaded>,
        beginning: Beginning,
    ) -> Result<Arc<GuestShared>, HostError> {
        let options = &self.options;
        let context = self.context;
        let name = guest_name(spec);
        let running =
            roslite_c::handles::context(context).map_err(|e| HostError::Context(e.message))?;
        let shared = GuestShared::new(name.clone(), running);
        let mut args = vec![name.clone()];
        args.extend(options.node_args.iter().cloned());
        if !options.ros_args.is_empty() {
            args.push("--ros-args".into());
            args.extend(options.ros_args.iter().cloned());
        }
        let env = options
            .allowed_env
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
            .collect::<Vec<_>>();
        let stopping = shared.clone();
        let mut config = wasi_config(args, env, options.allowed_dirs.clone());
        // A stopped node that goes to sleep again (an mROS 2 loop of osDelay) ends there.
        config.ends_sleeping = Some(Box::new(move || stopping.ends_waiting()));
        let wasi = WasiState::new(config).map_err(|e| HostError::Sandbox(e.to_string()))?;
        let state = GuestState::new(shared.clone(), context, wasi);
        let limits = options.limits;
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("wasm-{name}"))
            .spawn(move || run_guest(&module, state, limits, &thread_shared, beginning))
            .expect("spawn a guest thread");
        self.guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(RunningGuest {
                shared: shared.clone(),
                thread: Mutex::new(Some(thread)),
            });
        Ok(shared)
    }

    fn guest(&self, name: &str) -> Result<Arc<GuestShared>, MigrateError> {
        self.guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .rev()
            .find(|g| g.shared.name == name && !g.shared.is_stopping())
            .map(|g| g.shared.clone())
            .ok_or_else(|| MigrateError::NoSuchNode(name.to_owned()))
    }

    /// Holds guest `name` between callbacks for a migration, and takes its snapshot
    /// (docs/migration.md). The guest stays frozen: [`Self::end_migrated`] ends it here once
    /// it runs elsewhere, [`Self::thaw`] lets it go on here if the migration failed. What
    /// arrives for it meanwhile waits in its mailbox.
    pub fn freeze_and_snapshot(&self, name: &str) -> Result<Vec<u8>, MigrateError> {
        self.freeze(name)?;
        self.snapshot_frozen(name)
    }

    /// The first half of [`Self::freeze_and_snapshot`]: holds guest `name` between callbacks
    /// (waiting at most [`FREEZE_TIMEOUT`] for its `main` to park) without taking the
    /// snapshot yet. What arrives for it meanwhile waits in its mailbox, and the snapshot
    /// carries the service requests among that.
    pub fn freeze(&self, name: &str) -> Result<(), MigrateError> {
        let shared = self.guest(name)?;
        let resident = shared
            .resident()
            .ok_or_else(|| MigrateError::Busy(name.to_owned()))?;
        shared.freeze();
        let deadline = std::time::Instant::now() + FREEZE_TIMEOUT;
        loop {
            if let Ok(mut slot) = resident.try_lock() {
                let parked =
                    crate::guest::enter_resident(&mut *slot, |g| g.state().parked.is_some());
                if parked {
                    return Ok(());
                }
            }
            if std::time::Instant::now() >= deadline {
                shared.thaw();
                return Err(MigrateError::Busy(name.to_owned()));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The snapshot of guest `name`, frozen by [`Self::freeze`]. If it cannot be taken the
    /// guest goes on here.
    pub fn snapshot_frozen(&self, name: &str) -> Result<Vec<u8>, MigrateError> {
        let shared = self.guest(name)?;
        let resident = shared
            .resident()
            .ok_or_else(|| MigrateError::Busy(name.to_owned()))?;
        if !shared.is_frozen() {
            return Err(MigrateError::NotFrozen(name.to_owned()));
        }
        let mut slot = resident.lock().unwrap_or_else(PoisonError::into_inner);
        crate::migrate::capture(&mut *slot).map_err(|e| {
            drop(slot);
            shared.thaw();
            MigrateError::Migration(e)
        })
    }

    /// Waits, at most `timeout`, until guest `name` (frozen by [`Self::freeze`]) has been given
    /// or holds in its mailbox every message below those the copy prepared for it on the host
    /// it moves to holds (`first_held`, from [`Prepared::first_held`]): a message its publisher
    /// sent before it knew that copy, and which reaches this host late (repaired after a lost
    /// datagram), then moves with the snapshot instead of being lost. Returns what is still
    /// missing when the time ran out (nothing if all came): lost in the move, for the caller
    /// to report. A move with no message on its way does not wait.
    pub fn await_covered(
        &self,
        name: &str,
        first_held: &[crate::inflight::FirstHeld],
        timeout: std::time::Duration,
    ) -> Result<Vec<crate::inflight::Missed>, MigrateError> {
        let shared = self.guest(name)?;
        if !shared.is_frozen() {
            return Err(MigrateError::NotFrozen(name.to_owned()));
        }
        let resident = shared
            .resident()
            .ok_or_else(|| MigrateError::Busy(name.to_owned()))?;
        // What the frozen guest was given does not change; what waits for it grows.
        let delivered = {
            let mut slot = resident.lock().unwrap_or_else(PoisonError::into_inner);
            crate::guest::enter_resident(&mut *slot, |g| g.state().delivered.clone())
        };
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let missed = crate::inflight::uncovered(
                &delivered,
                &shared
                    .mailbox
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
                first_held,
            );
            if missed.is_empty() || std::time::Instant::now() >= deadline {
                return Ok(missed);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// How many callbacks (messages, requests, timer ticks, ...) wait in guest `name`'s
    /// mailbox: those that came while it was busy or frozen.
    pub fn waiting_callbacks(&self, name: &str) -> Result<usize, MigrateError> {
        Ok(self
            .guest(name)?
            .mailbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len())
    }

    /// Lets a frozen guest go on here (its migration failed).
    pub fn thaw(&self, name: &str) -> Result<(), MigrateError> {
        self.guest(name)?.thaw();
        Ok(())
    }

    /// A move of guest `name` that did not happen (refused or failed before its guest was
    /// frozen, or after it was thawed): its journal may forget released objects again.
    pub fn move_failed(&self, name: &str) {
        if let Ok(guest) = self.guest(name) {
            guest
                .journal_append_only
                .store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Ends a frozen guest here: it runs on another host now. Its endpoints are removed.
    pub fn end_migrated(&self, name: &str) -> Result<(), MigrateError> {
        self.guest(name)?.end_migrated();
        Ok(())
    }

    /// Resumes a guest from `snapshot` (taken on any host, by either engine) with `spec`'s
    /// module, which must be the module the snapshot was taken of.
    pub fn start_restored(&self, spec: &GuestSpec, snapshot: &[u8]) -> Result<(), MigrateError> {
        let module = self.load(spec)?;
        let mut restoring = self.decode(snapshot)?;
        let (report, restored) = std::sync::mpsc::sync_channel(1);
        restoring.report = Some(report);
        let shared = self
            .spawn(spec, module, Beginning::Restore(Box::new(restoring)))
            .map_err(MigrateError::Host)?;
        self.await_restored(&shared, &restored)
    }

    /// The journal of guest `name` (what it made), to prepare the host it will move to
    /// ([`Self::prepare_restore`]) before it is frozen.
    pub fn journal_of(&self, name: &str) -> Result<Vec<u8>, MigrateError> {
        let shared = self.guest(name)?;
        let journal = shared
            .journal
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        crate::migrate::encode_journal(&journal, &mut out);
        Ok(out)
    }

    /// Makes again, from the `journal` of a guest running on another host, the objects of that
    /// guest (its node, publishers, subscriptions, ...) with `spec`'s module, before the guest
    /// is frozen there: they discover and match their peers meanwhile, and what arrives for
    /// them waits. [`Self::complete_restore`] then resumes the guest from its snapshot, and
    /// the guest is given each message it did not have on its old host exactly once; dropping
    /// the [`Prepared`] calls the move off.
    pub fn prepare_restore(
        &self,
        spec: &GuestSpec,
        journal: &[u8],
    ) -> Result<Prepared, MigrateError> {
        let module = self.load(spec)?;
        let journal = crate::migrate::decode_journal_bytes(
            journal,
            self.options.limits.max_memory_bytes as u64,
        )
        .map_err(|e| MigrateError::Migration(e.into()))?;
        let (prepared_report, prepared) = std::sync::mpsc::sync_channel(1);
        let (snapshot, waiting) = std::sync::mpsc::sync_channel(1);
        let shared = self
            .spawn(
                spec,
                module,
                Beginning::Prepare(crate::migrate::Preparing {
                    journal,
                    prepared: prepared_report,
                    snapshot: waiting,
                }),
            )
            .map_err(MigrateError::Host)?;
        self.await_restored(&shared, &prepared)?;
        Ok(Prepared { shared, snapshot })
    }

    /// Resumes a guest prepared with [`Self::prepare_restore`] from its `snapshot`.
    pub fn complete_restore(
        &self,
        prepared: Prepared,
        snapshot: &[u8],
    ) -> Result<(), MigrateError> {
        let mut restoring = match self.decode(snapshot) {
            Ok(restoring) => restoring,
            Err(e) => {
                self.call_off(prepared);
                return Err(e);
            }
        };
        let (report, restored) = std::sync::mpsc::sync_channel(1);
        restoring.report = Some(report);
        let sent = prepared.snapshot.send(restoring);
        // Its thread spins the guest's executors until the snapshot comes.
        prepared.shared.wake();
        if sent.is_err() {
            return Err(MigrateError::NotRestored(
                self.forget(&prepared.shared)
                    .map_or_else(|| "it ended".to_owned(), |f| f.to_string()),
            ));
        }
        self.await_restored(&prepared.shared, &restored)
    }

    /// Calls off a move prepared with [`Self::prepare_restore`]: the prepared guest ends and
    /// its endpoints are removed.
    pub fn call_off(&self, prepared: Prepared) {
        drop(prepared.snapshot);
        self.forget(&prepared.shared);
    }

    /// `spec`'s module, compiled once per file and version of it: a node that moves back to
    /// a host it ran on does not wait for its module to compile again.
    fn load(&self, spec: &GuestSpec) -> Result<Arc<Loaded>, MigrateError> {
        let failed = |error| {
            MigrateError::Host(HostError::Load {
                path: spec.path.clone(),
                error,
            })
        };
        let modified = std::fs::metadata(&spec.path)
            .and_then(|m| m.modified())
            .map_err(|e| failed(engine::LoadError::Read(e)))?;
        let mut modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((when, module)) = modules.get(&spec.path) {
            if *when == modified {
                return Ok(module.clone());
            }
        }
        let module = Arc::new(engine::load(self.options.engine, &spec.path).map_err(failed)?);
        modules.insert(spec.path.clone(), (modified, module.clone()));
        Ok(module)
    }

    fn decode(&self, snapshot: &[u8]) -> Result<crate::migrate::Restoring, MigrateError> {
        let caps = crate::snapshot::Caps {
            max_memory_bytes: self.options.limits.max_memory_bytes as u64,
            max_host_bytes: 64 << 20,
        };
        crate::migrate::Restoring::decode(snapshot, caps).map_err(MigrateError::Migration)
    }

    /// Waits for the guest of `shared` to report a restore (or preparation); if it failed, the
    /// guest is removed from this host and the error says why.
    fn await_restored(
        &self,
        shared: &Arc<GuestShared>,
        report: &std::sync::mpsc::Receiver<Result<(), crate::migrate::MigrationError>>,
    ) -> Result<(), MigrateError> {
        let outcome = report.recv();
        if !matches!(outcome, Ok(Ok(()))) {
            // The guest thread ends (or ended) without running: it is no guest of this host.
            let end = self.forget(shared);
            return Err(match outcome {
                Ok(Err(e)) => MigrateError::Migration(e),
                _ => MigrateError::NotRestored(
                    end.map_or_else(|| "it ended".to_owned(), |f| f.to_string()),
                ),
            });
        }
        Ok(())
    }

    /// Removes the guest of `shared` from this host once its thread ended; its fault, if any.
    fn forget(&self, shared: &Arc<GuestShared>) -> Option<Fault> {
        let guest = {
            let mut guests = self.guests.lock().unwrap_or_else(PoisonError::into_inner);
            let at = guests.iter().position(|g| Arc::ptr_eq(&g.shared, shared))?;
            guests.remove(at)
        };
        let thread = guest
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        thread.join().ok()?.outcome.err()
    }

    /// Waits for every guest to end (each is reported once; a second call returns none).
    pub fn wait(&self) -> Vec<GuestEnd> {
        let mut ends = Vec::new();
        // Guests started while others ended (a migration in) are waited for too.
        loop {
            let guests =
                std::mem::take(&mut *self.guests.lock().unwrap_or_else(PoisonError::into_inner));
            if guests.is_empty() {
                return ends;
            }
            ends.extend(
                guests
                    .iter()
                    .filter_map(|g| {
                        g.thread
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .take()
                    })
                    .map(|t| t.join().expect("guest threads catch their faults")),
            );
        }
    }

    /// Stops every guest (their spin loops return) and shuts the context down.
    pub fn shutdown(&self) {
        for guest in self
            .guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            guest.shared.stop();
        }
        roslite_c::context::roslite_context_shutdown(self.context);
    }

    /// The engine running this host's guests.
    pub fn engine(&self) -> EngineKind {
        self.options.engine
    }

    /// The guests running here, in the order they started: not those only prepared for a move
    /// here (until they resume), gone to another host, or ending.
    pub fn nodes(&self) -> Vec<HostedNode> {
        use std::sync::atomic::Ordering::Relaxed;
        self.guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|g| {
                g.shared.resident().is_some() && !g.shared.is_stopping() && !g.shared.is_migrated()
            })
            .map(|g| HostedNode {
                guest: g.shared.name.clone(),
                ros_nodes: g
                    .shared
                    .ros_nodes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
                last_callback_ns: g.shared.last_callback_ns.load(Relaxed),
                first_callback_after_restore_ns: g
                    .shared
                    .first_callback_after_restore_ns
                    .load(Relaxed),
                guest_clock_behind_ns: g.shared.guest_clock_behind_ns.load(Relaxed),
            })
            .collect()
    }

    /// The guest running here that is called `node` or made a ROS node of that name (fully
    /// qualified, `/ns/name`, or its plain name).
    pub fn find_guest(&self, node: &str) -> Option<String> {
        let nodes = self.nodes();
        nodes
            .iter()
            .find(|n| n.guest == node)
            .or_else(|| {
                nodes
                    .iter()
                    .find(|n| answers_to(node, &n.guest, &n.ros_nodes))
            })
            .map(|n| n.guest.clone())
    }

    /// For each publisher and subscription of guest `name`, in the order it made them, how
    /// many peers it matched, then for each of its service servers how many clients (see
    /// [`Prepared::await_matched`]).
    pub fn matched_peers(&self, name: &str) -> Result<Vec<u32>, MigrateError> {
        Ok(self.guest(name)?.matched_peers())
    }

    /// [`Self::journal_of`] and [`Self::matched_peers`] of guest `name` as of one moment: what
    /// a move sends the target, which checks its copy's endpoints against the peers in order
    /// (a guest that made or released an endpoint between two separate readings would leave
    /// the target comparing one endpoint with another's peers).
    ///
    /// From then on until the move fails ([`Self::thaw`], [`Self::move_failed`]) the guest's
    /// journal only grows, so that the snapshot's journal continues the one read here.
    pub fn journal_and_peers(&self, name: &str) -> Result<(Vec<u8>, Vec<u32>), MigrateError> {
        let (journal, peers) = self.guest(name)?.journal_and_peers();
        let mut out = Vec::new();
        crate::migrate::encode_journal(&journal, &mut out);
        Ok((out, peers))
    }

    /// When guest `name` last finished a callback (CLOCK_MONOTONIC ns; 0 for never or no
    /// such guest), frozen or not.
    pub fn last_callback_ns(&self, name: &str) -> u64 {
        self.guest(name).map_or(0, |g| {
            g.last_callback_ns
                .load(std::sync::atomic::Ordering::Relaxed)
        })
    }

    /// How each guest has run so far, in the order they were given.
    pub fn statistics(&self) -> Vec<GuestStatistics> {
        use std::sync::atomic::Ordering::Relaxed;
        self.guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|g| GuestStatistics {
                name: g.shared.name.clone(),
                parks: g.shared.parks.load(Relaxed),
                callbacks_elsewhere: g.shared.callbacks_elsewhere.load(Relaxed),
            })
            .collect()
    }

    /// The context the guests share, for native nodes in the same process.
    pub fn context(&self) -> roslite::Context {
        roslite_c::handles::context(self.context).expect("the host holds its context")
    }
}

fn wasi_config(
    args: Vec<String>,
    env: Vec<(String, String)>,
    dirs: Vec<crate::wasi::AllowedDir>,
) -> WasiConfig {
    WasiConfig {
        args,
        env,
        dirs,
        ..Default::default()
    }
}

/// A guest's name: its module's file stem.
fn guest_name(spec: &GuestSpec) -> String {
    spec.path
        .file_stem()
        .map_or_else(|| "guest".to_owned(), |s| s.to_string_lossy().into_owned())
}

fn run_guest(
    module: &Loaded,
    state: GuestState,
    limits: Limits,
    shared: &Arc<GuestShared>,
    beginning: Beginning,
) -> GuestEnd {
    let _ = shared.thread.set(std::thread::current().id());
    let outcome = engine::run(module, state, limits, beginning);
    if let Err(fault) = &outcome {
        eprintln!(
            "[ERROR] [roslite.wasm]: node {} {fault}; it was stopped and its endpoints removed",
            shared.name
        );
    }
    GuestEnd {
        name: shared.name.clone(),
        outcome,
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.shutdown();
        self.wait();
        roslite_c::handles::roslite_release(self.context);
    }
}

//! Taking a parked guest's snapshot and restoring it (docs/migration.md): the engine-neutral
//! half of a migration. The host's state for a guest ([`HostState`]) is what the snapshot's host
//! section holds: the journal of what the guest made (replayed where it is restored, so its
//! objects come back with their handle numbers), where its parked call stack is saved, and the
//! wait it is parked in.

use std::time::{Duration, Instant};

use crate::guest::{enter_resident, GuestCalls, Resident};
use crate::journal::Entry;
use crate::snapshot::{self, put_u32, Reader, Snapshot, SnapshotError};
use crate::waiting::Park;

/// The host section's own version.
const HOST_STATE_VERSION: u16 = 3;

/// The wait a snapshot's guest is parked in, with handles as the guest numbers them and
/// deadlines as what was left of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParkedWait {
    Spin {
        executor: i64,
        left: Option<Duration>,
        once: bool,
    },
    Sleep {
        left: Duration,
    },
}

/// What the host keeps for a guest, as a snapshot carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostState {
    pub journal: Vec<Entry>,
    /// (subscription slot, publisher gid, last sequence number given): crate::guest::Delivered.
    pub delivered: Vec<(i32, [u8; 16], u64)>,
    pub saved_stack: u32,
    pub parked: ParkedWait,
    /// The guest's monotonic clock when it was taken, in ns: where it goes on from.
    pub monotonic_ns: u64,
    /// Each timer's phase: (guest handle, time left until its next call in ns, cancelled).
    pub timers: Vec<(i64, u64, bool)>,
    /// Each node's parameters as they are now, set from outside or not.
    pub parameters: Vec<crate::carried::NodeParameters>,
    /// (service slot, client's gid in the request id, last request sequence number taken):
    /// crate::guest::GuestState::requests_taken.
    pub requests_taken: Vec<(i32, [u8; 16], u64)>,
    /// Requests that waited for the guest, in the order they came.
    pub requests_waiting: Vec<crate::carried::WaitingRequest>,
    /// Messages that waited for the guest, in the order they came: its next host may have
    /// matched their publishers only after they were sent.
    pub messages_waiting: Vec<crate::carried::WaitingMessage>,
    /// How many handles the guest was given (its next handle is the one after).
    pub handle_count: u32,
    /// Responders the guest keeps to answer later.
    pub responders_kept: Vec<crate::carried::KeptResponder>,
    /// Each publisher's count of messages published and what it keeps for late joiners.
    pub publishers: Vec<crate::published::CarriedPublisher>,
}

/// Why a guest could not be snapshotted or restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigrationError {
    /// The module was loaded without crate::instrument (its globals are out of reach).
    NotInstrumented,
    /// The guest was not prepared for parking, or its `main` does not wait where it could
    /// park: it is never between callbacks with an empty stack.
    NotParked,
    /// The guest has files open, which stay on this host.
    OpenFiles(usize),
    Snapshot(SnapshotError),
    /// The journal did not replay on this host.
    Replay(String),
    /// The engine refused to restore memory or globals.
    Restore(String),
}

impl std::fmt::Display for MigrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotInstrumented => f.write_str(
                "the node's module was not instrumented for snapshots (load its .wasm, or compile it with `roslite wasm compile`)",
            ),
            Self::NotParked => f.write_str(
                "the node is not parked at a wait: prepare it for parking (`roslite wasm build`) and let its main wait in a spin or a sleep",
            ),
            Self::OpenFiles(n) => write!(
                f,
                "the node has {n} file(s) open, which cannot move with it: close them before it waits"
            ),
            Self::Snapshot(e) => write!(f, "{e}"),
            Self::Replay(e) => write!(f, "{e}"),
            Self::Restore(e) => write!(f, "restoring the node's memory failed: {e}"),
        }
    }
}

impl std::error::Error for MigrationError {}

impl From<SnapshotError> for MigrationError {
    fn from(e: SnapshotError) -> Self {
        Self::Snapshot(e)
    }
}

impl HostState {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&HOST_STATE_VERSION.to_le_bytes());
        put_u32(&mut out, self.saved_stack);
        out.extend_from_slice(&self.monotonic_ns.to_le_bytes());
        match &self.parked {
            ParkedWait::Spin {
                executor,
                left,
                once,
            } => {
                out.push(1);
                out.extend_from_slice(&executor.to_le_bytes());
                out.extend_from_slice(&left.map_or(u64::MAX, nanos).to_le_bytes());
                out.push(u8::from(*once));
            }
            ParkedWait::Sleep { left } => {
                out.push(2);
                out.extend_from_slice(&nanos(*left).to_le_bytes());
            }
        }
        put_u32(&mut out, self.timers.len() as u32);
        for (handle, left, cancelled) in &self.timers {
            out.extend_from_slice(&handle.to_le_bytes());
            out.extend_from_slice(&left.to_le_bytes());
            out.push(u8::from(*cancelled));
        }
        encode_numbered(&self.delivered, &mut out);
        crate::carried::encode_parameters(&self.parameters, &mut out);
        encode_numbered(&self.requests_taken, &mut out);
        crate::carried::encode_requests(&self.requests_waiting, &mut out);
        crate::carried::encode_messages(&self.messages_waiting, &mut out);
        put_u32(&mut out, self.handle_count);
        crate::carried::encode_responders(&self.responders_kept, &mut out);
        crate::published::encode_publishers(&self.publishers, &mut out);
        encode_journal(&self.journal, &mut out);
        out
    }

    /// Reads a host section (already bounded in size by [`snapshot::decode`]'s caps), whose
    /// journal reads lie within `max_memory_bytes` ([`decode_journal_bytes`]).
    pub fn decode(bytes: &[u8], max_memory_bytes: u64) -> Result<Self, SnapshotError> {
        let malformed = |what: String| SnapshotError::Malformed(what);
        let mut r = Reader::new(bytes);
        let version = r.u16("the host state")?;
        if version != HOST_STATE_VERSION {
            return Err(malformed(format!(
                "host state version {version}; this host reads version {HOST_STATE_VERSION}: use the same roslite version on both hosts"
            )));
        }
        let saved_stack = r.u32("the host state")?;
        let monotonic_ns = r.u64("the host state")?;
        let parked = match r.u8("the parked wait")? {
            1 => {
                let executor = r.u64("the parked wait")? as i64;
                let left = r.u64("the parked wait")?;
                let once = r.u8("the parked wait")? != 0;
                ParkedWait::Spin {
                    executor,
                    left: (left != u64::MAX).then(|| Duration::from_nanos(left)),
                    once,
                }
            }
            2 => ParkedWait::Sleep {
                left: Duration::from_nanos(r.u64("the parked wait")?),
            },
            other => return Err(malformed(format!("unknown wait kind {other}"))),
        };
        let timer_count = r.count(17, "the timers")?;
        let mut timers = Vec::with_capacity(timer_count);
        for _ in 0..timer_count {
            let handle = r.u64("the timers")? as i64;
            let left = r.u64("the timers")?;
            timers.push((handle, left, r.u8("the timers")? != 0));
        }
        let delivered = decode_numbered(&mut r, "the delivered numbers")?;
        let parameters = crate::carried::decode_parameters(&mut r)?;
        let requests_taken = decode_numbered(&mut r, "the requests taken")?;
        let requests_waiting = crate::carried::decode_requests(&mut r)?;
        let messages_waiting = crate::carried::decode_messages(&mut r)?;
        let handle_count = r.u32("the handle count")?;
        let responders_kept = crate::carried::decode_responders(&mut r)?;
        let publishers = crate::published::decode_publishers(&mut r)?;
        let journal = decode_journal(&mut r, max_memory_bytes)?;
        if r.left() != 0 {
            return Err(malformed(format!("{} bytes after the journal", r.left())));
        }
        Ok(Self {
            parameters,
            requests_taken,
            requests_waiting,
            messages_waiting,
            handle_count,
            responders_kept,
            publishers,
            journal,
            timers,
            delivered,
            saved_stack,
            parked,
            monotonic_ns,
        })
    }
}

/// A table of (callback slot, writer gid, sequence number): a count (u32), then each as the
/// slot (i32), the gid (16 bytes) and the number (u64).
fn encode_numbered(table: &[(i32, [u8; 16], u64)], out: &mut Vec<u8>) {
    put_u32(out, table.len() as u32);
    for (slot, gid, seq) in table {
        out.extend_from_slice(&slot.to_le_bytes());
        out.extend_from_slice(gid);
        out.extend_from_slice(&seq.to_le_bytes());
    }
}

fn decode_numbered(
    r: &mut Reader<'_>,
    what: &'static str,
) -> Result<Vec<(i32, [u8; 16], u64)>, SnapshotError> {
    let count = r.count(28, what)?;
    let mut table = Vec::with_capacity(count);
    for _ in 0..count {
        let slot = r.u32(what)? as i32;
        let gid: [u8; 16] = r.take(16, what)?.try_into().expect("took 16 bytes");
        table.push((slot, gid, r.u64(what)?));
    }
    Ok(table)
}

/// The journal alone (what a host is prepared with before the snapshot comes).
pub fn encode_journal(journal: &[Entry], out: &mut Vec<u8>) {
    put_u32(out, journal.len() as u32);
    for entry in journal {
        put_u32(out, entry.import.len() as u32);
        out.extend_from_slice(entry.import.as_bytes());
        put_u32(out, entry.args.len() as u32);
        for arg in &entry.args {
            out.extend_from_slice(&arg.to_le_bytes());
        }
        put_u32(out, entry.handles_before);
        put_u32(out, entry.reads.len() as u32);
        for (at, bytes) in &entry.reads {
            put_u32(out, *at);
            put_u32(out, bytes.len() as u32);
            out.extend_from_slice(bytes);
        }
    }
}

/// The most entries a journal read from another host may have. The journal holds an entry per
/// object, parameter and setting a node holds now (what it released leaves the journal): the
/// migration state guest's has 10, and a node with a thousand parameters has about a thousand.
pub const MAX_JOURNAL_ENTRIES: u32 = 65_536;

pub(crate) fn decode_journal(
    r: &mut Reader<'_>,
    max_memory_bytes: u64,
) -> Result<Vec<Entry>, SnapshotError> {
    let malformed = |what: String| SnapshotError::Malformed(what);
    let count = r.u32("the journal")?;
    // Each entry makes something on this host: a forged journal of a million `node_create`s
    // in one large request would have it make a million nodes.
    if count > MAX_JOURNAL_ENTRIES {
        return Err(malformed(format!(
            "the journal has {count} entries, more than the {MAX_JOURNAL_ENTRIES} a host replays (an entry per object, parameter and setting the node holds)"
        )));
    }
    let mut journal = Vec::new();
    for _ in 0..count {
        let len = r.u32("a journal entry")? as usize;
        let import = String::from_utf8(r.take(len, "a journal entry")?.to_vec())
            .map_err(|_| malformed("a journal entry's import is not UTF-8".into()))?;
        // A replay calls the import named, so only those the journal keeps are accepted: a
        // forged entry of another (a spin, a sleep, a publish) would run on the target as
        // the node.
        if !crate::journal::is_journaled(&import) {
            return Err(malformed(format!(
                "the journal names {import:?}, which is not an import the journal keeps"
            )));
        }
        let argc = r.u32("a journal entry")? as usize;
        if argc > 16 {
            return Err(malformed(format!("{argc} arguments to {import}")));
        }
        let mut args = Vec::with_capacity(argc);
        for _ in 0..argc {
            args.push(r.u64("a journal entry")? as i64);
        }
        let handles_before = r.u32("a journal entry")?;
        let reads_count = r.u32("a journal entry")?;
        let mut reads = Vec::new();
        for _ in 0..reads_count {
            let at = r.u32("a journal read")?;
            let len = r.u32("a journal read")? as usize;
            // A replay lays the reads out at their addresses: one beyond the memory a guest
            // may have here would have it allocate up to 4 GiB for a few bytes.
            let end = u64::from(at) + len as u64;
            if end > max_memory_bytes {
                return Err(malformed(format!(
                    "{import} read {len} bytes at {at}, beyond the {max_memory_bytes} bytes of memory this host gives a node (--max-memory-mib)"
                )));
            }
            reads.push((at, r.take(len, "a journal read")?.to_vec()));
        }
        journal.push(Entry {
            import,
            args,
            reads,
            handles_before,
        });
    }
    Ok(journal)
}

/// Reads a journal sent alone ([`encode_journal`]) for a host that gives a node at most
/// `max_memory_bytes` of memory: every read it keeps must lie within them.
pub fn decode_journal_bytes(
    bytes: &[u8],
    max_memory_bytes: u64,
) -> Result<Vec<Entry>, SnapshotError> {
    let mut r = Reader::new(bytes);
    let journal = decode_journal(&mut r, max_memory_bytes)?;
    if r.left() != 0 {
        return Err(SnapshotError::Malformed(format!(
            "{} bytes after the journal",
            r.left()
        )));
    }
    Ok(journal)
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX - 1)
}

/// The snapshot of the guest in `resident`, which must be parked with no callback running
/// (the caller holds it frozen).
pub fn capture(resident: &mut dyn Resident) -> Result<Vec<u8>, MigrationError> {
    let initial = resident.initial_memory().map_err(MigrationError::Restore)?;
    enter_resident(resident, |g| {
        let module_hash = g.module_hash().ok_or(MigrationError::NotInstrumented)?;
        let globals = g.globals().map_err(MigrationError::Restore)?;
        let (memory, state) = g.parts();
        let opened = state.wasi.opened_file_count();
        if opened > 0 {
            return Err(MigrationError::OpenFiles(opened));
        }
        let parked = match state.parked.clone() {
            Some(Park::Spin {
                executor,
                until,
                once,
            }) => ParkedWait::Spin {
                executor: state
                    .handles
                    .guest_of(executor)
                    .ok_or(MigrationError::NotParked)?,
                left: until.map(|u| u.saturating_duration_since(Instant::now())),
                once,
            },
            Some(Park::Sleep { until }) => ParkedWait::Sleep {
                left: until.saturating_duration_since(Instant::now()),
            },
            None => return Err(MigrationError::NotParked),
        };
        // Before the journal is locked below, for the statement's length.
        let (requests_waiting, responders_kept) = carried_requests(state);
        let messages_waiting = carried_messages(state);
        let host = HostState {
            messages_waiting,
            journal: state
                .shared
                .journal
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
            delivered: state.delivered.entries().collect(),
            requests_taken: state.requests_taken.entries().collect(),
            requests_waiting,
            responders_kept,
            handle_count: state.handles.len() as u32,
            publishers: state
                .handles
                .held()
                .filter_map(|(handle, native)| {
                    let publisher = roslite_c::handles::publisher(native).ok()?;
                    Some(crate::published::CarriedPublisher {
                        handle,
                        published: publisher.publication_count(),
                        kept: publisher.kept_for_late_joiners(),
                    })
                })
                .collect(),
            saved_stack: state.saved_stack.ok_or(MigrationError::NotParked)?,
            parked,
            monotonic_ns: state.wasi.guest_monotonic_ns(),
            timers: state
                .handles
                .held()
                .filter_map(|(handle, native)| {
                    let timer = roslite_c::handles::timer(native).ok()?;
                    Some((
                        handle,
                        nanos(timer.time_until_trigger()),
                        timer.is_cancelled(),
                    ))
                })
                .collect(),
            parameters: state
                .handles
                .held()
                .filter_map(|(handle, native)| {
                    let node = roslite_c::handles::node(native).ok()?;
                    Some((handle, node.parameter_values()))
                })
                .collect(),
        };
        let bytes = memory.all();
        let snapshot = Snapshot {
            module_hash,
            memory_pages: (bytes.len() / snapshot::PAGE_BYTES as usize) as u32,
            chunks: snapshot::differing_chunks(bytes, &initial),
            globals,
            host: host.encode(),
        };
        Ok(snapshot::encode(&snapshot))
    })
}

/// The requests waiting in the guest's mailbox, and the responders it keeps to answer later,
/// that its next host can answer (those that came over a path that names where the answer
/// goes).
fn carried_requests(
    state: &crate::guest::GuestState,
) -> (
    Vec<crate::carried::WaitingRequest>,
    Vec<crate::carried::KeptResponder>,
) {
    let journal = state
        .shared
        .journal
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The service of a callback slot: `service_create`'s sixth argument is the slot.
    let service_of = |slot: i32| {
        journal
            .iter()
            .rev()
            .find(|e| e.import == "service_create" && e.args.get(5) == Some(&i64::from(slot)))
            .and_then(crate::journal::made_by)
    };
    let mailbox = state
        .shared
        .mailbox
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let kept = state
        .responder_slots
        .iter()
        .filter_map(|(&handle, &slot)| {
            let native = state.handles.native(handle)?;
            Some(crate::carried::KeptResponder {
                handle,
                service: service_of(slot)?,
                slot,
                address: roslite_c::handles::responder_reply_address(native)
                    .ok()
                    .flatten()?,
            })
        })
        .collect();
    let waiting = mailbox
        .iter()
        .filter_map(|mail| match mail {
            crate::guest::Deferred::Request {
                slot,
                bytes,
                responder,
                ..
            } => Some(crate::carried::WaitingRequest {
                service: service_of(*slot)?,
                slot: *slot,
                address: roslite_c::handles::responder_reply_address(*responder)
                    .ok()
                    .flatten()?,
                request: bytes.clone(),
            }),
            _ => None,
        })
        .collect();
    (waiting, kept)
}

/// The messages waiting in the guest's mailbox.
fn carried_messages(state: &crate::guest::GuestState) -> Vec<crate::carried::WaitingMessage> {
    state
        .shared
        .mailbox
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter_map(|mail| match mail {
            crate::guest::Deferred::Message {
                slot, bytes, info, ..
            } => Some(crate::carried::WaitingMessage {
                slot: *slot,
                source_timestamp_ns: info.source_timestamp_ns,
                received_timestamp_ns: info.received_timestamp_ns,
                sequence_number: info.publication_sequence_number,
                from_intra_process: info.from_intra_process,
                publisher_gid: info.publisher_gid,
                bytes: bytes.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// How a guest's thread begins.
pub enum Beginning {
    /// With its `main`.
    Main,
    /// From a snapshot at hand.
    Restore(Box<Restoring>),
    /// With its objects made again from a journal first (what arrives for them waits in its
    /// mailbox), and its snapshot later.
    Prepare(Preparing),
}

/// A guest prepared for before its snapshot comes ([`Beginning::Prepare`]).
pub struct Preparing {
    pub journal: Vec<Entry>,
    /// Told once the objects exist, or why they could not be made.
    pub prepared: std::sync::mpsc::SyncSender<Result<(), MigrationError>>,
    /// Where the snapshot comes from; closed without one: the move was called off.
    pub snapshot: std::sync::mpsc::Receiver<Restoring>,
}

/// A snapshot read and checked for a host, ready for [`restore_into`].
pub struct Restoring {
    pub snapshot: Snapshot,
    pub host: HostState,
    /// Told how the restore went (before the guest runs on), for the caller that waits.
    pub report: Option<std::sync::mpsc::SyncSender<Result<(), MigrationError>>>,
}

impl Restoring {
    pub fn decode(bytes: &[u8], caps: snapshot::Caps) -> Result<Self, MigrationError> {
        let snapshot = snapshot::decode(bytes, caps)?;
        let host = HostState::decode(&snapshot.host, caps.max_memory_bytes)?;
        Ok(Self {
            snapshot,
            host,
            report: None,
        })
    }
}

/// Makes the freshly instantiated guest `g` (whose `main` has not run) what the snapshot was:
/// same module, its objects re-created from the journal, memory and globals written back.
/// Returns the wait to resume it from and the buffer its stack is saved in.
pub fn restore_into(
    g: &mut dyn GuestCalls,
    restoring: &Restoring,
    prepared: &[Entry],
) -> Result<(Park, u32), MigrationError> {
    let module = g.module_hash().ok_or(MigrationError::NotInstrumented)?;
    if module != restoring.snapshot.module_hash {
        return Err(SnapshotError::ModuleMismatch {
            snapshot: restoring.snapshot.module_hash,
            module,
        }
        .into());
    }
    let parks = g.can_park_at_all();
    if !parks {
        return Err(MigrationError::NotParked);
    }
    // What was replayed to prepare this host is the journal's beginning; the rest is what the
    // node made since.
    let journal = &restoring.host.journal;
    if !journal.starts_with(prepared) {
        return Err(MigrationError::Replay(
            "the node's journal does not continue the one this host was prepared with".into(),
        ));
    }
    crate::journal::replay(g.state(), &journal[prepared.len()..], parks)
        .map_err(|e| MigrationError::Replay(e.to_string()))?;
    *g.state()
        .shared
        .journal
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = journal.clone();
    g.state().delivered =
        crate::guest::Delivered::from_entries(restoring.host.delivered.iter().copied());
    g.state().requests_taken =
        crate::guest::Delivered::from_entries(restoring.host.requests_taken.iter().copied());
    g.grow_memory_to(restoring.snapshot.memory_pages)
        .map_err(MigrationError::Restore)?;
    {
        let (mut memory, _) = g.parts();
        for (index, bytes) in &restoring.snapshot.chunks {
            memory
                .write(index * snapshot::CHUNK_BYTES, bytes)
                .map_err(|e| MigrationError::Restore(e.to_string()))?;
        }
    }
    g.set_globals(&restoring.snapshot.globals)
        .map_err(MigrationError::Restore)?;
    let state = g.state();
    // Each timer goes on in the phase it had.
    for &(handle, left, cancelled) in &restoring.host.timers {
        let timer = state
            .handles
            .native(handle)
            .and_then(|native| roslite_c::handles::timer(native).ok())
            .ok_or_else(|| MigrationError::Replay(format!("timer {handle} was not re-created")))?;
        if cancelled {
            timer.cancel();
        } else {
            if timer.is_cancelled() {
                timer.reset();
            }
            timer.set_time_until_trigger(Duration::from_nanos(left));
        }
    }
    // Parameters as they were when the snapshot was taken: the journal gave them back as the
    // guest declared and set them, not as other nodes changed them since. The guest's on-set
    // callbacks accepted these values on the old host, so they do not run again.
    for (handle, parameters) in &restoring.host.parameters {
        let node = state
            .handles
            .native(*handle)
            .and_then(|native| roslite_c::handles::node(native).ok())
            .ok_or_else(|| MigrationError::Replay(format!("node {handle} was not re-created")))?;
        node.restore_parameters(parameters).map_err(|e| {
            MigrationError::Replay(format!("restoring the parameters of node {handle}: {e}"))
        })?;
    }
    // The guest's next handle is the one it would have had on its old host.
    state.handles.skip_to(restoring.host.handle_count);
    // Each publisher goes on with the numbering it had, and a transient-local one keeps for
    // late joiners what it kept on the old host (before the guest publishes anything here).
    for carried in &restoring.host.publishers {
        let publisher = state
            .handles
            .native(carried.handle)
            .and_then(|native| roslite_c::handles::publisher(native).ok())
            .ok_or_else(|| {
                MigrationError::Replay(format!("publisher {} was not re-created", carried.handle))
            })?;
        publisher
            .continue_from(carried.published, carried.kept.clone())
            .map_err(|e| {
                MigrationError::Replay(format!(
                    "publisher {} on '{}': {e}",
                    carried.handle,
                    publisher.topic_name()
                ))
            })?;
    }
    // A responder the guest kept answers from here, under the number it had.
    for kept in &restoring.host.responders_kept {
        let service = state.handles.native(kept.service).ok_or_else(|| {
            MigrationError::Replay(format!("service {} was not re-created", kept.service))
        })?;
        if let Ok(Some(responder)) =
            roslite_c::handles::service_responder_to(service, &kept.address)
        {
            if state.handles.put(kept.handle, responder) {
                state.responder_slots.insert(kept.handle, kept.slot);
            } else {
                roslite_c::handles::remove(responder).ok();
            }
        }
    }
    // The requests that waited for the node on its old host are answered from here, before
    // what arrived here meanwhile (the same request that reached both is taken once:
    // `requests_taken`). One this host's paths cannot answer is left: its client times out.
    {
        let mut carried = Vec::new();
        for waiting in &restoring.host.requests_waiting {
            let service = state.handles.native(waiting.service).ok_or_else(|| {
                MigrationError::Replay(format!("service {} was not re-created", waiting.service))
            })?;
            if let Ok(Some(responder)) =
                roslite_c::handles::service_responder_to(service, &waiting.address)
            {
                carried.push(crate::guest::Deferred::Request {
                    slot: waiting.slot,
                    bytes: waiting.request.clone(),
                    responder,
                    description: "service callback of a request carried from the old host".into(),
                });
            }
        }
        let mut mailbox = state
            .shared
            .mailbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for request in carried.into_iter().rev() {
            mailbox.push_front(request);
        }
        // The messages that waited on the old host, each in its publisher's order among
        // those this host received of it since (`inflight::merge_carried`); one that reached
        // both is given once (`delivered`).
        let carried_messages = restoring
            .host
            .messages_waiting
            .iter()
            .map(|waiting| crate::guest::Deferred::Message {
                slot: waiting.slot,
                bytes: waiting.bytes.clone(),
                info: roslite_c::convert::CMessageInfo {
                    source_timestamp_ns: waiting.source_timestamp_ns,
                    received_timestamp_ns: waiting.received_timestamp_ns,
                    publication_sequence_number: waiting.sequence_number,
                    from_intra_process: waiting.from_intra_process,
                    publisher_gid: waiting.publisher_gid,
                },
                description: "subscription callback of a message carried from the old host".into(),
            })
            .collect();
        crate::inflight::merge_carried(carried_messages, &mut mailbox);
    }
    state.saved_stack = Some(restoring.host.saved_stack);
    state
        .wasi
        .set_guest_monotonic_ns(restoring.host.monotonic_ns);
    state.shared.guest_clock_behind_ns.store(
        state.wasi.monotonic_offset_ns.saturating_neg(),
        std::sync::atomic::Ordering::Relaxed,
    );
    let now = Instant::now();
    let park = match restoring.host.parked {
        ParkedWait::Spin {
            executor,
            left,
            once,
        } => Park::Spin {
            executor: state.handles.native(executor).ok_or_else(|| {
                MigrationError::Replay(format!(
                    "the parked spin's executor {executor} was not re-created"
                ))
            })?,
            until: left.map(|l| now + l),
            once,
        },
        ParkedWait::Sleep { left } => Park::Sleep { until: now + left },
    };
    Ok((park, restoring.host.saved_stack))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_state_reads_back_as_written_and_cut_anywhere_is_refused() {
        let state = HostState {
            journal: vec![Entry {
                import: "node_create".into(),
                args: vec![1, 2048, 0, 4096],
                reads: vec![(2048, b"talker\0".to_vec())],
                handles_before: 1,
            }],
            delivered: vec![(3, [7; 16], 41)],
            requests_taken: vec![(5, [9; 16], 12), (6, [1; 16], 1)],
            requests_waiting: vec![crate::carried::WaitingRequest {
                service: 4,
                slot: 5,
                address: vec![1; 25],
                request: vec![0, 1, 0, 0, 7],
            }],
            messages_waiting: vec![crate::carried::WaitingMessage {
                slot: 3,
                source_timestamp_ns: -5,
                received_timestamp_ns: 1_000_000,
                sequence_number: 42,
                from_intra_process: true,
                publisher_gid: [7; 16],
                bytes: vec![0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0],
            }],
            handle_count: 9,
            responders_kept: vec![crate::carried::KeptResponder {
                handle: 8,
                service: 4,
                slot: 5,
                address: vec![2; 33],
            }],
            publishers: vec![
                crate::published::CarriedPublisher {
                    handle: 6,
                    published: 41,
                    kept: vec![
                        roslite::KeptMessage {
                            bytes: vec![0, 1, 0, 0, 2, 0, 0, 0, b'a', 0],
                            source_time_ns: 1_700_000_000_000_000_000,
                            publication_sequence_number: 40,
                        },
                        roslite::KeptMessage {
                            bytes: vec![0, 1, 0, 0, 1, 0, 0, 0, 0],
                            source_time_ns: 1_700_000_000_000_000_001,
                            publication_sequence_number: 41,
                        },
                    ],
                },
                crate::published::CarriedPublisher {
                    handle: 7,
                    published: 0,
                    kept: Vec::new(),
                },
            ],
            saved_stack: 70000,
            parked: ParkedWait::Spin {
                executor: 3,
                left: Some(Duration::from_millis(5)),
                once: false,
            },
            monotonic_ns: 123_456_789,
            timers: vec![(4, 2_000_000, false)],
            parameters: vec![(
                2,
                vec![
                    roslite::Parameter::new("speed", 2.5),
                    roslite::Parameter::new("name", "ünïcode"),
                    roslite::Parameter::new("flags", vec![true, false]),
                    roslite::Parameter::new("counts", vec![-1i64, 7]),
                    roslite::Parameter::new("gains", vec![0.5, f64::MAX]),
                    roslite::Parameter::new("bytes", vec![0u8, 255]),
                    roslite::Parameter::new(
                        "names",
                        roslite::ParameterValue::StringArray(vec!["a".into(), String::new()]),
                    ),
                    roslite::Parameter::new("on", true),
                    roslite::Parameter::new("n", 3i64),
                ],
            )],
        };
        let bytes = state.encode();
        let memory = 1 << 20;
        assert_eq!(HostState::decode(&bytes, memory).unwrap(), state);
        for len in 0..bytes.len() {
            assert!(
                HostState::decode(&bytes[..len], memory).is_err(),
                "cut at {len}"
            );
        }
        // A host state of version 2 (without the publishers) is refused by its version.
        let mut older = bytes.clone();
        older[..2].copy_from_slice(&2u16.to_le_bytes());
        let refused = HostState::decode(&older, memory).unwrap_err().to_string();
        assert!(
            refused.contains("host state version 2; this host reads version 3"),
            "{refused}"
        );
        // Its journal read ends at byte 2055: a host that gives a node less refuses it.
        assert!(HostState::decode(&bytes, 2055).is_ok());
        let refused = HostState::decode(&bytes, 2054).unwrap_err().to_string();
        assert!(
            refused.contains("node_create read 7 bytes at 2048, beyond the 2054 bytes"),
            "{refused}"
        );
    }

    /// A journal read far beyond any memory the host gives a node (a forged journal: a replay
    /// would lay out 4 GiB for it), or an entry of an import the journal does not keep, is
    /// refused when the journal is read, naming the entry.
    #[test]
    fn a_forged_journal_entry_is_refused_when_read() {
        let journal = |at: u32| {
            let mut out = Vec::new();
            encode_journal(
                &[Entry {
                    import: "publisher_create".into(),
                    args: vec![1, i64::from(at), 0, 0, 0],
                    reads: vec![(at, vec![0; 16])],
                    handles_before: 1,
                }],
                &mut out,
            );
            out
        };
        let memory = 64 << 20;
        assert_eq!(
            decode_journal_bytes(&journal(4096), memory).unwrap().len(),
            1
        );
        // Nor is an import the journal does not keep (a replay would call it).
        let mut spin = Vec::new();
        encode_journal(
            &[Entry {
                import: "executor_spin".into(),
                args: vec![1],
                reads: Vec::new(),
                handles_before: 1,
            }],
            &mut spin,
        );
        let refused = decode_journal_bytes(&spin, memory).unwrap_err().to_string();
        assert!(
            refused.contains(
                "the journal names \"executor_spin\", which is not an import the journal keeps"
            ),
            "{refused}"
        );
        let refused = decode_journal_bytes(&journal(u32::MAX - 16), memory)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(&format!(
                "publisher_create read 16 bytes at {}, beyond the {memory} bytes of memory",
                u32::MAX - 16
            )),
            "{refused}"
        );
    }

    /// A journal of more entries than any node holds is refused before any is read: the
    /// count alone, from a request of a few bytes.
    #[test]
    fn a_journal_longer_than_the_cap_is_refused_before_it_is_read() {
        let entry = Entry {
            import: "node_create".into(),
            args: vec![1, 0, 0, 0, 0],
            reads: Vec::new(),
            handles_before: 1,
        };
        let mut at_cap = Vec::new();
        encode_journal(&vec![entry; MAX_JOURNAL_ENTRIES as usize], &mut at_cap);
        assert_eq!(
            decode_journal_bytes(&at_cap, 64 << 20).unwrap().len(),
            MAX_JOURNAL_ENTRIES as usize
        );
        let mut forged = (MAX_JOURNAL_ENTRIES + 1).to_le_bytes().to_vec();
        forged.extend_from_slice(&at_cap[4..]);
        let refused = decode_journal_bytes(&forged, 64 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(&format!(
                "the journal has {} entries, more than the {MAX_JOURNAL_ENTRIES} a host replays",
                MAX_JOURNAL_ENTRIES + 1
            )),
            "{refused}"
        );
    }
}

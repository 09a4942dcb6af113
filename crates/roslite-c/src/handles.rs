//! The handle table: every object the C side holds is a 64-bit handle into it, never a
//! pointer, so a stale or forged handle is an error rather than a crash, and a WebAssembly
//! guest can hold the same handles.
//!
//! A handle is `(generation << 32) | (slot + 1)`: a released slot's generation moves on, so an
//! old handle to a reused slot is refused. 0 is never a handle.

use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use roslite::lifecycle::{LifecycleNode, SerializedLifecyclePublisher};
use roslite::seam::service::RequestKey;

use roslite::{
    Context, Node, OnSetParametersCallbackHandle, SerializedClient, SerializedPublisher,
    SerializedService, SerializedSubscription, ServiceResponder, Timer,
};

use crate::status::{Failure, ROSLITE_INVALID_HANDLE};

/// A client and its asynchronous calls still pending, by the id the C side knows them by.
pub struct ClientEntry {
    pub(crate) client: SerializedClient,
    pub(crate) next_id: AtomicI64,
    pub(crate) pending: Mutex<HashMap<i64, RequestKey>>,
}

impl ClientEntry {
    pub(crate) fn forget_id(&self, id: i64) -> Option<RequestKey> {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
    }
}

/// What a handle names.
pub enum Object {
    Context(Context),
    Node(Node),
    Publisher(Arc<SerializedPublisher>),
    Subscription(SerializedSubscription),
    Timer(Arc<Timer>),
    Client(Arc<ClientEntry>),
    Executor(Arc<roslite::Executor>),
    Service(Arc<SerializedService>),
    /// The way back to one request's client, until it is answered.
    Responder(Mutex<Option<ServiceResponder>>),
    OnSetParameters(OnSetParametersCallbackHandle),
    /// A callback group and the node it belongs to.
    CallbackGroup(Node, Arc<roslite::CallbackGroup>),
    /// Released, it shuts its node down (unless finalized): see [`LifecycleNode`]'s drop.
    LifecycleNode(Arc<LifecycleNode>),
    /// A publisher that sends only while its lifecycle node is active.
    LifecyclePublisher(Arc<SerializedLifecyclePublisher>),
}

impl Object {
    fn kind(&self) -> &'static str {
        match self {
            Self::Context(_) => "context",
            Self::Node(_) => "node",
            Self::Publisher(_) => "publisher",
            Self::Subscription(_) => "subscription",
            Self::Timer(_) => "timer",
            Self::Client(_) => "client",
            Self::Executor(_) => "executor",
            Self::Service(_) => "service",
            Self::Responder(_) => "responder",
            Self::OnSetParameters(_) => "on-set-parameters callback",
            Self::CallbackGroup(..) => "callback group",
            Self::LifecycleNode(_) => "lifecycle node",
            Self::LifecyclePublisher(_) => "lifecycle publisher",
        }
    }
}

struct Slot {
    generation: u32,
    object: Option<Object>,
}

#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    slots: Vec::new(),
    free: Vec::new(),
});

fn table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn split(handle: u64) -> Option<(usize, u32)> {
    let slot = (handle & 0xFFFF_FFFF).checked_sub(1)?;
    Some((usize::try_from(slot).ok()?, (handle >> 32) as u32))
}

/// Keeps `object` and returns its new handle.
pub fn insert(object: Object) -> u64 {
    let mut table = table();
    let index = match table.free.pop() {
        Some(index) => {
            table.slots[index as usize].object = Some(object);
            index
        }
        None => {
            table.slots.push(Slot {
                generation: 1,
                object: Some(object),
            });
            u32::try_from(table.slots.len() - 1).expect("fewer than 2^32 live handles")
        }
    };
    let generation = table.slots[index as usize].generation;
    (u64::from(generation) << 32) | (u64::from(index) + 1)
}

fn invalid(handle: u64, wanted: &str) -> Failure {
    Failure::new(
        ROSLITE_INVALID_HANDLE,
        format!("{handle:#x} is not a live {wanted} handle (released, never created, or 0)"),
    )
}

/// `f` with the object `handle` names, the table locked: `f` must only copy out what the call
/// needs (an `Arc`, a cheap clone), never run user code.
pub fn with<R>(
    handle: u64,
    wanted: &'static str,
    f: impl FnOnce(&Object) -> Option<R>,
) -> Result<R, Failure> {
    let table = table();
    let object = split(handle)
        .and_then(|(index, generation)| {
            let slot = table.slots.get(index)?;
            (slot.generation == generation).then_some(slot.object.as_ref()?)
        })
        .ok_or_else(|| invalid(handle, wanted))?;
    let kind = object.kind();
    f(object).ok_or_else(|| {
        Failure::new(
            ROSLITE_INVALID_HANDLE,
            format!("{handle:#x} is a {kind} handle; a {wanted} handle is needed here"),
        )
    })
}

/// Ends `handle`; its object is dropped outside the table's lock (dropping a node or context
/// may wait for threads).
pub fn remove(handle: u64) -> Result<(), Failure> {
    let object = {
        let mut table = table();
        let (index, generation) = split(handle).ok_or_else(|| invalid(handle, "roslite"))?;
        let slot = table
            .slots
            .get_mut(index)
            .filter(|s| s.generation == generation && s.object.is_some())
            .ok_or_else(|| invalid(handle, "roslite"))?;
        let object = slot.object.take();
        slot.generation = slot.generation.wrapping_add(1).max(1);
        table.free.push(index as u32);
        object
    };
    drop(object);
    Ok(())
}

pub fn context(handle: u64) -> Result<Context, Failure> {
    with(handle, "context", |o| match o {
        Object::Context(c) => Some(c.clone()),
        _ => None,
    })
}

pub fn node(handle: u64) -> Result<Node, Failure> {
    with(handle, "node", |o| match o {
        Object::Node(n) => Some(n.clone()),
        _ => None,
    })
}

pub fn lifecycle_node(handle: u64) -> Result<Arc<LifecycleNode>, Failure> {
    with(handle, "lifecycle node", |o| match o {
        Object::LifecycleNode(n) => Some(n.clone()),
        _ => None,
    })
}

pub fn executor(handle: u64) -> Result<Arc<roslite::Executor>, Failure> {
    with(handle, "executor", |o| match o {
        Object::Executor(e) => Some(e.clone()),
        _ => None,
    })
}

pub fn publisher(handle: u64) -> Result<Arc<SerializedPublisher>, Failure> {
    with(handle, "publisher", |o| match o {
        Object::Publisher(p) => Some(p.clone()),
        _ => None,
    })
}

/// What `roslite_publish` sends through.
pub enum Sender {
    Publisher(Arc<SerializedPublisher>),
    /// Drops what it is given while its lifecycle node is not active.
    LifecyclePublisher(Arc<SerializedLifecyclePublisher>),
}

impl Sender {
    pub fn publish(&self, cdr: &[u8]) -> Result<(), roslite::PublishError> {
        match self {
            Self::Publisher(p) => p.publish(cdr),
            Self::LifecyclePublisher(p) => p.publish(cdr),
        }
    }
}

/// The publisher or lifecycle publisher `handle` names.
pub fn sender(handle: u64) -> Result<Sender, Failure> {
    with(handle, "publisher", |o| match o {
        Object::Publisher(p) => Some(Sender::Publisher(p.clone())),
        Object::LifecyclePublisher(p) => Some(Sender::LifecyclePublisher(p.clone())),
        _ => None,
    })
}

/// `f` of the publisher `handle` names, or of the one under a lifecycle publisher: for what
/// both answer alike (counts). The table is locked, as in [`with`].
pub fn with_publisher<R>(
    handle: u64,
    f: impl FnOnce(&SerializedPublisher) -> R,
) -> Result<R, Failure> {
    with(handle, "publisher", |o| match o {
        Object::Publisher(p) => Some(f(p)),
        Object::LifecyclePublisher(p) => Some(f(p.inner())),
        _ => None,
    })
}

pub fn timer(handle: u64) -> Result<Arc<Timer>, Failure> {
    with(handle, "timer", |o| match o {
        Object::Timer(t) => Some(t.clone()),
        _ => None,
    })
}

/// Which request the responder `handle` answers (see [`ServiceResponder::request_id`]); None
/// if its path does not name it, or it answered already.
pub fn responder_request_id(handle: u64) -> Result<Option<roslite::RequestId>, Failure> {
    with(handle, "responder", |o| match o {
        Object::Responder(r) => Some(
            r.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .and_then(ServiceResponder::request_id),
        ),
        _ => None,
    })
}

/// Where the responder `handle` sends its answer ([`ServiceResponder::reply_address`]).
pub fn responder_reply_address(handle: u64) -> Result<Option<Vec<u8>>, Failure> {
    with(handle, "responder", |o| match o {
        Object::Responder(r) => Some(
            r.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .and_then(ServiceResponder::reply_address),
        ),
        _ => None,
    })
}

/// A responder handle that answers, from the server `service`, the request at `address`
/// ([`SerializedService::responder_to`]: for restoring a moved node's state); None if no
/// path of the server's context reads the address.
pub fn service_responder_to(service: u64, address: &[u8]) -> Result<Option<u64>, Failure> {
    let responder = with(service, "service", |o| match o {
        Object::Service(s) => Some(s.responder_to(address)),
        _ => None,
    })?;
    Ok(responder.map(|r| insert(Object::Responder(Mutex::new(Some(r))))))
}

/// Takes the responder `handle` names out of the table: a responder answers once.
pub fn take_responder(handle: u64) -> Result<ServiceResponder, Failure> {
    let responder = with(handle, "responder", |o| match o {
        Object::Responder(r) => Some(r.lock().unwrap_or_else(PoisonError::into_inner).take()),
        _ => None,
    })?;
    remove(handle)?;
    responder.ok_or_else(|| invalid(handle, "responder"))
}

pub fn service(handle: u64) -> Result<Arc<SerializedService>, Failure> {
    with(handle, "service", |o| match o {
        Object::Service(s) => Some(s.clone()),
        _ => None,
    })
}

pub fn client(handle: u64) -> Result<Arc<ClientEntry>, Failure> {
    with(handle, "client", |o| match o {
        Object::Client(c) => Some(c.clone()),
        _ => None,
    })
}

/// `roslite_release`.
#[no_mangle]
pub extern "C" fn roslite_release(handle: u64) -> crate::Status {
    crate::guard(|| remove(handle))
}

/// The group `group` names, checked to belong to `node`; 0 is `node`'s default group.
pub fn group_of(node: &Node, group: u64) -> Result<Option<Arc<roslite::CallbackGroup>>, Failure> {
    if group == 0 {
        return Ok(None);
    }
    let (owner, group_arc) = with(group, "callback group", |o| match o {
        Object::CallbackGroup(n, g) => Some((n.fully_qualified_name(), g.clone())),
        _ => None,
    })?;
    if owner != node.fully_qualified_name() {
        return Err(Failure::invalid_argument(format!(
            "callback group {group:#x} belongs to node {owner}, not {}",
            node.fully_qualified_name()
        )));
    }
    Ok(Some(group_arc))
}

//! What a publisher hands its messages to: an [`Outlet`] per backend path, which may lend its
//! own memory ([`Lent`]) for the message to be serialized into.

use std::sync::Arc;

use roslite_cdr::EncodeError;

use super::loan::{Lent, WriteInto};
use super::{MessageInfo, SendTimeout};

/// Receives the serialized messages of one local publisher.
///
/// Per publish, the publisher asks every outlet [`Self::is_active`]; if any is, it asks the
/// active outlets, in attach order, for a [`Self::loan`] big enough for the message (sized
/// from the last message's length, or counted). The first loan is serialized into, in place,
/// and sent with [`OutletLoan::send`](super::OutletLoan::send); every other active outlet gets [`Self::send`] with the
/// same bytes (copied out of the loan once, only when there is such an outlet). When exactly
/// one outlet is active and no subscription in this process takes the message, the publisher
/// first offers it [`Self::send_in_place`], the three steps in one call.
pub trait Outlet: Send + Sync {
    /// `payload` is the whole serialized message, shared by every outlet of this publish.
    ///
    /// # Errors
    /// [`SendTimeout`] when a reliable keep-all reader had no room for `max_blocking_time`.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout>;

    /// Whether a message published now would go anywhere through this outlet. `publish` skips
    /// outlets that say no, and serializes nothing when none says yes. The answer may be stale
    /// by the time the message is sent (a reader may come or go); the outlet copes either way.
    fn is_active(&self) -> bool {
        true
    }

    /// A buffer of `len` bytes in the outlet's own memory (a shared-memory chunk) for the
    /// publisher to serialize into, which may use less of it; `None` (the default): give me
    /// the bytes with [`Self::send`].
    fn loan(&self, _len: usize) -> Option<Lent> {
        None
    }

    /// [`Self::loan`], [`OutletLoan::write`](super::OutletLoan::write) and [`OutletLoan::send`](super::OutletLoan::send) in one call, for a
    /// publish that goes through this outlet alone (nobody else needs the written bytes), so
    /// that no loan is held between the steps: `write` fills `len` bytes and returns how many
    /// it used. `None` (the default) when the outlet lends no memory, or has none now: the
    /// publisher then takes the general path.
    fn send_in_place(
        &self,
        _len: usize,
        _write: &mut WriteInto<'_>,
        _info: &MessageInfo,
    ) -> Option<Result<SentInPlace, EncodeError>> {
        None
    }

    /// Continues a publisher that moved here from another process (docs/migration.md):
    /// its next message is numbered `published + 1`, and `kept` (the messages its
    /// transient-local history held there, oldest first, numbered consecutively up to
    /// `published`) goes to subscriptions that connect from now on, under those numbers, and
    /// to none connected now (they had them from the old publisher). Called before the
    /// publisher publishes anything here. The default keeps nothing and numbers nothing: an
    /// outlet whose receivers learn the numbers from each message.
    fn adopt(&self, _published: u64, _kept: &[(Arc<[u8]>, MessageInfo)]) {}

    /// Counters for tests and tools; `None` when the outlet keeps none.
    fn stats(&self) -> Option<OutletStats> {
        None
    }
}

/// A message [`Outlet::send_in_place`] wrote into the outlet's memory and sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentInPlace {
    /// As [`Outlet::send`]'s.
    pub result: Result<(), SendTimeout>,
    /// Whether the subscribers read the very bytes written (shared memory), as opposed to a
    /// copy the transport makes.
    pub shared_memory: bool,
}

/// Sends `payload` through each of `outlets`, also through those after one that timed out.
///
/// # Errors
/// [`SendTimeout`] if any of them timed out.
pub(crate) fn send_to_each<'a>(
    outlets: impl IntoIterator<Item = &'a Arc<dyn Outlet>>,
    payload: &Arc<[u8]>,
    info: &MessageInfo,
) -> Result<(), SendTimeout> {
    let mut timed_out = false;
    for outlet in outlets {
        timed_out |= outlet.send(payload, info).is_err();
    }
    if timed_out {
        return Err(SendTimeout);
    }
    Ok(())
}

/// What an outlet has carried, by how the bytes reached its own memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutletStats {
    /// `shm`, `uds`, ...
    pub transport: &'static str,
    /// Readers attached now (a subscription that is gone, or whose process died, is no longer
    /// counted once the outlet has seen its connection close).
    pub readers: usize,
    /// Messages sent.
    pub sent: u64,
    /// Bytes of the messages sent.
    pub sent_bytes: u64,
    /// Of `sent_bytes`, those serialized straight into the outlet's loaned memory.
    pub in_place_bytes: u64,
    /// Of `sent_bytes`, those the outlet copied from a buffer it was handed.
    pub copied_bytes: u64,
    /// Buffers of the outlet's own memory in use now (loaned, or held by readers): a gauge
    /// that returns to 0 when nothing is loaned or held (shared memory; 0 for other outlets).
    pub buffers_in_use: usize,
}

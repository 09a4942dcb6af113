//! Publishers and subscriptions of generated message types: the guest encodes and decodes
//! CDR with the types' own code (`roslite-msgs`), the host only moves bytes.

use std::borrow::Borrow;
use std::cell::{Cell, RefCell};
use std::ffi::CString;
use std::marker::PhantomData;
use std::sync::Arc;

use roslite_cdr::Endianness;
use roslite_msgs::Message;

use crate::error::{c_string, check, Error, ErrorCode};
use crate::exports::{kind, DispatchCall, Slot};
use crate::node::{report_failure, CallbackGroup, Node, OwnedHandle};
use crate::qos::QosProfile;
use crate::sys::{self, RawHandle, RawMessageInfo, RawType};

/// A message type's wire names as C strings, alive while the `RawType` pointing at them is.
pub(crate) struct TypeNames {
    name: CString,
    hash: CString,
}

impl TypeNames {
    pub(crate) fn of<T: Message>() -> Self {
        Self {
            name: static_c_string(T::TYPE_NAME),
            hash: static_c_string(T::TYPE_HASH),
        }
    }

    pub(crate) fn raw(&self) -> RawType {
        RawType {
            name: self.name.as_ptr(),
            hash: self.hash.as_ptr(),
        }
    }
}

/// Generated type names and hashes never hold a NUL.
pub(crate) fn static_c_string(text: &'static str) -> CString {
    CString::new(text).expect("generated type names and hashes have no NUL")
}

/// `message` as CDR with its encapsulation header, the bytes the C ABI carries.
pub(crate) fn encode<T: Message>(message: &T) -> Result<Vec<u8>, Error> {
    roslite_cdr::to_vec(message, Endianness::Little).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("cannot serialize {}: {e}", T::TYPE_NAME),
        )
    })
}

/// The bytes at a guest address the host passed to dispatch.
///
/// # Safety
/// `address` points at `length` readable bytes that stay put while the slice is used.
pub(crate) unsafe fn host_bytes<'a>(address: i64, length: i64) -> &'a [u8] {
    let length = usize::try_from(length).unwrap_or(0);
    if address == 0 || length == 0 {
        return &[];
    }
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts(address as usize as *const u8, length) }
}

/// What a subscription learns about a message besides its contents. Timestamps are
/// nanoseconds on the host's monotonic clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageInfo {
    pub source_timestamp_ns: i64,
    pub received_timestamp_ns: i64,
    /// The publisher's sequence number for this message, from 1.
    pub publication_sequence_number: u64,
    pub from_intra_process: bool,
    /// The publisher's id across the ROS graph (its RTPS writer's GUID); all zero for a
    /// publisher in the host's own process.
    pub publisher_gid: [u8; 16],
}

/// Matches of a publisher or subscription.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchedStatus {
    /// Matches so far, including those that ended.
    pub total_count: u32,
    /// Increase of `total_count` since the last call.
    pub total_count_change: u32,
    /// Endpoints matched now.
    pub current_count: u32,
    /// Change of `current_count` since the last call.
    pub current_count_change: i32,
}

/// Messages known lost (SAMPLE_LOST).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageLostStatus {
    pub total_count: u64,
    pub total_count_change: u64,
}

/// The QoS policy an incompatible pair disagreed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QosPolicyKind {
    Reliability,
    Durability,
    Deadline,
    Liveliness,
    Lifespan,
    Ownership,
    DataRepresentation,
    Other,
}

impl QosPolicyKind {
    fn from_c(policy: i64) -> Option<Self> {
        Some(match policy {
            0 => return None,
            1 => Self::Reliability,
            2 => Self::Durability,
            3 => Self::Deadline,
            4 => Self::Liveliness,
            5 => Self::Lifespan,
            6 => Self::Ownership,
            7 => Self::DataRepresentation,
            _ => Self::Other,
        })
    }
}

/// Peers of incompatible QoS found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleQosStatus {
    pub total_count: u32,
    /// Increase since the last call.
    pub total_count_change: u32,
    /// The policy that failed most recently.
    pub last_policy: Option<QosPolicyKind>,
}

/// Status callbacks of one endpoint; they live as long as it does.
#[derive(Debug, Default)]
struct StatusSlots(RefCell<Vec<Slot>>);

impl StatusSlots {
    fn add(
        &self,
        what: &str,
        callback: impl FnMut(DispatchCall) -> i32 + 'static,
        attach: impl FnOnce(u32) -> i32,
    ) {
        let slot = Slot::register(callback);
        let result = check(attach(slot.number()));
        if result.is_ok() {
            self.0.borrow_mut().push(slot);
        }
        report_failure(what, result);
    }

    fn on_matched(&self, endpoint: RawHandle, mut callback: impl FnMut(MatchedStatus) + 'static) {
        // The C callback gives no total change; it is the difference to the last total.
        let last_total = Cell::new(0u32);
        self.add(
            "on_matched",
            move |call| {
                if call.kind == kind::MATCHED {
                    let total_count = call.c as u32;
                    callback(MatchedStatus {
                        total_count,
                        total_count_change: total_count
                            .saturating_sub(last_total.replace(total_count)),
                        current_count: call.a as u32,
                        current_count_change: call.b as i32,
                    });
                }
                0
            },
            // SAFETY: plain integer arguments.
            |slot| unsafe { sys::roslite_v1_on_matched(endpoint, slot) },
        );
    }

    fn on_incompatible_qos(
        &self,
        endpoint: RawHandle,
        mut callback: impl FnMut(IncompatibleQosStatus) + 'static,
    ) {
        let last_total = Cell::new(0u32);
        self.add(
            "on_incompatible_qos",
            move |call| {
                if call.kind == kind::INCOMPATIBLE_QOS {
                    let total_count = call.a as u32;
                    callback(IncompatibleQosStatus {
                        total_count,
                        total_count_change: total_count
                            .saturating_sub(last_total.replace(total_count)),
                        last_policy: QosPolicyKind::from_c(call.b),
                    });
                }
                0
            },
            // SAFETY: plain integer arguments.
            |slot| unsafe { sys::roslite_v1_on_incompatible_qos(endpoint, slot) },
        );
    }
}

/// Publishes messages of type `T` on one topic. Dropping it removes it.
#[derive(Debug)]
pub struct Publisher<T: Message> {
    // Released before the status slots go.
    handle: OwnedHandle,
    statuses: StatusSlots,
    qos: QosProfile,
    _message: PhantomData<fn(T)>,
}

impl<T: Message> Publisher<T> {
    /// Publishes `message` (taken by value, as `roslite`'s, or by reference).
    ///
    /// # Errors
    /// A message that cannot be serialized (a bounded field over its bound), or the host's
    /// refusal.
    pub fn publish(&self, message: impl Borrow<T>) -> Result<(), Error> {
        let bytes = encode(message.borrow())?;
        // SAFETY: `bytes` is alive during the call.
        check(unsafe { sys::roslite_v1_publish(self.handle.raw(), bytes.as_ptr(), bytes.len()) })
    }

    pub fn qos(&self) -> &QosProfile {
        &self.qos
    }

    /// Subscriptions matched with this publisher; 0 if the host cannot say.
    pub fn subscription_count(&self) -> usize {
        let mut count = 0;
        // SAFETY: `count` is writable during the call.
        let status =
            unsafe { sys::roslite_v1_publisher_subscription_count(self.handle.raw(), &mut count) };
        if status == sys::STATUS_OK {
            count
        } else {
            0
        }
    }

    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + 'static) {
        self.statuses.on_matched(self.handle.raw(), callback);
    }

    pub fn on_incompatible_qos(&self, callback: impl FnMut(IncompatibleQosStatus) + 'static) {
        self.statuses
            .on_incompatible_qos(self.handle.raw(), callback);
    }
}

/// Receives messages of type `T` from one topic. Dropping it removes it.
#[derive(Debug)]
pub struct Subscription<T: Message> {
    // Released before the slots go.
    handle: OwnedHandle,
    _message_slot: Slot,
    statuses: StatusSlots,
    qos: QosProfile,
    _message: PhantomData<fn(T)>,
}

impl<T: Message> Subscription<T> {
    pub fn qos(&self) -> &QosProfile {
        &self.qos
    }

    /// Publishers matched with this subscription; 0 if the host cannot say.
    pub fn publisher_count(&self) -> usize {
        let mut count = 0;
        // SAFETY: `count` is writable during the call.
        let status =
            unsafe { sys::roslite_v1_subscription_publisher_count(self.handle.raw(), &mut count) };
        if status == sys::STATUS_OK {
            count
        } else {
            0
        }
    }

    pub fn on_matched(&self, callback: impl FnMut(MatchedStatus) + 'static) {
        self.statuses.on_matched(self.handle.raw(), callback);
    }

    pub fn on_incompatible_qos(&self, callback: impl FnMut(IncompatibleQosStatus) + 'static) {
        self.statuses
            .on_incompatible_qos(self.handle.raw(), callback);
    }

    pub fn on_message_lost(&self, mut callback: impl FnMut(MessageLostStatus) + 'static) {
        let subscription = self.handle.raw();
        self.statuses.add(
            "on_message_lost",
            move |call| {
                if call.kind == kind::MESSAGE_LOST {
                    callback(MessageLostStatus {
                        total_count: call.a as u64,
                        total_count_change: call.b as u64,
                    });
                }
                0
            },
            // SAFETY: plain integer arguments.
            |slot| unsafe { sys::roslite_v1_subscription_on_message_lost(subscription, slot) },
        );
    }
}

/// Subscription callback shapes, as in `roslite`: the message by value (`|msg: T|`), by
/// reference (`|msg: &T|`) or shared (`|msg: Arc<T>|`), each optionally followed by
/// `&MessageInfo`.
pub trait SubscriptionCallback<T, Shape>: 'static {
    #[doc(hidden)]
    fn into_fn(self) -> BoxedMessageCallback<T>;
}

/// Every shape of [`SubscriptionCallback`] as one.
#[doc(hidden)]
pub type BoxedMessageCallback<T> = Box<dyn FnMut(T, &MessageInfo)>;

/// Markers for [`SubscriptionCallback`] shapes.
pub mod shape {
    pub struct Owned;
    pub struct OwnedWithInfo;
    pub struct Borrowed;
    pub struct BorrowedWithInfo;
    pub struct Shared;
    pub struct SharedWithInfo;
}

impl<T: Message, F: FnMut(T) + 'static> SubscriptionCallback<T, shape::Owned> for F {
    fn into_fn(mut self) -> BoxedMessageCallback<T> {
        Box::new(move |message, _| self(message))
    }
}

impl<T: Message, F: FnMut(T, &MessageInfo) + 'static> SubscriptionCallback<T, shape::OwnedWithInfo>
    for F
{
    fn into_fn(self) -> BoxedMessageCallback<T> {
        Box::new(self)
    }
}

impl<T: Message, F: FnMut(&T) + 'static> SubscriptionCallback<T, shape::Borrowed> for F {
    fn into_fn(mut self) -> BoxedMessageCallback<T> {
        Box::new(move |message, _| self(&message))
    }
}

impl<T: Message, F: FnMut(&T, &MessageInfo) + 'static>
    SubscriptionCallback<T, shape::BorrowedWithInfo> for F
{
    fn into_fn(mut self) -> BoxedMessageCallback<T> {
        Box::new(move |message, info| self(&message, info))
    }
}

impl<T: Message, F: FnMut(Arc<T>) + 'static> SubscriptionCallback<T, shape::Shared> for F {
    fn into_fn(mut self) -> BoxedMessageCallback<T> {
        Box::new(move |message, _| self(Arc::new(message)))
    }
}

impl<T: Message, F: FnMut(Arc<T>, &MessageInfo) + 'static>
    SubscriptionCallback<T, shape::SharedWithInfo> for F
{
    fn into_fn(mut self) -> BoxedMessageCallback<T> {
        Box::new(move |message, info| self(Arc::new(message), info))
    }
}

impl Node {
    /// A publisher on `topic`; `qos` is a [`QosProfile`] or, as in rclcpp, a history depth.
    ///
    /// # Errors
    /// An invalid topic name or QoS profile.
    pub fn create_publisher<T: Message>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
    ) -> Result<Publisher<T>, Error> {
        let qos = qos.into();
        let raw_qos = qos.to_raw()?;
        let topic = c_string(topic, "topic")?;
        let type_names = TypeNames::of::<T>();
        let raw_type = type_names.raw();
        let handle = OwnedHandle::create(|out| {
            // SAFETY: every pointer is alive during the call.
            unsafe {
                sys::roslite_v1_publisher_create(
                    self.raw(),
                    topic.as_ptr(),
                    &raw_type,
                    &raw_qos,
                    out,
                )
            }
        })?;
        Ok(Publisher {
            handle,
            statuses: StatusSlots::default(),
            qos,
            _message: PhantomData,
        })
    }

    /// A subscription on `topic` whose callback runs when the host's executor spins this
    /// node. A message that does not decode as `T` is logged and dropped.
    ///
    /// # Errors
    /// An invalid topic name or QoS profile.
    pub fn create_subscription<T: Message, Shape>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
        callback: impl SubscriptionCallback<T, Shape>,
    ) -> Result<Subscription<T>, Error> {
        self.create_subscription_in(&CallbackGroup::DEFAULT, topic, qos, callback)
    }

    /// As [`Self::create_subscription`], in `group`.
    ///
    /// # Errors
    /// As [`Self::create_subscription`].
    pub fn create_subscription_in<T: Message, Shape>(
        &self,
        group: &CallbackGroup,
        topic: &str,
        qos: impl Into<QosProfile>,
        callback: impl SubscriptionCallback<T, Shape>,
    ) -> Result<Subscription<T>, Error> {
        let qos = qos.into();
        let raw_qos = qos.to_raw()?;
        let topic_name = topic.to_owned();
        let topic = c_string(topic, "topic")?;
        let type_names = TypeNames::of::<T>();
        let raw_type = type_names.raw();
        let mut callback = callback.into_fn();
        let logger = self.logger().clone();
        let message_slot = Slot::register(move |call| {
            if call.kind != kind::MESSAGE {
                return 0;
            }
            // SAFETY: the host passes the message bytes and its info, alive during the call.
            let (bytes, info) = unsafe { (host_bytes(call.a, call.b), message_info(call.c)) };
            match roslite_cdr::from_bytes::<T>(bytes) {
                Ok(message) => callback(message, &info),
                Err(e) => logger.error(format_args!(
                    "dropped a message on '{topic_name}' that is not a {}: {e}",
                    T::TYPE_NAME
                )),
            }
            0
        });
        let handle = OwnedHandle::create(|out| {
            // SAFETY: every pointer is alive during the call.
            unsafe {
                sys::roslite_v1_subscription_create(
                    self.raw(),
                    group.raw(),
                    topic.as_ptr(),
                    &raw_type,
                    &raw_qos,
                    message_slot.number(),
                    out,
                )
            }
        })?;
        Ok(Subscription {
            handle,
            _message_slot: message_slot,
            statuses: StatusSlots::default(),
            qos,
            _message: PhantomData,
        })
    }
}

/// # Safety
/// `address` is 0 or points at a `roslite_message_info`.
unsafe fn message_info(address: i64) -> MessageInfo {
    if address == 0 {
        return MessageInfo::default();
    }
    // SAFETY: as the caller promises.
    let raw = unsafe { (address as usize as *const RawMessageInfo).read_unaligned() };
    MessageInfo {
        source_timestamp_ns: raw.source_timestamp_ns,
        received_timestamp_ns: raw.received_timestamp_ns,
        publication_sequence_number: raw.publication_sequence_number,
        from_intra_process: raw.from_intra_process,
        publisher_gid: raw.publisher_gid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslite_msgs::std_msgs::msg::String as StringMsg;

    fn takes<T: Message, Shape>(_: impl SubscriptionCallback<T, Shape>) {}

    #[test]
    fn every_roslite_callback_shape_is_accepted() {
        takes(|_: StringMsg| {});
        takes(|_: &StringMsg| {});
        takes(|_: Arc<StringMsg>| {});
        takes(|_: StringMsg, _: &MessageInfo| {});
        takes(|_: &StringMsg, _: &MessageInfo| {});
        takes(|_: Arc<StringMsg>, _: &MessageInfo| {});
    }

    #[test]
    fn a_message_encodes_to_what_decodes_back() {
        let message = StringMsg {
            data: "Hello World: 1".into(),
        };
        let bytes = encode(&message).unwrap();
        // The encapsulation header of little-endian plain CDR.
        assert_eq!(&bytes[..2], &[0, 1]);
        // SAFETY: `bytes` outlives the slice.
        let slice = unsafe { host_bytes(bytes.as_ptr() as usize as i64, bytes.len() as i64) };
        assert_eq!(
            roslite_cdr::from_bytes::<StringMsg>(slice).unwrap(),
            message
        );
    }

    #[test]
    fn message_info_reads_the_c_layout() {
        let raw = RawMessageInfo {
            source_timestamp_ns: 5,
            received_timestamp_ns: 7,
            publication_sequence_number: 3,
            from_intra_process: true,
            publisher_gid: [9; 16],
        };
        // SAFETY: points at a live RawMessageInfo.
        let info = unsafe { message_info(&raw as *const RawMessageInfo as usize as i64) };
        assert_eq!(info.publication_sequence_number, 3);
        assert!(info.from_intra_process);
        assert_eq!(info.publisher_gid, [9; 16]);
        // SAFETY: 0 is "none".
        assert_eq!(unsafe { message_info(0) }, MessageInfo::default());
    }
}

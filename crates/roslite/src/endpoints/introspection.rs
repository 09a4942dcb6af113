//! Service introspection (rcl's service event publisher, Iron and later): a server or client
//! whose introspection is on publishes each step of each call on `<service>/_service_event`
//! as the service's `<Service>_Event` message, which `ros2 service echo` and `roslite service
//! echo` print.
//!
//! As in rcl, introspection is off until the application turns it on; a client publishes
//! `REQUEST_SENT` and `RESPONSE_RECEIVED`, a server `REQUEST_RECEIVED` and `RESPONSE_SENT`. Each
//! event names the client (its global id, the one servers see in its requests) and the
//! request's sequence number from that client, so one call's four events share both; with
//! `Metadata` the event leaves out the request and response. Off costs one atomic load per
//! call.
//!
//! Events go out through an outlet: a typed publisher of the service's event type for typed
//! servers and clients, or a serialized publisher and a [`ServiceEventEncoder`] for those
//! whose type is known only at run time (the C ABI's). The node layer makes the
//! publishers (this layer sits below it) and hands the makers in when an endpoint is created.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use roslite_cdr::{CdrEncode, CdrWriter, Endianness, SharedBuf};
use roslite_msgs::service_msgs::msg::ServiceEventInfo;
use roslite_msgs::Service as ServiceType;

use crate::endpoints::serialized::{SerializedPublisher, TypeInfo};
use crate::vocabulary::log::Logger;
use crate::vocabulary::qos::{QosError, QosProfile};
use crate::vocabulary::time::{RosClockSource, Time};

/// What rcl appends to a service's name to name its event topic
/// (`RCL_SERVICE_INTROSPECTION_TOPIC_POSTFIX`).
pub const SERVICE_EVENT_TOPIC_SUFFIX: &str = "/_service_event";

/// How much of its calls a server or client publishes (rcl's
/// `rcl_service_introspection_state_t`, rclpy's `ServiceIntrospectionState`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IntrospectionState {
    /// Nothing: no event publisher exists.
    #[default]
    Off,
    /// Each event's `info` (kind, time, client id, sequence number), without the request or
    /// response.
    Metadata,
    /// Each event with the request or response it is about.
    Contents,
}

impl IntrospectionState {
    fn to_u8(self) -> u8 {
        match self {
            Self::Off => 0,
            Self::Metadata => 1,
            Self::Contents => 2,
        }
    }

    fn from_u8(value: u8) -> Self {
        match value {
            1 => Self::Metadata,
            2 => Self::Contents,
            _ => Self::Off,
        }
    }
}

/// Why introspection could not be turned on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntrospectionError {
    /// The QoS profile given for the event publisher is invalid.
    Qos(QosError),
    /// The service's event type is not known, or its events cannot carry contents (a
    /// serialized endpoint whose encoder lacks the type's definition): the text says which.
    EventType(String),
}

impl std::fmt::Display for IntrospectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Qos(e) => e.fmt(f),
            Self::EventType(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for IntrospectionError {}

impl From<QosError> for IntrospectionError {
    fn from(e: QosError) -> Self {
        Self::Qos(e)
    }
}

/// Which step of a call an event records (`service_msgs/msg/ServiceEventInfo`'s constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServiceEventKind {
    RequestSent,
    RequestReceived,
    ResponseSent,
    ResponseReceived,
}

impl ServiceEventKind {
    fn code(self) -> u8 {
        match self {
            Self::RequestSent => ServiceEventInfo::REQUEST_SENT,
            Self::RequestReceived => ServiceEventInfo::REQUEST_RECEIVED,
            Self::ResponseSent => ServiceEventInfo::RESPONSE_SENT,
            Self::ResponseReceived => ServiceEventInfo::RESPONSE_RECEIVED,
        }
    }
}

/// Where an introspected endpoint's events go.
pub(crate) trait EventOutlet: Send + Sync + 'static {
    /// How the endpoint holds a request and a response.
    type Request;
    type Response;

    /// The event `info`, with the request or response when given, as CDR bytes.
    fn encode(
        &self,
        info: ServiceEventInfo,
        request: Option<Self::Request>,
        response: Option<Self::Response>,
    ) -> Result<Vec<u8>, String>;

    /// Where the bytes go.
    fn publisher(&self) -> &SerializedPublisher;
}

/// A typed endpoint's events: the service's generated event type, serialized here and sent
/// through a serialized publisher, so that a program with many service types does not carry
/// a typed publisher's code for each event type it will most likely never publish.
pub(crate) struct TypedEvents<S: ServiceType> {
    publisher: SerializedPublisher,
    _service: PhantomData<fn(S)>,
}

impl<S: ServiceType> TypedEvents<S> {
    /// The events on `topic`, published with `qos` through a publisher `make_publisher` makes.
    pub(crate) fn new(
        make_publisher: &EventPublisherFactory,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Self, IntrospectionError> {
        qos.validate()?;
        Ok(Self {
            publisher: make_publisher(topic.to_owned(), qos, TypeInfo::of::<S::Event>()),
            _service: PhantomData,
        })
    }
}

impl<S: ServiceType> EventOutlet for TypedEvents<S> {
    type Request = S::Request;
    type Response = S::Response;

    fn encode(
        &self,
        info: ServiceEventInfo,
        request: Option<S::Request>,
        response: Option<S::Response>,
    ) -> Result<Vec<u8>, String> {
        let event = S::event(info, request, response);
        roslite_cdr::to_vec(&event, Endianness::Little).map_err(|e| e.to_string())
    }

    fn publisher(&self) -> &SerializedPublisher {
        &self.publisher
    }
}

/// Builds the CDR bytes (with the encapsulation header) of a service's event messages for
/// servers and clients whose type is known only at run time: requests and responses are CDR
/// bytes too, and moving one into the event means encoding it again at its new offset, which
/// takes the type's definition.
pub trait ServiceEventEncoder: Send + Sync {
    /// The event `info`, with the request or response (CDR with its encapsulation header)
    /// when given; an error says why it cannot be encoded.
    fn encode(
        &self,
        info: &ServiceEventInfo,
        request: Option<&[u8]>,
        response: Option<&[u8]>,
    ) -> Result<Vec<u8>, String>;
}

/// An event without a request or response (what `Metadata` publishes), whatever the service:
/// its `info` and two empty sequences.
pub fn metadata_event(info: &ServiceEventInfo) -> Vec<u8> {
    struct Metadata<'a>(&'a ServiceEventInfo);
    impl CdrEncode for Metadata<'_> {
        fn encode(&self, e: &mut CdrWriter<'_>) -> Result<(), roslite_cdr::EncodeError> {
            self.0.encode(e)?;
            0u32.encode(e)?; // request[<=1]
            0u32.encode(e) // response[<=1]
        }
    }
    // The info's fields are fixed size: nothing in it can exceed a bound.
    roslite_cdr::to_vec(&Metadata(info), Endianness::Little).unwrap_or_default()
}

/// The event type a serialized endpoint announces, and how its events are encoded.
#[derive(Clone)]
pub struct ServiceEvents {
    pub event_type: TypeInfo,
    pub encoder: Arc<dyn ServiceEventEncoder>,
}

/// A serialized endpoint's events.
pub(crate) struct SerializedEvents {
    pub(crate) publisher: SerializedPublisher,
    pub(crate) encoder: Arc<dyn ServiceEventEncoder>,
}

impl SerializedEvents {
    /// The events of a serialized server or client on `topic`, published with `qos` through
    /// a publisher `make_publisher` makes of the type `events` gives (asked only now).
    pub(crate) fn new(
        make_publisher: &EventPublisherFactory,
        topic: &str,
        qos: QosProfile,
        events: impl FnOnce() -> Result<ServiceEvents, IntrospectionError>,
    ) -> Result<Self, IntrospectionError> {
        qos.validate()?;
        let events = events()?;
        Ok(Self {
            publisher: make_publisher(topic.to_owned(), qos, events.event_type),
            encoder: events.encoder,
        })
    }
}

impl EventOutlet for SerializedEvents {
    type Request = SharedBuf;
    type Response = SharedBuf;

    fn encode(
        &self,
        info: ServiceEventInfo,
        request: Option<SharedBuf>,
        response: Option<SharedBuf>,
    ) -> Result<Vec<u8>, String> {
        if request.is_none() && response.is_none() {
            return Ok(metadata_event(&info));
        }
        self.encoder.encode(
            &info,
            request.as_ref().map(SharedBuf::bytes),
            response.as_ref().map(SharedBuf::bytes),
        )
    }

    fn publisher(&self) -> &SerializedPublisher {
        &self.publisher
    }
}

/// Makes the node's publisher of a service's events: topic (fully qualified), QoS, event type.
pub(crate) type EventPublisherFactory =
    Box<dyn Fn(String, QosProfile, TypeInfo) -> SerializedPublisher + Send + Sync>;

/// A typed server's or client's introspection. Its outlet is a trait object, made only when
/// introspection is turned on: the code that encodes a service's events is then only in
/// programs that turn it on for that service, not in every program with a server of it.
pub(crate) type TypedIntrospection<S> = Introspection<
    dyn EventOutlet<Request = <S as ServiceType>::Request, Response = <S as ServiceType>::Response>,
>;

/// What a server or client needs to introspect its calls.
pub(crate) struct Introspection<O: EventOutlet + ?Sized> {
    clock: RosClockSource,
    topic: String,
    state: AtomicU8,
    outlet: Mutex<Option<Box<O>>>,
}

impl<O: EventOutlet + ?Sized> Introspection<O> {
    /// Introspection of `service` (fully qualified), off; stamps come from `clock`.
    pub(crate) fn new(service: &str, clock: RosClockSource) -> Self {
        Self {
            clock,
            topic: format!("{service}{SERVICE_EVENT_TOPIC_SUFFIX}"),
            state: AtomicU8::new(IntrospectionState::Off.to_u8()),
            outlet: Mutex::new(None),
        }
    }

    fn outlet(&self) -> MutexGuard<'_, Option<Box<O>>> {
        self.outlet.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns introspection on (making the outlet with `make`, given the event topic), changes
    /// what it publishes, or turns it off (dropping the outlet and its publisher). As in rcl,
    /// an outlet that exists is kept, with the QoS it was made with; turn introspection off
    /// first to change it.
    pub(crate) fn configure(
        &self,
        state: IntrospectionState,
        make: impl FnOnce(&str) -> Result<Box<O>, IntrospectionError>,
    ) -> Result<(), IntrospectionError> {
        let mut outlet = self.outlet();
        if state == IntrospectionState::Off {
            self.state.store(state.to_u8(), Ordering::Release);
            *outlet = None;
            return Ok(());
        }
        if outlet.is_none() {
            *outlet = Some(make(&self.topic)?);
        }
        self.state.store(state.to_u8(), Ordering::Release);
        Ok(())
    }

    pub(crate) fn state(&self) -> IntrospectionState {
        IntrospectionState::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Whether events are published at all: the one check on a call's path when they are not.
    pub(crate) fn is_on(&self) -> bool {
        self.state() != IntrospectionState::Off
    }

    /// Whether events carry requests and responses: the caller copies them only then.
    pub(crate) fn wants_contents(&self) -> bool {
        self.state() == IntrospectionState::Contents
    }

    /// The time an event's stamp would show now: a client takes it before it sends, so
    /// that its `REQUEST_SENT` is not stamped after the server's `REQUEST_RECEIVED`.
    pub(crate) fn now(&self) -> Time {
        self.clock.now()
    }

    /// Publishes one event about a request (`kind` is a request kind), stamped `stamp` or
    /// now.
    pub(crate) fn request(
        &self,
        kind: ServiceEventKind,
        client_gid: [u8; 16],
        sequence_number: i64,
        request: Option<O::Request>,
        stamp: Option<Time>,
    ) {
        let stamp = stamp.unwrap_or_else(|| self.now());
        self.publish(kind, stamp, client_gid, sequence_number, request, None);
    }

    /// Publishes one event about a response (`kind` is a response kind).
    pub(crate) fn response(
        &self,
        kind: ServiceEventKind,
        client_gid: [u8; 16],
        sequence_number: i64,
        response: Option<O::Response>,
    ) {
        self.publish(
            kind,
            self.now(),
            client_gid,
            sequence_number,
            None,
            response,
        );
    }

    fn publish(
        &self,
        kind: ServiceEventKind,
        stamp: Time,
        client_gid: [u8; 16],
        sequence_number: i64,
        request: Option<O::Request>,
        response: Option<O::Response>,
    ) {
        let contents = self.wants_contents();
        let info = ServiceEventInfo {
            event_type: kind.code(),
            stamp: stamp.to_msg(),
            client_gid,
            sequence_number,
        };
        let outlet = self.outlet();
        let Some(outlet) = outlet.as_ref() else {
            return; // turned off since the caller looked
        };
        let bytes = outlet.encode(
            info,
            request.filter(|_| contents),
            response.filter(|_| contents),
        );
        send(outlet.publisher(), bytes, &self.topic);
    }
}

/// Publishes an event's `bytes` (the part of publishing that is the same for every service
/// type, kept out of the generic code). A call does not fail because its event could not go
/// out; rcl would return the error from the call itself, which a caller cannot act on either.
fn send(publisher: &SerializedPublisher, bytes: Result<Vec<u8>, String>, topic: &str) {
    let sent = bytes.and_then(|bytes| publisher.publish(&bytes).map_err(|e| e.to_string()));
    if let Err(e) = sent {
        // Made only for a failure: every server and client has an introspection.
        Logger::new("roslite.service_introspection").warn(format_args!(
            "could not publish a service event on '{topic}': {e}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;
    use roslite_msgs::example_interfaces::srv::AddTwoInts;

    /// A metadata event is the same bytes whatever the service: the generated event type's
    /// with both sequences empty.
    #[test]
    fn a_metadata_event_is_the_generated_event_without_contents() {
        let info = ServiceEventInfo {
            event_type: ServiceEventInfo::RESPONSE_RECEIVED,
            stamp: TimeMsg {
                sec: 12,
                nanosec: 34,
            },
            client_gid: [9; 16],
            sequence_number: -3,
        };
        let generated = AddTwoInts::event(info.clone(), None, None);
        assert_eq!(
            metadata_event(&info),
            roslite_cdr::to_vec(&generated, Endianness::Little).unwrap()
        );
    }
}

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
//! The event publisher is made by the node layer (this layer sits below it), handed in as
//! an [`EventPublisherFactory`] when the server or client is created.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use roslite_msgs::service_msgs::msg::ServiceEventInfo;
use roslite_msgs::Service as ServiceType;

use crate::endpoints::pubsub::Publisher;
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

/// Makes the node's publisher of a service's events: topic (fully qualified) and QoS.
pub(crate) type EventPublisherFactory<S> =
    Box<dyn Fn(String, QosProfile) -> Publisher<<S as ServiceType>::Event> + Send + Sync>;

/// What a server or client needs to introspect its calls.
pub(crate) struct Introspection<S: ServiceType> {
    make_publisher: EventPublisherFactory<S>,
    clock: RosClockSource,
    topic: String,
    state: AtomicU8,
    publisher: Mutex<Option<Publisher<S::Event>>>,
    logger: Logger,
}

impl<S: ServiceType> Introspection<S> {
    /// Introspection of `service` (fully qualified), off; stamps come from `clock`.
    pub(crate) fn new(
        service: &str,
        clock: RosClockSource,
        make_publisher: EventPublisherFactory<S>,
    ) -> Self {
        Self {
            make_publisher,
            clock,
            topic: format!("{service}{SERVICE_EVENT_TOPIC_SUFFIX}"),
            state: AtomicU8::new(IntrospectionState::Off.to_u8()),
            publisher: Mutex::new(None),
            logger: Logger::new("roslite.service_introspection"),
        }
    }

    fn publisher(&self) -> MutexGuard<'_, Option<Publisher<S::Event>>> {
        self.publisher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns introspection on (creating the event publisher with `qos`), changes what it
    /// publishes, or turns it off (removing the publisher). As in rcl, a publisher that
    /// exists keeps the QoS it was made with; turn introspection off first to change it.
    pub(crate) fn configure(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), QosError> {
        let mut publisher = self.publisher();
        if state == IntrospectionState::Off {
            self.state.store(state.to_u8(), Ordering::Release);
            *publisher = None;
            return Ok(());
        }
        if publisher.is_none() {
            qos.validate()?;
            *publisher = Some((self.make_publisher)(self.topic.clone(), qos));
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

    /// Whether events carry requests and responses: the caller clones them only then.
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
        request: Option<S::Request>,
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
        response: Option<S::Response>,
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
        request: Option<S::Request>,
        response: Option<S::Response>,
    ) {
        let contents = self.wants_contents();
        let info = ServiceEventInfo {
            event_type: kind.code(),
            stamp: stamp.to_msg(),
            client_gid,
            sequence_number,
        };
        let event = S::event(
            info,
            request.filter(|_| contents),
            response.filter(|_| contents),
        );
        let publisher = self.publisher();
        let Some(publisher) = publisher.as_ref() else {
            return; // turned off since the caller looked
        };
        // A call does not fail because its event could not go out; rcl would return the
        // error from the call itself, which a caller cannot act on either.
        if let Err(e) = publisher.publish(event) {
            self.logger.warn(format_args!(
                "could not publish a service event on '{}': {e}",
                self.topic
            ));
        }
    }
}

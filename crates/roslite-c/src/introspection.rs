//! Service introspection of C ABI servers and clients (`roslite_service_configure_introspection`,
//! `roslite_client_configure_introspection`): their calls published on
//! `<service>/_service_event`, as rcl's `rcl_service_configure_service_introspection` does.
//!
//! The C ABI knows a service by name and the hashes of its request and response, so the event
//! type's hash comes from what the runtime knows (`types::known_hash`). An event with
//! contents carries the request or response encoded again inside the event, at another
//! offset, which takes the service's definition: the full library decodes and re-encodes
//! them with the dynamic codec; the size-optimised one, which carries no definitions, refuses
//! `CONTENTS` and publishes `METADATA` events, which need none.

use std::sync::Arc;

use roslite::introspection::{ServiceEventEncoder, ServiceEvents};
use roslite::msgs::service_msgs::msg::ServiceEventInfo;
use roslite::{IntrospectionError, IntrospectionState};

use crate::convert::{qos_of, CQos};
use crate::handles;
use crate::status::{guard, Failure, Status, ROSLITE_INVALID_QOS, ROSLITE_UNKNOWN_TYPE};

/// `ROSLITE_SERVICE_INTROSPECTION_OFF`, `_METADATA` and `_CONTENTS`: rcl's
/// `rcl_service_introspection_state_t` values.
fn state_of(state: i32) -> Result<IntrospectionState, Failure> {
    match state {
        0 => Ok(IntrospectionState::Off),
        1 => Ok(IntrospectionState::Metadata),
        2 => Ok(IntrospectionState::Contents),
        other => Err(Failure::invalid_argument(format!(
            "introspection state {other} is none of ROSLITE_SERVICE_INTROSPECTION_OFF (0), \
             _METADATA (1) and _CONTENTS (2)"
        ))),
    }
}

fn failure(e: IntrospectionError) -> Failure {
    match e {
        IntrospectionError::Qos(e) => Failure::new(ROSLITE_INVALID_QOS, e.to_string()),
        other => Failure::new(ROSLITE_UNKNOWN_TYPE, other.to_string()),
    }
}

/// The event type of service `service_type` (`pkg/srv/Name`) and its encoder, for `state`.
fn service_events(service_type: &str, state: IntrospectionState) -> Result<ServiceEvents, Failure> {
    let event = format!("{service_type}_Event");
    let hash = crate::types::known_hash(&event)?;
    let event_type = crate::convert::type_info(&event, &hash, "srv")?;
    Ok(ServiceEvents {
        event_type,
        encoder: encoder(service_type, state)?,
    })
}

/// Encodes events with contents by the service's definition.
#[cfg(feature = "definitions")]
struct DefinedEvents {
    set: std::sync::Arc<roslite_msg_gen::registry::InterfaceSet>,
    event: roslite_msg_gen::ast::TypeName,
    request: roslite_msg_gen::ast::TypeName,
    response: roslite_msg_gen::ast::TypeName,
    info: roslite_msg_gen::ast::TypeName,
}

#[cfg(feature = "definitions")]
impl ServiceEventEncoder for DefinedEvents {
    fn encode(
        &self,
        info: &ServiceEventInfo,
        request: Option<&[u8]>,
        response: Option<&[u8]>,
    ) -> Result<Vec<u8>, String> {
        use roslite_msg_gen::dynamic::{self, Value};
        let decode = |ty, bytes: Option<&[u8]>| -> Result<Value, String> {
            Ok(Value::Array(match bytes {
                Some(bytes) => vec![dynamic::decode(&self.set, ty, bytes)
                    .map_err(|e| format!("cannot decode it as {ty}: {e}"))?],
                None => Vec::new(),
            }))
        };
        let info_bytes = roslite::msgs::cdr::to_vec(info, roslite::msgs::cdr::Endianness::Little)
            .map_err(|e| e.to_string())?;
        let info =
            dynamic::decode(&self.set, &self.info, &info_bytes).map_err(|e| e.to_string())?;
        let event = Value::Struct(vec![
            ("info".to_owned(), info),
            ("request".to_owned(), decode(&self.request, request)?),
            ("response".to_owned(), decode(&self.response, response)?),
        ]);
        dynamic::encode(
            &self.set,
            &self.event,
            &event,
            roslite::msgs::cdr::Endianness::Little,
        )
        .map_err(|e| e.to_string())
    }
}

#[cfg(feature = "definitions")]
fn encoder(
    service_type: &str,
    state: IntrospectionState,
) -> Result<Arc<dyn ServiceEventEncoder>, Failure> {
    use roslite_msg_gen::ast::TypeName;
    let _ = state; // every state can be encoded with the definition at hand
    let set = crate::types::interface_set()?;
    let name = |suffix: &str| {
        TypeName::parse(&format!("{service_type}{suffix}")).ok_or_else(|| {
            Failure::invalid_argument(format!("'{service_type}' is not a service type name"))
        })
    };
    let (event, request, response) = (name("_Event")?, name("_Request")?, name("_Response")?);
    if set.message(&event).is_none() {
        return Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!("the definition of {service_type} is unknown to roslite"),
        ));
    }
    Ok(Arc::new(DefinedEvents {
        set,
        event,
        request,
        response,
        info: TypeName::parse("service_msgs/msg/ServiceEventInfo")
            .ok_or_else(|| Failure::invalid_argument("internal: ServiceEventInfo's name"))?,
    }))
}

/// Refuses contents: this build carries no definitions to encode them with.
#[cfg(not(feature = "definitions"))]
struct MetadataOnly;

#[cfg(not(feature = "definitions"))]
impl ServiceEventEncoder for MetadataOnly {
    fn encode(
        &self,
        _: &ServiceEventInfo,
        _: Option<&[u8]>,
        _: Option<&[u8]>,
    ) -> Result<Vec<u8>, String> {
        Err("this size-optimised roslite cannot put requests and responses into events".into())
    }
}

#[cfg(not(feature = "definitions"))]
fn encoder(
    service_type: &str,
    state: IntrospectionState,
) -> Result<Arc<dyn ServiceEventEncoder>, Failure> {
    if state == IntrospectionState::Contents {
        return Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!(
                "introspecting the contents of {service_type}'s calls takes its definition, \
                 which this size-optimised roslite (built without the `definitions` feature) \
                 leaves out; use ROSLITE_SERVICE_INTROSPECTION_METADATA, or the full library"
            ),
        ));
    }
    Ok(Arc::new(MetadataOnly))
}

/// The QoS of the event publisher: `qos`, or rclcpp's `SystemDefaultsQoS` when NULL.
///
/// # Safety
/// `qos` is null or readable.
unsafe fn event_qos(qos: *const CQos) -> Result<roslite::QosProfile, Failure> {
    if qos.is_null() {
        Ok(roslite::QosProfile::SYSTEM_DEFAULT)
    } else {
        qos_of(qos)
    }
}

/// # Safety
/// `qos` is null or readable.
#[no_mangle]
pub unsafe extern "C" fn roslite_service_configure_introspection(
    server: u64,
    qos: *const CQos,
    state: i32,
) -> Status {
    guard(|| {
        let state = state_of(state)?;
        let qos = event_qos(qos)?;
        let server = handles::service(server)?;
        let service_type = server.service_type_name();
        configure(state, |events| {
            server.configure_introspection(qos, state, || events(service_type))
        })
    })
}

/// # Safety
/// `qos` is null or readable.
#[no_mangle]
pub unsafe extern "C" fn roslite_client_configure_introspection(
    client: u64,
    qos: *const CQos,
    state: i32,
) -> Status {
    guard(|| {
        let state = state_of(state)?;
        let qos = event_qos(qos)?;
        let entry = handles::client(client)?;
        let service_type = entry.client.service_type_name();
        configure(state, |events| {
            entry
                .client
                .configure_introspection(qos, state, || events(service_type))
        })
    })
}

/// Runs `apply` with the maker of the service's events, giving back the failure the maker
/// met (with its status) rather than the text `apply` carries it in.
fn configure(
    state: IntrospectionState,
    apply: impl FnOnce(
        &mut dyn FnMut(&str) -> Result<ServiceEvents, IntrospectionError>,
    ) -> Result<(), IntrospectionError>,
) -> Result<(), Failure> {
    let mut met = None;
    let outcome = apply(&mut |service_type| {
        service_events(service_type, state).map_err(|failure| {
            let text = failure.message.clone();
            met = Some(failure);
            IntrospectionError::EventType(text)
        })
    });
    match (outcome, met) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(failure)) => Err(failure),
        (Err(e), None) => Err(failure(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The info of an event with contents (which only the full library encodes).
    #[cfg(feature = "definitions")]
    fn info(event_type: u8) -> ServiceEventInfo {
        use roslite::msgs::builtin_interfaces::msg::Time;
        ServiceEventInfo {
            event_type,
            stamp: Time { sec: 7, nanosec: 9 },
            client_gid: [3; 16],
            sequence_number: 42,
        }
    }

    #[test]
    fn states_are_rcls_numbers_and_others_are_refused() {
        assert_eq!(state_of(0).unwrap(), IntrospectionState::Off);
        assert_eq!(state_of(2).unwrap(), IntrospectionState::Contents);
        let refused = state_of(3).unwrap_err();
        assert!(
            refused.message.contains("_CONTENTS (2)"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn an_unknown_service_has_no_event_type() {
        let refused = service_events("no_pkg/srv/Nothing", IntrospectionState::Metadata)
            .err()
            .unwrap();
        assert_eq!(refused.status, ROSLITE_UNKNOWN_TYPE);
        assert!(
            refused.message.contains("no_pkg/srv/Nothing_Event"),
            "{}",
            refused.message
        );
    }

    /// AddTwoInts' request has int64 members: inside the event it starts at offset 44 (after
    /// the info and the sequence length), where its own encoding would misalign them, so the
    /// encoder must encode it again, as the generated event type does.
    #[cfg(feature = "definitions")]
    #[test]
    fn contents_encode_as_the_generated_event_type() {
        use roslite::msgs::cdr::{to_vec, Endianness};
        use roslite::msgs::example_interfaces::srv::{
            AddTwoInts_Event, AddTwoInts_Request, AddTwoInts_Response,
        };
        let events = service_events(
            "example_interfaces/srv/AddTwoInts",
            IntrospectionState::Contents,
        )
        .unwrap();
        assert_eq!(
            events.event_type.type_hash,
            <AddTwoInts_Event as roslite::Message>::TYPE_HASH
        );
        let request = AddTwoInts_Request { a: -5, b: 1 << 40 };
        let response = AddTwoInts_Response { sum: (1 << 40) - 5 };
        let request_bytes = to_vec(&request, Endianness::Little).unwrap();
        let response_bytes = to_vec(&response, Endianness::Little).unwrap();
        let expected = |request: Vec<_>, response: Vec<_>, kind| {
            to_vec(
                &AddTwoInts_Event {
                    info: info(kind),
                    request,
                    response,
                },
                Endianness::Little,
            )
            .unwrap()
        };
        assert_eq!(
            events
                .encoder
                .encode(&info(1), Some(&request_bytes), None)
                .unwrap(),
            expected(vec![request], vec![], 1)
        );
        assert_eq!(
            events
                .encoder
                .encode(&info(2), None, Some(&response_bytes))
                .unwrap(),
            expected(vec![], vec![response], 2)
        );
        // A request that is not one is an error, not a panic.
        let broken = events
            .encoder
            .encode(&info(1), Some(&[0, 1, 0, 0, 1]), None);
        assert!(broken.is_err());
    }

    #[cfg(not(feature = "definitions"))]
    #[test]
    fn without_definitions_contents_are_refused_and_metadata_is_not() {
        let refused = service_events("std_srvs/srv/SetBool", IntrospectionState::Contents)
            .err()
            .unwrap();
        assert_eq!(refused.status, ROSLITE_UNKNOWN_TYPE);
        assert!(refused.message.contains("METADATA"), "{}", refused.message);
        assert!(service_events("std_srvs/srv/SetBool", IntrospectionState::Metadata).is_ok());
    }
}

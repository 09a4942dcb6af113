//! Service servers and clients of generated service types.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

use roslite_msgs::{Message, Service as ServiceType};

use crate::error::{c_string, check, Error, ErrorCode};
use crate::exports::{self, kind, Slot};
use crate::log::Logger;
use crate::node::{CallbackGroup, Node, OwnedHandle};
use crate::pubsub::{encode, host_bytes, static_c_string};
use crate::qos::{nanoseconds, QosProfile};
use crate::sys::{self, RawBuffer, RawHandle, RawServiceType};

/// A service type's wire names as C strings, alive while the `RawServiceType` is.
struct ServiceTypeNames {
    name: CString,
    request_hash: CString,
    response_hash: CString,
}

impl ServiceTypeNames {
    fn of<S: ServiceType>() -> Self {
        Self {
            name: static_c_string(S::TYPE_NAME),
            request_hash: static_c_string(<S::Request as Message>::TYPE_HASH),
            response_hash: static_c_string(<S::Response as Message>::TYPE_HASH),
        }
    }

    fn raw(&self) -> RawServiceType {
        RawServiceType {
            name: self.name.as_ptr(),
            request_hash: self.request_hash.as_ptr(),
            response_hash: self.response_hash.as_ptr(),
        }
    }
}

/// A running server of service type `S`. Dropping it stops serving.
#[derive(Debug)]
pub struct Service<S: ServiceType> {
    // Released before the slot goes.
    _handle: OwnedHandle,
    _slot: Slot,
    name: String,
    _service: PhantomData<fn(S)>,
}

/// How much of its calls a server or client publishes on `<service>/_service_event`, as
/// `roslite::IntrospectionState` (rcl's `rcl_service_introspection_state_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IntrospectionState {
    /// Nothing.
    #[default]
    Off,
    /// Each event without the request or response.
    Metadata,
    /// Each event with the request or response.
    Contents,
}

impl IntrospectionState {
    fn raw(self) -> i32 {
        match self {
            Self::Off => 0,
            Self::Metadata => 1,
            Self::Contents => 2,
        }
    }
}

/// Calls the host's `configure` (the server's or the client's) with the QoS and the state.
fn configure_introspection(
    configure: impl FnOnce(*const sys::RawQos, i32) -> i32,
    qos: QosProfile,
    state: IntrospectionState,
) -> Result<(), Error> {
    let raw = qos.to_raw()?;
    check(configure(&raw, state.raw()))
}

impl<S: ServiceType> Service<S> {
    /// The service name as given at creation.
    pub fn service_name(&self) -> &str {
        &self.name
    }

    /// Publishes this server's calls on `<service>/_service_event` (`REQUEST_RECEIVED`,
    /// `RESPONSE_SENT`), or stops: rclcpp's `configure_introspection`. `qos` is the event
    /// publisher's, fixed when introspection is turned on.
    ///
    /// # Errors
    /// An invalid `qos`, or an event type the host does not know.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), Error> {
        let server = self._handle.raw();
        configure_introspection(
            // SAFETY: the QoS lives until the call returns.
            |qos, state| unsafe {
                sys::roslite_v1_service_configure_introspection(server, qos, state)
            },
            qos,
            state,
        )
    }
}

/// Why a call produced no response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No reply within the timeout; [`Client::wait_for_service`] before calling helps when
    /// no server was up yet.
    Timeout { service: String, timeout: Duration },
    /// The request could not be serialized (a bounded field over its bound).
    Serialize(Error),
    /// The reply did not decode as this service's response type.
    MalformedResponse { service: String },
    /// The context shut down, or the client was dropped, before the reply arrived.
    Cancelled,
    /// Anything else the host refused.
    Host(Error),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout { service, timeout } => write!(
                f,
                "no reply from service '{service}' within {timeout:?}; call wait_for_service() \
                 first, and check the service name and type"
            ),
            Self::Serialize(e) => write!(f, "cannot serialize the request: {e}"),
            Self::MalformedResponse { service } => write!(
                f,
                "the reply from service '{service}' is not a valid response of its type"
            ),
            Self::Cancelled => f.write_str("the call was cancelled before a reply arrived"),
            Self::Host(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CallError {}

/// Names a pending [`Client::call_with`] request, for [`Client::forget`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestKey(i64);

/// A client of service type `S`. Dropping it cancels its pending requests (their callbacks
/// get [`CallError::Cancelled`]).
#[derive(Debug)]
pub struct Client<S: ServiceType> {
    handle: OwnedHandle,
    name: String,
    /// Response slots by request id, so `forget` can free the slot the host will not call.
    pending: Rc<RefCell<BTreeMap<i64, u32>>>,
    _service: PhantomData<fn(S)>,
}

impl<S: ServiceType> Client<S> {
    pub fn service_name(&self) -> &str {
        &self.name
    }

    /// Publishes this client's calls on `<service>/_service_event` (`REQUEST_SENT`,
    /// `RESPONSE_RECEIVED`), or stops: rclcpp's `configure_introspection`.
    ///
    /// # Errors
    /// An invalid `qos`, or an event type the host does not know.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), Error> {
        let client = self.handle.raw();
        configure_introspection(
            // SAFETY: the QoS lives until the call returns.
            |qos, state| unsafe {
                sys::roslite_v1_client_configure_introspection(client, qos, state)
            },
            qos,
            state,
        )
    }

    /// Waits up to `timeout` for a server; whether one came.
    pub fn wait_for_service(&self, timeout: Duration) -> bool {
        // SAFETY: plain integer arguments.
        let status = unsafe {
            sys::roslite_v1_client_wait_for_service(self.handle.raw(), nanoseconds(timeout))
        };
        status == sys::STATUS_OK
    }

    /// Whether a server is available now.
    pub fn service_is_ready(&self) -> bool {
        self.wait_for_service(Duration::ZERO)
    }

    /// Sends `request` and waits up to `timeout` for the response.
    ///
    /// # Errors
    /// [`CallError`] saying why there is no response.
    pub fn call(&self, request: S::Request, timeout: Duration) -> Result<S::Response, CallError> {
        let bytes = encode(&request).map_err(CallError::Serialize)?;
        let mut response = RawBuffer {
            data: std::ptr::null_mut(),
            length: 0,
        };
        // SAFETY: `bytes` and `response` are alive during the call.
        let status = unsafe {
            sys::roslite_v1_client_call(
                self.handle.raw(),
                bytes.as_ptr(),
                bytes.len(),
                nanoseconds(timeout),
                &mut response,
            )
        };
        if status != sys::STATUS_OK {
            return Err(match ErrorCode::from_status(status) {
                ErrorCode::Timeout => CallError::Timeout {
                    service: self.name.clone(),
                    timeout,
                },
                ErrorCode::Shutdown => CallError::Cancelled,
                _ => CallError::Host(Error::from_status(status)),
            });
        }
        // SAFETY: the host put `length` bytes from `roslite_guest_alloc` at `data`; they are
        // decoded (copied) and then freed.
        unsafe {
            let decoded = roslite_cdr::from_bytes::<S::Response>(host_bytes(
                response.data as usize as i64,
                response.length as i64,
            ));
            exports::free(response.data);
            decoded.map_err(|_| CallError::MalformedResponse {
                service: self.name.clone(),
            })
        }
    }

    /// Sends `request` without waiting; `on_reply` gets the response, or why there is none,
    /// when the host's executor delivers it. The request stays pending until then:
    /// [`Self::forget`] drops it.
    ///
    /// # Errors
    /// The request cannot be serialized, or the host refused to send it.
    pub fn call_with(
        &self,
        request: S::Request,
        on_reply: impl FnOnce(Result<S::Response, CallError>) + 'static,
    ) -> Result<RequestKey, CallError> {
        let bytes = encode(&request).map_err(CallError::Serialize)?;
        // The host may answer before `client_send_request` returns (a server in the same
        // host); then the request id is not known to the callback, and nothing is pending.
        let answered = Rc::new(Cell::new(false));
        let request_id = Rc::new(Cell::new(None::<i64>));
        let mut on_reply = Some(on_reply);
        let service = self.name.clone();
        let slot = Slot::register_once({
            let answered = answered.clone();
            let request_id = request_id.clone();
            let pending = self.pending.clone();
            move |call| {
                if call.kind != kind::RESPONSE {
                    return 0;
                }
                answered.set(true);
                if let Some(id) = request_id.get() {
                    pending.borrow_mut().remove(&id);
                }
                if let Some(on_reply) = on_reply.take() {
                    on_reply(response_of::<S>(&service, call.a, call.b, call.c));
                }
                0
            }
        });
        let mut id = 0i64;
        // SAFETY: `bytes` and `id` are alive during the call.
        let status = unsafe {
            sys::roslite_v1_client_send_request(
                self.handle.raw(),
                bytes.as_ptr(),
                bytes.len(),
                slot,
                &mut id,
            )
        };
        if status != sys::STATUS_OK {
            let error = Error::from_status(status);
            exports::unregister(slot);
            return Err(CallError::Host(error));
        }
        if !answered.get() {
            request_id.set(Some(id));
            self.pending.borrow_mut().insert(id, slot);
        }
        Ok(RequestKey(id))
    }

    /// Forgets the request of `key`: its callback is never called. False if it was not
    /// pending.
    pub fn forget(&self, key: RequestKey) -> bool {
        let Some(slot) = self.pending.borrow_mut().remove(&key.0) else {
            return false;
        };
        // SAFETY: plain integer arguments.
        let status =
            unsafe { sys::roslite_v1_client_remove_pending_request(self.handle.raw(), key.0) };
        if status == sys::STATUS_OK {
            exports::unregister(slot);
            true
        } else {
            // Not pending in the host any more: its response is on the way and frees the slot.
            false
        }
    }
}

/// Kind 4's arguments as the reply or why there is none.
fn response_of<S: ServiceType>(
    service: &str,
    status: i64,
    data: i64,
    length: i64,
) -> Result<S::Response, CallError> {
    if status == i64::from(sys::STATUS_OK) {
        // SAFETY: the host passes the reply bytes, alive during the dispatch.
        let bytes = unsafe { host_bytes(data, length) };
        return roslite_cdr::from_bytes::<S::Response>(bytes).map_err(|_| {
            CallError::MalformedResponse {
                service: service.to_owned(),
            }
        });
    }
    match ErrorCode::from_status(i32::try_from(status).unwrap_or(sys::STATUS_ERROR)) {
        ErrorCode::Shutdown => Err(CallError::Cancelled),
        code => Err(CallError::Host(Error::new(
            code,
            format!("the request to service '{service}' failed ({code:?})"),
        ))),
    }
}

impl Node {
    /// A server of service `name` whose `callback` answers each request when the host's
    /// executor spins this node. Keep the returned [`Service`] to keep serving.
    ///
    /// # Errors
    /// An invalid service name.
    pub fn create_service<S: ServiceType, F>(
        &self,
        name: &str,
        callback: F,
    ) -> Result<Service<S>, Error>
    where
        F: FnMut(S::Request) -> S::Response + 'static,
    {
        self.make_service::<S, F>(&CallbackGroup::DEFAULT, name, None, callback)
    }

    /// As [`Self::create_service`], in a callback group and with a QoS profile of choice.
    ///
    /// # Errors
    /// An invalid service name or QoS profile.
    pub fn create_service_in<S: ServiceType, F>(
        &self,
        group: &CallbackGroup,
        name: &str,
        qos: QosProfile,
        callback: F,
    ) -> Result<Service<S>, Error>
    where
        F: FnMut(S::Request) -> S::Response + 'static,
    {
        self.make_service::<S, F>(group, name, Some(qos), callback)
    }

    fn make_service<S: ServiceType, F>(
        &self,
        group: &CallbackGroup,
        name: &str,
        qos: Option<QosProfile>,
        mut callback: F,
    ) -> Result<Service<S>, Error>
    where
        F: FnMut(S::Request) -> S::Response + 'static,
    {
        let raw_qos = qos.map(QosProfile::to_raw).transpose()?;
        let service_name = name.to_owned();
        let c_name = c_string(name, "service name")?;
        let type_names = ServiceTypeNames::of::<S>();
        let raw_type = type_names.raw();
        let logger = self.logger().clone();
        let name_for_log = service_name.clone();
        let slot = Slot::register(move |call| {
            if call.kind == kind::REQUEST {
                // SAFETY: the host passes the request bytes, alive during the call.
                let bytes = unsafe { host_bytes(call.a, call.b) };
                answer::<S>(
                    &logger,
                    &name_for_log,
                    &mut callback,
                    bytes,
                    call.c as RawHandle,
                );
            }
            0
        });
        let qos_pointer = raw_qos.as_ref().map_or(std::ptr::null(), |q| q as *const _);
        let handle = OwnedHandle::create(|out| {
            // SAFETY: every pointer is alive during the call (the QoS may be null: the
            // services default).
            unsafe {
                sys::roslite_v1_service_create(
                    self.raw(),
                    group.raw(),
                    c_name.as_ptr(),
                    &raw_type,
                    qos_pointer,
                    slot.number(),
                    out,
                )
            }
        })?;
        Ok(Service {
            _handle: handle,
            _slot: slot,
            name: service_name,
            _service: PhantomData,
        })
    }

    /// A client of service `name`.
    ///
    /// # Errors
    /// An invalid service name.
    pub fn create_client<S: ServiceType>(&self, name: &str) -> Result<Client<S>, Error> {
        let c_name = c_string(name, "service name")?;
        let type_names = ServiceTypeNames::of::<S>();
        let raw_type = type_names.raw();
        let handle = OwnedHandle::create(|out| {
            // SAFETY: every pointer is alive during the call.
            unsafe { sys::roslite_v1_client_create(self.raw(), c_name.as_ptr(), &raw_type, out) }
        })?;
        Ok(Client {
            handle,
            name: name.to_owned(),
            pending: Rc::default(),
            _service: PhantomData,
        })
    }
}

/// Decodes a request, runs the server's callback and sends its response. A request that does
/// not decode gets no response (its responder is released; the client times out).
fn answer<S: ServiceType>(
    logger: &Logger,
    service: &str,
    callback: &mut dyn FnMut(S::Request) -> S::Response,
    bytes: &[u8],
    responder: RawHandle,
) {
    let sent = roslite_cdr::from_bytes::<S::Request>(bytes)
        .map_err(|e| {
            Error::new(
                ErrorCode::BadMessage,
                format!(
                    "a request that is not a {}: {e}",
                    <S::Request as Message>::TYPE_NAME
                ),
            )
        })
        .and_then(|request| encode(&callback(request)))
        .and_then(|response| {
            // SAFETY: `response` is alive during the call.
            check(unsafe {
                sys::roslite_v1_service_send_response(responder, response.as_ptr(), response.len())
            })
        });
    if let Err(e) = sent {
        // SAFETY: plain integer argument.
        unsafe { sys::roslite_v1_release(responder) };
        logger.error(format_args!("service '{service}': {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslite_msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Response};

    #[test]
    fn a_response_status_becomes_the_reply_or_why_there_is_none() {
        let response = encode(&AddTwoInts_Response { sum: 5 }).unwrap();
        let reply = response_of::<AddTwoInts>(
            "add",
            0,
            response.as_ptr() as usize as i64,
            response.len() as i64,
        );
        assert_eq!(reply.unwrap().sum, 5);
        assert_eq!(
            response_of::<AddTwoInts>("add", 8, 0, 0),
            Err(CallError::Cancelled)
        );
        assert!(matches!(
            response_of::<AddTwoInts>("add", 0, 0, 0),
            Err(CallError::MalformedResponse { .. })
        ));
        assert!(matches!(
            response_of::<AddTwoInts>("add", 1, 0, 0),
            Err(CallError::Host(_))
        ));
    }
}
